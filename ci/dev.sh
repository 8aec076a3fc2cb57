#!/usr/bin/env bash
# Set up a checkout and run it.
#
#   bash ci/dev.sh serve [mockbroker serve flags]   set up, then run a broker in the foreground
#   bash ci/dev.sh test  [pytest args]              set up, check the import layering, then run
#                                                   the whole test suite (mockbroker and, for the
#                                                   conformance tests, Apache Kafka too); without
#                                                   args it also checks the README's matrix
#   bash ci/dev.sh setup                            set up only
#
# Set-up is idempotent: a virtual environment at .venv/ with the package (editable) and its test
# dependencies, Kafka's own jars in .cache/jars/ (the tests read Kafka's message specs from them;
# the Java client and Kafka Streams tests run them), Spark's Kafka connector in
# .cache/jars/spark/ (the Spark tests load it), Kafka's command-line tools in
# .cache/jars/kafka-tools/ and Apache Kafka's broker in .cache/jars/kafka-broker/ (the
# conformance tests run against it too) and the older releases mockbroker emulates in
# .cache/jars/kafka-broker-<version>/, Apicurio Registry built from ci/apicurio/ into
# .cache/apicurio/app/ (the Schema Registry tests' second registry), and the other clients of
# the conformance tests: a franz-go program built into .cache/bin/ (with Go), kafkajs in
# tests/clients/node/node_modules (with npm) and Debian's kcat and Chromium (installed when
# running as root; the dashboard test drives Chromium with Playwright).  Needs Python 3.11+,
# Java 17 with Maven for the jars and Apicurio, Go and npm.
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
  # again when the package's description or its C source (the native record walk) changed
  if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ wire/_walk.c -nt "$stamp" ]; then
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
  for artifact in kafka-clients kafka-group-coordinator kafka-transaction-coordinator \
      kafka-share-coordinator; do
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
  # Kafka Streams and the kafka-clients it was built with, for the Streams tests (the topology
  # keeps its state in memory, so Streams' rocksdbjni is not needed, nor the jackson jars it
  # reads its state directory's process file with).  Its own version: the registry does not
  # serve kafka-streams at every Kafka version.
  local streams=4.4.0
  for artifact in kafka-streams kafka-clients; do
    if [ ! -f ".cache/jars/$artifact-$streams.jar" ]; then
      ensure_maven
      log "fetching org.apache.kafka:$artifact:$streams"
      mvn --batch-mode --quiet dependency:copy \
        "-Dartifact=org.apache.kafka:$artifact:$streams" -DoutputDirectory=.cache/jars
    fi
  done
}

# fetch_jars POM DIR MARKER [MVN ARGS...]: POM's runtime dependencies into DIR, unless MARKER
# (a jar they include) is there already; a fetch that fails leaves no half-filled DIR
fetch_jars() {
  local pom=$1 dir=$2 marker=$3
  shift 3
  [ -f "$dir/$marker" ] && return 0
  ensure_maven
  log "fetching the jars of $pom"
  rm -rf "$dir.partial"
  mvn --batch-mode --quiet -f "$pom" dependency:copy-dependencies -DincludeScope=runtime \
    "-DoutputDirectory=$PWD/$dir.partial" "$@"
  rm -rf "$dir"
  mv "$dir.partial" "$dir"
}

pom_property() {  # pom_property POM NAME: a property's value in a POM of ours
  sed -n "s:.*<$2>\(.*\)</$2>.*:\1:p" "$1"
}

setup_spark() {
  # Spark's Kafka connector for the Spark tests, at the installed PySpark's version, with the jars
  # it needs beyond PySpark's own, and spark-avro (ci/spark/pom.xml); the plugin's SparkSession
  # loads them.  The marker is spark-avro's jar, the last the POM gained: older caches refetch.
  local version
  version=$(.venv/bin/python -c 'import importlib.metadata as m; print(m.version("pyspark"))')
  fetch_jars ci/spark/pom.xml .cache/jars/spark "spark-avro_2.13-$version.jar" \
    "-Dspark.version=$version"
}

setup_kafka_tools() {
  # Kafka's command-line tools (kafka-consumer-groups and the rest), run by their main classes;
  # the marker is the broker's jar at the tools' version, so a cache of other tools is refetched
  fetch_jars ci/kafka-tools/pom.xml .cache/jars/kafka-tools \
    "kafka_2.13-$(pom_property ci/kafka-tools/pom.xml kafka.tools.version).jar"
}

setup_kafka_broker() {
  # Apache Kafka's broker, the second target of the client tests
  fetch_jars ci/kafka-broker/pom.xml .cache/jars/kafka-broker \
    "kafka_2.13-$(pom_property ci/kafka-broker/pom.xml kafka.version).jar"
}

