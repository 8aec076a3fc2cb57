"""Kafka version emulation held against the real thing: for every release mockbroker emulates,
``MockCluster(kafka_version=R)`` and a real broker of release R (one KRaft node from R's own
jars, :mod:`tests.kafka_releases`; R = 4.4 is the client tests' own Kafka) each answer as the
release's table (:mod:`wire.releases`) says, and run the same small scenarios with
the same outcome.

One test per target and release (``test_...[mockbroker-4.0]``, ``[kafka-4.0]``), so that each
release's broker starts once and stops at the end of its test.  It checks, in order:

* ApiVersions (v0, v3 and the release's newest): every API key and range, the supported and the
  finalized features.  The real broker must answer exactly as the table says, which is how the
  generated tables are verified; mockbroker too, but for what it does not serve at all
  (:data:`MOCK_LEAVES_OUT`: the broker-to-broker share-group state APIs, and ``kraft.version``,
  as at 4.4).  The outcome is kept as the test's ``api_versions`` property for
  ``ci/conformance.py``'s table, and asserted at the end, after the scenarios;
* refusals as the release refuses: ApiVersions in a version the release does not serve is
  answered in v0 with UNSUPPORTED_VERSION and the release's range (KIP-511); an API or version
  the release does not serve gets the connection closed; an API the release lists whose feature
  a new cluster leaves off (the consumer group protocol before 4.0, share groups in 4.1) is
  answered UNSUPPORTED_VERSION; UpdateFeatures beyond what the release supports is refused with
  its message, in its shape (3.x answers per feature);
* scenarios with confluent-kafka and kafka-python: records produced and read back in a classic
  group with its commit; a group of the consumer protocol (KIP-848), which reads them from 4.0
  on, and before 4.0 is refused by librdkafka itself, from what ApiVersions says; a
  transaction committed and one aborted, read by a read_committed consumer.  Their outcome is
  the ``scenarios`` property.

Each test records ``("target", mockbroker|kafka)`` and ``("kafka_version", R)``.
"""

from __future__ import annotations

import socket
import uuid

import confluent_kafka as ck
import pytest
from kafka import KafkaConsumer, KafkaProducer

import wire
from mockbroker import MockCluster
from mockbroker.core.features import GATES, MODELLED
from mockbroker.handlers import SERVED
from tests.clients.helpers import TIMEOUT_S, LoggedLines, wait_for
from tests.clients.targets import MOCK_SETTINGS, SETTINGS, Target
from tests.kafka_releases import ReleaseKafka
from tests.real_kafka import ask
from wire import errors
from wire.definitions import APIS
from wire.releases import LATEST, RELEASES, TELEMETRY_APIS, Release

#: how long a group may take to join and read on a broker of a release just started, its
#: JVM still cold, on a busy machine (a condition that holds returns at once)
GROUP_WAIT_S = 90

#: what a broker of a release lists that mockbroker does not claim, at any release: the share
#: coordinator's state APIs, which only brokers send one another, and ``kraft.version`` (the
#: mock's quorum is static; it never upgrades it)
MOCK_LEAVES_OUT = {83, 84, 85, 86, 87, "kraft.version"}
UPGRADE = 1


class ReleaseTarget(Target):
    """A target of one release: mockbroker emulating it, or its real broker."""

    def __init__(self, name: str, bootstrap_servers: str, mock, release: str):
        super().__init__(name, bootstrap_servers, mock)
        self.release = release
        self.port = int(bootstrap_servers.rsplit(":", 1)[1])

    @property
    def table(self) -> Release:
        return RELEASES[self.release]


@pytest.fixture(params=[(t, r) for r in RELEASES for t in ("mockbroker", "kafka")],
                ids=lambda param: f"{param[0]}-{param[1]}")
def target(request, stack) -> ReleaseTarget:
    """mockbroker emulating a release, or the release's real broker (started for this test and
    stopped after it; 4.4's is the client tests' shared Kafka)."""
    name, release = request.param
    request.node.user_properties += [("target", name), ("kafka_version", release)]
    if name == "mockbroker":
        cluster = stack.enter_context(MockCluster(kafka_version=release, **MOCK_SETTINGS))
        return ReleaseTarget(name, cluster.bootstrap_servers, cluster, release)
    if release == LATEST:
        kafka = request.getfixturevalue("real_kafka")
    else:
        kafka = ReleaseKafka(release, SETTINGS)
        stack.callback(kafka.stop)
        kafka.start()
    return ReleaseTarget(name, kafka.bootstrap_servers, None, release)


