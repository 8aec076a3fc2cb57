"""Admin operations with stock clients over real sockets: kafka-python's ``KafkaAdminClient``
and confluent-kafka's ``AdminClient``.

What is checked is what a user of those clients sees: topic lists, partition counts, replica
counts, config values and sources, the exception each refusal raises, and a consumer's offset
reset after records were deleted below its position.  Tests on one broker run on mockbroker and
on Apache Kafka (``target``) with topics of their own, and look only at their own topics in a
listing.  Those that need several brokers run on three (``brokers_target``: three mockbrokers,
or the run's three-node Kafka; ``lifecycle_target`` where a broker stops).  Those that need
settings of their own, or that touch what every test on a shared Kafka relies on, run on a
MockCluster of their own (``mockbroker_only``).
"""

from __future__ import annotations

import logging
import socket
import struct
import time
import uuid

import confluent_kafka as ck
import kafka.errors as kerr
import pytest
from confluent_kafka.admin import (AlterConfigOpType, ConfigEntry, ConfigResource,
                                   ConfigSource, NewPartitions, NewTopic, ResourceType)
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource as KPConfigResource
from kafka.admin import ConfigResourceType

import wire
from mockbroker import MockCluster
from tests.clients.helpers import RDKAFKA_LOG, TIMEOUT_S, ck_admin, ck_error, ck_result, \
    kp_admin, wait_for
from tests.clients.targets import Target


logging.getLogger("kafka").setLevel(logging.CRITICAL)


def start(stack, brokers: int = 3, topics=None, **settings) -> MockCluster:
    return stack.enter_context(MockCluster(brokers=brokers, topics=topics or {}, **settings))


def cluster_topics(cluster: MockCluster) -> dict[str, list[list[int]]]:
    """Topic -> replicas of each partition, read from the cluster itself."""
    return cluster.call(lambda: {name: [p.replicas for p in t.partitions]
                                 for name, t in cluster.core.cluster.topics.items()})


def ours(names, listed) -> list[str]:
    """The names of ``listed`` that are this test's (one Kafka serves many tests)."""
    return sorted(name for name in listed if name in set(names))


def produce(cluster: MockCluster, topic: str, count: int, partition: int = 0) -> None:
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks=1,
                             request_timeout_ms=5000)
    try:
        for i in range(count):
            producer.send(topic, value=f"v{i}".encode(), partition=partition)
        producer.flush(TIMEOUT_S)
    finally:
        producer.close(0)


# -- create, list, describe ----------------------------------------------------------------

def test_kafka_python_creates_lists_and_describes_topics(stack, brokers_target):
    target = brokers_target
    existing = target.create_topic("existing", 2)
    events, defaults = target.own(target.unique("events")), target.own(target.unique("defaults"))
    admin = kp_admin(stack, target)
    result = admin.create_topics({events: {"num_partitions": 4, "replication_factor": 2},
                                  defaults: {}})
    by_name = {t["name"]: t for t in result["topics"]}
    assert by_name[events]["error_code"] == 0
    assert (by_name[events]["num_partitions"], by_name[events]["replication_factor"]) == (4, 2)
    # -1 asks for the broker defaults: num.partitions (2 here) and default.replication.factor
    # (mockbroker's is min(3, brokers); the Kafka of three brokers sets it to 3)
    assert (by_name[defaults]["num_partitions"], by_name[defaults]["replication_factor"]) \
        == (2, 3)
    assert by_name[events]["configs"]["retention.ms"]["config_source"] == "DEFAULT_CONFIG"
    assert uuid.UUID(str(by_name[events]["topic_id"])).int != 0
    target.known(events, 4)
    target.known(defaults, 2)
    assert ours([defaults, events, existing], admin.list_topics()) == sorted(
        [defaults, events, existing])
    described = {t["name"]: t for t in admin.describe_topics([events, existing])}
    assert len(described[events]["partitions"]) == 4
    assert all(len(p["replica_nodes"]) == 2 for p in described[events]["partitions"])
    assert len(described[existing]["partitions"]) == 2
    # what DescribeTopicPartitions tells is what Metadata tells
    assert [target.partition(events, i)[1] for i in range(4)] == [
        p["replica_nodes"] for p in sorted(described[events]["partitions"],
                                           key=lambda p: p["partition_index"])]


