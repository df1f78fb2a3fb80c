#!/usr/bin/env bash
# Fetch the Apache Kafka broker jars (plus a logging backend) from Maven Central into
# <repo>/.cache/kafka/libs, using infra/kafka/pom.xml. There is no Docker here and
# Debian/npm ship only Kafka clients, so the broker's classpath comes from Maven.
#
# Idempotent: a stamp file records which pom was fetched; if it matches, this is a no-op.
# Usage: scripts/kafka/fetch.sh [--force]
# Env:   KAFKA_FETCH_TIMEOUT_S (default 900) caps the Maven run so it can never hang forever.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
POM="$REPO_ROOT/infra/kafka/pom.xml"
CACHE_DIR="$REPO_ROOT/.cache/kafka"
LIBS_DIR="$CACHE_DIR/libs"
FETCH_TIMEOUT_S="${KAFKA_FETCH_TIMEOUT_S:-900}"
# Pinned plugin: Maven 3.8's default dependency plugin binding is an old release.
DEP_PLUGIN="org.apache.maven.plugins:maven-dependency-plugin:3.8.1"

force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "fetch.sh: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

command -v mvn >/dev/null 2>&1 || { echo "fetch.sh: mvn not found on PATH (apt-get install maven)" >&2; exit 1; }
[ -f "$POM" ] || { echo "fetch.sh: missing $POM" >&2; exit 1; }

# The pom is the single source of truth for the version; the stamp is keyed on the
# version and holds the pom's hash, so editing the pom (e.g. logging deps) refetches.
KAFKA_VERSION="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$POM" | head -n1)"
[ -n "$KAFKA_VERSION" ] || { echo "fetch.sh: could not read <kafka.version> from $POM" >&2; exit 1; }
POM_SUM="$(sha256sum "$POM" | cut -d' ' -f1)"
STAMP="$LIBS_DIR/.fetched-kafka-$KAFKA_VERSION"

is_fresh() { [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$POM_SUM" ]; }

if [ "$force" = 0 ] && is_fresh; then
  exit 0
fi

mkdir -p "$CACHE_DIR"
# Serialise concurrent fetches (e.g. `npm start` and the test suite at once) so they
# don't clobber each other's libs dir. The wait is bounded, like everything else here.
exec 9>"$CACHE_DIR/.fetch.lock"
if command -v flock >/dev/null 2>&1; then
  flock -w "$FETCH_TIMEOUT_S" 9 || { echo "fetch.sh: timed out waiting for another fetch ($CACHE_DIR/.fetch.lock)" >&2; exit 1; }
  # Another process may have finished the fetch while we waited.
  if [ "$force" = 0 ] && is_fresh; then exit 0; fi
fi

echo "fetch.sh: fetching Apache Kafka $KAFKA_VERSION broker jars from Maven Central into $LIBS_DIR ..." >&2
# Copy into a fresh temp dir and swap it in, so a failed/partial fetch never leaves a
# half-populated classpath, and jars of an older version never mix with the new ones.
TMP_DIR="$CACHE_DIR/libs.tmp.$$"
rm -rf "$TMP_DIR"
trap 'rm -rf "$TMP_DIR"' EXIT
start_s=$(date +%s)
# Maven's output goes to a log shown only on failure (Maven 3.8 with -q still emits
# stray ANSI reset codes on success).
MVN_LOG="$CACHE_DIR/fetch-mvn.log"
if ! timeout "$FETCH_TIMEOUT_S" mvn -q -B -Dstyle.color=never "$DEP_PLUGIN:copy-dependencies" \
    -DoutputDirectory="$TMP_DIR" -DincludeScope=runtime -f "$POM" > "$MVN_LOG" 2>&1; then
  echo "fetch.sh: Maven failed or timed out after ${FETCH_TIMEOUT_S}s fetching kafka_2.13:$KAFKA_VERSION; its output ($MVN_LOG):" >&2
  tail -n 60 "$MVN_LOG" >&2
  exit 1
fi
ls "$TMP_DIR"/kafka_2.13-"$KAFKA_VERSION".jar >/dev/null 2>&1 \
  || { echo "fetch.sh: kafka_2.13-$KAFKA_VERSION.jar missing after Maven run" >&2; exit 1; }
printf '%s\n' "$POM_SUM" > "$TMP_DIR/.fetched-kafka-$KAFKA_VERSION"
rm -rf "$LIBS_DIR"
mv "$TMP_DIR" "$LIBS_DIR"
trap - EXIT
echo "fetch.sh: $(find "$LIBS_DIR" -name "*.jar" | wc -l) jars in $LIBS_DIR ($(( $(date +%s) - start_s ))s)" >&2
