"""Transactions with stock clients over real sockets: confluent-kafka, kafka-python, aiokafka
and the Java kafka-clients.

Each scenario is what a user of transactions relies on, checked through the clients' own
consumers: committed records are seen by a ``read_committed`` reader exactly once, in order per
partition, aborted ones never (a ``read_uncommitted`` reader sees everything); records of an open
transaction stay hidden until the commit; a consume-transform-produce loop commits its group
offsets with its output and an abort leaves them where they were; a second producer with the
same transactional id fences the first; a retriable EndTxn error is survived; a transaction
that outlives its timeout is aborted by the coordinator and its producer finds out.

The Java producer is ``java/TxnClient.java`` run from source; kafka-clients 4.4 speaks
transaction version 2 (KIP-890) as the broker finalizes ``transaction.version=2``: no
AddPartitionsToTxn, an epoch bump at every EndTxn, and a producer whose transaction timed out
may abort and go on (but not commit).

Each test runs on mockbroker and on Apache Kafka (``target``), with topics, a group and
transactional ids of its own.  The coordinator's view of a transactional id is asked with
DescribeTransactions, as ``kafka-transactions describe`` does.  On mockbroker a test also reads
the request log (``GET /requests``) for what no client shows: which EndTxn and Produce requests
were refused, and with what.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path

import aiokafka
import aiokafka.errors
import confluent_kafka as ck
import kafka.errors
import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

from confluent_kafka.admin import OffsetSpec

from tests import jvm
from tests.clients.helpers import RDKAFKA_LOG, TIMEOUT_S, wait_for
from tests.clients.targets import Target
from wire.definitions import KAFKA_VERSION

CLIENTS = ["confluent-kafka", "kafka-python", "aiokafka"]
TOPIC = "payments"
SOURCE_TOPIC = "requests"
PARTITIONS = 3
GROUP = "transformer"

ROOT = Path(__file__).resolve().parents[2]
JAVA_SOURCE = Path(__file__).with_name("java") / "TxnClient.java"
CLASSPATH = [ROOT / ".cache" / "jars" / f"kafka-clients-{KAFKA_VERSION}.jar",
             ROOT / ".cache" / "jars" / "slf4j-api-1.7.36.jar"]
#: starting a JVM and compiling the source is slow on a busy machine
JVM_TIMEOUT_S = 60


# -- records -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Rec:
    partition: int
    key: bytes | None
    value: bytes | None
    headers: tuple = ()


@dataclass(frozen=True)
class Got:
    partition: int
    offset: int
    rec: Rec


def batch(tag: str, n: int = 9) -> list[Rec]:
    """``n`` keyed records with headers, spread round-robin over the partitions."""
    return [Rec(i % PARTITIONS, f"{tag}-k{i}".encode(), f"{tag}-v{i}".encode(),
                (("txn", tag.encode()), ("i", str(i).encode())))
            for i in range(n)]


def by_partition(recs) -> dict[int, list[Rec]]:
    out: dict[int, list[Rec]] = {}
    for rec in recs:
        out.setdefault(rec.partition, []).append(rec)
    return out


def assert_seen(got: list[Got], expected: list[Rec]):
    """``got`` is ``expected``, each record once, in order per partition, at rising offsets."""
    mine = by_partition(g.rec for g in got)
    assert mine == by_partition(expected)
    for p in mine:
        offsets = [g.offset for g in got if g.partition == p]
        assert offsets == sorted(set(offsets)), f"partition {p} offsets {offsets}"


def _headers(raw) -> tuple:
    return tuple((k, bytes(v) if v is not None else None) for k, v in (raw or ()))


@dataclass
class Scene:
    """A test's target, its topics (TOPIC's and SOURCE_TOPIC's, of PARTITIONS partitions) and
    its group id."""
    target: Target
    topic: str
    source: str
    group: str

    @property
    def bootstrap_servers(self) -> str:
        return self.target.bootstrap_servers

    @property
    def log(self):
        """mockbroker's request log (its HTTP admin client), None on Kafka."""
        return None if self.target.mock is None else self.target.mock.admin

    def txn_id(self, base: str) -> str:
        return self.target.unique(base)


@pytest.fixture
def scene(target) -> Scene:
    return Scene(target, target.create_topic(TOPIC, PARTITIONS),
                 target.create_topic(SOURCE_TOPIC, PARTITIONS), target.unique(GROUP))


