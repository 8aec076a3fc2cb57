"""The data path with stock clients over real sockets: produce, fetch, offsets.

kafka-python and confluent-kafka (librdkafka) write and read records; what the tests check is
what a user of those clients sees (records, keys, headers, timestamps, offsets, errors).  Broker
behaviour a client cannot be made to show (duplicate batches, sequence gaps, acks=0 silence, bad
frames) is checked with requests built by the ``wire`` codec and sent over a plain socket.

Each test runs on mockbroker and on Apache Kafka (``target``), on a fresh topic of its own;
those that need several brokers (a follower asked, leaders moved) on three of either
(``brokers_target``), on a topic with a replica on each; those that set a broker's state
directly on mockbroker alone (``mockbroker_only``).
"""

from __future__ import annotations

import socket
import struct
import time
import uuid
from dataclasses import dataclass

import confluent_kafka as ck
import pytest
from confluent_kafka.admin import AdminClient
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

import wire
from mockbroker import MockCluster
from tests.clients.cluster_targets import BrokersTarget
from tests.clients.helpers import wait_for
from tests.clients.targets import Target
from wire import errors, records

TOPIC = "orders"
BASE_TS = 1_700_000_000_000
CLIENTS = ["kafka-python", "confluent-kafka"]
COMPRESSIONS = ["none", "gzip", "snappy", "lz4", "zstd"]
DEADLINE_S = 15

PRODUCE = wire.request_class(0)
FETCH = wire.request_class(1)
LIST_OFFSETS = wire.request_class(2)
METADATA = wire.request_class(3)
API_VERSIONS = wire.request_class(18)
FIND_COORDINATOR = wire.request_class(10)
INIT_PRODUCER_ID = wire.request_class(22)
OFFSET_FOR_LEADER_EPOCH = wire.request_class(23)


# -- fixtures and helpers ----------------------------------------------------------------------

@dataclass(frozen=True)
class Under:
    """The broker under test and the topic a test writes: a fresh topic made by CreateTopics
    on either target, or TOPIC on a mockbroker-only test's own cluster (``mock``).  On three
    brokers (``brokers``) the topic has a replica on each."""
    bootstrap_servers: str
    topic: str
    mock: MockCluster | None = None
    brokers: BrokersTarget | None = None


def start(target: Target, partitions: int = 3, **configs: str) -> Under:
    # The records carry timestamps of 2023 (BASE_TS): past any time-based retention, which
    # Kafka runs 30 s after it starts and every 5 minutes after, deleting them from under a
    # test that happens to run then.  Its topics keep their records for as long as they live.
    configs.setdefault("retention.ms", "-1")
    return Under(target.bootstrap_servers, target.create_topic(TOPIC, partitions, **configs),
                 target.mock)


def start_brokers(target: BrokersTarget, partitions: int = 3) -> Under:
    """A fresh topic with three replicas of each partition on three brokers."""
    return Under(target.bootstrap_servers, target.create_topic(
        TOPIC, partitions, **{"retention.ms": "-1"}), target.mock, target)


def start_mock(stack, **settings) -> Under:
    """A cluster of the test's own (three brokers unless told), with TOPIC in it."""
    settings.setdefault("brokers", 3)
    settings.setdefault("topics", {TOPIC: 3})
    cluster = stack.enter_context(MockCluster(**settings))
    return Under(cluster.bootstrap_servers, TOPIC, cluster)


def state(under: Under, fn):
    """Read or change a mockbroker cluster's state on its own loop thread."""
    return under.mock.call(lambda: fn(under.mock.core.cluster))


def leaders(under: Under) -> dict[int, int]:
    """Partition -> leader, as Metadata tells."""
    return under.brokers.leaders(under.topic)


def move_leader(under: Under, index: int) -> int:
    """Hand a partition's leadership to the next broker, as an operator does (a reassignment
    that puts it first among the replicas, then a preferred election); returns it."""
    ids = sorted(under.brokers.brokers)
    new = ids[(ids.index(leaders(under)[index]) + 1) % len(ids)]
    under.brokers.move_leader(under.topic, index, new)
    return new


@dataclass(frozen=True)
class Msg:
    partition: int
    key: bytes | None
    value: bytes | None
    headers: tuple
    timestamp: int


@dataclass(frozen=True)
class Got:
    partition: int
    offset: int
    msg: Msg


def sample(n: int, partitions: int, *, ts: int = BASE_TS, tag: str = "m") -> list[Msg]:
    """Keyed records with headers and explicit timestamps, plus null keys, tombstones, empty
    header values and repeated header keys; values compress well and some are large."""
    out = []
    for i in range(n):
        key = None if i % 7 == 3 else f"{tag}-key-{i}".encode()
        tombstone = i % 11 == 5 and key is not None  # kafka-python refuses a record with neither
        value = None if tombstone else f"{tag}-value-{i}|".encode() * (1 + (i * 37) % 300)
        headers = () if i % 5 == 0 else (("trace", f"t{i}".encode()), ("empty", b""),
                                         ("trace", b"again"))
        out.append(Msg(i % partitions, key, value, headers, ts + i * 1000))
    return out


def by_partition(items):
    out: dict[int, list] = {}
    for item in items:
        out.setdefault(item.partition, []).append(item)
    return out


def assert_intact(produced: list[Msg], consumed: list[Got], first_offset: int = 0):
    """Every record back, unchanged, once, and in per-partition order at consecutive offsets."""
    want = by_partition(produced)
    got = by_partition(consumed)
    assert sorted(got) == sorted(want)
    for p, msgs in want.items():
        assert [g.msg for g in got[p]] == msgs, f"partition {p}"
        assert [g.offset for g in got[p]] == list(range(first_offset, first_offset + len(msgs)))


# kafka-python

def kp_producer(stack, cluster, **config) -> KafkaProducer:
    config.setdefault("request_timeout_ms", 5000)
    config.setdefault("max_block_ms", 5000)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, **config)
    stack.callback(producer.close, timeout=5)
    return producer


def kp_consumer(stack, cluster, **config) -> KafkaConsumer:
    config.setdefault("request_timeout_ms", 5000)
    config.setdefault("fetch_max_wait_ms", 100)  # a seek waits for the fetch in flight
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, group_id=None,
                             enable_auto_commit=False, **config)
    stack.callback(consumer.close)
    return consumer


def kp_produce(stack, cluster, msgs: list[Msg], topic: str | None = None,
               **config) -> list[Got]:
    topic = topic or cluster.topic
    producer = kp_producer(stack, cluster, **config)
    futures = [producer.send(topic, key=m.key, value=m.value, headers=list(m.headers),
                             partition=m.partition, timestamp_ms=m.timestamp) for m in msgs]
    producer.flush(timeout=10)
    return [Got(m.partition, f.get(timeout=10).offset, m) for m, f in zip(msgs, futures)]


def kp_poll(consumer: KafkaConsumer, count: int) -> list[Got]:
    out: list[Got] = []
    deadline = time.monotonic() + DEADLINE_S
    while len(out) < count and time.monotonic() < deadline:
        for records_ in consumer.poll(timeout_ms=100).values():
            out += [Got(r.partition, r.offset, Msg(r.partition, r.key, r.value, tuple(r.headers),
                                                  r.timestamp)) for r in records_]
    return out