# -- ApiVersions -------------------------------------------------------------------------------

def expected_api_versions(table: Release, version: int) -> dict:
    """What a broker of the release answers ApiVersions ``version`` (no telemetry reporter)."""
    return {
        "apis": {key: span for key, span in table.apis.items() if key not in TELEMETRY_APIS},
        # before v3 no features; before v4 none whose minimum is 0
        "supported": {name: span for name, span in table.supported_features.items()
                      if version >= 4 or (version >= 3 and span[0] > 0)},
        "finalized": dict(table.finalized_features) if version >= 3 else {}}


def api_versions(port: int, version: int) -> dict:
    answer = ask(port, 18, version, wire.request_class(18)(
        client_software_name="mockbroker-tests", client_software_version="1"))
    assert answer.error_code == errors.NONE
    features = {f.name: (f.min_version_level, f.max_version_level)
                for f in getattr(answer, "finalized_features", None) or ()}
    assert all(lo == hi for lo, hi in features.values()), features
    return {"apis": {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys},
            "supported": {f.name: (f.min_version, f.max_version)
                          for f in getattr(answer, "supported_features", None) or ()},
            "finalized": {name: hi for name, (_, hi) in features.items()}}


def api_versions_apart(target: ReleaseTarget) -> tuple[list[str], set]:
    """(how the target's ApiVersions answers differ from the table, beyond what mockbroker
    leaves out; what it leaves out)."""
    newest = min(target.table.apis[18][1], APIS[18].request.valid.hi)
    apart, left_out = [], set()
    for version in sorted({0, 3, newest}):
        wanted, got = expected_api_versions(target.table, version), api_versions(target.port,
                                                                                 version)
        if target.name == "mockbroker":
            left_out |= {k for k in wanted["apis"] if k not in SERVED}
            left_out |= {n for n in wanted["supported"] if n not in MODELLED}
            wanted["apis"] = {k: s for k, s in wanted["apis"].items() if k in SERVED}
            wanted["supported"] = {n: s for n, s in wanted["supported"].items()
                                   if n in MODELLED}
        for part in ("apis", "supported", "finalized"):
            if got[part] != wanted[part]:
                keys = sorted(set(got[part]) | set(wanted[part]), key=str)
                apart.append(f"v{version} {part}: " + ", ".join(
                    f"{k}: {got[part].get(k)} (table: {wanted[part].get(k)})" for k in keys
                    if got[part].get(k) != wanted[part].get(k)))
    return apart, left_out


# -- refusals ----------------------------------------------------------------------------------

def exchange(port: int, frame: bytes) -> bytes | None:
    """The answer frame to one raw request frame, or None when the broker closed the
    connection instead."""
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S) as conn:
        conn.sendall(frame)
        data = b""
        while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        return data[4:]


def check_refusals(target: ReleaseTarget) -> None:
    table = target.table
    # ApiVersions one version newer than the release serves: v0, UNSUPPORTED_VERSION, its range
    newest = table.apis[18][1]
    if newest < APIS[18].request.valid.hi:
        frame = exchange(target.port, wire.encode_request(18, newest + 1, 5, "probe",
                                                          wire.request_class(18)()))
        assert frame is not None
        answer = wire.decode_response(18, 0, frame)[1]
        assert answer.error_code == errors.UNSUPPORTED_VERSION
        assert [(k.api_key, k.min_version, k.max_version) for k in answer.api_keys] == \
            [(18, *table.apis[18])]
    # an API the release does not list, and a version newer than it serves: closed
    absent = [key for key in sorted(SERVED, reverse=True)
              if key not in table.apis and key in APIS]
    newer = [(key, table.apis[key][1] + 1) for key in sorted(table.apis)
             if key in SERVED and key != 18 and key not in GATES and
             table.apis[key][1] < APIS[key].request.valid.hi]
    for key, version in [*[(k, APIS[k].request.valid.hi) for k in absent[:1]], *newer[:1]]:
        frame = wire.encode_request(key, version, 6, "probe", wire.request_class(key)())
        assert exchange(target.port, frame) is None, (key, version)
    # an API listed whose feature a new cluster of the release leaves at 0
    for key, body in ((68, dict(group_id="g", member_id="", member_epoch=0,
                                rebalance_timeout_ms=30000, subscribed_topic_names=["t"],
                                topic_partitions=[])),
                      (76, dict(group_id="g", member_id=uuid.uuid4().hex, member_epoch=0,
                                subscribed_topic_names=["t"]))):
        if key in table.apis and not table.finalized_features.get(GATES[key]):
            answer = ask(target.port, key, table.apis[key][1], wire.request_class(key)(**body))
            assert (answer.error_code, answer.error_message) == \
                (errors.UNSUPPORTED_VERSION, None), (key, answer)
    check_update_features(target)