def test_confluent_creates_lists_and_describes_topics(brokers_target):
    target = brokers_target
    events, manual = target.own(target.unique("events")), target.own(target.unique("manual"))
    admin = ck_admin(target)
    futures = admin.create_topics([NewTopic(events, 4, 2, config={"retention.ms": "1000"}),
                                   NewTopic(manual, 2, replica_assignment=[[0, 1], [2, 0]])],
                                  request_timeout=TIMEOUT_S)
    assert ck_result(futures[events]) is None and ck_result(futures[manual]) is None
    target.known(events, 4)
    target.known(manual, 2)
    metadata = admin.list_topics(topic=events, timeout=TIMEOUT_S)
    assert len(metadata.topics[events].partitions) == 4
    description = ck_result(admin.describe_topics(ck.TopicCollection([events, manual]))[
        manual])
    assert [[r.id for r in p.replicas] for p in description.partitions] == [[0, 1], [2, 0]]
    assert [p.leader.id for p in description.partitions] == [0, 2]
    assert all(len(target.partition(events, i)[1]) == 2 for i in range(4))


def test_validate_only_creates_nothing(stack, target):
    checked, checked2 = target.unique("checked"), target.unique("checked2")
    kp = kp_admin(stack, target)
    result = kp.create_topics({checked: {"num_partitions": 2}}, validate_only=True)
    assert result["topics"][0]["error_code"] == 0
    assert result["topics"][0]["num_partitions"] == 2
    with pytest.raises(kerr.InvalidReplicationFactorError):
        kp.create_topics({checked: {"replication_factor": 4}}, validate_only=True)
    ck = ck_admin(target)
    assert ck_result(ck.create_topics([NewTopic(checked2, 3)], validate_only=True)[
        checked2]) is None
    assert ours([checked, checked2], kp.list_topics()) == []


def _named(target: Target, name: str, existing: str) -> str:
    """A refused topic's name: the test's existing topic, a fresh one, or a name that is
    refused as it is."""
    if name == "existing":
        return existing
    return name if name in ("bad name!", "..") else target.unique(name)


@pytest.mark.parametrize("name,spec,error", [
    ("existing", {"num_partitions": 1}, kerr.TopicAlreadyExistsError),
    ("wide", {"num_partitions": 1, "replication_factor": 4}, kerr.InvalidReplicationFactorError),
    ("none", {"num_partitions": 0, "replication_factor": 1}, kerr.InvalidPartitionsError),
    ("bad name!", {"num_partitions": 1}, kerr.InvalidTopicError),
    ("..", {"num_partitions": 1}, kerr.InvalidTopicError),
    ("cfg", {"configs": {"retention.ms": "forever"}}, kerr.InvalidConfigurationError),
    ("cfg", {"configs": {"no.such.config": "1"}}, kerr.InvalidConfigurationError),
    ("cfg", {"configs": {"cleanup.policy": "shred"}}, kerr.InvalidConfigurationError),
])
def test_kafka_python_sees_create_topic_errors(stack, target, name, spec, error):
    existing = target.create_topic("existing", 1)
    name = _named(target, name, existing)
    admin = kp_admin(stack, target)
    with pytest.raises(error):
        admin.create_topics({name: spec})
    result = admin.create_topics({name: spec}, raise_errors=False)
    assert result["topics"][0]["error_code"] == error.errno
    assert result["topics"][0]["error_message"]
    assert ours([name, existing], admin.list_topics()) == [existing]


@pytest.mark.parametrize("name,args,config,code", [
    ("existing", (1,), {}, ck.KafkaError.TOPIC_ALREADY_EXISTS),
    ("wide", (1, 4), {}, ck.KafkaError.INVALID_REPLICATION_FACTOR),
    ("bad name!", (1,), {}, ck.KafkaError.TOPIC_EXCEPTION),
    ("cfg", (1,), {"config": {"segment.bytes": "10"}}, ck.KafkaError.INVALID_CONFIG),
    ("cfg", (1,), {"config": {"message.downconversion.enable": "true"}},
     ck.KafkaError.INVALID_CONFIG),
    ("cfg", (1,), {"replica_assignment": [[0, 9]]}, ck.KafkaError.INVALID_REPLICA_ASSIGNMENT),
])
def test_confluent_sees_create_topic_errors(stack, target, name, args, config, code):
    existing = target.create_topic("existing", 1)
    name = _named(target, name, existing)
    admin = ck_admin(target)
    error = ck_error(admin.create_topics([NewTopic(name, *args, **config)])[name])
    assert error.code() == code
    assert ours([name, existing], admin.list_topics(timeout=TIMEOUT_S).topics) == [existing]


