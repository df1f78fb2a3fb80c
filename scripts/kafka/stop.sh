#!/usr/bin/env bash
# Stop the broker started by start.sh. Idempotent: exits 0 if it isn't running.
#
# Usage: scripts/kafka/stop.sh [--data-dir DIR | --port N]
#   default: --port 9092, i.e. data dir <repo>/.cache/kafka/data-9092
# Env:   KAFKA_STOP_TIMEOUT_S  seconds to wait after SIGTERM before SIGKILL (default 30)
set -euo pipefail

KAFKA_SCRIPT="stop.sh"
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

port=9092
data_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --data-dir) [ $# -ge 2 ] || kafka_die "--data-dir needs a value"; data_dir="$2"; shift 2 ;;
    --data-dir=*) data_dir="${1#*=}"; shift ;;
    --port) [ $# -ge 2 ] || kafka_die "--port needs a value"; port="$2"; shift 2 ;;
    --port=*) port="${1#*=}"; shift ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) kafka_die "unknown argument: $1 (see --help)" ;;
  esac
done
kafka_is_port "$port" || kafka_die "invalid --port: $port"
[ -n "$data_dir" ] || data_dir="$(kafka_default_data_dir "$port")"
data_dir="$(kafka_abs_path "$data_dir")"
timeout_s="${KAFKA_STOP_TIMEOUT_S:-30}"
[[ "$timeout_s" =~ ^[0-9]+$ ]] || kafka_die "KAFKA_STOP_TIMEOUT_S must be whole seconds, got: $timeout_s"
pid_file="$data_dir/broker.pid"

if ! pid="$(kafka_running_pid "$data_dir")"; then
  [ -f "$pid_file" ] && echo "$KAFKA_SCRIPT: removing stale pid file $pid_file" >&2
  rm -f "$pid_file"
  echo "$KAFKA_SCRIPT: no broker running for $data_dir" >&2
  exit 0
fi

echo "$KAFKA_SCRIPT: stopping broker pid $pid ($data_dir)" >&2
start_s=$SECONDS
kafka_terminate "$pid" "$timeout_s" || kafka_die "could not stop broker pid $pid"
rm -f "$pid_file"
echo "$KAFKA_SCRIPT: stopped in $(( SECONDS - start_s ))s" >&2
