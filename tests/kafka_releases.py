"""Older Apache Kafka releases as real brokers, for the version emulation tests.

:class:`ReleaseKafka` is :class:`~tests.real_kafka.RealKafka` (one KRaft node, broker and
controller in one process, PLAINTEXT) started from the jars of one release, which ``bash
ci/dev.sh setup`` fetches into ``.cache/jars/kafka-broker-<version>/`` for every release
:data:`wire.releases.RELEASES` knows (the release the codec is generated from runs
from ``.cache/jars/kafka-broker/``, the client tests' own Kafka).

Kafka 3.x logs through log4j 1 (reload4j), which reads neither the log4j 2 configuration
:class:`RealKafka` writes nor its system property.  For those releases a ``log4j.properties``
that logs to standard error is put on the classpath (a small jar beside the release's own), and
the broker's ``server.log``, where :class:`RealKafka` waits for "Kafka Server started", is made
a link to the standard error it writes: the readiness wait is the same for every release.
StorageTool's ``format`` takes the same arguments from 3.7 on (``--cluster-id``, ``--config``).

    python -m tests.kafka_releases serve 3.9.2     start one, print bootstrap=..., stop on Enter
    python -m tests.kafka_releases record > features.json   the features of every release

``record`` starts each release in turn and writes, as JSON by full version, the features its
broker lists in ApiVersions (asked in the newest version it serves, so none is left out):
what ``python -m wire.tools.releases --features`` takes.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import zipfile
from pathlib import Path

import wire
from tests.real_kafka import JARS, ROOT, KafkaUnavailable, RealKafka, ask
from wire.definitions import APIS, KAFKA_VERSION
from wire.releases import RELEASES

#: the log4j 1 configuration a 3.x broker finds on its classpath: everything to standard error
_LOG4J1 = """\
log4j.rootLogger=INFO, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n
"""
_LOG4J1_JAR = "zz-mockbroker-log4j1-config.jar"


def release_jars(version: str) -> Path:
    """Where the broker jars of ``version`` (a full release: 4.0.2) are."""
    if version == KAFKA_VERSION:
        return JARS
    return ROOT / ".cache" / "jars" / f"kafka-broker-{version}"


def full_version(release: str) -> str:
    """The full version (4.0.2) of a release given as emulation takes it (4.0 or 4.0.2)."""
    for name, info in RELEASES.items():
        if release in (name, info.version):
            return info.version
    raise ValueError(f"unknown Kafka release {release!r}")


class ReleaseKafka(RealKafka):
    """One KRaft node of Kafka ``version`` (4.0 or 4.0.2)."""

    def __init__(self, version: str, settings: dict[str, str] | None = None, *,
                 heap: str = "320m"):
        self.version = full_version(version)
        super().__init__(settings, heap=heap, jars=release_jars(self.version))

    @property
    def log4j1(self) -> bool:
        return self.version.split(".")[0] == "3"

    def check(self) -> None:
        try:
            super().check()
        except KafkaUnavailable as exc:
            raise KafkaUnavailable(f"Kafka {self.version}: {exc}") from None

    def start(self, timeout: float = 180) -> "ReleaseKafka":
        if self.log4j1:
            self.check()
            _log4j1_config(self.jars)
        return super().start(timeout)

    def properties(self, ports: list[int]) -> dict[str, str]:
        props = super().properties(ports)
        if self.log4j1:  # log4j 1 writes to standard error: the log RealKafka reads is that
            (self.dir / "server.log").symlink_to(self.dir / "stderr.log")
        return props


def _log4j1_config(jars: Path) -> None:
    """The jar holding :data:`_LOG4J1` among ``jars``, written once (atomically: every test
    worker may get here at once)."""
    target = jars / _LOG4J1_JAR
    if target.exists():
        return
    fd, partial = tempfile.mkstemp(dir=jars, suffix=".partial")
    os.close(fd)
    with zipfile.ZipFile(partial, "w") as jar:
        jar.writestr("log4j.properties", _LOG4J1)
    os.replace(partial, target)


def api_versions(port: int, version: int | None = None):
    """The broker's ApiVersions answer, in ``version`` or else the newest it and the codec
    share."""
    request = wire.request_class(18)(client_software_name="mockbroker-probe",
                                     client_software_version="1")
    if version is None:
        first = ask(port, 18, 3, request)  # every release here serves v3
        served = next(k.max_version for k in first.api_keys if k.api_key == 18)
        version = min(served, APIS[18].request.valid.hi)
        if version == 3:
            return first
    return ask(port, 18, version, request)


def record(versions: list[str]) -> dict[str, dict]:
    """full version -> {"supported": {name: [min, max]}, "finalized": {name: level}}."""
    found = {}
    for version in versions:
        kafka = ReleaseKafka(version).start()
        try:
            answer = api_versions(kafka.port)
        finally:
            kafka.stop()
        found[kafka.version] = {
            "supported": {f.name: [f.min_version, f.max_version]
                          for f in answer.supported_features},
            "finalized": {f.name: f.max_version_level for f in answer.finalized_features}}
    return found


def main(argv: list[str]) -> int:
    command, versions = (argv[0], argv[1:]) if argv else ("", [])
    if command == "record":
        json.dump(record(versions or [r.version for r in RELEASES.values()]), sys.stdout,
                  indent=1)
        print()
        return 0
    if command != "serve" or len(versions) != 1:
        print(f"usage: python -m tests.kafka_releases {{serve VERSION|record [VERSION...]}} "
              f"(versions: {', '.join(RELEASES)})", file=sys.stderr)
        return 2
    kafka = ReleaseKafka(versions[0]).start()
    try:
        print(f"bootstrap={kafka.bootstrap_servers}", flush=True)
        sys.stdin.readline()
    finally:
        kafka.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
