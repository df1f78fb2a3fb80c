#!/usr/bin/env bash
# Start a single-node KRaft Apache Kafka broker (no Docker, no ZooKeeper) in the background.
# Clients must authenticate and are held to ACLs (StandardAuthorizer): SASL/SCRAM-SHA-512 or -256,
# one principal per Gantry role with passwords generated when the storage is formatted; and
# SASL/OAUTHBEARER for real agents, each node its own principal (the token's `sub`), with tokens the
# gateway signs with the key made here (ADR 0034).
#
# Usage: scripts/kafka/start.sh [--data-dir DIR] [--port 9092] [--controller-port PORT+1]
#   --data-dir         default <repo>/.cache/kafka/data-<port>; holds server.properties,
#                      the Kafka logs (kraft-logs/), broker.log, broker.pid, credentials.json
#                      (mode 0600: the SCRAM user of each role and its password),
#                      agent-token-key.pem (mode 0600: the ES256 key that signs agents' tokens)
#                      and agent-token-jwks.json (its public half, which the broker reads at start)
#   --port             client (SASL_PLAINTEXT) port, default 9092
#   --controller-port  KRaft controller port, default port+1 (9093 for the default port)
# Env:
#   KAFKA_START_TIMEOUT_S  readiness deadline in seconds (default 90)
#   KAFKA_JAVA_OPTS        extra JVM options appended to the defaults
#
# Exits 0 once the port accepts TCP and the log says "Kafka Server started", printing
# the broker address (host:port) as the only line on stdout. If this data dir's broker
# is already running it says so (stderr), still prints the address, and exits 0.
set -euo pipefail

KAFKA_SCRIPT="start.sh"
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

port=9092
cport=""
data_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --data-dir) [ $# -ge 2 ] || kafka_die "--data-dir needs a value"; data_dir="$2"; shift 2 ;;
    --data-dir=*) data_dir="${1#*=}"; shift ;;
    --port) [ $# -ge 2 ] || kafka_die "--port needs a value"; port="$2"; shift 2 ;;
    --port=*) port="${1#*=}"; shift ;;
    --controller-port) [ $# -ge 2 ] || kafka_die "--controller-port needs a value"; cport="$2"; shift 2 ;;
    --controller-port=*) cport="${1#*=}"; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) kafka_die "unknown argument: $1 (see --help)" ;;
  esac
done
kafka_is_port "$port" || kafka_die "invalid --port: $port"
# Default the controller port to port+1 so a non-default --port never collides with
# the dev broker's 9093.
[ -n "$cport" ] || cport=$(( port + 1 ))
kafka_is_port "$cport" || kafka_die "invalid --controller-port: $cport"
[ "$port" != "$cport" ] || kafka_die "--port and --controller-port must differ"
[ -n "$data_dir" ] || data_dir="$(kafka_default_data_dir "$port")"
data_dir="$(kafka_abs_path "$data_dir")"

timeout_s="${KAFKA_START_TIMEOUT_S:-90}"
[[ "$timeout_s" =~ ^[0-9]+$ ]] || kafka_die "KAFKA_START_TIMEOUT_S must be whole seconds, got: $timeout_s"
addr="127.0.0.1:$port"
props="$data_dir/server.properties"
log_dirs="$data_dir/kraft-logs"
broker_log="$data_dir/broker.log"
pid_file="$data_dir/broker.pid"
infra="$KAFKA_REPO_ROOT/infra/kafka"

if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then JAVA="$JAVA_HOME/bin/java"; else JAVA="java"; fi
command -v "$JAVA" >/dev/null 2>&1 || kafka_die "java not found (need Java 11+; set JAVA_HOME or PATH)"

mkdir -p "$data_dir"
# Serialise concurrent starts on the same data dir (e.g. two test workers), so only one
# of them launches a JVM; the others see it running. fd 8 is closed for the JVM below.
exec 8>"$data_dir/.start.lock"
if command -v flock >/dev/null 2>&1; then
  flock -w "$timeout_s" 8 || kafka_die "timed out after ${timeout_s}s waiting for another start.sh on $data_dir"
fi