@pytest.fixture
def mock_scene(kafka_cluster) -> Scene:
    """A mockbroker-only test's cluster, with TOPIC and SOURCE_TOPIC made by its marker."""
    return Scene(Target("mockbroker", kafka_cluster.bootstrap_servers, kafka_cluster), TOPIC,
                 SOURCE_TOPIC, GROUP)


# -- aiokafka runs on a loop of its own --------------------------------------------------------

class Loop:
    """An asyncio loop in a thread, so aiokafka's background tasks run while a test waits."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine, timeout: float = TIMEOUT_S + 20):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def make(self, factory):
        """``factory()`` called on the loop (aiokafka's clients bind to the running loop)."""
        async def build():
            return factory()
        return self.run(build())

    def close(self):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def aio(stack):
    loop = Loop()
    stack.callback(loop.close)
    return loop


# -- producers ---------------------------------------------------------------------------------

class TxnProducer:
    """One client's transactional producer behind the same few calls."""

    def __init__(self, client: str, stack, bootstrap: str, transactional_id: str, aio: Loop,
                 timeout_ms: int = 60000, topic: str = TOPIC):
        self.client = client
        self.topic = topic
        self.aio = aio
        self.transactional_id = transactional_id
        if client == "confluent-kafka":
            self.p = ck.Producer({"bootstrap.servers": bootstrap, "logger": RDKAFKA_LOG,
                                  "transactional.id": transactional_id, "linger.ms": 5,
                                  "transaction.timeout.ms": timeout_ms,
                                  "client.id": f"txn-{transactional_id}"})
        elif client == "kafka-python":
            self.p = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=transactional_id,
                                   transaction_timeout_ms=timeout_ms, linger_ms=5,
                                   request_timeout_ms=5000, max_block_ms=TIMEOUT_S * 1000,
                                   client_id=f"txn-{transactional_id}")
            stack.callback(self.p.close, timeout=5)
        else:
            self.p = aio.make(lambda: aiokafka.AIOKafkaProducer(
                bootstrap_servers=bootstrap, transactional_id=transactional_id,
                transaction_timeout_ms=timeout_ms, linger_ms=5, request_timeout_ms=5000,
                client_id=f"txn-{transactional_id}"))
            stack.callback(lambda: aio.run(self.p.stop()))
        self.futures: list = []

    def init(self):
        if self.client == "confluent-kafka":
            self.p.init_transactions(TIMEOUT_S)
        elif self.client == "kafka-python":
            self.p.init_transactions()
        else:
            self.aio.run(self.p.start())  # finds the coordinator and gets the producer id

    def begin(self):
        if self.client == "aiokafka":
            self.aio.run(self.p.begin_transaction())
        else:
            self.p.begin_transaction()

    def send(self, recs: list[Rec], topic: str | None = None):
        topic = topic or self.topic
        for r in recs:
            if self.client == "confluent-kafka":
                self.p.produce(topic, r.value, r.key, partition=r.partition,
                               headers=list(r.headers))
            elif self.client == "kafka-python":
                self.futures.append(self.p.send(topic, r.value, r.key, partition=r.partition,
                                                headers=list(r.headers)))
            else:
                self.futures.append(self.aio.run(self.p.send(
                    topic, r.value, r.key, partition=r.partition, headers=list(r.headers))))

    def flush(self):
        """Every record sent is on the broker (acknowledged)."""
        if self.client == "confluent-kafka":
            assert self.p.flush(TIMEOUT_S) == 0
        elif self.client == "kafka-python":
            self.p.flush(TIMEOUT_S)
            for f in self.futures:
                f.get(TIMEOUT_S)
        else:
            self.aio.run(self.p.flush())

            async def acked(futures):
                outcomes = await asyncio.gather(*futures, return_exceptions=True)
                for outcome in outcomes:
                    if isinstance(outcome, BaseException):
                        raise outcome
            self.aio.run(acked(self.futures))
        self.futures = []

    def commit(self):
        if self.client == "confluent-kafka":
            self.p.commit_transaction(TIMEOUT_S)
        elif self.client == "kafka-python":
            self.p.commit_transaction()
        else:
            self.aio.run(self.p.commit_transaction())
        self.futures = []

    def abort(self):
        if self.client == "confluent-kafka":
            self.p.abort_transaction(TIMEOUT_S)
        elif self.client == "kafka-python":
            self.p.abort_transaction()
        else:
            self.aio.run(self.p.abort_transaction())
        self.futures = []

    def send_offsets(self, consumer, positions: dict[tuple[str, int], int]):
        """The consumer's positions become the group's offsets with this transaction."""
        if self.client == "confluent-kafka":
            self.p.send_offsets_to_transaction(
                [ck.TopicPartition(t, p, o) for (t, p), o in positions.items()],
                consumer.group_metadata(), TIMEOUT_S)
        elif self.client == "kafka-python":
            self.p.send_offsets_to_transaction(
                {TopicPartition(t, p): OffsetAndMetadata(o, "", -1)
                 for (t, p), o in positions.items()}, consumer.group_metadata())
        else:
            self.aio.run(self.p.send_offsets_to_transaction(
                {aiokafka.TopicPartition(t, p): o for (t, p), o in positions.items()},
                consumer.group_metadata()))