def kp_consume(stack, cluster, count: int, partitions, topic: str | None = None) -> list[Got]:
    topic = topic or cluster.topic
    consumer = kp_consumer(stack, cluster)
    consumer.assign([TopicPartition(topic, p) for p in partitions])
    consumer.seek_to_beginning()
    return kp_poll(consumer, count)


# confluent-kafka

def ck_config(cluster, **config) -> dict:
    return {"bootstrap.servers": cluster.bootstrap_servers, "log_level": 0, **config}


def ck_producer(stack, cluster, **config) -> ck.Producer:
    producer = ck.Producer(ck_config(cluster, **config))
    stack.callback(producer.flush, 5)
    return producer


def ck_consumer(stack, cluster, **config) -> ck.Consumer:
    config.setdefault("group.id", "data-path")
    config.setdefault("enable.auto.commit", False)
    config.setdefault("fetch.wait.max.ms", 100)  # a seek waits for the fetch in flight
    consumer = ck.Consumer(ck_config(cluster, **config))
    stack.callback(consumer.close)
    return consumer


def ck_produce(stack, cluster, msgs: list[Msg], topic: str | None = None,
               **config) -> list[Got]:
    topic = topic or cluster.topic
    producer = ck_producer(stack, cluster, **config)
    reports: dict[int, tuple] = {}
    for i, m in enumerate(msgs):
        producer.produce(topic, key=m.key, value=m.value, headers=list(m.headers),
                         partition=m.partition, timestamp=m.timestamp,
                         on_delivery=lambda err, msg, i=i: reports.__setitem__(i, (err, msg)))
        producer.poll(0)
    assert producer.flush(10) == 0
    assert [err for err, _ in reports.values() if err is not None] == []
    return [Got(m.partition, reports[i][1].offset(), m) for i, m in enumerate(msgs)]


def ck_poll(consumer: ck.Consumer, count: int) -> list[Got]:
    out: list[Got] = []
    deadline = time.monotonic() + DEADLINE_S
    while len(out) < count and time.monotonic() < deadline:
        m = consumer.poll(0.1)
        if m is None:
            continue
        assert m.error() is None, m.error()
        out.append(Got(m.partition(), m.offset(), Msg(m.partition(), m.key(), m.value(),
                                                      tuple(m.headers() or ()),
                                                      m.timestamp()[1])))
    return out


def ck_consume(stack, cluster, count: int, partitions, topic: str | None = None) -> list[Got]:
    topic = topic or cluster.topic
    consumer = ck_consumer(stack, cluster)
    consumer.assign([ck.TopicPartition(topic, p, ck.OFFSET_BEGINNING) for p in partitions])
    return ck_poll(consumer, count)


PRODUCE_WITH = {"kafka-python": kp_produce, "confluent-kafka": ck_produce}
CONSUME_WITH = {"kafka-python": kp_consume, "confluent-kafka": ck_consume}


def idempotent_config(client: str, compression: str) -> dict:
    if client == "kafka-python":
        return {"acks": "all", "enable_idempotence": True,
                "compression_type": None if compression == "none" else compression}
    return {"acks": "all", "enable.idempotence": True, "compression.type": compression}


# raw sockets

