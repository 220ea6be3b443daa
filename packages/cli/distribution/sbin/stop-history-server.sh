#!/usr/bin/env sh
# Stops this host's history server and waits until it has exited (see kindling-daemon.sh).
. "$(dirname -- "$0")/kindling-config.sh"

exec "$sbin/kindling-daemon.sh" stop history