def txn_producer(client, stack, scene: Scene, aio, transactional_id=None,
                 **kw) -> TxnProducer:
    return TxnProducer(client, stack, scene.bootstrap_servers,
                       transactional_id or scene.txn_id("tid"), aio, topic=scene.topic, **kw)


# -- consumers ---------------------------------------------------------------------------------

class Reader:
    """One client's consumer, either reading every partition from the start without a group
    (``group=None``) or subscribed in ``group`` from its committed offsets; ``got`` is what it
    returned, in order."""

    def __init__(self, client: str, stack, scene: Scene, aio: Loop, *,
                 isolation: str = "read_committed", topic: str | None = None,
                 group: str | None = None, client_id: str | None = None):
        bootstrap = scene.bootstrap_servers
        topic = topic or scene.topic
        self.client = client
        self.aio = aio
        self.topic = topic
        self.group = group
        self.isolation = isolation
        self.client_id = client_id or f"reader-{uuid.uuid4().hex[:8]}"
        self.got: list[Got] = []
        tps = [(topic, p) for p in range(PARTITIONS)]
        if client == "confluent-kafka":
            self.c = ck.Consumer({"bootstrap.servers": bootstrap, "logger": RDKAFKA_LOG,
                                  "group.id": group or f"unused-{uuid.uuid4().hex}",
                                  "client.id": self.client_id, "isolation.level": isolation,
                                  "enable.auto.commit": False, "auto.offset.reset": "earliest",
                                  "fetch.wait.max.ms": 100})
            stack.callback(self.c.close)
            if group:
                self.c.subscribe([topic])
            else:
                self.c.assign([ck.TopicPartition(t, p, ck.OFFSET_BEGINNING) for t, p in tps])
        elif client == "kafka-python":
            self.c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group,
                                   client_id=self.client_id, isolation_level=isolation,
                                   enable_auto_commit=False, auto_offset_reset="earliest",
                                   fetch_max_wait_ms=100, request_timeout_ms=5000)
            stack.callback(self.c.close)
            if group:
                # the topic's metadata first: a leader that assigns before it has it hands out
                # nothing and the group rejoins, a path on which kafka-python 3.0 was seen to
                # stall now and then (no OffsetFetch, no heartbeat after the second SyncGroup)
                assert self.c.partitions_for_topic(topic) == set(range(PARTITIONS))
                self.c.subscribe([topic])
            else:
                self.c.assign([TopicPartition(t, p) for t, p in tps])
        else:
            self.c = aio.make(lambda: aiokafka.AIOKafkaConsumer(
                bootstrap_servers=bootstrap, group_id=group, client_id=self.client_id,
                isolation_level=isolation, enable_auto_commit=False,
                auto_offset_reset="earliest", fetch_max_wait_ms=100, request_timeout_ms=5000))
            if group:
                aio.make(lambda: self.c.subscribe([topic]))
            else:
                aio.make(lambda: self.c.assign([aiokafka.TopicPartition(t, p) for t, p in tps]))
            aio.run(self.c.start())
            stack.callback(lambda: aio.run(self.c.stop()))

    def poll(self) -> list[Got]:
        if self.client == "confluent-kafka":
            new = []
            for m in self.c.consume(500, 0.1):
                assert m.error() is None, m.error()
                new.append(Got(m.partition(), m.offset(),
                               Rec(m.partition(), m.key(), m.value(), _headers(m.headers()))))
        elif self.client == "kafka-python":
            new = [Got(m.partition, m.offset,
                       Rec(m.partition, m.key, m.value, _headers(m.headers)))
                   for msgs in self.c.poll(100).values() for m in msgs]
        else:
            batches = self.aio.run(self.c.getmany(timeout_ms=100))
            new = [Got(m.partition, m.offset,
                       Rec(m.partition, m.key, m.value, _headers(m.headers)))
                   for msgs in batches.values() for m in msgs]
        self.got.extend(new)
        return new

    def read(self, count: int, what: str = "the records") -> list[Got]:
        """Poll until ``count`` records in all were returned (fails past them at the end)."""
        try:
            wait_for(lambda: self.poll() is not None and len(self.got) >= count,
                     f"{count} {what}")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; got {len(self.got)}: {self.got}") from None
        return self.got

    def group_metadata(self):
        return self.c.consumer_group_metadata() if self.client == "confluent-kafka" \
            else self.c.group_metadata() if self.client == "kafka-python" else self.group

    def position(self, partition: int) -> int:
        """The offset of the next record the consumer would return from ``partition``."""
        if self.client == "confluent-kafka":
            [tp] = self.c.position([ck.TopicPartition(self.topic, partition)])
            return tp.offset
        if self.client == "kafka-python":
            return self.c.position(TopicPartition(self.topic, partition))
        return self.aio.run(self.c.position(aiokafka.TopicPartition(self.topic, partition)))

    def committed(self) -> dict[int, int | None]:
        """The group's committed offsets of the topic's partitions, as the client reads them."""
        if self.client == "confluent-kafka":
            tps = self.c.committed([ck.TopicPartition(self.topic, p) for p in range(PARTITIONS)],
                                   TIMEOUT_S)
            return {tp.partition: (tp.offset if tp.offset >= 0 else None) for tp in tps}
        if self.client == "kafka-python":
            return {p: self.c.committed(TopicPartition(self.topic, p))
                    for p in range(PARTITIONS)}
        return {p: self.aio.run(self.c.committed(aiokafka.TopicPartition(self.topic, p)))
                for p in range(PARTITIONS)}

    def close(self):
        if self.client == "aiokafka":
            self.aio.run(self.c.stop())
        else:
            self.c.close()


