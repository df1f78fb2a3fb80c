#!/usr/bin/env bash
# `npm test`: on a fresh machine, the same set-up as `npm start` (a separate broker on 29092, the
# gantry_test database, Redis logical db 1), then typecheck, lint and every test project.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../dev/infra.sh"
cd "$GANTRY_ROOT"

[ -n "${DATABASE_URL:-}" ] && DATABASE_URL_GIVEN=1
[ -n "${REDIS_URL:-}" ] && REDIS_URL_GIVEN=1
export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/gantry_test}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379/1}"
export KAFKAJS_NO_PARTITIONER_WARNING=1

trap stop_started_infra EXIT
t0=$(date +%s)
ensure_node_modules
build
ensure_kafka 29092
ensure_postgres "$DATABASE_URL"
# The default test database is this script's own: every run starts from an empty one, so rows an
# earlier run left behind (an outbox row for a topic that does not exist stops every relay at its
# head) cannot leak into this one.
[ -z "${DATABASE_URL_GIVEN:-}" ] && node dist/tools/infra/ensure-databases.js --recreate "$DATABASE_URL"
ensure_redis "$REDIS_URL"
prepare_data "$DATABASE_URL"
say "infrastructure ready in $(( $(date +%s) - t0 )) s"

say "typecheck"; npx tsc -p tsconfig.json --noEmit
say "lint"; npm run -s lint
say "unit tests"; npx jest --selectProjects unit --ci
say "integration tests"; npx jest --selectProjects integration --ci --runInBand
say "end-to-end tests"; npx jest --selectProjects e2e --ci --runInBand
say "all tests passed in $(( $(date +%s) - t0 )) s"
