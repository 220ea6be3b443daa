#!/usr/bin/env sh
# Stops the worker of every host of conf/workers over SSH, then this host's master (stop-workers.sh,
# stop-master.sh). Run it on the master's host.
. "$(dirname -- "$0")/kindling-config.sh"

"$sbin/stop-workers.sh"
workers=$?
"$sbin/stop-master.sh" || exit
exit "$workers"