def catch_up(reader: Reader, scene: Scene):
    """Poll until the reader's position in every partition has reached the end a reader of its
    isolation level may read to (the last stable offset for read_committed, else the high
    watermark) as an Admin client sees it now: whatever the broker would show the reader, it
    has been shown."""
    level = ck.IsolationLevel.READ_COMMITTED if reader.isolation == "read_committed" \
        else ck.IsolationLevel.READ_UNCOMMITTED
    futures = scene.target.admin.list_offsets(
        {ck.TopicPartition(reader.topic, p): OffsetSpec.latest() for p in range(PARTITIONS)},
        isolation_level=level, request_timeout=TIMEOUT_S)
    ends = {tp.partition: f.result(TIMEOUT_S).offset for tp, f in futures.items()}
    wait_for(lambda: reader.poll() is not None and all(
        reader.position(p) >= end for p, end in ends.items()),
        f"{reader.client_id} to reach the ends {ends}")
    reader.poll()


def txn_state(scene: Scene, transactional_id: str) -> str | None:
    entry = scene.target.describe_transaction(transactional_id)
    return None if entry is None else entry.transaction_state


# -- 1. commit, abort, commit; open transactions are invisible ---------------------------------

@pytest.mark.parametrize("client", CLIENTS)
def test_read_committed_sees_committed_records_only(client, stack, scene, aio):
    producer = txn_producer(client, stack, scene, aio)
    producer.init()
    first, aborted, last = batch("first"), batch("aborted"), batch("last")
    producer.begin()
    producer.send(first)
    producer.commit()
    producer.begin()
    producer.send(aborted)
    producer.flush()
    producer.abort()
    producer.begin()
    producer.send(last)
    producer.flush()  # on the broker, in a transaction still open

    committed = Reader(client, stack, scene, aio, isolation="read_committed")
    everything = Reader(client, stack, scene, aio, isolation="read_uncommitted")
    everything.read(27, "records of all three transactions")
    committed.read(9, "records of the first transaction")
    catch_up(committed, scene)
    assert_seen(committed.got, first)

    producer.commit()
    committed.read(18, "records of both committed transactions")
    catch_up(committed, scene)
    assert_seen(committed.got, first + last)
    assert_seen(everything.got, first + aborted + last)
    # the markers take an offset each: the last transaction starts after the abort's marker
    firsts = {p: min(g.offset for g in committed.got if g.partition == p and
                     g.rec.value.startswith(b"last")) for p in range(PARTITIONS)}
    assert firsts == {p: 3 + 1 + 3 + 1 for p in range(PARTITIONS)}
    wait_for(lambda: txn_state(scene, producer.transactional_id) == "CompleteCommit",
             "the commit complete")  # Kafka writes the markers after answering EndTxn


