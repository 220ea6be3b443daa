#!/usr/bin/env sh
# Stops the worker of every host of conf/workers (see workers.sh and stop-worker.sh).
. "$(dirname -- "$0")/kindling-config.sh"

exec "$sbin/workers.sh" cd "$(quote "$KINDLING_HOME")" "&&" sbin/stop-worker.sh