# Wait for readiness of the broker PID, bounded by the deadline. Readiness = the client
# port accepts TCP AND the broker logged "Kafka Server started" (the port opens a little
# before the broker has registered with its own controller and can serve metadata).
wait_ready() {
  local pid="$1" deadline=$(( SECONDS + timeout_s )) port_ok=0 log_ok=0
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      fail "broker process $pid exited before it became ready"
    fi
    [ "$port_ok" = 1 ] || { kafka_port_open "$port" && port_ok=1; } || true
    [ "$log_ok" = 1 ] || { grep -qF "Kafka Server started" "$broker_log" 2>/dev/null && log_ok=1; } || true
    [ "$port_ok" = 1 ] && [ "$log_ok" = 1 ] && return 0
    if [ "$SECONDS" -ge "$deadline" ]; then
      local what=()
      [ "$port_ok" = 1 ] || what+=("port $port is not accepting connections")
      [ "$log_ok" = 1 ] || what+=("no 'Kafka Server started' in the log")
      fail "broker not ready after ${timeout_s}s: ${what[0]}${what[1]:+; ${what[1]}}"
    fi
    sleep 0.5
  done
}

started_pid=""
fail() {
  echo "$KAFKA_SCRIPT: $*" >&2
  echo "$KAFKA_SCRIPT: broker log: $broker_log (last 40 lines follow)" >&2
  tail -n 40 "$broker_log" 2>/dev/null | sed 's/^/  | /' >&2 || true
  # Don't leave a half-started broker behind when we report failure.
  if [ -n "$started_pid" ]; then
    if kill -0 "$started_pid" 2>/dev/null; then
      echo "$KAFKA_SCRIPT: stopping broker pid $started_pid" >&2
      kafka_terminate "$started_pid" 15 || true
    fi
    rm -f "$pid_file"
  fi
  exit 1
}

if pid="$(kafka_running_pid "$data_dir")"; then
  echo "$KAFKA_SCRIPT: broker already running (pid $pid, data dir $data_dir)" >&2
  # Report the port it actually runs on, which may differ from this call's --port.
  running_port="$(sed -n 's|^advertised.listeners=CLIENT://127.0.0.1:\([0-9]*\)$|\1|p' "$props" 2>/dev/null || true)"
  if [ -n "$running_port" ] && [ "$running_port" != "$port" ]; then
    echo "$KAFKA_SCRIPT: warning: it listens on port $running_port, not $port; stop it first to change ports" >&2
    port="$running_port"; addr="127.0.0.1:$port"
  fi
  wait_ready "$pid"
  echo "$addr"
  exit 0
fi
rm -f "$pid_file" # stale

# Fail fast (instead of waiting out the deadline) if another process holds our ports.
for p in "$port" "$cport"; do
  if kafka_port_open "$p"; then
    kafka_die "port $p is already in use by another process (a broker from another data dir? stop it with scripts/kafka/stop.sh --data-dir DIR or --port N)"
  fi
done

"$KAFKA_REPO_ROOT/scripts/kafka/fetch.sh"
classpath="$KAFKA_LIBS_DIR/*"

# Credentials: one SCRAM user per role, created with the storage (KRaft takes SCRAM credentials at
# format time). A data dir formatted without them (an older, unauthenticated broker) is formatted
# anew: its topics and offsets are lost, which a dev/test broker can afford.
creds="$data_dir/credentials.json"
if [ ! -s "$creds" ] && [ -d "$log_dirs" ]; then
  echo "$KAFKA_SCRIPT: $data_dir has no credentials (formatted before authentication); formatting it anew" >&2
  rm -rf "$log_dirs"
fi
# A data dir formatted with other roles (the agents' shared `agent` user before ADR 0034) lacks a
# role's user: formatted anew too.
if [ -s "$creds" ] && [ -d "$log_dirs" ]; then
  for role in $KAFKA_ROLES; do
    if [ -z "$(kafka_credential "$creds" "$role")" ]; then
      echo "$KAFKA_SCRIPT: $data_dir has no user for role $role (formatted with other roles); formatting it anew" >&2
      rm -rf "$log_dirs" "$creds"
      break
    fi
  done
