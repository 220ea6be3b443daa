#!/usr/bin/env sh
# Starts a worker on this host, in the background, registered with the masters of <master-url> (see
# kindling-daemon.sh):
#
#   start-worker.sh <master-url> [kindling worker's options…]
#
# KINDLING_LOCAL_IP           the address it listens on and is reached at (default: this host's name)
# KINDLING_WORKER_CORES       cores it offers (default: all)
# KINDLING_WORKER_MEMORY      memory it offers, 2g or 512m (default: the host's RAM less 1 GiB)
# KINDLING_WORKER_PORT        its RPC port (default: any free one)
# KINDLING_WORKER_WEBUI_PORT  its web UI's port (default 8081)
# KINDLING_WORKER_DIR         where its drivers and executors run (default: $KINDLING_HOME/work)
. "$(dirname -- "$0")/kindling-config.sh"

case ${1:-} in
  '' | -*)
    echo "usage: start-worker.sh <master-url> [kindling worker's options…]" >&2
    exit 1
    ;;
esac
master=$1
shift
has_option --host "$@" || [ -z "${KINDLING_LOCAL_IP:-}" ] || set -- --host "$KINDLING_LOCAL_IP" "$@"
has_option --cores "$@" || [ -z "${KINDLING_WORKER_CORES:-}" ] || set -- --cores "$KINDLING_WORKER_CORES" "$@"
has_option --memory "$@" || [ -z "${KINDLING_WORKER_MEMORY:-}" ] || set -- --memory "$KINDLING_WORKER_MEMORY" "$@"
has_option --port "$@" || [ -z "${KINDLING_WORKER_PORT:-}" ] || set -- --port "$KINDLING_WORKER_PORT" "$@"
has_option --work-dir "$@" || [ -z "${KINDLING_WORKER_DIR:-}" ] || set -- --work-dir "$KINDLING_WORKER_DIR" "$@"
has_option --webui-port "$@" || set -- --webui-port "${KINDLING_WORKER_WEBUI_PORT:-8081}" "$@"
exec "$sbin/kindling-daemon.sh" start worker "$@" "$master"
