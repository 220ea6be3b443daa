#!/usr/bin/env sh
# Starts a master on this host, in the background (see kindling-daemon.sh):
#
#   start-master.sh [kindling master's options…]
#
# KINDLING_MASTER_HOST        the address it listens on and workers reach it at (default: this host's name)
# KINDLING_MASTER_PORT        its RPC port (default 7077)
# KINDLING_MASTER_WEBUI_PORT  its web UI's port (default 8080)
. "$(dirname -- "$0")/kindling-config.sh"

has_option --host "$@" || set -- --host "$(master_host)" "$@"
has_option --port "$@" || set -- --port "${KINDLING_MASTER_PORT:-7077}" "$@"
has_option --webui-port "$@" || set -- --webui-port "${KINDLING_MASTER_WEBUI_PORT:-8080}" "$@"
exec "$sbin/kindling-daemon.sh" start master "$@"
