#!/usr/bin/env sh
# Runs `kindling <command>` as a daemon of this host, as Spark's spark-daemon.sh runs its classes:
#
#   kindling-daemon.sh start <command> [options…]   start it in the background, unless it already runs
#   kindling-daemon.sh stop <command>               stop it (SIGTERM; SIGKILL past KINDLING_STOP_TIMEOUT)
#   kindling-daemon.sh decommission worker          decommission the worker (SIGPWR) and wait until it exits
#   kindling-daemon.sh status <command>             whether it runs (exit 0), or not (exit 1)
#
# <command> is master, worker or history. One of each runs per host and user: its pid is in
# $KINDLING_PID_DIR/kindling-$KINDLING_IDENT_STRING-<command>-1.pid (default /tmp, and the user's name), its output
# in $KINDLING_LOG_DIR/kindling-$KINDLING_IDENT_STRING-<command>-1-<host>.out (default $KINDLING_HOME/logs), which each
# start rotates (.1 the previous run's, up to KINDLING_LOG_MAX_FILES, 5, kept) and begins with the build's version
# and the command line. With KINDLING_NO_DAEMONIZE set, start runs the command in the foreground instead (a service
# manager's way) and writes no pid file.
. "$(dirname -- "$0")/kindling-config.sh"

usage="usage: kindling-daemon.sh (start|stop|decommission|status) (master|worker|history) [options…]"
if [ $# -lt 2 ]; then
  echo "$usage" >&2
  exit 1
fi
action=$1
command=$2
shift 2
# What the daemon is called in messages, and the line of its log that says it is up.
case $command in
  master) name="kindling master" ready="Kindling master at" ;;
  worker) name="kindling worker" ready="Starting Kindling worker" ;;
  history) name="kindling history server" ready="Kindling history server at" ;;
  *)
    echo "kindling-daemon.sh: no daemon named $command (master, worker or history)" >&2
    exit 1
    ;;
esac

ident=${KINDLING_IDENT_STRING:-${USER:-$(id -un)}}
pid_dir=${KINDLING_PID_DIR:-/tmp}
log_dir=${KINDLING_LOG_DIR:-$KINDLING_HOME/logs}
pid_file="$pid_dir/kindling-$ident-$command-1.pid"
log="$log_dir/kindling-$ident-$command-1-$(hostname).out"
stop_timeout=${KINDLING_STOP_TIMEOUT:-30}

# Stops the script, saying why, unless $2 (the value of $1) is a whole number of at least $3.
require_number() {
  case $2 in
    '' | *[!0-9]*) ;;
    *) [ "$2" -ge "$3" ] && return 0 ;;
  esac
  echo "kindling-daemon.sh: $1 must be a whole number of at least $3, not '$2'" >&2
  exit 1
}
require_number KINDLING_STOP_TIMEOUT "$stop_timeout" 0

# A short pause: a fraction of a second where sleep takes one (GNU, BusyBox, BSD), else a second.
pause() {
  sleep 0.2 2>/dev/null || sleep 1
}

# Whether process $1 runs: it exists and has not exited (a child that exited stays a zombie until it is reaped).
alive() {
  [ -n "$1" ] && kill -0 "$1" 2>/dev/null || return 1
  if [ -r "/proc/$1/stat" ]; then
    state=$(sed 's/.*) //' "/proc/$1/stat" | cut -c1)
  else
    state=$(ps -p "$1" -o stat= 2>/dev/null)
  fi
  case $state in
    Z*) return 1 ;;
  esac
}

# Whether process $1 is this daemon: running `kindling <command>` (a pid can be reused once its process has gone, by
# anything). Before it execs node, the process is bin/kindling's shell.
is_daemon() {
  alive "$1" || return 1
  if [ -r "/proc/$1/cmdline" ]; then
    line=$(tr '\0' ' ' < "/proc/$1/cmdline")
  else
    line="$(ps -p "$1" -o args= 2>/dev/null) "
  fi
  case $line in
    *"bin/kindling $command "* | *"dist/bin.js $command "*) return 0 ;;
  esac
  return 1
}

# Sets pid to the daemon running now (empty when none). A pid file whose process is gone is removed, saying so.
find_running() {
  pid=""
  [ -f "$pid_file" ] || return 0
  recorded=$(cat "$pid_file" 2>/dev/null)
  if is_daemon "$recorded"; then
    pid=$recorded
  else
    echo "$name: removed the stale pid file $pid_file (process ${recorded:-?} is gone)"
    rm -f "$pid_file"
  fi
}