def check_update_features(target: ReleaseTarget) -> None:
    """UpdateFeatures (validate only) beyond what the release supports: its message."""
    table = target.table
    cls = wire.request_class(57)
    low, high = table.supported_features["metadata.version"]
    share = table.supported_features.get("share.version")
    updates = {"metadata.version": high + 1,
               "share.version": share[1] + 1 if share else 1}
    answer = ask(target.port, 57, 1, cls(timeout_ms=5000, validate_only=True, feature_updates=[
        cls.FeatureUpdateKey(feature=name, max_version_level=level, upgrade_type=UPGRADE)
        for name, level in updates.items()]))
    controller = 1 if target.name == "kafka" else 0  # Kafka's node.id, mockbroker's broker 0
    reasons = {"metadata.version": f"only supports versions {low}-{high}",
               "share.version": "does not support this feature." if share is None else
               f"only supports versions {share[0]}-{share[1]}"}
    why = {name: f"Invalid update version {level} for feature {name}. Local controller "
                 f"{controller} {reasons[name]}" for name, level in updates.items()}
    if table.version.startswith("3."):  # each feature on its own, by name
        assert (answer.error_code, answer.error_message) == (errors.NONE, "")
        assert [(r.feature, r.error_code, r.error_message) for r in answer.results] == [
            (name, errors.INVALID_UPDATE_VERSION, why[name]) for name in sorted(why)]
    else:  # the whole request refused, for the first feature met: in a Java hash map's
        # order, metadata.version comes before share.version
        assert answer.error_code == errors.INVALID_UPDATE_VERSION and answer.results == []
        assert answer.error_message == "The update failed for all features since the " \
            f"following feature had an error: {why['metadata.version']}"


# -- scenarios ---------------------------------------------------------------------------------