# -- 2. consume-transform-produce --------------------------------------------------------------

def transform(got: Got) -> Rec:
    return Rec(got.partition, got.rec.key, got.rec.value.upper(),
               got.rec.headers + (("from", f"{got.partition}:{got.offset}".encode()),))


def process(producer: TxnProducer, consumer: Reader, count: int, *, commit: bool = True):
    """Read ``count`` more input records, write them transformed and hand the consumer's
    positions to one transaction, then commit or abort it."""
    start = len(consumer.got)
    consumer.read(start + count, "input records")
    taken = consumer.got[start:]
    assert len(taken) == count
    positions = {}
    for g in taken:
        positions[(consumer.topic, g.partition)] = g.offset + 1
    producer.begin()
    producer.send([transform(g) for g in taken])
    producer.flush()  # on the broker even if aborted (an abort drops what is still queued)
    producer.send_offsets(consumer, positions)
    producer.commit() if commit else producer.abort()
    return taken


def plain_produce(bootstrap: str, recs: list[Rec], topic: str):
    producer = ck.Producer({"bootstrap.servers": bootstrap, "logger": RDKAFKA_LOG,
                            "enable.idempotence": True})
    for r in recs:
        producer.produce(topic, r.value, r.key, partition=r.partition, headers=list(r.headers))
    assert producer.flush(TIMEOUT_S) == 0


def group_offsets(scene: Scene) -> dict[int, int]:
    """The group's committed offsets of the source topic, as an Admin client reads them."""
    [future] = scene.target.admin.list_consumer_group_offsets(
        [ck.ConsumerGroupTopicPartitions(scene.group)], require_stable=True).values()
    return {tp.partition: tp.offset for tp in future.result(TIMEOUT_S).topic_partitions
            if tp.topic == scene.source and tp.offset >= 0}


def assert_group_offsets(scene: Scene, expected: dict[int, int]) -> None:
    """The group's offsets come to be ``expected``: Kafka makes a transaction's offsets
    visible only once its markers are written, a moment after EndTxn is answered."""
    seen: list = []
    try:
        wait_for(lambda: seen.append(group_offsets(scene)) or seen[-1] == expected,
                 f"the group's offsets {expected}")
    except AssertionError:
        raise AssertionError(f"the group's offsets stayed {seen[-1]}, not {expected}") from None


@pytest.mark.parametrize("client", CLIENTS)
def test_consume_transform_produce_commits_offsets_with_the_output(client, stack, scene, aio):
    before, after = batch("before", 12), batch("after", 6)
    plain_produce(scene.bootstrap_servers, before, scene.source)
    producer = txn_producer(client, stack, scene, aio)
    producer.init()
    consumer = Reader(client, stack, scene, aio, topic=scene.source, group=scene.group)
    done = process(producer, consumer, 12)
    assert_group_offsets(scene, {0: 4, 1: 4, 2: 4})
    assert consumer.committed() == {0: 4, 1: 4, 2: 4}

    plain_produce(scene.bootstrap_servers, after, scene.source)
    process(producer, consumer, 6, commit=False)
    assert_group_offsets(scene, {0: 4, 1: 4, 2: 4})  # the abort took them back
    assert consumer.committed() == {0: 4, 1: 4, 2: 4}
    consumer.close()

    restarted = Reader(client, stack, scene, aio, topic=scene.source, group=scene.group)
    again = process(producer, restarted, 6)
    assert_seen(again, after)  # the aborted records read again, and only those
    assert_group_offsets(scene, {0: 6, 1: 6, 2: 6})
    assert restarted.committed() == {0: 6, 1: 6, 2: 6}

    output = Reader(client, stack, scene, aio, isolation="read_committed")
    output.read(18, "transformed records")
    catch_up(output, scene)
    assert_seen(output.got, [transform(g) for g in done + again])
    everything = Reader("confluent-kafka", stack, scene, aio, isolation="read_uncommitted")
    everything.read(24, "every transformed record, aborted ones too")
    assert sorted(g.rec.value for g in everything.got) == sorted(
        [r.value.upper() for r in before] + [r.value.upper() for r in after] * 2)


