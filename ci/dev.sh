#!/usr/bin/env bash
# Set up a checkout and run it.
#
#   bash ci/dev.sh serve [mockbroker serve flags]   set up, then run a broker in the foreground
#   bash ci/dev.sh test  [pytest args]              set up, check the import layering, then run
#                                                   the whole test suite
#   bash ci/dev.sh setup                            set up only
#
# Set-up is idempotent: a virtual environment at .venv/ with the package (editable) and its test
# dependencies, Kafka's own jars in .cache/jars/ (the tests read Kafka's message specs from them;
# the Java client and Kafka Streams tests run them), Spark's Kafka connector in
# .cache/jars/spark/ (the Spark tests load it) and Kafka's command-line tools in
# .cache/jars/kafka-tools/.  Needs Python 3.11+, and Java 17 with Maven for
# the jars.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

log() { printf 'dev.sh: %s\n' "$*" >&2; }

pick_python() {
  for candidate in "${PYTHON:-}" python3.13 python3.12 python3.11 python3; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      echo "$candidate"; return 0
    fi
  done
  log "Python 3.11 or newer is required"; return 1
}

setup_venv() {
  if [ ! -x .venv/bin/python ]; then
    local py; py=$(pick_python)
    log "creating .venv with $py"
    "$py" -m venv .venv
  fi
  local stamp=.venv/.mockbroker-installed
  if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    log "installing the package and its test dependencies into .venv"
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
    touch "$stamp"
  fi
}

ensure_maven() {
  command -v mvn >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing Maven"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq maven >/dev/null
  else
    log "Maven (mvn) is required to fetch Kafka's jars"; return 1
  fi
}

setup_jars() {
  local version artifact
  version=$(.venv/bin/python -c 'from wire.definitions import KAFKA_VERSION; print(KAFKA_VERSION)')
  mkdir -p .cache/jars
  for artifact in kafka-clients kafka-group-coordinator kafka-transaction-coordinator; do
    if [ ! -f ".cache/jars/$artifact-$version.jar" ]; then
      ensure_maven
      log "fetching org.apache.kafka:$artifact:$version"
      mvn --batch-mode --quiet dependency:copy \
        "-Dartifact=org.apache.kafka:$artifact:$version" -DoutputDirectory=.cache/jars
    fi
  done
  # the Java client's one required runtime dependency, for the Java consumer-group tests
  if [ ! -f .cache/jars/slf4j-api-1.7.36.jar ]; then
    ensure_maven
    log "fetching org.slf4j:slf4j-api:1.7.36"
    mvn --batch-mode --quiet dependency:copy \
      "-Dartifact=org.slf4j:slf4j-api:1.7.36" -DoutputDirectory=.cache/jars
  fi
  # Kafka Streams and the kafka-clients it was built with, for the Streams exactly-once tests
  # (the topology keeps its state in memory, so Streams' rocksdbjni is not needed).  Its own
  # version: the registry does not serve kafka-streams at every Kafka version.
  local streams=4.3.1
  for artifact in kafka-streams kafka-clients; do
    if [ ! -f ".cache/jars/$artifact-$streams.jar" ]; then
      ensure_maven
      log "fetching org.apache.kafka:$artifact:$streams"
      mvn --batch-mode --quiet dependency:copy \
        "-Dartifact=org.apache.kafka:$artifact:$streams" -DoutputDirectory=.cache/jars
    fi
  done
}

setup_spark() {
  # Spark's Kafka connector for the Spark tests, at the installed PySpark's version, with the jars
  # it needs beyond PySpark's own (ci/spark/pom.xml); the plugin's SparkSession loads them.
  local version dir=.cache/jars/spark
  version=$(.venv/bin/python -c 'import importlib.metadata as m; print(m.version("pyspark"))')
  [ -f "$dir/spark-sql-kafka-0-10_2.13-$version.jar" ] && return 0
  ensure_maven
  log "fetching org.apache.spark:spark-sql-kafka-0-10_2.13:$version and its dependencies"
  rm -rf "$dir.partial"
  mvn --batch-mode --quiet -f ci/spark/pom.xml dependency:copy-dependencies \
    "-Dspark.version=$version" -DincludeScope=runtime "-DoutputDirectory=$PWD/$dir.partial"
  rm -rf "$dir"
  mv "$dir.partial" "$dir"
}

setup_kafka_tools() {
  # Kafka's command-line tools (kafka-consumer-groups and the rest), run by their main classes
  local dir=.cache/jars/kafka-tools version
  version=$(sed -n 's:.*<kafka.tools.version>\(.*\)</kafka.tools.version>.*:\1:p' ci/kafka-tools/pom.xml)
  [ -f "$dir/kafka-tools-$version.jar" ] && return 0
  ensure_maven
  log "fetching org.apache.kafka:kafka-tools:$version and its dependencies"
  rm -rf "$dir.partial"
  mvn --batch-mode --quiet -f ci/kafka-tools/pom.xml dependency:copy-dependencies \
    -DincludeScope=runtime "-DoutputDirectory=$PWD/$dir.partial"
  rm -rf "$dir"
  mv "$dir.partial" "$dir"
}

setup() { setup_venv; setup_jars; setup_spark; setup_kafka_tools; }

command=${1:-}
[ $# -gt 0 ] && shift
case "$command" in
  setup) setup ;;
  serve) setup_venv; exec .venv/bin/mockbroker serve "$@" ;;
  test)  setup
         # the layering contracts in pyproject.toml first: a broken one fails the command
         .venv/bin/lint-imports --no-logo
         exec .venv/bin/python -m pytest -n auto "$@" ;;
  *) echo "usage: bash ci/dev.sh {serve|test|setup} [args...]" >&2; exit 2 ;;
esac