def test_create_topics_request_level_refusals(stack, target):
    admin = kp_admin(stack, target)
    huge = target.unique("huge")
    with pytest.raises(kerr.InvalidRequestError):
        admin.create_topics(["__cluster_metadata"])
    with pytest.raises(kerr.PolicyViolationError):
        admin.create_topics({huge: {"num_partitions": 10_001}})
    assert ours([huge], admin.list_topics()) == []


@pytest.mark.mockbroker_only("shared-kafka")
def test_internal_topics_can_be_deleted_but_not_their_records(stack):
    # Kafka 4's controller does not protect internal topics from DeleteTopics (only the
    # kafka-topics tool refuses), but the broker does refuse DeleteRecords on them
    cluster = start(stack)
    admin = kp_admin(stack, cluster)
    admin.create_topics({"__consumer_offsets": {"num_partitions": 1}})
    assert admin.describe_topics(["__consumer_offsets"])[0]["is_internal"] is True
    with pytest.raises(kerr.InvalidTopicError):
        admin.delete_records({TopicPartition("__consumer_offsets", 0): 0})
    admin.delete_topics(["__consumer_offsets"])
    assert cluster_topics(cluster) == {}


# -- delete topics -------------------------------------------------------------------------

def test_kafka_python_deletes_topics_by_name_and_by_id(stack, target):
    t = target.create_topics({"a": 1, "b": 2, "c": 1})
    admin = kp_admin(stack, target)
    admin.delete_topics([t["a"]])
    topic_id = next(d["topic_id"] for d in admin.describe_topics([t["b"]]))
    result = admin.delete_topics([uuid.UUID(str(topic_id))])
    assert result["topics"][0]["name"] == t["b"] and result["topics"][0]["error_code"] == 0
    wait_for(lambda: ours(t.values(), admin.list_topics()) == [t["c"]], "a and b gone")
    with pytest.raises(kerr.UnknownTopicOrPartitionError):
        admin.delete_topics([t["a"]])
    with pytest.raises(kerr.UnknownTopicIdError):
        admin.delete_topics([uuid.uuid4()])


def test_confluent_deletes_topics(stack, target):
    t = target.create_topics({"a": 1, "b": 1})
    nope = target.unique("nope")
    admin = ck_admin(target)
    futures = admin.delete_topics([t["a"], nope], operation_timeout=5)
    assert ck_result(futures[t["a"]]) is None
    assert ck_error(futures[nope]).code() == ck.KafkaError.UNKNOWN_TOPIC_OR_PART
    wait_for(lambda: ours(t.values(), admin.list_topics(timeout=TIMEOUT_S).topics) == [t["b"]],
             "a gone")


@pytest.mark.mockbroker_only("broker-settings")
def test_deleting_topics_can_be_disabled(stack):
    cluster = start(stack, topics={"a": 1}, delete_topic_enable=False)
    admin = kp_admin(stack, cluster)
    with pytest.raises(kerr.TopicDeletionDisabledError):
        admin.delete_topics(["a"])
    assert admin.list_topics() == ["a"]


# -- create partitions ---------------------------------------------------------------------

def test_kafka_python_adds_partitions(stack, brokers_target):
    target = brokers_target
    t = target.create_topic("t", 2)
    admin = kp_admin(stack, target)
    admin.create_partitions({t: 4})
    target.known(t, 4)
    assert len(admin.describe_topics([t])[0]["partitions"]) == 4
    admin.create_partitions({t: 6}, validate_only=True)
    assert len(target.leaders(t)) == 4
    admin.create_partitions({t: {"count": 5, "assignments": [[2, 0, 1]]}})
    target.known(t, 5)
    assert target.partition(t, 4)[1] == [2, 0, 1]
    with pytest.raises(kerr.InvalidPartitionsError):
        admin.create_partitions({t: 3})
    with pytest.raises(kerr.InvalidReplicationAssignmentError):
        admin.create_partitions({t: {"count": 7, "assignments": [[0, 1, 2]]}})
    with pytest.raises(kerr.UnknownTopicOrPartitionError):
        admin.create_partitions({target.unique("nope"): 3})


