# Shared helpers for scripts/kafka/*.sh (sourced, not executed).
# shellcheck shell=bash

KAFKA_REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
KAFKA_CACHE_DIR="$KAFKA_REPO_ROOT/.cache/kafka"
# shellcheck disable=SC2034  # used by start.sh
KAFKA_LIBS_DIR="$KAFKA_CACHE_DIR/libs"

kafka_die() { echo "$KAFKA_SCRIPT: $*" >&2; exit 1; }

kafka_is_port() { [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -ge 1 ] && [ "$1" -le 65535 ]; }

kafka_default_data_dir() { echo "$KAFKA_CACHE_DIR/data-$1"; }

# Make a path absolute without requiring it to exist (log.dirs must be absolute).
kafka_abs_path() {
  case "$1" in
    /*) echo "$1" ;;
    *) echo "$PWD/$1" ;;
  esac
}

# True if PID is alive AND is the broker for this data dir. Checking the command line
# (not just `kill -0`) guards against a stale pid file whose pid was reused.
kafka_pid_is_broker() {
  local pid="$1" data_dir="$2" cmd
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  cmd="$(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null)" || return 1
  [[ "$cmd" == *kafka.Kafka* && "$cmd" == *"$data_dir/server.properties"* ]]
}

# Prints the pid from DATA_DIR/broker.pid if that broker is running; fails otherwise.
kafka_running_pid() {
  local data_dir="$1" pid
  [ -f "$data_dir/broker.pid" ] || return 1
  pid="$(cat "$data_dir/broker.pid" 2>/dev/null || true)"
  kafka_pid_is_broker "$pid" "$data_dir" || return 1
  echo "$pid"
}

# True if something accepts TCP connections on 127.0.0.1:PORT (bounded to 2 s).
kafka_port_open() {
  timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

# SIGTERM, poll up to TIMEOUT seconds, then SIGKILL and wait a little more.
kafka_terminate() {
  local pid="$1" timeout_s="$2" i
  kill -TERM "$pid" 2>/dev/null || return 0
  for (( i = 0; i < timeout_s * 4; i++ )); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.25
  done
  echo "$KAFKA_SCRIPT: broker pid $pid still alive after ${timeout_s}s, sending SIGKILL" >&2
  kill -KILL "$pid" 2>/dev/null || return 0
  for (( i = 0; i < 40; i++ )); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.25
  done
  echo "$KAFKA_SCRIPT: broker pid $pid survived SIGKILL for 10s" >&2
  return 1
}

# The SCRAM principals of Gantry, one per role (User:gantry-<role>); admin is the broker's own and
# the only super user. tools/infra/prepare-kafka.ts gives the others their ACLs. `fleet` is the
# simulated fleet's (a test harness; never handed to a real node): a real agent connects as its
# node's own principal, with a token the gateway signs (OAUTHBEARER, ADR 0034).
# shellcheck disable=SC2034  # used by start.sh
KAFKA_ROLES="admin gateway scheduler ingester reconciler fleet"

# The password of ROLE in a credentials.json written by start.sh (one user per line).
kafka_credential() {
  local file="$1" role="$2"
  sed -n "s/^ *\"$role\": { \"username\": \"[^\"]*\", \"password\": \"\([0-9a-f]*\)\" }.*$/\1/p" "$file" 2>/dev/null | head -n1
}
