#!/usr/bin/env bash
# `npm start`: installs what is missing, brings up Kafka/Postgres/Redis where needed, migrates,
# creates topics, then runs every service and a simulated fleet in the foreground.
# Ctrl-C (SIGINT) or SIGTERM stops everything it started.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/infra.sh"
cd "$GANTRY_ROOT"

[ -n "${DATABASE_URL:-}" ] && DATABASE_URL_GIVEN=1
[ -n "${REDIS_URL:-}" ] && REDIS_URL_GIVEN=1
export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/gantry}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"

trap stop_started_infra EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

started=$(date +%s)
ensure_node_modules
build
ensure_sandbox_tools
ensure_kafka 9092
ensure_postgres "$DATABASE_URL"
ensure_redis "$REDIS_URL"
prepare_data "$DATABASE_URL"
say "infrastructure ready in $(( $(date +%s) - started )) s"

# The launcher handles SIGINT/SIGTERM itself; wait so this shell's trap runs after it.
node dist/tools/dev/run-stack.js &
launcher=$!
trap 'kill -TERM $launcher 2>/dev/null; wait $launcher; exit 130' INT
trap 'kill -TERM $launcher 2>/dev/null; wait $launcher; exit 143' TERM
wait $launcher
