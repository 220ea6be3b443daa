#!/usr/bin/env sh
# Starts a history server on this host, in the background, over a folder of event logs (see kindling-daemon.sh):
#
#   start-history-server.sh [<log-dir>] [kindling history's options…]
#
# Without <log-dir>, kindling.history.fs.logDirectory (conf/kindling-defaults.conf) names it; the UI's port is
# kindling.history.ui.port (18080). KINDLING_LOCAL_IP is the address it listens on (default: this host's name).
. "$(dirname -- "$0")/kindling-config.sh"

has_option --host "$@" || [ -z "${KINDLING_LOCAL_IP:-}" ] || set -- --host "$KINDLING_LOCAL_IP" "$@"
exec "$sbin/kindling-daemon.sh" start history "$@"
