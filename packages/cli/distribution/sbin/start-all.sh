#!/usr/bin/env sh
# Starts a master on this host, then a worker on every host of conf/workers over SSH (start-master.sh,
# start-workers.sh). Run it on the master's host. As Spark's, it starts the workers whatever became of the master
# (one that already runs is no reason to leave the workers down); it fails when either step did.
. "$(dirname -- "$0")/kindling-config.sh"

"$sbin/start-master.sh"
master=$?
"$sbin/start-workers.sh" || exit
exit "$master"