setup_kafka_releases() {
  # the older Kafka releases mockbroker emulates (kafka_version), the real brokers the version
  # tests compare it with: ci/kafka-releases/pom.xml at every release wire/releases.py
  # knows but the newest (the broker above), into .cache/jars/kafka-broker-<version>/; 3.x logs
  # through reload4j
  local version logging newest
  newest=$(pom_property ci/kafka-broker/pom.xml kafka.version)
  for version in $(.venv/bin/python -c 'from wire.releases import RELEASES as r
print(*(release.version for release in r.values()))'); do
    [ "$version" = "$newest" ] && continue
    logging=""
    case $version in 3.*) logging=-Dlogging=reload4j ;; esac
    # shellcheck disable=SC2086  # no logging flag for 4.x: nothing at all
    fetch_jars ci/kafka-releases/pom.xml ".cache/jars/kafka-broker-$version" \
      "kafka_2.13-$version.jar" "-Dkafka.version=$version" $logging
  done
}

setup_apicurio() {
  # Apicurio Registry 2.4.2, the second Confluent-compatible registry of the registry tests:
  # ci/apicurio/ built by Quarkus into .cache/apicurio/app/ (quarkus-run.jar and its jars);
  # again when a file of ci/apicurio/ changed.  A build that fails leaves the old app in place.
  local out=.cache/apicurio/app build=.cache/apicurio/build
  if [ -f "$out/.built" ] && [ -z "$(find ci/apicurio -type f -newer "$out/.built")" ]; then
    return 0
  fi
  ensure_maven
  log "building Apicurio Registry (ci/apicurio)"
  rm -rf "$build"
  mvn --batch-mode --quiet -f ci/apicurio/pom.xml package -DskipTests \
    "-Dapicurio.build.directory=$PWD/$build"
  rm -rf "$out"
  mv "$build/quarkus-app" "$out"
  rm -rf "$build"
  touch "$out/.built"
}

debian_package() {
  # debian_package NAME WHO-NEEDS-IT: Debian's package NAME (which installs the command NAME),
  # installed when running as root; otherwise a line saying what will fail without it
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing $1"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null 2>&1 ||
      { apt-get update -qq &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null; }
  else
    log "$1 not found and not root to install it: $2 will fail"
  fi
}

# kcat, a client of the conformance tests; Chromium, the browser of the dashboard test
# (Playwright drives /usr/bin/chromium; its own browser downloads are never used)
setup_kcat() { debian_package kcat "the kcat conformance tests"; }
setup_chromium() { debian_package chromium "the dashboard test"; }

setup_node_client() {
  # the kafkajs client of the conformance tests (tests/clients/node), from the npm registry
  local dir=tests/clients/node
  if ! command -v npm >/dev/null 2>&1; then
    log "npm not found: the kafkajs conformance tests will fail"; return 0
  fi
  if [ ! -d "$dir/node_modules" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules" ]; then
    log "installing the kafkajs client"
    (cd "$dir" && npm ci --no-audit --no-fund --silent && touch node_modules)
  fi
}

setup_go_client() {
  # the franz-go client of the conformance tests (tests/clients/go), from the Go module proxy
  local out=.cache/bin/franz-client
  if ! command -v go >/dev/null 2>&1; then
    log "go not found: the franz-go conformance tests will fail"; return 0
  fi
  if [ ! -x "$out" ] || [ -n "$(find tests/clients/go -type f -newer "$out")" ]; then
    log "building the franz-go client"
    mkdir -p .cache/bin
    (cd tests/clients/go && go build -o "../../../$out" .)
  fi
}

setup() {
  setup_venv; setup_jars; setup_spark; setup_kafka_tools; setup_kafka_broker; setup_kafka_releases
  setup_apicurio
  setup_go_client; setup_node_client; setup_kcat; setup_chromium
}

command=${1:-}
[ $# -gt 0 ] && shift
case "$command" in
  setup) setup ;;
  serve) setup_venv; exec .venv/bin/mockbroker serve "$@" ;;
  test)  setup
         # the layering contracts in pyproject.toml first: a broken one fails the command
         .venv/bin/lint-imports --no-logo
         # worksteal: a worker that runs dry takes queued tests from one held up by a slow one
         .venv/bin/python -m pytest -n auto --dist worksteal \
           --junitxml=.cache/test-report.xml "$@"
         # a whole run also checks that the README's conformance matrix is what it showed
         if [ $# -eq 0 ]; then
           .venv/bin/python ci/conformance.py .cache/test-report.xml --check README.md
         fi ;;
  *) echo "usage: bash ci/dev.sh {serve|test|setup} [args...]" >&2; exit 2 ;;
esac