fi
gen_password() { head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
if [ ! -f "$log_dirs/meta.properties" ]; then
  umask 077
  {
    printf '{\n  "mechanism": "scram-sha-512",\n  "users": {\n'
    first=1
    for role in $KAFKA_ROLES; do
      [ "$first" = 1 ] || printf ',\n'
      first=0
      printf '    "%s": { "username": "gantry-%s", "password": "%s" }' "$role" "$role" "$(gen_password)"
    done
    printf '\n  }\n}\n'
  } > "$creds.tmp"
  mv "$creds.tmp" "$creds"
  umask 022
fi
admin_password="$(kafka_credential "$creds" admin)"
[ -n "$admin_password" ] || kafka_die "no admin password in $creds"

# The key that signs real agents' Kafka tokens (ES256), made once beside the credentials; the broker
# reads its public half (a JWKS file, kid = the key's RFC 7638 thumbprint) when it starts, so the key
# belongs to the broker like its users: every stack run against this broker signs with it.
token_key="$data_dir/agent-token-key.pem"
token_jwks="$data_dir/agent-token-jwks.json"
if [ ! -s "$token_key" ] || [ ! -s "$token_jwks" ]; then
  command -v node >/dev/null 2>&1 || kafka_die "node not found: it makes the agents' token key"
  node -e '
    const { createHash, generateKeyPairSync } = require("node:crypto");
    const { writeFileSync } = require("node:fs");
    const [keyFile, jwksFile] = process.argv.slice(1);
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const { crv, kty, x, y } = publicKey.export({ format: "jwk" });
    const kid = createHash("sha256").update(JSON.stringify({ crv, kty, x, y })).digest("base64url");
    writeFileSync(keyFile, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
    writeFileSync(jwksFile, JSON.stringify({ keys: [{ kty, crv, x, y, kid, use: "sig", alg: "ES256" }] }) + "\n");
  ' "$token_key" "$token_jwks" || kafka_die "cannot make the agents' token key in $data_dir"
fi

# Rewritten on every start so it always matches the flags; the data in log.dirs survives.
cat > "$props" <<PROPS
# Generated by scripts/kafka/start.sh -- edits are overwritten on the next start.
# Single-node KRaft: this one process is both the broker and the metadata controller.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
# Clients (and the broker itself) on CLIENT with SCRAM; the controller listener with PLAIN, which
# KRaft needs there (SCRAM credentials live in the metadata the controller serves).
listeners=CLIENT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=CLIENT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=CLIENT
listener.security.protocol.map=CLIENT:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT
listener.name.client.sasl.enabled.mechanisms=SCRAM-SHA-512,SCRAM-SHA-256,OAUTHBEARER
sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512
listener.name.client.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="gantry-admin" password="$admin_password";
listener.name.client.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="gantry-admin" password="$admin_password";
# Real agents: OAUTHBEARER, a JWT the gateway signed (ES256, iss gantry, aud gantry-kafka); the
# principal is its sub claim (gantry-node-<node id>.g<generation>), whose only group ACL is its node's
# own group (ADR 0034). A connection must authenticate again before its token expires (kafkajs
# does, asking the agent for a fresh token), so a revoked node keeps no connection past its token.
listener.name.client.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ;
listener.name.client.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler
listener.name.client.oauthbearer.connections.max.reauth.ms=3600000
sasl.oauthbearer.jwks.endpoint.url=file://$token_jwks
sasl.oauthbearer.expected.issuer=gantry
sasl.oauthbearer.expected.audience=gantry-kafka
# Broker and gateway share this host's clock; the default 30 s would let a token outlive its exp.
sasl.oauthbearer.clock.skew.seconds=5
listener.name.controller.sasl.enabled.mechanisms=PLAIN
sasl.mechanism.controller.protocol=PLAIN
listener.name.controller.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="gantry-admin" password="$admin_password" user_gantry-admin="$admin_password";
# ACLs: nothing is allowed that no ACL allows (tools/infra/prepare-kafka.ts writes them); the
# broker's own principal may do everything.
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:gantry-admin
allow.everyone.if.no.acl.found=false
log.dirs=$log_dirs

# One broker, so every internal topic must have replication factor 1.
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
default.replication.factor=1
min.insync.replicas=1
# Tests create many consumer groups; don't wait the default 3 s before each first rebalance.
group.initial.rebalance.delay.ms=0
# The controller fences a broker whose heartbeats it has not handled for this long (default 9 s).
# Here the broker is the only one, beside its own controller: fencing it helps nobody and takes
# every partition and group coordinator away at once, so every consumer group rebalances. On a
# starved 2-core box (test runs side by side) the controller handled no heartbeat for 9 s three
# times in ten minutes (broker.log: "Fencing broker 1 because its session has timed out").
broker.session.timeout.ms=60000

# Topics are created explicitly (kafkajs admin); a typo must not silently create one.
auto.create.topics.enable=false
num.partitions=6

# Dev/test sizing: 2-core machines, short retention, small segments.
num.network.threads=2
num.io.threads=4
log.retention.hours=24
log.segment.bytes=16777216
log.retention.check.interval.ms=60000
PROPS

# Format the storage once (KRaft needs a cluster id in meta.properties before first start), with
# every role's SCRAM credentials (both mechanisms, so clients may use either).
if [ ! -f "$log_dirs/meta.properties" ]; then
  tools_java=("$JAVA" -Xmx256m -cp "$classpath" "-Dlog4j.configuration=file:$infra/tools-log4j.properties")
  # stdout of random-uuid is exactly the id (tools log config sends logging to stderr).
  cluster_id="$(timeout 60 "${tools_java[@]}" kafka.tools.StorageTool random-uuid)" \
    || kafka_die "StorageTool random-uuid failed"
  [[ "$cluster_id" =~ ^[A-Za-z0-9_-]{22}$ ]] || kafka_die "unexpected cluster id from StorageTool: '$cluster_id'"
  scram=()
  for role in $KAFKA_ROLES; do
    pw="$(kafka_credential "$creds" "$role")"
    scram+=(--add-scram "SCRAM-SHA-512=[name=gantry-$role,password=$pw]" --add-scram "SCRAM-SHA-256=[name=gantry-$role,password=$pw]")
  done
  timeout 60 "${tools_java[@]}" kafka.tools.StorageTool format -t "$cluster_id" -c "$props" --ignore-formatted "${scram[@]}" >&2 \
    || kafka_die "StorageTool format failed for $log_dirs"
fi

# Keep the previous run's log for post-mortems; the readiness grep must only see this run.
[ -f "$broker_log" ] && mv -f "$broker_log" "$broker_log.1"
: > "$broker_log"

# Own session (setsid) so Ctrl-C in the calling terminal / test runner doesn't kill it,
# and all three std streams redirected so a caller capturing our output (execSync,
# $(...)) is not kept waiting on pipes held open by the JVM. The inner shell writes its
# own pid and then execs java, so the pid file holds the JVM's pid.
# shellcheck disable=SC2016,SC2086  # $$ is for the inner shell; KAFKA_JAVA_OPTS is word-split on purpose
setsid bash -c 'echo $$ > "$0"; exec "$@"' "$pid_file" \
  "$JAVA" -Xms256m -Xmx512m -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true \
  "-Dlog4j.configuration=file:$infra/log4j.properties" \
  "-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=file://$token_jwks" ${KAFKA_JAVA_OPTS:-} \
  -cp "$classpath" kafka.Kafka "$props" \
  < /dev/null >> "$broker_log" 2>&1 8>&- &
launcher=$!

# The pid file appears as soon as the inner shell runs; bounded wait.
for _ in $(seq 1 40); do [ -s "$pid_file" ] && break; sleep 0.05; done
started_pid="$(cat "$pid_file" 2>/dev/null || echo "$launcher")"
echo "$started_pid" > "$pid_file"

# If we're interrupted while waiting, don't leave an orphaned half-started broker.
trap 'fail "interrupted while waiting for the broker"' INT TERM
wait_ready "$started_pid"
trap - INT TERM
echo "$KAFKA_SCRIPT: Kafka broker ready at $addr (pid $started_pid, data dir $data_dir)" >&2
echo "$addr"