def test_confluent_adds_partitions(stack, target):
    t = target.create_topic("t", 1)
    admin = ck_admin(target)

    def count() -> int:
        return len(admin.list_topics(topic=t, timeout=TIMEOUT_S).topics[t].partitions)
    assert ck_result(admin.create_partitions([NewPartitions(t, 3)])[t]) is None
    wait_for(lambda: count() == 3, "three partitions")
    error = ck_error(admin.create_partitions([NewPartitions(t, 2)])[t])
    assert error.code() == ck.KafkaError.INVALID_PARTITIONS
    assert "would not be an increase" in error.str()
    assert ck_result(admin.create_partitions([NewPartitions(t, 9)], validate_only=True)[
        t]) is None
    assert count() == 3


# -- describe configs ----------------------------------------------------------------------

@pytest.mark.mockbroker_only("broker-settings")
def test_kafka_python_describes_topic_and_broker_configs(stack):
    cluster = start(stack, topics={"t": 1}, message_max_bytes=2_000_000)
    admin = kp_admin(stack, cluster)
    admin.create_topics({"tuned": {"configs": {"retention.ms": "60000",
                                               "cleanup.policy": "compact"}}})
    modified = admin.describe_configs([KPConfigResource("TOPIC", "tuned")])["topic"]["tuned"]
    assert {name: c["value"] for name, c in modified.items()} == {
        "retention.ms": "60000", "cleanup.policy": "compact"}
    assert modified["retention.ms"]["config_source"] == "DYNAMIC_TOPIC_CONFIG"
    assert modified["retention.ms"]["config_type"] == "LONG"
    every = admin.describe_configs([KPConfigResource("TOPIC", "t")], include_synonyms=True,
                                   config_filter="all")["topic"]["t"]
    assert len(every) == 34
    assert every["segment.bytes"]["value"] == "1073741824"
    assert every["segment.bytes"]["config_source"] == "DEFAULT_CONFIG"
    assert every["max.message.bytes"]["value"] == "2000000"
    assert every["max.message.bytes"]["config_source"] == "STATIC_BROKER_CONFIG"
    assert every["max.message.bytes"]["synonyms"][0] == {
        "name": "message.max.bytes", "value": "2000000", "source": "STATIC_BROKER_CONFIG"}
    broker = admin.describe_configs([KPConfigResource("BROKER", "1")], config_filter="all")[
        "broker"]["1"]
    assert broker["broker.id"]["value"] == "1"
    assert broker["broker.id"]["config_source"] == "STATIC_BROKER_CONFIG"
    assert broker["broker.id"]["read_only"] is True
    assert broker["num.partitions"]["value"] == "1"
    assert broker["num.partitions"]["config_source"] == "DEFAULT_CONFIG"
    assert broker["log.retention.hours"]["value"] == "168"
    assert broker["message.max.bytes"]["read_only"] is False
    # kafka-python drops a resource's error and reports it with no configs
    assert admin.describe_configs([KPConfigResource("TOPIC", "missing")]) == {
        "topic": {"missing": {}}}


