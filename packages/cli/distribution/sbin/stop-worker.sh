#!/usr/bin/env sh
# Stops this host's worker, which stops the drivers and executors it runs, and waits until it has exited (see
# kindling-daemon.sh). To take a worker out without losing its apps' work, decommission it instead
# (decommission-worker.sh).
. "$(dirname -- "$0")/kindling-config.sh"

exec "$sbin/kindling-daemon.sh" stop worker
