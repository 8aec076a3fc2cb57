"""Feature levels with ``kafka-features.sh`` (Kafka's ``FeatureCommand`` on the Java Admin): on
both targets it describes the levels and checks upgrades and downgrades (``--dry-run``) with
the answers Kafka 4.4 gives; on mockbroker alone a level is really lowered, since on the Kafka
target every other test relies on it: a consumer of the consumer group protocol on a cluster at
``group.version`` 0 stops with librdkafka's fatal error, and is served again once the level is
back."""

from __future__ import annotations

import re

import confluent_kafka as ck
import pytest

from mockbroker import MockCluster
from tests.clients.helpers import RDKAFKA_LOG, run_kafka_tool, wait_for

FEATURES = "org.apache.kafka.tools.FeatureCommand"
PREFIX = "The update failed for all features since the following feature had an error: "


def features(bootstrap: str, *args: str) -> tuple[int, list[str]]:
    """(exit code, lines printed) of ``kafka-features.sh``, which may refuse."""
    done = run_kafka_tool(FEATURES, "--bootstrap-server", bootstrap, *args)
    return done.code, done.lines


def described(bootstrap: str) -> dict[str, tuple[str, str, str]]:
    """feature -> (supported min, supported max, finalized level), from ``describe``."""
    code, lines = features(bootstrap, "describe")
    assert code == 0, lines
    out = {}
    for line in lines:
        found = re.match(r"Feature: (\S+)\s+SupportedMinVersion: (.+?)\s+SupportedMaxVersion: "
                         r"(.+?)\s+FinalizedVersionLevel: (.+?)\s+Epoch: \d+$", line)
        assert found, line
        out[found[1]] = (found[2], found[3], found[4])
    return out


@pytest.mark.parametrize("client", ["kafka-tools"])
def test_kafka_features_describes_and_checks_upgrades_and_downgrades(target, client):
    bootstrap = target.bootstrap_servers
    levels = described(bootstrap)
    # the features mockbroker serves, as Kafka 4.4 reports them (Kafka also lists the KRaft
    # version, which mockbroker does not claim)
    assert {name: levels[name] for name in ("group.version", "share.version",
                                            "streams.version", "transaction.version",
                                            "eligible.leader.replicas.version")} == {
        "group.version": ("0", "1", "1"), "share.version": ("0", "2", "2"),
        "streams.version": ("0", "1", "1"), "transaction.version": ("0", "2", "2"),
        "eligible.leader.replicas.version": ("0", "1", "1")}
    assert levels["metadata.version"][0] == "3.3-IV3"
    assert features(bootstrap, "upgrade", "--feature", "transaction.version=2",
                    "--dry-run") == (0, ["transaction.version can be upgraded to 2."])
    assert features(bootstrap, "downgrade", "--feature", "group.version=0", "--dry-run") == \
        (0, ["group.version can be downgraded to 0."])
    code, lines = features(bootstrap, "upgrade", "--feature", "transaction.version=3")
    assert code == 1 and lines[1] == "1 out of 1 operation(s) failed."
    assert re.fullmatch(
        "Could not upgrade transaction.version to 3. " + re.escape(PREFIX) +
        r"Invalid update version 3 for feature transaction.version. Local controller \d+ only "
        r"supports versions 0-2", lines[0]), lines
    code, lines = features(bootstrap, "downgrade", "--feature", "metadata.version=32",
                           "--dry-run")
    assert (code, lines) == (1, [
        "Can not downgrade metadata.version to 32. " + PREFIX + "Unsupported metadata.version "
        "downgrade from 33 to 32. Refusing to perform the requested downgrade because it might "
        "delete metadata information.", "1 out of 1 operation(s) failed."])
    assert described(bootstrap) == levels  # nothing changed


def _consumer_protocol_error(bootstrap: str, topic: str) -> str | None:
    """What a consumer of the consumer group protocol meets first: its error, or None once it
    has a record."""
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "kip848",
                            "group.protocol": "consumer", "auto.offset.reset": "earliest",
                            "logger": RDKAFKA_LOG})
    consumer.subscribe([topic])
    outcome: list = []

    def settled():
        message = consumer.poll(0.5)
        if message is not None:
            outcome.append(str(message.error()) if message.error() else None)
        return bool(outcome)
    try:
        wait_for(settled, "a record or an error")
    finally:
        consumer.close()
    return outcome[0]


@pytest.mark.mockbroker_only("shared-kafka")
def test_a_cluster_at_group_version_0_refuses_the_consumer_group_protocol(stack):
    cluster = stack.enter_context(MockCluster(topics={"events": 1}))
    bootstrap = cluster.bootstrap_servers
    producer = ck.Producer({"bootstrap.servers": bootstrap, "logger": RDKAFKA_LOG})
    producer.produce("events", b"v", partition=0)
    assert producer.flush(30) == 0
    assert features(bootstrap, "downgrade", "--feature", "group.version=0") == \
        (0, ["group.version was downgraded to 0."])
    assert described(bootstrap)["group.version"] == ("0", "1", "0")
    error = _consumer_protocol_error(bootstrap, "events")
    assert error is not None and \
        "API version not supported: ConsumerGroupHeartbeat" in error, error
    assert features(bootstrap, "upgrade", "--feature", "group.version=1") == \
        (0, ["group.version was upgraded to 1."])
    assert _consumer_protocol_error(bootstrap, "events") is None
    assert [e["features"] for e in cluster.admin.events("features_updated")] == [
        {"group.version": 0}, {"group.version": 1}]