def test_confluent_describes_topic_and_broker_configs(stack, target):
    tuned = target.create_topic("tuned", 1, **{"max.message.bytes": "5000"})
    admin = ck_admin(target)
    configs = ck_result(admin.describe_configs([ConfigResource(ResourceType.TOPIC, tuned)])[
        ConfigResource(ResourceType.TOPIC, tuned)])
    assert configs["max.message.bytes"].value == "5000"
    assert configs["max.message.bytes"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert not configs["max.message.bytes"].is_default
    assert configs["compression.type"].value == "producer"
    assert configs["compression.type"].is_default
    assert configs["compression.type"].source == ConfigSource.DEFAULT_CONFIG.value
    node = str(next(iter(admin.list_topics(timeout=TIMEOUT_S).brokers)))
    resource = ConfigResource(ResourceType.BROKER, node)
    broker = ck_result(admin.describe_configs([resource])[resource])
    assert broker["node.id"].value == node and broker["node.id"].is_read_only
    assert broker["node.id"].source == ConfigSource.STATIC_BROKER_CONFIG.value
    missing = ConfigResource(ResourceType.TOPIC, target.unique("missing"))
    assert ck_error(admin.describe_configs([missing])[missing]).code() == \
        ck.KafkaError.UNKNOWN_TOPIC_OR_PART


# -- alter configs -------------------------------------------------------------------------

def test_kafka_python_alters_configs_incrementally_and_legacy(stack, target):
    t = target.create_topic("t", 1)
    admin = kp_admin(stack, target)
    topic = lambda: admin.describe_configs([KPConfigResource("TOPIC", t)])["topic"][t]

    def comes_to(expected: dict[str, str], what: str) -> None:
        """Kafka's broker learns of an altered config a moment after the controller answers
        the alter: what DescribeConfigs shows comes to ``expected``."""
        wait_for(lambda: {n: c["value"] for n, c in topic().items()} == expected, what)
    result = admin.alter_configs([KPConfigResource("TOPIC", t, {
        "retention.ms": "1000", "cleanup.policy": ("APPEND", "compact")})])
    assert result == {"topic": {t: "OK"}}
    comes_to({"retention.ms": "1000", "cleanup.policy": "delete,compact"}, "the alter")
    admin.alter_configs([KPConfigResource("TOPIC", t, {"segment.ms": "7200000"})],
                        validate_only=True)
    assert "segment.ms" not in topic()
    admin.reset_configs([KPConfigResource("TOPIC", t, ["retention.ms"])])
    comes_to({"cleanup.policy": "delete,compact"}, "the reset")
    # the legacy API replaces the whole set; kafka-python carries over what was modified
    admin.alter_configs([KPConfigResource("TOPIC", t, {"segment.ms": "7200000"})],
                        incremental=False)
    comes_to({"segment.ms": "7200000", "cleanup.policy": "delete,compact"}, "the legacy alter")
    result = admin.alter_configs([KPConfigResource("TOPIC", t, {"retention.ms": "soon"})])
    assert result["topic"][t].startswith("[Error 40] InvalidConfigurationError")
    assert "Not a number of type LONG" in result["topic"][t]
    with pytest.raises(ValueError, match="Unrecognized configs"):
        admin.alter_configs([KPConfigResource("TOPIC", t, {"no.such.config": "1"})])


@pytest.mark.mockbroker_only("broker-settings")
def test_kafka_python_alters_a_brokers_dynamic_config(stack):
    cluster = start(stack)
    admin = kp_admin(stack, cluster)
    result = admin.alter_configs([KPConfigResource("BROKER", "0", {"log.retention.ms": "5000"})])
    assert result == {"broker": {"0": "OK"}}
    modified = admin.describe_configs([KPConfigResource("BROKER", "0")])["broker"]["0"]
    assert modified["log.retention.ms"]["value"] == "5000"
    assert modified["log.retention.ms"]["config_source"] == "DYNAMIC_BROKER_CONFIG"
    result = admin.alter_configs([KPConfigResource("BROKER", "0", {"broker.id": "9"})],
                                 raise_on_unknown=False)
    assert result["broker"]["0"].startswith("[Error 42] InvalidRequestError")


def test_confluent_alters_configs_incrementally_and_legacy(stack, target):
    t = target.create_topic("t", 1)
    admin = ck_admin(target)
    resource = ConfigResource(ResourceType.TOPIC, t, incremental_configs=[
        ConfigEntry("retention.ms", "2000", incremental_operation=AlterConfigOpType.SET),
        ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.APPEND),
    ])
    assert ck_result(admin.incremental_alter_configs([resource])[resource]) is None
    described = lambda: ck_result(admin.describe_configs([ConfigResource(
        ResourceType.TOPIC, t)])[ConfigResource(ResourceType.TOPIC, t)])

    def comes_to(check, what: str):
        """The configs once ``check`` holds of them: Kafka's broker learns of an altered config
        a moment after the controller answers the alter."""
        def holds():
            configs = described()
            return configs if check(configs) else None
        return wait_for(holds, what)
    configs = comes_to(lambda c: c["retention.ms"].value == "2000", "the alter")
    assert configs["cleanup.policy"].value == "delete,compact"
    resource = ConfigResource(ResourceType.TOPIC, t, incremental_configs=[
        ConfigEntry("retention.ms", None, incremental_operation=AlterConfigOpType.DELETE),
        ConfigEntry("cleanup.policy", "delete",
                    incremental_operation=AlterConfigOpType.SUBTRACT),
    ])
    ck_result(admin.incremental_alter_configs([resource])[resource])
    configs = comes_to(lambda c: c["retention.ms"].is_default, "the delete")
    assert configs["retention.ms"].value == "604800000"
    assert configs["cleanup.policy"].value == "compact"
    bad = ConfigResource(ResourceType.TOPIC, t, incremental_configs=[
        ConfigEntry("retention.ms", "1", incremental_operation=AlterConfigOpType.APPEND)])
    assert ck_error(admin.incremental_alter_configs([bad])[bad]).code() == \
        ck.KafkaError.INVALID_CONFIG
    legacy = ConfigResource(ResourceType.TOPIC, t, set_config={"segment.ms": "3600000"})
    with pytest.warns(DeprecationWarning):
        futures = admin.alter_configs([legacy])
    assert ck_result(futures[legacy]) is None
    configs = comes_to(lambda c: c["segment.ms"].value == "3600000", "the legacy alter")
    assert configs["cleanup.policy"].is_default  # the legacy API dropped it
    missing = ConfigResource(ResourceType.TOPIC, target.unique("missing"), incremental_configs=[
        ConfigEntry("retention.ms", "1", incremental_operation=AlterConfigOpType.SET)])
    assert ck_error(admin.incremental_alter_configs([missing])[missing]).code() == \
        ck.KafkaError.UNKNOWN_TOPIC_OR_PART


