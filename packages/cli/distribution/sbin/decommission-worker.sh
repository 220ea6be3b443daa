#!/usr/bin/env sh
# Decommissions this host's worker and waits until it has exited, as Spark's decommission-worker.sh does: the worker
# (sent SIGPWR, its kindling.worker.decommission.signal) takes no new work, its executors finish their tasks and hand
# their map outputs and cached blocks to executors elsewhere, and it exits once nothing of it runs. A rolling upgrade
# does this on each worker host in turn, then starts the new version there (start-worker.sh).
. "$(dirname -- "$0")/kindling-config.sh"

exec "$sbin/kindling-daemon.sh" decommission worker
