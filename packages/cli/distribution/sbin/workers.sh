#!/usr/bin/env sh
# Runs a shell command on every host of conf/workers over SSH, all at once, as Spark's workers.sh does:
#
#   workers.sh <command…>
#
# KINDLING_WORKERS  the file of hosts (default: $KINDLING_CONF_DIR/workers; no file: localhost), one per line; what
#                   follows a # is a comment, blank lines are skipped
# KINDLING_SSH_OPTS ssh's options (default: -o StrictHostKeyChecking=accept-new -o ConnectTimeout=10
#                   -o BatchMode=yes: a new host's key is learned, a changed one refused, and a host that asks
#                   for a password or does not answer fails instead of waiting)
#
# Each line a host prints comes prefixed with its name. A host that does not answer SSH is named in one line, and the
# others go on; the exit code is 1 when the command failed on any host.
. "$(dirname -- "$0")/kindling-config.sh"

if [ $# -eq 0 ]; then
  echo "usage: workers.sh <command…>" >&2
  exit 1
fi
hosts_file=${KINDLING_WORKERS:-$KINDLING_CONF_DIR/workers}
if [ -f "$hosts_file" ]; then
  hosts=$(sed 's/#.*//' "$hosts_file")
elif [ -n "${KINDLING_WORKERS:-}" ]; then
  echo "workers.sh: KINDLING_WORKERS names $KINDLING_WORKERS, which is not a file" >&2
  exit 1
else
  hosts=localhost
fi
ssh_options=${KINDLING_SSH_OPTS:--o StrictHostKeyChecking=accept-new -o ConnectTimeout=10 -o BatchMode=yes}

# ssh exits 255 when it could not run the command (the host did not answer, refused the key, …), and says why in
# its last line (ending it with a carriage return, as on a terminal).
on_host() {
  # shellcheck disable=SC2086 # the options are words
  output=$(ssh $ssh_options "$1" "$2" 2>&1 < /dev/null)
  code=$?
  output=$(printf '%s' "$output" | tr -d '\r')
  if [ "$code" -eq 255 ]; then
    echo "$1: did not answer SSH: $(printf '%s\n' "$output" | tail -n 1)"
  elif [ -n "$output" ]; then
    printf '%s\n' "$output" | sed "s|^|$1: |"
  fi
  return "$code"
}

pids=""
for host in $hosts; do
  on_host "$host" "$*" &
  pids="$pids $!"
done
failed=0
for pid in $pids; do
  wait "$pid" || failed=1
done
exit "$failed"