# -- 3. zombie fencing -------------------------------------------------------------------------

def assert_fenced(client: str, exc: BaseException):
    """The error each client raises to a producer fenced by a newer one (or by the coordinator
    after a timeout): the broker answered EndTxn with PRODUCER_FENCED (INVALID_PRODUCER_EPOCH
    for the EndTxn v0/v1 that librdkafka and aiokafka send)."""
    if client == "confluent-kafka":
        assert isinstance(exc, ck.KafkaException), repr(exc)
        error = exc.args[0]
        assert error.code() == ck.KafkaError._FENCED and error.fatal(), error
    elif client == "kafka-python":
        assert isinstance(exc, kafka.errors.ProducerFencedError), repr(exc)
    else:
        assert isinstance(exc, aiokafka.errors.ProducerFenced), repr(exc)


def raised(fn) -> BaseException:
    with pytest.raises(Exception) as info:
        fn()
    return info.value


@pytest.mark.parametrize("client", CLIENTS)
def test_a_second_producer_fences_the_first(client, stack, scene, aio):
    shared = scene.txn_id("shared-id")
    zombie = txn_producer(client, stack, scene, aio, shared)
    zombie.init()
    zombie.begin()
    zombie.send(batch("zombie"))
    zombie.flush()
    fresh = txn_producer(client, stack, scene, aio, shared)
    fresh.init()  # aborts the zombie's open transaction and takes a newer epoch
    assert txn_state(scene, shared) == "Empty"

    assert_fenced(client, raised(zombie.commit))
    fresh.begin()
    fresh.send(batch("fresh"))
    fresh.commit()

    committed = Reader(client, stack, scene, aio, isolation="read_committed")
    committed.read(9, "the second producer's records")
    catch_up(committed, scene)
    assert_seen(committed.got, batch("fresh"))
    everything = Reader(client, stack, scene, aio, isolation="read_uncommitted")
    everything.read(18, "both producers' records")
    assert_seen(everything.got, batch("zombie") + batch("fresh"))
    if scene.log is not None:
        ends = [r for r in scene.log.requests("EndTxn")]
        assert [r.error for r in ends] == [
            "INVALID_PRODUCER_EPOCH" if ends[0].api_version < 2 else "PRODUCER_FENCED", None]


@pytest.mark.parametrize("client", CLIENTS)
def test_a_fenced_producer_cannot_write_more(client, stack, scene, aio):
    """The zombie's next write is refused (INVALID_PRODUCER_EPOCH from the partition) and the
    producer ends up fenced; nothing it wrote is ever visible to read_committed."""
    shared = scene.txn_id("shared-id")
    zombie = txn_producer(client, stack, scene, aio, shared)
    zombie.init()
    zombie.begin()
    zombie.send(batch("zombie"))
    zombie.flush()
    txn_producer(client, stack, scene, aio, shared).init()
    zombie.send(batch("late"))
    if client == "confluent-kafka":
        assert_fenced(client, raised(zombie.commit))  # its flush met the refused produce
    elif client == "kafka-python":
        assert isinstance(raised(zombie.flush), kafka.errors.InvalidProducerEpochError)
        # the epoch bump it tries next is answered PRODUCER_FENCED: from then on every call
        # names that error
        def fenced_now():
            try:
                zombie.begin()
            except kafka.errors.KafkaError as exc:
                return "ProducerFencedError" in str(exc)
            raise AssertionError("a fenced producer began a transaction")
        wait_for(fenced_now, "kafka-python to learn it is fenced")
    else:
        assert_fenced(client, raised(zombie.flush))
        assert_fenced(client, raised(zombie.commit))
    if scene.log is not None:
        assert {r.error for r in scene.log.requests("Produce")} == \
            {None, "INVALID_PRODUCER_EPOCH"}
    committed = Reader(client, stack, scene, aio, isolation="read_committed")
    catch_up(committed, scene)
    assert committed.got == []
    everything = Reader("confluent-kafka", stack, scene, aio, isolation="read_uncommitted")
    catch_up(everything, scene)
    assert_seen(everything.got, batch("zombie"))  # nothing "late" was written


# -- 4. a retriable EndTxn error ---------------------------------------------------------------