def send_raw(cluster: MockCluster, api_key: int, version: int, body, broker_id=None):
    """One request over a plain socket, for what neither client can send (to the first
    bootstrap server, or to ``broker_id`` of a three-broker target)."""
    host, port = cluster.bootstrap_servers.split(",")[0].rsplit(":", 1)
    if broker_id is not None:
        host, port = cluster.address(broker_id)
    with socket.create_connection((host, int(port)), timeout=TIMEOUT_S) as sock:
        sock.sendall(wire.encode_request(api_key, version, 1, "raw", body))
        size = struct.unpack(">i", _read(sock, 4))[0]
        return wire.decode_response(api_key, version, _read(sock, size))[1]


def _read(sock, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        assert chunk, "connection closed"
        data += chunk
    return data


@pytest.mark.mockbroker_only("broker-settings")
def test_a_cluster_wide_message_max_bytes_limits_producers(stack):
    # both clients refuse an empty broker name, which is how the cluster-wide default is
    # addressed (kafka-configs --entity-default), so the request is built with the codec
    cluster = start(stack, brokers=1, topics={"t": 1})
    request = wire.request_class(44)
    body = request(validate_only=False, resources=[request.AlterConfigsResource(
        resource_type=ConfigResourceType.BROKER.value, resource_name="", configs=[
            request.AlterableConfig(
                name="message.max.bytes", config_operation=0, value="1000")])])
    response = send_raw(cluster, 44, 1, body)
    assert [(r.error_code, r.resource_name) for r in response.responses] == [(0, "")]
    admin = ck_admin(cluster)
    topic = ConfigResource(ResourceType.TOPIC, "t")
    entry = ck_result(admin.describe_configs([topic])[topic])["max.message.bytes"]
    assert entry.value == "1000"
    assert entry.source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, retries=0,
                             request_timeout_ms=5000)
    stack.callback(producer.close, 0)
    with pytest.raises(kerr.MessageSizeTooLargeError):
        producer.send("t", value=b"x" * 5000).get(timeout=TIMEOUT_S)
    assert producer.send("t", value=b"small").get(timeout=TIMEOUT_S).offset == 0


# -- delete records and the consumer's offset reset ----------------------------------------

def consume_kp(cluster, topic, reset, start_offset=0, want=1):
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, group_id=None,
                             auto_offset_reset=reset, enable_auto_commit=False,
                             request_timeout_ms=5000, fetch_max_wait_ms=50)
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek(tp, start_offset)
        got = []
        deadline = time.monotonic() + TIMEOUT_S
        while len(got) < want and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=100).values():
                got.extend(r.offset for r in records)
        return got, consumer.position(tp)
    finally:
        consumer.close()


def test_kafka_python_deletes_records_and_a_consumer_resets(stack, target):
    t = target.create_topic("t", 1)
    tp = TopicPartition(t, 0)
    produce(target, t, 10)
    admin = kp_admin(stack, target)
    result = admin.delete_records({tp: 4})
    assert result[tp]["low_watermark"] == 4
    # offset 0 is now out of range: earliest resets to the new log start offset
    got, _ = consume_kp(target, t, "earliest", want=6)
    assert got == list(range(4, 10))
    got, position = consume_kp(target, t, "latest", want=0)
    assert got == []
    # -1 means "up to the high watermark"
    result = admin.delete_records({tp: -1})
    assert result[tp]["low_watermark"] == 10
    with pytest.raises(kerr.OffsetOutOfRangeError):
        admin.delete_records({tp: 11})