def produce_and_read_in_a_classic_group(target: ReleaseTarget) -> None:
    topic = target.create_topic("versions", 1)
    producer = ck.Producer({"bootstrap.servers": target.bootstrap_servers})
    for n in range(3):
        producer.produce(topic, value=b"v%d" % n, key=b"k%d" % n)
    assert producer.flush(TIMEOUT_S) == 0
    group = target.unique("classic")
    consumer = ck.Consumer({"bootstrap.servers": target.bootstrap_servers, "group.id": group,
                            "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    got: list = []
    try:
        wait_for(lambda: got.extend((m.offset(), m.key(), m.value())
                                    for m in consumer.consume(10, 0.2) if m.error() is None)
                 or len(got) >= 3, "three records in a classic group", GROUP_WAIT_S)
        consumer.commit(asynchronous=False)
        [committed] = consumer.committed([ck.TopicPartition(topic, 0)], timeout=TIMEOUT_S)
    finally:
        consumer.close()
    assert got == [(n, b"k%d" % n, b"v%d" % n) for n in range(3)] and committed.offset == 3
    # kafka-python, on a topic of its own: produced, then read in a group of its own
    topic = target.create_topic("versions-kp", 1)
    kp = KafkaProducer(bootstrap_servers=target.bootstrap_servers, linger_ms=5)
    for n in range(2):
        kp.send(topic, key=b"k%d" % n, value=b"v%d" % n)
    kp.flush(TIMEOUT_S)
    kp.close()
    reader = KafkaConsumer(bootstrap_servers=target.bootstrap_servers,
                           group_id=target.unique("kp"), auto_offset_reset="earliest",
                           fetch_max_wait_ms=100)
    # the topic's partitions known before the group is joined: a kafka-python 3.0.12 leader
    # that first assigned nothing (no metadata yet) and joined again sometimes never had its
    # SyncGroup's answer from a busy Kafka, and read nothing for minutes
    wait_for(lambda: reader.partitions_for_topic(topic), f"kafka-python to learn of {topic}")
    reader.subscribe([topic])
    read: list = []
    try:
        wait_for(lambda: read.extend((r.offset, r.key, r.value)
                                     for rs in reader.poll(timeout_ms=200).values()
                                     for r in rs) or len(read) >= 2, "kafka-python's records",
                 GROUP_WAIT_S)
    finally:
        reader.close()
    assert read == [(n, b"k%d" % n, b"v%d" % n) for n in range(2)]


def consumer_protocol_group(target: ReleaseTarget) -> None:
    """From 4.0 a consumer of the consumer group protocol reads the records; before, librdkafka
    sees ConsumerGroupHeartbeat only in v0 (3.7 to 3.9 list it so) and refuses to use it: it
    never joins, and says why in its log."""
    topic = target.create_topic("versions-848", 1)
    producer = ck.Producer({"bootstrap.servers": target.bootstrap_servers})
    producer.produce(topic, value=b"v", key=b"k")
    assert producer.flush(TIMEOUT_S) == 0
    lines = LoggedLines()
    log = lines.logger
    consumer = ck.Consumer({"bootstrap.servers": target.bootstrap_servers,
                            "group.id": target.unique("kip848"), "group.protocol": "consumer",
                            "auto.offset.reset": "earliest", "debug": "cgrp", "logger": log})
    consumer.subscribe([topic])
    got: list = []
    refused = "ConsumerGroupHeartbeatRequest not supported by broker"
    try:
        wait_for(lambda: got.extend(m for m in consumer.consume(10, 0.2)) or got or
                 any(refused in line for line in lines.lines), "a record, or the refusal",
                 GROUP_WAIT_S)
    finally:
        consumer.close()
    if target.table.version.startswith("3."):
        assert got == [] and any(refused in line for line in lines.lines)
    else:
        assert [(m.error(), m.value()) for m in got] == [(None, b"v")]


def transaction(target: ReleaseTarget) -> None:
    topic = target.create_topic("versions-txn", 1)
    producer = ck.Producer({"bootstrap.servers": target.bootstrap_servers,
                            "transactional.id": target.unique("txn")})
    producer.init_transactions(TIMEOUT_S)
    producer.begin_transaction()
    for value in (b"a", b"b"):
        producer.produce(topic, value=value)
    producer.commit_transaction(TIMEOUT_S)
    producer.begin_transaction()
    producer.produce(topic, value=b"aborted")
    producer.abort_transaction(TIMEOUT_S)
    consumer = ck.Consumer({"bootstrap.servers": target.bootstrap_servers,
                            "group.id": target.unique("rc"), "auto.offset.reset": "earliest",
                            "isolation.level": "read_committed", "enable.partition.eof": True})
    consumer.subscribe([topic])
    got: list = []
    try:
        def at_end():
            for m in consumer.consume(10, 0.2):
                if m.error() is None:
                    got.append(m.value())
                elif m.error().code() == ck.KafkaError._PARTITION_EOF:
                    return True
            return False
        wait_for(at_end, "the end of the transactional topic")
    finally:
        consumer.close()
    assert got == [b"a", b"b"]


def named(left_out: set) -> str:
    """What mockbroker leaves out, in a few words: "API keys 83-87 and kraft.version"."""
    keys = sorted(k for k in left_out if isinstance(k, int))
    spans: list[list[int]] = []
    for key in keys:
        if spans and key == spans[-1][1] + 1:
            spans[-1][1] = key
        else:
            spans.append([key, key])
    parts = ([("API key " if len(keys) == 1 else "API keys ") + ", ".join(
        f"{lo}-{hi}" if hi > lo else str(lo) for lo, hi in spans)] if keys else []) + \
        sorted(k for k in left_out if isinstance(k, str))
    return " and ".join(parts)


def test_a_broker_of_each_release_answers_and_serves_as_that_release(target, record_property):
    apart, left_out = api_versions_apart(target)
    assert left_out <= MOCK_LEAVES_OUT, left_out
    record_property("api_versions", "different" if apart else "identical" if not left_out else
                    f"identical but for {named(left_out)}")
    check_refusals(target)
    produce_and_read_in_a_classic_group(target)
    consumer_protocol_group(target)
    transaction(target)
    record_property("scenarios", "passed")
    assert not apart, apart
