# Sourced by every script in sbin/ (POSIX sh): where Kindling is, its configuration, and the helpers they share.
#
# KINDLING_HOME      the unpacked distribution (default: the directory above sbin/)
# KINDLING_CONF_DIR  where kindling-env.sh, kindling-defaults.conf and workers are (default: $KINDLING_HOME/conf)
#
# conf/kindling-env.sh is read with every variable it sets exported, so that the daemons see them too: the
# launch scripts' variables (kindling-env.sh.template lists them) and any configuration key as a KINDLING_*
# variable (KINDLING_WORKER_TIMEOUT=30s). The kindling command stops on a KINDLING_* variable it knows neither as
# a key nor as one of these, so a misspelt name is named at once.

sbin=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
KINDLING_HOME=${KINDLING_HOME:-$(dirname -- "$sbin")}
KINDLING_CONF_DIR=${KINDLING_CONF_DIR:-$KINDLING_HOME/conf}
export KINDLING_HOME KINDLING_CONF_DIR

if [ -f "$KINDLING_CONF_DIR/kindling-env.sh" ]; then
  set -a
  . "$KINDLING_CONF_DIR/kindling-env.sh"
  set +a
fi

# $1 in single quotes, for a command line another shell reads (the remote end of ssh).
quote() {
  printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}

# The master's host, as the master listens on it and the workers reach it: KINDLING_MASTER_HOST, else this host's
# fully qualified name.
master_host() {
  if [ -n "${KINDLING_MASTER_HOST:-}" ]; then
    printf '%s' "$KINDLING_MASTER_HOST"
  else
    hostname -f 2>/dev/null || hostname
  fi
}

master_url() {
  printf 'kindling://%s:%s' "$(master_host)" "${KINDLING_MASTER_PORT:-7077}"
}

# Whether the option $1 (--cores, or --cores=4) is among the rest of the arguments: the scripts add an option from a
# variable only when the command line does not give it (the kindling command refuses an option given twice).
has_option() {
  option=$1
  shift
  for argument in "$@"; do
    case $argument in
      "$option" | "$option"=*) return 0 ;;
    esac
  done
  return 1
}