def test_kafka_python_consumer_without_reset_policy_sees_out_of_range(stack, target):
    t = target.create_topic("t", 1)
    produce(target, t, 5)
    kp_admin(stack, target).delete_records({TopicPartition(t, 0): 3})
    consumer = KafkaConsumer(bootstrap_servers=target.bootstrap_servers, group_id=None,
                             auto_offset_reset="none", enable_auto_commit=False,
                             request_timeout_ms=5000, fetch_max_wait_ms=50)
    stack.callback(consumer.close)
    tp = TopicPartition(t, 0)
    consumer.assign([tp])
    consumer.seek(tp, 1)
    with pytest.raises(kerr.OffsetOutOfRangeError):
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            consumer.poll(timeout_ms=100)


def test_delete_records_refusals(stack, target):
    compacted = target.create_topic("compacted", 1, **{"cleanup.policy": "compact"})
    admin = kp_admin(stack, target)
    with pytest.raises(kerr.PolicyViolationError):
        admin.delete_records({TopicPartition(compacted, 0): 0})
    with pytest.raises(kerr.UnknownTopicOrPartitionError):
        admin.delete_records({TopicPartition(target.unique("nope"), 0): 0})


def test_delete_records_at_a_follower_is_not_leader(stack, brokers_target):
    t = brokers_target.create_topic("t", 1)
    admin = kp_admin(stack, brokers_target)
    leader = brokers_target.partition(t, 0)[0]
    follower = (leader + 1) % 3
    with pytest.raises(kerr.NotLeaderForPartitionError):
        admin.delete_records({TopicPartition(t, 0): 0}, partition_leader_id=follower)


def test_confluent_deletes_records_and_a_consumer_resets(stack, target):
    t = target.create_topic("t", 1)
    produce(target, t, 8)
    admin = ck_admin(target)
    futures = admin.delete_records([ck.TopicPartition(t, 0, 5)])
    deleted = ck_result(futures[ck.TopicPartition(t, 0, 5)])
    assert deleted.low_watermark == 5
    consumer = ck.Consumer({"bootstrap.servers": target.bootstrap_servers,
                            "group.id": "unused", "enable.auto.commit": False,
                            "auto.offset.reset": "earliest", "fetch.wait.max.ms": 50,
                            "logger": RDKAFKA_LOG})
    stack.callback(consumer.close)
    consumer.assign([ck.TopicPartition(t, 0, 0)])
    offsets = []
    deadline = time.monotonic() + TIMEOUT_S
    while len(offsets) < 3 and time.monotonic() < deadline:
        message = consumer.poll(0.1)
        if message is not None and message.error() is None:
            offsets.append(message.offset())
    assert offsets == [5, 6, 7]
    over = ck.TopicPartition(t, 0, 9)
    assert ck_error(admin.delete_records([over])[over]).code() == \
        ck.KafkaError.OFFSET_OUT_OF_RANGE


def test_confluent_consumer_with_reset_error_reports_it(stack, target):
    t = target.create_topic("t", 1)
    produce(target, t, 4)
    admin = ck_admin(target)
    ck_result(admin.delete_records([ck.TopicPartition(t, 0, 2)])[ck.TopicPartition(t, 0, 2)])
    consumer = ck.Consumer({"bootstrap.servers": target.bootstrap_servers,
                            "group.id": "unused", "enable.auto.commit": False,
                            "auto.offset.reset": "error", "fetch.wait.max.ms": 50,
                            "logger": RDKAFKA_LOG})
    stack.callback(consumer.close)
    consumer.assign([ck.TopicPartition(t, 0, 0)])
    deadline = time.monotonic() + TIMEOUT_S
    error = None
    while error is None and time.monotonic() < deadline:
        message = consumer.poll(0.1)
        if message is not None and message.error() is not None:
            error = message.error()
    assert error is not None and error.code() == ck.KafkaError._AUTO_OFFSET_RESET


# -- cluster, partitions, log dirs ---------------------------------------------------------

def test_kafka_python_describes_the_cluster(stack, brokers_target):
    info = kp_admin(stack, brokers_target).describe_cluster()
    assert info["cluster_id"] == brokers_target.cluster_id
    assert sorted(b["broker_id"] for b in info["brokers"]) == [0, 1, 2]
    assert info["controller_id"] in (0, 1, 2)
    assert all(b["is_fenced"] is False for b in info["brokers"])
    assert set(info["authorized_operations"]) >= {"DESCRIBE", "ALTER_CONFIGS", "CREATE"}


