#!/usr/bin/env bash
# `npm test`: on a fresh machine, the same set-up as `npm start` (a separate broker on 29092, the
# gantry_test database, a redis-server of its own on 26379), then typecheck, lint and every test
# project. GANTRY_TEST_PORT_OFFSET=N moves the broker, Redis, the database name and every suite's
# ports (libs/testing/src/test-resources.ts), so two checkouts can run their suites side by side.
# With arguments, they are passed to one Jest run instead of the whole suite (see below).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../dev/infra.sh"
cd "$GANTRY_ROOT"

[ -n "${DATABASE_URL:-}" ] && DATABASE_URL_GIVEN=1
[ -n "${REDIS_URL:-}" ] && REDIS_URL_GIVEN=1
off="${GANTRY_TEST_PORT_OFFSET:-0}"
[[ "$off" =~ ^[0-9]+$ ]] || die "GANTRY_TEST_PORT_OFFSET must be a whole number, got: $off"
export GANTRY_TEST_PORT_OFFSET="$off"
db_suffix=""; [ "$off" = 0 ] || db_suffix="_$off"
export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/gantry_test$db_suffix}"
# A redis-server of the suite's own (not the machine's): the suites need more logical dbs than the
# default 16, and nothing they write can touch a Redis that someone else uses.
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:$(( 26379 + off ))/1}"
export KAFKAJS_NO_PARTITIONER_WARNING=1

trap stop_started_infra EXIT
t0=$(date +%s)
ensure_node_modules
build
# The console's browser tests (test/e2e/console.e2e-spec.ts) drive Debian's Chromium through
# playwright-core: Playwright's own browser downloads cannot be fetched here. GANTRY_CHROMIUM
# names another binary.
[ -n "${GANTRY_CHROMIUM:-}" ] || ensure_debian_packages chromium chromium
ensure_sandbox_tools
# A real container runtime for the sandbox's container tests: podman with runc, and busybox for a
# local image (no registry is reachable), configured by the suites' own containers.conf
# (libs/testing/src/test-container-image.ts).
ensure_debian_packages podman podman runc
ensure_debian_packages busybox busybox-static
ensure_kafka $(( 29092 + off ))
ensure_postgres "$DATABASE_URL"
# The default test database is this script's own: every run starts from an empty one, so rows an
# earlier run left behind (an outbox row for a topic that does not exist stops every relay at its
# head) cannot leak into this one.
[ -z "${DATABASE_URL_GIVEN:-}" ] && node dist/tools/infra/ensure-databases.js --recreate "$DATABASE_URL"
ensure_redis "$REDIS_URL"
prepare_data "$DATABASE_URL"
say "infrastructure ready in $(( $(date +%s) - t0 )) s"

# `npm test -- <jest arguments>`: the same set-up, then only that Jest run (a suite or a file while
# working on it); CI runs everything.
if [ $# -gt 0 ]; then
  say "jest $*"; npx jest --ci --runInBand "$@"
  say "tests passed in $(( $(date +%s) - t0 )) s"
  exit 0
fi

say "typecheck"; npx tsc -p tsconfig.json --noEmit
# The console is browser code: its own tsconfig (DOM types, no Node types).
say "typecheck (console)"; npx tsc -p apps/console/tsconfig.json --noEmit
# The checked-in API document and the client types generated from it match the code
# (`npm run openapi:write` rewrites both), and Spectral (.spectral.yaml) finds no error in it.
say "openapi document"; npm run -s openapi:check && npm run -s client:check
say "openapi lint"; npm run -s openapi:lint
# docs/configuration.md is generated from the config classes (`npm run docs:config` rewrites it).
say "configuration document"; npm run -s docs:config:check
# Prettier (.prettierrc.json) formats the code and its configuration; `npm run format` rewrites it.
say "format"; npm run -s format:check
say "lint"; npm run -s lint
say "unit tests"; npx jest --selectProjects unit --ci
say "integration tests"; npx jest --selectProjects integration --ci --runInBand
say "end-to-end tests"; npx jest --selectProjects e2e --ci --runInBand
say "all tests passed in $(( $(date +%s) - t0 )) s"