@pytest.mark.mockbroker_only("faults")
@pytest.mark.parametrize("error", ["CONCURRENT_TRANSACTIONS", "COORDINATOR_LOAD_IN_PROGRESS"])
@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.kafka(topics={TOPIC: PARTITIONS})
def test_a_retriable_end_txn_error_is_retried(client, error, mock_scene, kafka_admin, stack,
                                              aio):  # the cluster first: it stops last
    scene = mock_scene
    producer = txn_producer(client, stack, scene, aio)
    producer.init()
    producer.begin()
    producer.send(batch("once"))
    producer.flush()
    fault = kafka_admin.add_fault("EndTxn", error=error, count=1)
    producer.commit()
    ends = kafka_admin.requests("EndTxn")
    assert [(r.error, r.fault) for r in ends] == [(error, fault.id), (None, None)]
    assert txn_state(scene, producer.transactional_id) == "CompleteCommit"
    committed = Reader(client, stack, scene, aio, isolation="read_committed")
    committed.read(9, "the committed records")
    catch_up(committed, scene)
    assert_seen(committed.got, batch("once"))
    # the next transaction works too
    producer.begin()
    producer.send(batch("next"))
    producer.commit()
    committed.read(18, "the next transaction's records")
    catch_up(committed, scene)
    assert_seen(committed.got, batch("once") + batch("next"))


# -- 5. a transaction past its timeout ---------------------------------------------------------

@pytest.mark.parametrize("client", CLIENTS)
def test_a_timed_out_transaction_is_aborted_and_its_producer_fenced(client, stack, scene, aio):
    """Both targets look for timed-out transactions every 100 ms (``SETTINGS``)."""
    slow = scene.txn_id("slow")
    producer = txn_producer(client, stack, scene, aio, slow, timeout_ms=1000)
    producer.init()
    producer.begin()
    producer.send(batch("slow"))
    producer.flush()
    wait_for(lambda: txn_state(scene, slow) == "CompleteAbort",
             "the coordinator to abort the transaction past its timeout")
    # a coordinator's abort ends with the cluster's transaction version (2): a new epoch
    assert scene.target.describe_transaction(slow).producer_epoch == 1

    assert_fenced(client, raised(producer.commit))
    everything = Reader(client, stack, scene, aio, isolation="read_uncommitted")
    everything.read(9, "the timed-out transaction's records")
    assert_seen(everything.got, batch("slow"))
    committed = Reader(client, stack, scene, aio, isolation="read_committed")
    catch_up(committed, scene)
    assert committed.got == []
    if scene.log is not None:
        ends = scene.log.requests("EndTxn")
        assert [r.error for r in ends] == [
            "INVALID_PRODUCER_EPOCH" if ends[0].api_version < 2 else "PRODUCER_FENCED"]


# -- 6. the Java client (transaction version 2) ------------------------------------------------

def run_java(*args: str, stdin: str | None = None) -> list[str]:
    missing = [str(p) for p in CLASSPATH if not p.exists()]
    assert not missing and shutil.which("java"), \
        f"the Java client needs java and {missing} (bash ci/dev.sh setup fetches them)"
    done = jvm.run(os.pathsep.join(map(str, CLASSPATH)), JAVA_SOURCE, *args, input=stdin,
                   capture_output=True, text=True, timeout=JVM_TIMEOUT_S + 60)
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and lines[-1:] == ["done"], \
        f"TxnClient {args[0]} exited {done.returncode}: {lines}\n{done.stderr[-4000:]}"
    return lines


def java_records(lines: list[str]) -> list[Got]:
    out = []
    for line in lines:
        if line.startswith("record "):
            _, partition, offset, key, value, *headers = line.split(" ")
            pairs = tuple(tuple(h.split("=", 1)) for h in (headers[0].split(";")
                                                          if headers and headers[0] else ()))
            out.append(Got(int(partition), int(offset),
                           Rec(int(partition), key.encode(), value.encode(),
                               tuple((k, v.encode()) for k, v in pairs))))
    return out


def assert_transaction_version_2(scene: Scene):
    """kafka-clients 4.4 ends transactions with EndTxn v5 and adds no partitions itself (as
    mockbroker's request log shows; on Kafka there is no log to read)."""
    if scene.log is None:
        return
    assert {r.api_version for r in scene.log.requests("EndTxn")} == {5}
    assert scene.log.requests("AddPartitionsToTxn") == []
    assert scene.log.requests("AddOffsetsToTxn") == []