def test_a_stopped_broker_is_listed_as_fenced_only_when_asked(stack, lifecycle_target):
    cluster = lifecycle_target
    cluster.stop_broker(2)
    info = kp_admin(stack, cluster).describe_cluster()  # asks for fenced brokers too
    assert {b["broker_id"]: b["is_fenced"] for b in info["brokers"]} == {
        0: False, 1: False, 2: True}
    body = wire.request_class(60)(include_cluster_authorized_operations=False,
                                  endpoint_type=1, include_fenced_brokers=False)
    response = send_raw(cluster, 60, 2, body)
    assert [b.broker_id for b in response.brokers] == [0, 1]
    assert response.cluster_authorized_operations == -2147483648
    controller = wire.request_class(60)(endpoint_type=2)
    assert send_raw(cluster, 60, 1, controller).error_code == 114  # MISMATCHED_ENDPOINT_TYPE


def test_confluent_describes_the_cluster(brokers_target):
    cluster = brokers_target
    admin = ck_admin(cluster)
    result = ck_result(admin.describe_cluster(include_authorized_operations=True))
    assert result.cluster_id == cluster.cluster_id
    assert sorted(n.id for n in result.nodes) == [0, 1, 2]
    assert result.controller.id in (0, 1, 2)
    ports = sorted(int(hp.rsplit(":", 1)[1]) for hp in cluster.bootstrap_servers.split(","))
    assert sorted(n.port for n in result.nodes) == ports


def test_kafka_python_pages_through_topic_partitions(stack, target):
    t = target.create_topics({"a": 3, "b": 2})
    a, b, zzz = t["a"], t["b"], target.unique("zzz")  # in this order by name, as pages go
    admin = kp_admin(stack, target)
    page = admin.describe_topic_partitions([a, b, zzz], response_partition_limit=2)
    assert [(t["name"], len(t["partitions"])) for t in page["topics"]] == [(a, 2)]
    assert page["next_cursor"] == {"topic_name": a, "partition_index": 2}
    page = admin.describe_topic_partitions([a, b, zzz], response_partition_limit=2,
                                           cursor=page["next_cursor"])
    assert [(t["name"], [p["partition_index"] for p in t["partitions"]])
            for t in page["topics"]] == [(a, [2]), (b, [0])]
    assert page["next_cursor"] == {"topic_name": b, "partition_index": 1}
    page = admin.describe_topic_partitions([a, b, zzz], cursor=page["next_cursor"])
    assert [(t["name"], t["error_code"]) for t in page["topics"]] == [
        (b, 0), (zzz, kerr.UnknownTopicOrPartitionError.errno)]
    assert page["next_cursor"] is None
    partition = page["topics"][0]["partitions"][0]
    assert partition["isr_nodes"] == partition["replica_nodes"]
    assert partition["leader_id"] == partition["replica_nodes"][0]


def test_kafka_python_describes_log_dirs(stack, brokers_target):
    cluster = brokers_target
    t = cluster.create_topic("t", 1)
    produce(cluster, t, 3)
    admin = kp_admin(stack, cluster)
    # the partition's log holds the batches a fetch from its start returns, byte for byte,
    # once the followers have them too (a consumer reads up to the high watermark)
    leader = cluster.partition(t, 0)[0]
    fetch = wire.request_class(1)

    def fetched() -> int:
        answer = send_raw(cluster, 1, 12, fetch(
            max_wait_ms=0, min_bytes=0, max_bytes=1 << 20, topics=[fetch.FetchTopic(
                topic=t, partitions=[fetch.FetchPartition(partition=0, fetch_offset=0,
                                                          partition_max_bytes=1 << 20)])]),
            broker_id=leader)
        return len(answer.responses[0].partitions[0].records)
    size = wait_for(fetched, "the records below the high watermark")

    def sizes() -> dict[int, list]:
        """Broker -> its log dirs, with this test's topic alone (Kafka's hold others')."""
        return {d["broker"]: [(x["error_code"], x["log_dir"], [
            (topic["name"], [p["partition_size"] for p in topic["partitions"]])
            for topic in x["topics"] if topic["name"] == t]) for x in d["log_dirs"]]
            for d in admin.describe_log_dirs()}
    # followers copy the records a moment after the leader wrote them
    cluster.settled(sizes, {b: [(0, cluster.log_dir(b), [(t, [size])])] for b in (0, 1, 2)},
                    "every replica's size")