# Waits until process $1 has exited, $2 seconds at most; fails if it still runs.
await_exit() {
  deadline=$(($(date +%s) + $2))
  while is_daemon "$1"; do
    if [ "$(date +%s)" -ge "$deadline" ]; then return 1; fi
    pause
  done
}

# The log's old copies move up one (.1 to .2, …), the oldest beyond KINDLING_LOG_MAX_FILES is dropped, and the
# last run's becomes .1.
rotate_log() {
  keep=${KINDLING_LOG_MAX_FILES:-5}
  require_number KINDLING_LOG_MAX_FILES "$keep" 1
  [ -f "$log" ] || return 0
  n=$keep
  while [ "$n" -gt 1 ]; do
    previous=$((n - 1))
    [ -f "$log.$previous" ] && mv -f "$log.$previous" "$log.$n"
    n=$previous
  done
  mv -f "$log" "$log.1"
}

start() {
  mkdir -p "$pid_dir"
  find_running
  if [ -n "$pid" ]; then
    echo "$name running as process $pid. Stop it first."
    exit 1
  fi
  if [ -n "${KINDLING_NO_DAEMONIZE:-}" ]; then
    exec nice -n "${KINDLING_NICENESS:-0}" "$KINDLING_HOME/bin/kindling" "$command" "$@"
  fi
  mkdir -p "$log_dir"
  rotate_log
  echo "starting $name, logging to $log"
  # The log's first line names the build and the command line: after an upgrade, each log says what ran.
  echo "Kindling $("$KINDLING_HOME/bin/kindling" --version 2>&1): kindling $command $*" > "$log"
  # In a session of its own where setsid exists (util-linux, on every Linux): a hang-up or a Ctrl-C at the terminal
  # that started it never reaches it. nohup alone does not shield it, as Node restores SIGHUP's default action when
  # it starts. setsid does not fork here (this shell's child leads no process group), so $! is the daemon's pid.
  detach=nohup
  command -v setsid > /dev/null 2>&1 && detach=setsid
  "$detach" nice -n "${KINDLING_NICENESS:-0}" "$KINDLING_HOME/bin/kindling" "$command" "$@" >> "$log" 2>&1 < /dev/null &
  pid=$!
  echo "$pid" > "$pid_file"
  # Up once it says so in its log (past the first line, ours); a daemon that exits first failed (a port taken, a bad
  # setting), and its last lines say why.
  deadline=$(($(date +%s) + 60))
  until tail -n +2 "$log" 2>/dev/null | grep -q -F "$ready"; do
    if ! alive "$pid"; then
      rm -f "$pid_file"
      echo "failed to launch $name:"
      tail -n 10 "$log" | sed 's/^/  /'
      echo "full log in $log"
      exit 1
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "$name (process $pid) has not said it is up after 60 s; see $log"
      return 0
    fi
    pause
  done
}

stop() {
  find_running
  if [ -z "$pid" ]; then
    echo "no $name to stop"
    return 0
  fi
  echo "stopping $name (process $pid)"
  kill "$pid" 2>/dev/null
  if ! await_exit "$pid" "$stop_timeout"; then
    echo "$name (process $pid) did not stop within $stop_timeout s (KINDLING_STOP_TIMEOUT): killing it"
    kill -9 "$pid" 2>/dev/null
    await_exit "$pid" 10
  fi
  rm -f "$pid_file"
}

decommission() {
  find_running
  if [ -z "$pid" ]; then
    echo "no $name to decommission"
    return 0
  fi
  # SIGPWR, as Spark's decommission-worker.sh sends: the worker's kindling.worker.decommission.signal by default. A
  # worker with kindling.decommission.enabled=false says in its log that it will not go, and goes on running.
  echo "decommissioning $name (process $pid); waiting for it to exit"
  logged=$(wc -l < "$log" 2>/dev/null || echo 0)
  kill -s PWR "$pid"
  while is_daemon "$pid"; do
    if tail -n +"$((logged + 1))" "$log" 2>/dev/null | grep -q -F "kindling.decommission.enabled is false"; then
      echo "$name (process $pid) cannot be decommissioned: kindling.decommission.enabled is false there"
      exit 1
    fi
    pause
  done
  rm -f "$pid_file"
  echo "$name (process $pid) has exited"
}

status() {
  find_running
  if [ -n "$pid" ]; then
    echo "$name is running as process $pid"
  else
    echo "$name is not running"
    exit 1
  fi
}

case $action in
  start) start "$@" ;;
  stop) stop ;;
  status) status ;;
  decommission)
    if [ "$command" != worker ]; then
      echo "kindling-daemon.sh: only a worker can be decommissioned" >&2
      exit 1
    fi
    decommission
    ;;
  *)
    echo "$usage" >&2
    exit 1
    ;;
esac