def test_java_commit_abort_commit_read_committed(stack, scene, aio):
    txn_id = scene.txn_id("java-basic")
    lines = run_java("basic", scene.bootstrap_servers, scene.topic, txn_id)
    assert [line for line in lines if not line.startswith("record")] == \
        ["committed 9", "aborted 9", "committed 9", "done"]
    assert_seen(java_records(lines), batch("first") + batch("last"))
    assert_transaction_version_2(scene)
    everything = Reader("confluent-kafka", stack, scene, aio, isolation="read_uncommitted")
    everything.read(27, "all three transactions' records")
    assert_seen(everything.got, batch("first") + batch("aborted") + batch("last"))
    # every transaction ended with a new epoch (three ends after the first InitProducerId)
    described = wait_for(lambda: (entry := scene.target.describe_transaction(txn_id))
                         .transaction_state == "CompleteCommit" and entry, "the last commit")
    assert described.producer_epoch == 3


def test_java_second_producer_fences_the_first(stack, scene):
    lines = run_java("fence", scene.bootstrap_servers, scene.topic, scene.txn_id("java-fence"))
    assert [line for line in lines if not line.startswith("record")] == \
        ["fenced org.apache.kafka.common.errors.ProducerFencedException", "committed 9",
         "done"]
    assert_seen(java_records(lines), batch("fresh"))
    if scene.log is not None:
        assert [r.error for r in scene.log.requests("EndTxn")] == ["PRODUCER_FENCED", None]


def test_java_timed_out_transaction_commit_fails_and_abort_recovers(stack, scene):
    """Transaction version 2: after the coordinator aborted a transaction past its timeout,
    the producer's EndTxn(commit) with the old epoch is INVALID_TXN_STATE, while its
    EndTxn(abort) is taken as a retry of that abort and hands it the new epoch to go on with."""
    missing = [str(p) for p in CLASSPATH if not p.exists()]
    assert not missing and shutil.which("java"), f"the Java client needs java and {missing}"
    slow = scene.txn_id("java-slow")
    process = subprocess.Popen([*jvm.program(JAVA_SOURCE, os.pathsep.join(map(str, CLASSPATH))),
                                "timeout", scene.bootstrap_servers, scene.topic, slow],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    stack.callback(process.kill)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(
        line.rstrip("\n") for line in process.stdout), daemon=True)
    reader.start()
    wait_for(lambda: "open" in lines or process.poll() is not None,
             "both Java producers' open transactions", timeout=JVM_TIMEOUT_S)
    assert lines == ["open"], (lines, process.stderr.read()[-4000:])
    ids = [f"{slow}-commit", f"{slow}-abort"]
    wait_for(lambda: all(txn_state(scene, t) == "CompleteAbort" for t in ids),
             "the coordinator to abort both transactions past their timeout")
    process.stdin.write("go\n")
    process.stdin.flush()
    assert process.wait(JVM_TIMEOUT_S) == 0, process.stderr.read()[-4000:]
    reader.join(10)
    assert [line for line in lines if not line.startswith("record")] == [
        "open", "commit failed org.apache.kafka.common.errors.InvalidTxnStateException",
        "aborted", "committed 9", "done"]
    assert_seen(java_records(lines), batch("after"))
    if scene.log is not None:
        ends = [(r.error, r.api_version) for r in scene.log.requests("EndTxn")]
        assert ends == [("INVALID_TXN_STATE", 5), (None, 5), (None, 5)]


def test_java_consume_transform_produce(stack, scene, aio):
    source = batch("in", 12)
    plain_produce(scene.bootstrap_servers, source, scene.source)
    lines = run_java("ctp", scene.bootstrap_servers, scene.source, scene.topic, scene.group,
                     scene.txn_id("java-ctp"), "12")
    assert lines[0].startswith("aborted ")
    assert sum(int(line.split()[1]) for line in lines if line.startswith("committed")) == 12
    assert lines[-2:] == ["offsets 0=4,1=4,2=4", "done"]
    assert_group_offsets(scene, {0: 4, 1: 4, 2: 4})
    assert_transaction_version_2(scene)

    inputs = [Got(r.partition, i // PARTITIONS, r) for i, r in enumerate(source)]
    output = Reader("confluent-kafka", stack, scene, aio, isolation="read_committed")
    output.read(12, "transformed records")
    catch_up(output, scene)
    assert_seen(output.got, [transform(g) for g in inputs])
    aborted = int(lines[0].split()[1])
    everything = Reader("confluent-kafka", stack, scene, aio, isolation="read_uncommitted")
    everything.read(12 + aborted, "transformed records, aborted ones too")
    assert len(everything.got) == 12 + aborted
