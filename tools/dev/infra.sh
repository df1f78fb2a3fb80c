# Brings up what Gantry needs, for `npm start` and `npm test` alike (sourced, not executed).
# Starts nothing that is given by KAFKA_BROKERS, DATABASE_URL or REDIS_URL. Records what it
# started in GANTRY_STARTED_* so the caller's trap can stop exactly that.
# shellcheck shell=bash

GANTRY_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
GANTRY_STARTED_KAFKA_PORT=""
GANTRY_STARTED_REDIS_PORT=""
GANTRY_STARTED_POSTGRES=""

say() { printf '[gantry] %s\n' "$*" >&2; }
die() { printf '[gantry] error: %s\n' "$*" >&2; exit 1; }

# 1. Node packages: installed when missing or when the lockfile changed since the last install.
ensure_node_modules() {
  local stamp="$GANTRY_ROOT/node_modules/.package-lock.json"
  if [ ! -f "$stamp" ] || [ "$GANTRY_ROOT/package-lock.json" -nt "$stamp" ]; then
    say "installing npm packages (npm ci)"
    (cd "$GANTRY_ROOT" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci failed"
  fi
}

# Debian packages Gantry's processes run with, installed with apt where missing (as root, or
# through sudo without a password). $1: the command that shows the package is there; the rest: packages.
ensure_debian_packages() {
  local probe="$1"; shift
  command -v "$probe" >/dev/null && return 0
  say "installing $* (apt)"
  apt_get() { if [ "$(id -u)" = 0 ]; then apt-get "$@"; else sudo -n apt-get "$@"; fi; }
  { apt_get install -y -q "$@" >/dev/null 2>&1 || { apt_get update -q >/dev/null && apt_get install -y -q "$@" >/dev/null; }; } \
    || die "cannot install $* with apt: install them yourself"
}

# The node agent runs every attempt in a bubblewrap sandbox by default (ADR 0033).
ensure_sandbox_tools() {
  ensure_debian_packages bwrap bubblewrap
}

build() {
  say "building (swc)"
  (cd "$GANTRY_ROOT" && npm run -s build) || die "build failed"
}

# 2. Kafka: a local KRaft broker from Maven Central's jars unless KAFKA_BROKERS is set.
ensure_kafka() {
  local port="$1"
  if [ -n "${KAFKA_BROKERS:-}" ]; then say "using Kafka at $KAFKA_BROKERS"; return; fi
  local data_dir="$GANTRY_ROOT/.cache/kafka/data-$port"
  local already=""
  if [ -f "$data_dir/broker.pid" ] && kill -0 "$(cat "$data_dir/broker.pid")" 2>/dev/null; then already=1; fi
  # Recorded before the start, not after: a SIGTERM during the broker's start-up (bash runs its trap
  # once start.sh returns, then exits) must still find the broker on the list of what to stop.
  [ -n "$already" ] || GANTRY_STARTED_KAFKA_PORT="$port"
  bash "$GANTRY_ROOT/scripts/kafka/start.sh" --port "$port" --data-dir "$data_dir" >/dev/null \
    || die "Kafka did not come up on 127.0.0.1:$port; its log is $data_dir/broker.log"
  export KAFKA_BROKERS="127.0.0.1:$port"
  # The broker takes only authenticated clients: the launcher gives each service its own user
  # from this file; tools and in-process test clients connect as its admin.
  export GANTRY_KAFKA_CREDENTIALS_FILE="$data_dir/credentials.json"
  export KAFKA_SASL_MECHANISM=scram-sha-512 KAFKA_SASL_USERNAME=gantry-admin
  KAFKA_SASL_PASSWORD="$(. "$GANTRY_ROOT/scripts/kafka/lib.sh" && kafka_credential "$GANTRY_KAFKA_CREDENTIALS_FILE" admin)"
  export KAFKA_SASL_PASSWORD
}

# 3. Postgres and Redis: the machine's own; started from the installed packages if not reachable.
ensure_postgres() {
  local url="$1"
  if node -e "const {Client}=require('pg');const c=new Client({connectionString:process.argv[1].replace(/\/[^/]*$/,'/postgres')});c.connect().then(()=>c.end()).catch(()=>process.exit(1))" "$url" 2>/dev/null; then return; fi
  if command -v pg_ctlcluster >/dev/null && [ -z "${DATABASE_URL_GIVEN:-}" ]; then
    say "Postgres not reachable; starting the local cluster"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start && GANTRY_STARTED_POSTGRES=1
  fi
  local i
  for i in $(seq 1 60); do
    node -e "const {Client}=require('pg');const c=new Client({connectionString:process.argv[1].replace(/\/[^/]*$/,'/postgres')});c.connect().then(()=>c.end()).catch(()=>process.exit(1))" "$url" 2>/dev/null && return
    sleep 0.5
  done
  die "Postgres is not reachable at $url (is the server running? /var/log/postgresql has its log)"
}

ensure_redis() {
  local url="$1"
  local hostport="${url#redis://}"; hostport="${hostport%%/*}"
  local host="${hostport%%:*}" port="${hostport##*:}"
  if redis-cli -h "$host" -p "$port" ping >/dev/null 2>&1; then return; fi
  if command -v redis-server >/dev/null && [ -z "${REDIS_URL_GIVEN:-}" ]; then
    say "Redis not reachable; starting redis-server on $port"
    mkdir -p "$GANTRY_ROOT/.cache/redis"
    GANTRY_STARTED_REDIS_PORT="$port"
    redis-server --daemonize yes --bind 127.0.0.1 --port "$port" --save '' --appendonly no --databases 64 \
      --dir "$GANTRY_ROOT/.cache/redis" --logfile "$GANTRY_ROOT/.cache/redis/redis-$port.log" >/dev/null
  fi
  local i
  for i in $(seq 1 40); do redis-cli -h "$host" -p "$port" ping >/dev/null 2>&1 && return; sleep 0.25; done
  die "Redis is not reachable at $url (log: $GANTRY_ROOT/.cache/redis/redis-$port.log)"
}

# 4. Schema and topics: migrations by their own command, topics with explicit partition counts.
prepare_data() {
  local db_url="$1"
  (cd "$GANTRY_ROOT" && node dist/tools/infra/ensure-databases.js "$db_url") || die "cannot create the database in $db_url"
  (cd "$GANTRY_ROOT" && DATABASE_URL="$db_url" node dist/libs/persistence/src/cli/migrate.js >&2) || die "migrations failed"
  (cd "$GANTRY_ROOT" && node dist/tools/infra/prepare-kafka.js >&2) || die "cannot create Kafka topics and ACLs on $KAFKA_BROKERS"
}

stop_started_infra() {
  if [ -n "$GANTRY_STARTED_KAFKA_PORT" ]; then
    say "stopping the Kafka broker it started"
    bash "$GANTRY_ROOT/scripts/kafka/stop.sh" --port "$GANTRY_STARTED_KAFKA_PORT" >/dev/null 2>&1 || true
    GANTRY_STARTED_KAFKA_PORT=""
  fi
  if [ -n "$GANTRY_STARTED_POSTGRES" ]; then
    say "stopping the Postgres cluster it started"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main stop >/dev/null 2>&1 || true
    GANTRY_STARTED_POSTGRES=""
  fi
  if [ -n "$GANTRY_STARTED_REDIS_PORT" ]; then
    redis-cli -p "$GANTRY_STARTED_REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
    GANTRY_STARTED_REDIS_PORT=""
  fi
}