class Raw:
    """A bare Kafka connection: requests encoded by ``wire``, answers read in order."""

    def __init__(self, address: tuple[str, int], topic: str = TOPIC):
        self.sock = socket.create_connection(address, timeout=10)
        self.topic = topic  # what requests name unless told otherwise
        self.correlation_id = 0

    def close(self) -> None:
        self.sock.close()

    def send(self, api_key: int, version: int, body) -> int:
        self.correlation_id += 1
        self.sock.sendall(wire.encode_request(api_key, version, self.correlation_id, "raw", body))
        return self.correlation_id

    def send_bytes(self, data: bytes) -> None:
        self.sock.sendall(data)

    def receive(self, api_key: int, version: int):
        (size,) = struct.unpack(">i", self._read(4))
        return wire.decode_response(api_key, version, self._read(size))

    def call(self, api_key: int, version: int, body):
        sent = self.send(api_key, version, body)
        correlation_id, response = self.receive(api_key, version)
        assert correlation_id == sent
        return response

    def closed_by_peer(self) -> bool:
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True

    def _read(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed by the broker")
            data += chunk
        return data


def address(under: Under, broker_id: int | None = None) -> tuple[str, int]:
    """A broker's address; with no id, the first bootstrap server."""
    if broker_id is None:
        host, port = under.bootstrap_servers.split(",")[0].rsplit(":", 1)
        return host, int(port)
    if under.brokers is not None:
        return under.brokers.address(broker_id)
    broker = state(under, lambda c: c.brokers[broker_id])
    return broker.host, broker.port


def raw(stack, under: Under, broker_id: int | None = None) -> Raw:
    conn = Raw(address(under, broker_id), under.topic)
    stack.callback(conn.close)
    return conn


def metadata(conn: Raw, topic: str | None = None):
    body = METADATA(topics=[METADATA.MetadataRequestTopic(name=topic or conn.topic)],
                    allow_auto_topic_creation=False, include_topic_authorized_operations=False)
    [found] = conn.call(3, 12, body).topics
    assert found.error_code == errors.NONE, found
    return found


def raw_to_leader(stack, under: Under, partition: int = 0) -> Raw:
    """A connection to the partition's leader, found as a client finds it: by Metadata."""
    found = metadata(raw(stack, under))
    [leader] = [p.leader_id for p in found.partitions if p.partition_index == partition]
    if under.brokers is None and (under.mock is None or
                                  len(state(under, lambda c: c.brokers)) == 1):
        return raw(stack, under)
    return raw(stack, under, leader)


def topic_id(conn: Raw) -> uuid.UUID:
    return metadata(conn).topic_id


def batch(n: int = 3, *, ts: int = BASE_TS, tag: str = "r", **kwargs) -> bytes:
    return records.encode_batch([(f"{tag}{i}".encode(), f"{tag}-value-{i}".encode(),
                                  [("h", b"%d" % i)], ts + i) for i in range(n)], **kwargs)


def produce_body(data: bytes | None, topic: str, *, partition: int = 0, acks: int = -1,
                 topic_id: uuid.UUID | None = None):
    topic_data = PRODUCE.TopicProduceData(name=topic, partition_data=[
        PRODUCE.PartitionProduceData(index=partition, records=data)])
    if topic_id is not None:
        topic_data.topic_id = topic_id
    return PRODUCE(acks=acks, timeout_ms=5000, topic_data=[topic_data])


def produce_one(conn: Raw, data: bytes | None, version: int = 12, **kwargs):
    kwargs.setdefault("topic", conn.topic)
    response = conn.call(0, version, produce_body(data, **kwargs))
    return response.responses[0].partition_responses[0]


def fetch_body(topic: str, partitions, *, max_wait_ms: int = 0, min_bytes: int = 0,
               max_bytes: int = 50 * 1024 * 1024, partition_max_bytes: int = 1024 * 1024,
               topic_id: uuid.UUID | None = None,
               current_leader_epoch: int = -1):
    """``partitions``: partition -> fetch offset."""
    fetch_topic = FETCH.FetchTopic(topic=topic, partitions=[
        FETCH.FetchPartition(partition=p, fetch_offset=o, partition_max_bytes=partition_max_bytes,
                             current_leader_epoch=current_leader_epoch)
        for p, o in partitions.items()])
    if topic_id is not None:
        fetch_topic.topic_id = topic_id
    return FETCH(max_wait_ms=max_wait_ms, min_bytes=min_bytes, max_bytes=max_bytes,
                 topics=[fetch_topic])


def fetched(partition_data) -> list[records.Record]:
    return [r for _, view in records.split_batches(partition_data.records)
            for r in records.decode_records(view)]


def list_offsets(conn: Raw, queries, version: int = 9, topic: str | None = None,
                 current_leader_epoch: int = -1):
    """``queries``: [(partition, timestamp)] -> [(error, offset, timestamp, leader epoch)]."""
    body = LIST_OFFSETS(replica_id=-1, topics=[LIST_OFFSETS.ListOffsetsTopic(
        name=topic or conn.topic, partitions=[LIST_OFFSETS.ListOffsetsPartition(
            partition_index=p, timestamp=t, current_leader_epoch=current_leader_epoch)
            for p, t in queries])])
    response = conn.call(2, version, body)
    return [(p.error_code, p.offset, p.timestamp, p.leader_epoch)
            for p in response.topics[0].partitions]


def lookup(conn: Raw, *timestamps: int, partition: int = 0, version: int = 9):
    """One ListOffsets request per timestamp (Kafka refuses a partition asked twice)."""
    return [list_offsets(conn, [(partition, t)], version)[0] for t in timestamps]


# -- stock clients -----------------------------------------------------------------------------

@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize("consumer", CLIENTS)
@pytest.mark.parametrize("producer", CLIENTS)
def test_idempotent_round_trip_keeps_every_record_intact_and_in_order(stack, target, producer,
                                                                      consumer, compression):
    cluster = start(target)
    msgs = sample(45, 3)
    delivered = PRODUCE_WITH[producer](stack, cluster, msgs, **idempotent_config(producer,
                                                                                  compression))
    assert_intact(msgs, delivered)
    assert_intact(msgs, CONSUME_WITH[consumer](stack, cluster, len(msgs), range(3)))


@pytest.mark.parametrize("acks", [0, 1, -1])
@pytest.mark.parametrize("client", CLIENTS)
def test_every_acks_setting_delivers(stack, target, client, acks):
    cluster = start(target)
    msgs = sample(20, 3)
    if client == "kafka-python":
        config = {"acks": "all" if acks == -1 else acks, "enable_idempotence": False}
    else:
        config = {"acks": acks, "enable.idempotence": False}
    delivered = PRODUCE_WITH[client](stack, cluster, msgs, **config)
    if acks != 0:  # with acks=0 the producer never learns its offsets
        assert_intact(msgs, delivered)
    assert_intact(msgs, CONSUME_WITH[client](stack, cluster, len(msgs), range(3)))


@pytest.mark.parametrize("client", CLIENTS)
def test_records_larger_than_the_consumers_fetch_sizes_still_arrive(stack, target, client):
    cluster = start(target)
    msgs = [Msg(0, b"big-%d" % i, bytes([65 + i]) * 300_000, (), BASE_TS + i) for i in range(3)]
    msgs.append(Msg(0, b"huge", b"z" * 900_000, (("h", b"1"),), BASE_TS + 3))
    PRODUCE_WITH[client](stack, cluster, msgs)
    if client == "kafka-python":
        consumer = kp_consumer(stack, cluster, max_partition_fetch_bytes=1024,
                               fetch_max_bytes=2048)
        consumer.assign([TopicPartition(cluster.topic, 0)])
        consumer.seek_to_beginning()
        got = kp_poll(consumer, 4)
    else:
        consumer = ck_consumer(stack, cluster, **{"max.partition.fetch.bytes": 1024,
                                                  "fetch.max.bytes": 2048,
                                                  "message.max.bytes": 1000})
        consumer.assign([ck.TopicPartition(cluster.topic, 0, ck.OFFSET_BEGINNING)])
        got = ck_poll(consumer, 4)
    assert_intact(msgs, got)


@pytest.mark.parametrize("client", CLIENTS)
def test_topic_created_by_producing_to_it(stack, target, client):
    """Both targets create a topic on first use with ``num.partitions`` partitions (two)."""
    cluster = Under(target.bootstrap_servers, target.unique("fresh"))
    msgs = sample(10, 2)
    PRODUCE_WITH[client](stack, cluster, msgs)
    found = AdminClient(ck_config(cluster)).list_topics(cluster.topic, timeout=5)
    assert sorted(found.topics[cluster.topic].partitions) == [0, 1]
    assert_intact(msgs, CONSUME_WITH[client](stack, cluster, len(msgs), range(2)))


@pytest.mark.parametrize("client", CLIENTS)
def test_log_append_time_topic_stamps_records_with_the_brokers_time(stack, target, client):
    cluster = start(target, **{"message.timestamp.type": "LogAppendTime"})
    before = int(time.time() * 1000)
    msgs = sample(6, 3)  # with explicit CreateTime timestamps long ago
    delivered = PRODUCE_WITH[client](stack, cluster, msgs, **idempotent_config(client, "lz4"))
    after = int(time.time() * 1000)
    got = CONSUME_WITH[client](stack, cluster, len(msgs), range(3))
    assert sorted((g.partition, g.offset) for g in got) == \
        sorted((d.partition, d.offset) for d in delivered)
    for g in got:
        assert before <= g.msg.timestamp <= after
        original = next(m for m in msgs if (m.key, m.value) == (g.msg.key, g.msg.value))
        assert g.msg == Msg(original.partition, original.key, original.value, original.headers,
                            g.msg.timestamp)


@pytest.mark.parametrize("client", CLIENTS)
def test_consumer_before_the_log_start_resets_to_earliest(stack, target, client):
    cluster = start(target)
    msgs = [m for m in sample(30, 3) if m.partition == 0]
    PRODUCE_WITH[client](stack, cluster, msgs)
    target.delete_records(cluster.topic, 0, 6)
    if client == "kafka-python":
        consumer = kp_consumer(stack, cluster, auto_offset_reset="earliest")
        consumer.assign([TopicPartition(cluster.topic, 0)])
        consumer.seek(TopicPartition(cluster.topic, 0), 2)
        got = kp_poll(consumer, 4)
    else:
        consumer = ck_consumer(stack, cluster, **{"auto.offset.reset": "earliest"})
        consumer.assign([ck.TopicPartition(cluster.topic, 0, 2)])
        got = ck_poll(consumer, 4)
    assert [(g.offset, g.msg) for g in got] == list(zip(range(6, 10), msgs[6:]))


def test_kafka_python_seek_offsets_for_times_and_watermarks(stack, target):
    cluster = start(target)
    msgs = [m for m in sample(30, 3) if m.partition == 0]  # timestamps 3 s apart
    kp_produce(stack, cluster, msgs, acks="all")
    tp = TopicPartition(cluster.topic, 0)
    consumer = kp_consumer(stack, cluster)
    consumer.assign([tp])
    assert consumer.beginning_offsets([tp]) == {tp: 0}
    assert consumer.end_offsets([tp]) == {tp: 10}

    consumer.seek(tp, 4)
    assert [g.offset for g in kp_poll(consumer, 6)] == [4, 5, 6, 7, 8, 9]
    consumer.seek_to_beginning(tp)
    assert [g.msg for g in kp_poll(consumer, 10)] == msgs
    consumer.seek_to_end(tp)
    assert consumer.position(tp) == 10

    found = consumer.offsets_for_times({tp: msgs[3].timestamp - 500})[tp]
    assert (found.offset, found.timestamp) == (3, msgs[3].timestamp)
    found = consumer.offsets_for_times({tp: msgs[3].timestamp})[tp]
    assert (found.offset, found.timestamp) == (3, msgs[3].timestamp)
    assert consumer.offsets_for_times({tp: msgs[-1].timestamp + 1}) == {tp: None}

    target.delete_records(cluster.topic, 0, 6)
    assert consumer.beginning_offsets([tp]) == {tp: 6}
    consumer.seek_to_beginning(tp)
    assert [g.offset for g in kp_poll(consumer, 4)] == [6, 7, 8, 9]


def test_confluent_seek_offsets_for_times_and_watermarks(stack, target):
    cluster = start(target)
    topic = cluster.topic
    msgs = [m for m in sample(30, 3) if m.partition == 0]
    ck_produce(stack, cluster, msgs, **{"enable.idempotence": True})
    consumer = ck_consumer(stack, cluster)
    tp = ck.TopicPartition(topic, 0)
    assert consumer.get_watermark_offsets(tp, timeout=5, cached=False) == (0, 10)

    consumer.assign([ck.TopicPartition(topic, 0, 4)])
    assert [g.offset for g in ck_poll(consumer, 6)] == [4, 5, 6, 7, 8, 9]
    consumer.seek(ck.TopicPartition(topic, 0, ck.OFFSET_BEGINNING))
    assert [g.msg for g in ck_poll(consumer, 10)] == msgs
    consumer.seek(ck.TopicPartition(topic, 0, 7))
    assert [g.offset for g in ck_poll(consumer, 3)] == [7, 8, 9]

    [found] = consumer.offsets_for_times([ck.TopicPartition(topic, 0, msgs[3].timestamp - 500)],
                                         timeout=5)
    assert found.offset == 3 and found.error is None
    [found] = consumer.offsets_for_times([ck.TopicPartition(topic, 0, msgs[-1].timestamp + 1)],
                                         timeout=5)
    assert found.offset == ck.OFFSET_END

    # seek to the end: only what is produced from now on arrives.  The seek looks the end up
    # in the background, so the test writes until a record arrives: the first to arrive is
    # one written after the seek, at the end the seek found, never one of the ten before it.
    consumer.seek(ck.TopicPartition(topic, 0, ck.OFFSET_END))
    producer = ck_producer(stack, cluster)
    written: dict[int, Msg] = {}
    got: list[Got] = []

    def write_then_poll():
        msg = Msg(0, b"later-%d" % len(written), b"after the end", (), BASE_TS + 99_000)
        producer.produce(topic, key=msg.key, value=msg.value, partition=0,
                         timestamp=msg.timestamp,
                         on_delivery=lambda err, m: written.__setitem__(m.offset(), msg))
        assert producer.flush(10) == 0
        got.extend(ck_poll(consumer, 1))
        return got
    wait_for(write_then_poll, "a record written after the seek")
    [first] = got
    assert first.offset >= 10 and first == Got(0, first.offset, written[first.offset])
    end = 10 + len(written)

    target.delete_records(topic, 0, 6)
    assert consumer.get_watermark_offsets(tp, timeout=5, cached=False) == (6, end)


def test_three_brokers_lead_different_partitions_and_clients_follow_moved_leaders(
        stack, brokers_target):
    cluster = start_brokers(brokers_target, partitions=6)
    topic = cluster.topic
    placement = leaders(cluster)
    assert set(placement.values()) == {0, 1, 2}

    metadata = AdminClient(ck_config(cluster)).list_topics(topic, timeout=5)
    assert {p.id: p.leader for p in metadata.topics[topic].partitions.values()} == placement

    kp = kp_producer(stack, cluster, acks="all", enable_idempotence=True)
    cp = ck_producer(stack, cluster, **{"enable.idempotence": True})
    kc = kp_consumer(stack, cluster)
    kc.assign([TopicPartition(topic, p) for p in range(6)])
    kc.seek_to_beginning()
    cc = ck_consumer(stack, cluster)
    cc.assign([ck.TopicPartition(topic, p, ck.OFFSET_BEGINNING) for p in range(6)])

    def round_(tag: str) -> list[Msg]:
        kmsgs = sample(12, 6, tag=f"kp-{tag}")
        cmsgs = sample(12, 6, tag=f"ck-{tag}")
        for m in kmsgs:
            kp.send(topic, key=m.key, value=m.value, headers=list(m.headers),
                    partition=m.partition, timestamp_ms=m.timestamp).get(timeout=10)
        for m in cmsgs:
            cp.produce(topic, key=m.key, value=m.value, headers=list(m.headers),
                       partition=m.partition, timestamp=m.timestamp)
        assert cp.flush(10) == 0
        return kmsgs + cmsgs

    first = round_("first")
    for p in range(6):
        move_leader(cluster, p)
    assert all(placement[p] != leader for p, leader in leaders(cluster).items())
    second = round_("second")

    # each round writes kafka-python's records (acknowledged one by one) before librdkafka's,
    # and both consumers read all of them, from the old leaders and then the new ones
    for got in (kp_poll(kc, 48), ck_poll(cc, 48)):
        assert_intact(first + second, got)


def test_kafka_python_fetch_long_poll_is_woken_by_produce(stack, target):
    """kafka-python fetches with v12 (topics by name); a waiting fetch must answer as soon as a
    record arrives, not at fetch_max_wait_ms."""
    cluster = start(target)
    consumer = kp_consumer(stack, cluster, fetch_max_wait_ms=60_000, request_timeout_ms=90_000)
    consumer.assign([TopicPartition(cluster.topic, 0)])
    consumer.seek_to_beginning()
    assert consumer.poll(timeout_ms=300) == {}  # the long poll is now parked on the broker
    msg = Msg(0, b"k", b"wake up", (("h", b"1"),), BASE_TS)
    kp_produce(stack, cluster, [msg], acks=1)
    got = []
    deadline = time.monotonic() + 10  # well short of the 60 s the fetch may wait
    while not got and time.monotonic() < deadline:
        got = kp_poll(consumer, 1)
    assert got == [Got(0, 0, msg)]


def test_confluent_consumer_long_poll_is_woken_by_produce(stack, target):
    cluster = start(target)
    consumer = ck_consumer(stack, cluster, **{"fetch.wait.max.ms": 60_000,
                                              "socket.timeout.ms": 90_000})
    consumer.assign([ck.TopicPartition(cluster.topic, 0, ck.OFFSET_BEGINNING)])
    assert consumer.poll(0.3) is None
    msg = Msg(0, b"k", b"wake up", (("h", b"1"),), BASE_TS)
    ck_produce(stack, cluster, [msg])
    assert ck_poll(consumer, 1) == [Got(0, 0, msg)]


# -- Produce, as Kafka answers it ----------------------------------------------------------------

def test_duplicate_idempotent_batch_gets_its_original_offset(stack, target):
    cluster = start(target)
    conn = raw_to_leader(stack, cluster)
    first = batch(3, producer_id=7, producer_epoch=0, base_sequence=0)
    second = batch(2, tag="s", producer_id=7, producer_epoch=0, base_sequence=3)
    assert produce_one(conn, batch(4, tag="other")).base_offset == 0
    assert (produce_one(conn, first).error_code, produce_one(conn, second).base_offset) == (0, 7)
    again = produce_one(conn, first)
    assert (again.error_code, again.base_offset) == (errors.NONE, 4)
    # Kafka answers a duplicate with the original batch's max timestamp as its append time
    assert again.log_append_time_ms == BASE_TS + 2
    again = produce_one(conn, second)
    assert (again.error_code, again.base_offset) == (errors.NONE, 7)
    assert list_offsets(conn, [(0, -1)])[0][1] == 9  # nothing was written twice


def test_sequence_gap_is_out_of_order_and_old_epoch_is_invalid(stack, target):
    cluster = start(target)
    conn = raw_to_leader(stack, cluster)
    assert produce_one(conn, batch(3, producer_id=9, producer_epoch=1,
                                   base_sequence=0)).error_code == errors.NONE
    gap = produce_one(conn, batch(1, producer_id=9, producer_epoch=1, base_sequence=5))
    assert (gap.error_code, gap.base_offset) == (errors.OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
    old = produce_one(conn, batch(1, producer_id=9, producer_epoch=0, base_sequence=3))
    assert old.error_code == errors.INVALID_PRODUCER_EPOCH
    new_epoch_not_at_zero = produce_one(conn, batch(1, producer_id=9, producer_epoch=2,
                                                    base_sequence=3))
    assert new_epoch_not_at_zero.error_code == errors.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert produce_one(conn, batch(1, producer_id=9, producer_epoch=1,
                                   base_sequence=3)).base_offset == 3
    assert list_offsets(conn, [(0, -1)])[0][1] == 4


def test_bad_crc_is_corrupt_message(stack, target):
    cluster = start(target)
    conn = raw_to_leader(stack, cluster)
    data = bytearray(batch(3))
    data[-2] ^= 0xFF
    response = produce_one(conn, bytes(data))
    assert (response.error_code, response.base_offset) == (errors.CORRUPT_MESSAGE, -1)
    assert list_offsets(conn, [(0, -1)])[0][1] == 0


def assert_too_large_past(conn: Raw, limit: int) -> None:
    small, large = batch(3), batch(60)
    assert len(small) <= limit < len(large)
    assert produce_one(conn, large).error_code == errors.MESSAGE_TOO_LARGE
    assert produce_one(conn, small).base_offset == 0


def test_batch_past_the_topics_max_message_bytes_is_message_too_large(stack, target):
    cluster = start(target, **{"max.message.bytes": "1000"})
    assert_too_large_past(raw_to_leader(stack, cluster), 1000)


@pytest.mark.mockbroker_only("broker-settings")
def test_batch_past_the_brokers_message_max_bytes_is_message_too_large(stack):
    cluster = start_mock(stack, message_max_bytes=1000)
    assert_too_large_past(raw_to_leader(stack, cluster), 1000)


@pytest.mark.parametrize("version", [9, 10, 12, 13])
def test_produce_to_a_follower_is_not_leader_with_the_current_leader(stack, brokers_target,
                                                                      version):
    cluster = start_brokers(brokers_target)
    leader = leaders(cluster)[0]
    follower = next(b for b in range(3) if b != leader)
    conn = raw(stack, cluster, follower)
    kwargs = {"topic_id": topic_id(conn)} if version >= 13 else {}
    response = conn.call(0, version, produce_body(batch(2), conn.topic, **kwargs))
    part = response.responses[0].partition_responses[0]
    assert part.error_code == errors.NOT_LEADER_OR_FOLLOWER
    if version >= 10:
        assert (part.current_leader.leader_id, part.current_leader.leader_epoch) == (leader, 0)
        assert [(n.node_id, n.host, n.port) for n in response.node_endpoints] == \
            [(leader, *address(cluster, leader))]


def test_records_must_be_one_v2_batch_from_base_offset_zero(stack, target):
    cluster = start(target)
    conn = raw_to_leader(stack, cluster)
    legacy = bytearray(batch(2))
    legacy[records.MAGIC_OFFSET] = 1
    for data in (batch(2) + batch(2, tag="s"), batch(2, base_offset=5), bytes(legacy),
                 batch(2)[:-5], b""):
        assert produce_one(conn, data).error_code == errors.INVALID_RECORD
    assert list_offsets(conn, [(0, -1)])[0][1] == 0


def test_acks_other_than_minus_one_zero_and_one_are_invalid(stack, target):
    cluster = start(target)
    conn = raw_to_leader(stack, cluster)
    response = produce_one(conn, batch(2), acks=2)
    assert (response.error_code, response.base_offset) == (errors.INVALID_REQUIRED_ACKS, -1)
    assert list_offsets(conn, [(0, -1)])[0][1] == 0


def test_clients_may_not_write_to_internal_topics(stack, target):
    conn = raw(stack, Under(target.bootstrap_servers, "__consumer_offsets"))
    # looking a group's coordinator up makes the offsets topic exist, on either target
    wait_for(lambda: conn.call(10, 4, FIND_COORDINATOR(
        key_type=0, coordinator_keys=["g"])).coordinators[0].error_code == errors.NONE,
        "the group coordinator")
    response = produce_one(conn, batch(1))
    assert response.error_code == errors.INVALID_TOPIC_EXCEPTION


def test_find_coordinator_answers_the_empty_group_and_says_kafkas_messages(stack, target):
    conn = raw(stack, Under(target.bootstrap_servers, "__consumer_offsets"))
    group = target.unique("g")
    wait_for(lambda: conn.call(10, 4, FIND_COORDINATOR(
        key_type=0, coordinator_keys=[group])).coordinators[0].error_code == errors.NONE,
        "the group coordinator")
    host, port = address(Under(target.bootstrap_servers, TOPIC))
    for version in (1, 2, 3):
        # before v4 the answer carries Errors.message() of its code, "NONE" too
        for key in (group, ""):
            found = conn.call(10, version, FIND_COORDINATOR(key=key, key_type=0))
            assert (found.error_code, found.error_message, found.host, found.port) == \
                (errors.NONE, "NONE", host, port)
        refused = conn.call(10, version, FIND_COORDINATOR(key=group, key_type=7))
        assert (refused.error_code, refused.node_id) == (errors.INVALID_REQUEST, -1)
        assert refused.error_message.startswith("This most likely occurs because of a request "
                                                "being malformed by the client library")
    [empty] = conn.call(10, 4, FIND_COORDINATOR(key_type=0, coordinator_keys=[""])).coordinators
    assert (empty.error_code, empty.error_message, empty.host, empty.port) == \
        (errors.NONE, "", host, port)


def test_acks_zero_gets_no_response(stack, target):
    cluster = start(target)
    conn = raw_to_leader(stack, cluster)
    silent = conn.send(0, 12, produce_body(batch(2), conn.topic, acks=0))
    answered = conn.send(18, 3, API_VERSIONS(client_software_name="raw",
                                             client_software_version="1"))
    correlation_id, body = conn.receive(18, 3)
    assert (correlation_id, body.error_code) == (answered, errors.NONE)
    assert silent != answered
    assert list_offsets(conn, [(0, -1)])[0][1] == 2  # and the records were written


def assert_acks_zero_failure_closes(conn: Raw, other: Raw, data: bytes) -> None:
    """The producer reads no response, so Kafka closes the connection to tell it something
    went wrong (and make it refresh its metadata)."""
    conn.send(0, 12, produce_body(data, conn.topic, acks=0))
    assert conn.closed_by_peer()
    assert list_offsets(other, [(0, -1)])[0][:2] == (errors.NONE, 0)


def test_a_corrupt_acks_zero_batch_closes_the_connection(stack, target):
    cluster = start(target)
    data = bytearray(batch(2))
    data[-1] ^= 0xFF
    assert_acks_zero_failure_closes(raw_to_leader(stack, cluster), raw_to_leader(stack, cluster),
                                    bytes(data))


def test_an_acks_zero_batch_to_a_follower_closes_the_connection(stack, brokers_target):
    cluster = start_brokers(brokers_target)
    leader = leaders(cluster)[0]
    assert_acks_zero_failure_closes(raw(stack, cluster, (leader + 1) % 3),
                                    raw(stack, cluster, leader), batch(2))


@pytest.mark.parametrize("client", CLIENTS)
def test_acks_zero_producer_follows_a_moved_leader(stack, brokers_target, client):
    cluster = start_brokers(brokers_target, partitions=1)
    if client == "kafka-python":
        producer = kp_producer(stack, cluster, acks=0, enable_idempotence=False)

        def send(i: int) -> None:
            producer.send(cluster.topic, key=b"k%d" % i, value=b"v%d" % i, partition=0)
            producer.flush(5)
    else:
        producer = ck_producer(stack, cluster, acks=0)

        def send(i: int) -> None:
            producer.produce(cluster.topic, key=b"k%d" % i, value=b"v%d" % i, partition=0)
            assert producer.flush(5) == 0

    def end() -> int:
        """The partition's end as its leader tells (its high watermark)."""
        conn = raw_to_leader(stack, cluster)
        try:
            return list_offsets(conn, [(0, -1)])[0][1]
        finally:
            conn.close()

    send(0)
    wait_for(lambda: end() == 1, "the first record")
    move_leader(cluster, 0)
    # What reaches the old leader is lost, as on Kafka; the closed connection sends the
    # producer to the new leader.
    sent = iter(range(1, 1000))
    wait_for(lambda: send(next(sent)) or end() > 1, "a record on the new leader")


# -- Fetch ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [4, 12, 13, 17])
def test_fetch_long_poll_is_woken_by_produce(stack, target, version):
    cluster = start(target)
    fetcher = raw_to_leader(stack, cluster)
    kwargs = {"topic_id": topic_id(fetcher)} if version >= 13 else {}
    waiting = fetcher.send(1, version, fetch_body(cluster.topic, {0: 0}, max_wait_ms=60_000,
                                                  min_bytes=1, **kwargs))
    producer = raw_to_leader(stack, cluster)
    assert produce_one(producer, batch(3)).base_offset == 0
    correlation_id, response = fetcher.receive(1, version)  # the socket times out after 10 s
    assert correlation_id == waiting
    [part] = response.responses[0].partitions
    assert (part.error_code, part.high_watermark) == (errors.NONE, 3)
    assert [(r.offset, r.key) for r in fetched(part)] == [(0, b"r0"), (1, b"r1"), (2, b"r2")]


def test_fetch_without_enough_data_answers_at_max_wait(stack, target):
    cluster = start(target)
    conn = raw_to_leader(stack, cluster)
    response = conn.call(1, 12, fetch_body(conn.topic, {0: 0}, max_wait_ms=50, min_bytes=1))
    [part] = response.responses[0].partitions
    assert (part.error_code, part.high_watermark, part.records) == (errors.NONE, 0, b"")


def test_fetch_answers_every_requested_partition(stack, target):
    cluster = start(target)
    conn = raw_to_leader(stack, cluster)
    produce_one(conn, batch(2), partition=1)
    body = fetch_body(cluster.topic, {0: 0, 1: 0, 2: 5, 7: 0})
    missing = target.unique("missing")
    body.topics.append(FETCH.FetchTopic(topic=missing, partitions=[
        FETCH.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1000)]))
    response = conn.call(1, 12, body)
    got = {(t.topic, p.partition_index): (p.error_code, len(fetched(p)))
           for t in response.responses for p in t.partitions}
    assert got == {
        (cluster.topic, 0): (errors.NONE, 0),
        (cluster.topic, 1): (errors.NONE, 2),
        (cluster.topic, 2): (errors.OFFSET_OUT_OF_RANGE, 0),
        (cluster.topic, 7): (errors.UNKNOWN_TOPIC_OR_PARTITION, 0),
        (missing, 0): (errors.UNKNOWN_TOPIC_OR_PARTITION, 0),
    }


def test_fetch_out_of_range_reports_unknown_offsets_as_kafka_does(stack, target):
    cluster = start(target)
    conn = raw_to_leader(stack, cluster)
    produce_one(conn, batch(2))
    for offset in (3, -1):
        [part] = conn.call(1, 12, fetch_body(conn.topic, {0: offset})).responses[0].partitions
        assert (part.error_code, part.high_watermark, part.log_start_offset, part.records) == \
            (errors.OFFSET_OUT_OF_RANGE, -1, -1, b"")
    # the end is in range
    [part] = conn.call(1, 12, fetch_body(conn.topic, {0: 2})).responses[0].partitions
    assert (part.error_code, part.high_watermark, part.records) == (errors.NONE, 2, b"")


def test_fetch_by_unknown_topic_id_is_unknown_topic_id(stack, target):
    cluster = start(target)
    conn = raw_to_leader(stack, cluster)
    stranger = uuid.uuid4()
    response = conn.call(1, 13, fetch_body(conn.topic, {0: 0, 1: 0}, topic_id=stranger))
    assert [(t.topic_id, [p.error_code for p in t.partitions]) for t in response.responses] == \
        [(stranger, [errors.UNKNOWN_TOPIC_ID] * 2)]


def test_fetch_returns_one_whole_batch_past_max_bytes(stack, target):
    cluster = start(target)
    conn = raw_to_leader(stack, cluster)
    big = batch(50)
    produce_one(conn, big)
    produce_one(conn, batch(2, tag="next"))
    produce_one(conn, batch(2), partition=1)
    response = conn.call(1, 12, fetch_body(conn.topic, {0: 0, 1: 0}, max_bytes=100,
                                           partition_max_bytes=100))
    zero, one = response.responses[0].partitions
    assert len(zero.records) == len(big)  # the first batch whole, and nothing more
    assert [r.offset for r in fetched(zero)] == list(range(50))
    assert (one.error_code, one.high_watermark, one.records) == (errors.NONE, 2, b"")
    # a fetch from inside a batch returns the whole batch; the client skips what it has seen
    [mid] = conn.call(1, 12, fetch_body(conn.topic, {0: 49}, max_bytes=1)).responses[0].partitions
    assert [r.offset for r in fetched(mid)] == list(range(50))


def test_stale_leader_epoch_is_fenced_before_the_leader_is_checked(stack, brokers_target):
    cluster = start_brokers(brokers_target)
    old = leaders(cluster)[0]
    new = move_leader(cluster, 0)
    old_conn, new_conn = raw(stack, cluster, old), raw(stack, cluster, new)

    def fetch(conn, epoch, version=16):
        body = fetch_body(conn.topic, {0: 0}, current_leader_epoch=epoch,
                          topic_id=topic_id(conn))
        [part] = conn.call(1, version, body).responses[0].partitions
        return part.error_code, (part.current_leader.leader_id, part.current_leader.leader_epoch)

    # the new leader is named from v16 (KIP-951), where its endpoint comes with it, as on Kafka;
    # a consumer may fetch from a follower from v11 (KIP-392), not before
    assert fetch(old_conn, 1, version=10) == (errors.NOT_LEADER_OR_FOLLOWER, (-1, -1))
    assert fetch(old_conn, 1, version=11) == (errors.NONE, (-1, -1))
    assert fetch(old_conn, 0) == (errors.FENCED_LEADER_EPOCH, (new, 1))
    assert fetch(old_conn, 2) == (errors.UNKNOWN_LEADER_EPOCH, (-1, -1))
    assert fetch(old_conn, 1) == (errors.NONE, (-1, -1))
    assert fetch(new_conn, 0) == (errors.FENCED_LEADER_EPOCH, (new, 1))
    assert fetch(new_conn, 2)[0] == errors.UNKNOWN_LEADER_EPOCH
    assert fetch(new_conn, 1)[0] == errors.NONE
    for conn in (old_conn, new_conn):
        assert list_offsets(conn, [(0, -1)], current_leader_epoch=0)[0][0] == \
            errors.FENCED_LEADER_EPOCH
        assert offset_for_leader_epoch(conn, 0, 0, current=0)[0] == errors.FENCED_LEADER_EPOCH
    # the new leader's epoch starts where the log ends
    assert list_offsets(new_conn, [(0, -2)])[0] == (errors.NONE, 0, -1, 1)
    assert list_offsets(new_conn, [(0, -1)])[0] == (errors.NONE, 0, -1, 1)
    assert offset_for_leader_epoch(new_conn, 0, 0) == (errors.NONE, 0, 0)
    assert offset_for_leader_epoch(new_conn, 0, 1) == (errors.NONE, 1, 0)


# -- ListOffsets and OffsetForLeaderEpoch ------------------------------------------------------

def test_list_offsets_earliest_latest_by_timestamp_and_max_timestamp(stack, target):
    cluster = start(target)
    conn = raw_to_leader(stack, cluster)
    assert lookup(conn, -2, -1, -3, BASE_TS) == [
        (errors.NONE, 0, -1, 0), (errors.NONE, 0, -1, 0), (errors.NONE, -1, -1, -1),
        (errors.NONE, -1, -1, -1)]
    # timestamps out of order inside and across batches: 10, 30, 20 | 50, 40, 50
    produce_one(conn, records.encode_batch([(b"a", b"1", (), BASE_TS + 10),
                                            (b"b", b"2", (), BASE_TS + 30),
                                            (b"c", b"3", (), BASE_TS + 20)],
                                           compression=records.GZIP))
    produce_one(conn, records.encode_batch([(b"d", b"4", (), BASE_TS + 50),
                                            (b"e", b"5", (), BASE_TS + 40),
                                            (b"f", b"6", (), BASE_TS + 50)]))
    assert lookup(conn, -2, -1, -3) == [
        (errors.NONE, 0, -1, 0), (errors.NONE, 6, -1, 0), (errors.NONE, 3, BASE_TS + 50, 0)]
    assert lookup(conn, *(BASE_TS + t for t in (0, 10, 11, 25, 31, 45, 51))) == [
        (errors.NONE, 0, BASE_TS + 10, 0), (errors.NONE, 0, BASE_TS + 10, 0),
        (errors.NONE, 1, BASE_TS + 30, 0), (errors.NONE, 1, BASE_TS + 30, 0),
        (errors.NONE, 3, BASE_TS + 50, 0), (errors.NONE, 3, BASE_TS + 50, 0),
        (errors.NONE, -1, -1, -1)]
    target.delete_records(cluster.topic, 0, 4)
    assert lookup(conn, -2, BASE_TS) == [
        (errors.NONE, 4, -1, 0), (errors.NONE, 4, BASE_TS + 40, 0)]


def test_list_offsets_on_a_follower_is_not_leader(stack, brokers_target):
    cluster = start_brokers(brokers_target)
    leader = leaders(cluster)[0]
    follower = raw(stack, cluster, next(b for b in range(3) if b != leader))
    assert list_offsets(follower, [(0, -1)])[0][0] == errors.NOT_LEADER_OR_FOLLOWER
    missing = brokers_target.unique("missing")
    assert list_offsets(follower, [(0, -1)], topic=missing)[0][0] == \
        errors.UNKNOWN_TOPIC_OR_PARTITION


def test_list_offsets_errors(stack, target):
    cluster = start(target)
    conn = raw_to_leader(stack, cluster)
    assert list_offsets(conn, [(0, -1)], topic=target.unique("missing"))[0][0] == \
        errors.UNKNOWN_TOPIC_OR_PARTITION
    # MAX_TIMESTAMP needs v7 and EARLIEST_LOCAL v8, as Kafka says
    assert list_offsets(conn, [(0, -3)], version=6)[0][0] == errors.UNSUPPORTED_VERSION
    assert list_offsets(conn, [(0, -4)], version=7)[0][0] == errors.UNSUPPORTED_VERSION
    assert list_offsets(conn, [(0, -4)], version=8)[0][:2] == (errors.NONE, 0)
    # nothing is tiered, so nothing is pending upload either; other negative timestamps are
    # not Kafka's
    assert list_offsets(conn, [(0, -5)], version=9)[0] == (errors.NONE, -1, -1, -1)
    assert list_offsets(conn, [(0, -6)], version=10)[0][0] == errors.UNSUPPORTED_VERSION
    assert list_offsets(conn, [(0, -6)], version=11)[0] == (errors.NONE, -1, -1, -1)
    assert list_offsets(conn, [(0, -7)], version=11)[0][0] == errors.UNSUPPORTED_VERSION
    # a partition asked for twice is refused, once; the rest answered
    body = LIST_OFFSETS(replica_id=-1, topics=[LIST_OFFSETS.ListOffsetsTopic(
        name=conn.topic, partitions=[LIST_OFFSETS.ListOffsetsPartition(
            partition_index=p, timestamp=t, current_leader_epoch=-1)
            for p, t in [(0, -1), (0, -2), (1, -1)]])])
    [answer] = conn.call(2, 9, body).topics
    assert sorted((p.partition_index, p.error_code) for p in answer.partitions) == [
        (0, errors.INVALID_REQUEST), (1, errors.NONE)]


def offset_for_leader_epoch(conn: Raw, partition: int, epoch: int, current: int = -1):
    body = OFFSET_FOR_LEADER_EPOCH(replica_id=-1, topics=[
        OFFSET_FOR_LEADER_EPOCH.OffsetForLeaderTopic(topic=conn.topic, partitions=[
            OFFSET_FOR_LEADER_EPOCH.OffsetForLeaderPartition(
                partition=partition, current_leader_epoch=current, leader_epoch=epoch)])])
    [part] = conn.call(23, 4, body).topics[0].partitions
    return part.error_code, part.leader_epoch, part.end_offset


def test_offset_for_leader_epoch_answers_from_the_leaders_first_epoch(stack, target):
    conn = raw_to_leader(stack, start(target))
    assert offset_for_leader_epoch(conn, 0, 0) == (errors.NONE, 0, 0)
    produce_one(conn, batch(3))
    assert offset_for_leader_epoch(conn, 0, 0) == (errors.NONE, 0, 3)
    assert offset_for_leader_epoch(conn, 0, 1) == (errors.NONE, -1, -1)  # not known yet
    assert offset_for_leader_epoch(conn, 0, -1) == (errors.NONE, -1, -1)
    assert offset_for_leader_epoch(conn, 0, 0, current=0) == (errors.NONE, 0, 3)
    assert offset_for_leader_epoch(conn, 0, 0, current=1)[0] == errors.UNKNOWN_LEADER_EPOCH
    assert offset_for_leader_epoch(conn, 5, 0)[0] == errors.UNKNOWN_TOPIC_OR_PARTITION


@pytest.mark.mockbroker_only("internals")
def test_offset_for_leader_epoch_follows_kafkas_epoch_cache(stack):
    cluster = start_mock(stack, brokers=1)
    conn = raw(stack, cluster)
    # a leader's epoch starts when it takes over, even before anything is written
    assert offset_for_leader_epoch(conn, 0, 0) == (errors.NONE, 0, 0)
    produce_one(conn, batch(3))
    assert offset_for_leader_epoch(conn, 0, 0) == (errors.NONE, 0, 3)
    state(cluster, lambda c: setattr(c.topics[TOPIC].partitions[0], "leader_epoch", 2))
    assert offset_for_leader_epoch(conn, 0, 2) == (errors.NONE, 2, 3)
    produce_one(conn, batch(2))
    assert offset_for_leader_epoch(conn, 0, 0) == (errors.NONE, 0, 3)
    assert offset_for_leader_epoch(conn, 0, 1) == (errors.NONE, 0, 3)  # epoch 1 never wrote
    assert offset_for_leader_epoch(conn, 0, 2) == (errors.NONE, 2, 5)
    assert offset_for_leader_epoch(conn, 0, 3) == (errors.NONE, -1, -1)  # not known yet
    assert offset_for_leader_epoch(conn, 0, -1) == (errors.NONE, -1, -1)
    assert offset_for_leader_epoch(conn, 0, 2, current=1)[0] == errors.FENCED_LEADER_EPOCH
    assert offset_for_leader_epoch(conn, 0, 2, current=3)[0] == errors.UNKNOWN_LEADER_EPOCH
    assert offset_for_leader_epoch(conn, 5, 0)[0] == errors.UNKNOWN_TOPIC_OR_PARTITION


def test_init_producer_id_gives_an_idempotent_producer_a_new_id_each_time(stack, target):
    conn = raw(stack, start(target))

    def init(producer_id=-1, producer_epoch=-1):
        response = conn.call(22, 4, INIT_PRODUCER_ID(
            transactional_id=None, transaction_timeout_ms=60_000, producer_id=producer_id,
            producer_epoch=producer_epoch))
        return response.error_code, response.producer_id, response.producer_epoch

    # Kafka answers COORDINATOR_LOAD_IN_PROGRESS, which clients retry, until its broker has
    # been given its first block of producer ids
    error, first, epoch = wait_for(
        lambda: (answer := init())[0] != errors.COORDINATOR_LOAD_IN_PROGRESS and answer,
        "a producer id")
    assert (error, epoch) == (errors.NONE, 0) and first >= 0
    # asking for an epoch bump (KIP-360) without a transactional id gets a new id, as on Kafka
    error, second, epoch = init(first, 0)
    assert (error, epoch) == (errors.NONE, 0) and second not in (-1, first)
    assert init(first, -1) == (errors.INVALID_REQUEST, -1, -1)


# -- bad input closes only its own connection --------------------------------------------------

def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


GARBAGE = {
    "garbage": frame(b"\xff" * 40),
    "oversized frame": struct.pack(">i", 200 * 1024 * 1024) + b"\x00" * 16,
    "negative frame size": struct.pack(">i", -5) + b"\x00" * 16,
    "unknown api key": frame(struct.pack(">hhih", 999, 0, 1, 3) + b"raw"),
    "unserved version": frame(struct.pack(">hhih", 0, 2, 1, 3) + b"raw" + b"\x00" * 10),
    "truncated body": frame(wire.encode_request(3, 12, 1, "raw", METADATA(topics=None),
                                                size_prefix=False)[:-3]),
    "string longer than the frame": frame(struct.pack(">hhih", 3, 4, 1, 3) + b"raw" +
                                          struct.pack(">ih", 1, 30_000) + b"orders"),
    "shorter than a header": frame(b"\x00\x03"),
}


@pytest.mark.parametrize("garbage", GARBAGE.values(), ids=GARBAGE.keys())
def test_bad_input_closes_only_its_connection(stack, target, garbage):
    cluster = start(target, partitions=1)
    producer = kp_producer(stack, cluster, acks="all", enable_idempotence=True)
    consumer = ck_consumer(stack, cluster)
    consumer.assign([ck.TopicPartition(cluster.topic, 0, ck.OFFSET_BEGINNING)])
    before = Msg(0, b"before", b"1", (), BASE_TS)
    producer.send(cluster.topic, key=before.key, value=before.value, partition=0,
                  timestamp_ms=before.timestamp).get(timeout=10)
    assert ck_poll(consumer, 1) == [Got(0, 0, before)]
    watcher = raw(stack, cluster)
    bad = raw(stack, cluster)
    bad.send_bytes(garbage)
    assert bad.closed_by_peer()
    after = Msg(0, b"after", b"2", (("h", b"x"),), BASE_TS + 1)
    producer.send(cluster.topic, key=after.key, value=after.value, headers=list(after.headers),
                  partition=0, timestamp_ms=after.timestamp).get(timeout=10)
    assert ck_poll(consumer, 1) == [Got(0, 1, after)]
    assert list_offsets(watcher, [(0, -1)])[0][:2] == (errors.NONE, 2)


@pytest.mark.mockbroker_only("beyond-kafka")
def test_bad_input_closes_at_once_even_with_a_fetch_waiting(stack):
    """Kafka reads a connection's next request only once it has answered the one before, so
    there the bad frame waits out the fetch; mockbroker reads ahead and closes at once."""
    cluster = start_mock(stack, brokers=1)
    conn = raw(stack, cluster)
    conn.send(1, 12, fetch_body(conn.topic, {0: 0}, max_wait_ms=60_000, min_bytes=1))
    conn.send_bytes(struct.pack(">i", -1))
    conn.sock.settimeout(3)  # the parked fetch must not hold the connection open
    assert conn.closed_by_peer()
    assert list_offsets(raw(stack, cluster), [(0, -1)])[0][:2] == (errors.NONE, 0)


@pytest.mark.mockbroker_only("lifecycle")
def test_stopping_the_cluster_closes_connections_it_has_just_accepted():
    for _ in range(10):
        with MockCluster() as cluster:
            conn = Raw(address(Under(cluster.bootstrap_servers, TOPIC)))
        try:
            conn.sock.settimeout(3)
            assert conn.closed_by_peer()
        finally:
            conn.close()
