"""Share groups (KIP-932) with the stock Java ``KafkaShareConsumer``, on both targets: what a
user of the consumer sees of the records it is given (values, partitions, offsets and delivery
counts) as it accepts, releases and rejects them, shares a partition with another consumer, dies
holding records, and reads behind a transactional producer.

The consumer is ``java/ShareWorker.java`` run from source in its own JVM; :class:`ShareWorker`
reads what it prints and tells it what to acknowledge.  Each group first gets
``share.auto.offset.reset=earliest`` (and any other group config a test needs) through
IncrementalAlterConfigs, as its user would before starting it.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path
from typing import NamedTuple

import confluent_kafka as ck
import pytest
from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

import wire
from tests import jvm
from tests.clients.helpers import RDKAFKA_LOG, TIMEOUT_S, wait_for
from tests.clients.test_java_groups import CLASSPATH, JVM_TIMEOUT_S
from tests.real_kafka import ask
from wire import errors

SOURCE = Path(__file__).with_name("java") / "ShareWorker.java"


class Record(NamedTuple):
    partition: int
    offset: int
    delivery_count: int
    value: str


class ShareWorker:
    """A Java share consumer in a share group, seen through what it prints."""

    def __init__(self, target, group: str, topic: str, name: str, **config: str):
        missing = [str(p) for p in CLASSPATH if not p.exists()]
        assert not missing and shutil.which("java"), \
            f"the Java client needs java and {missing} (bash ci/dev.sh setup fetches them)"
        self.name = name
        self.lines: list[str] = []
        self.records: list[Record] = []
        self.acked: set[tuple[int, int]] = set()
        self.process = subprocess.Popen(
            [*jvm.program(SOURCE, ":".join(map(str, CLASSPATH))),
             target.bootstrap_servers, group, topic, name,
             *(f"{k}={v}" for k, v in config.items())],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            line = line.rstrip("\n")
            self.lines.append(line)
            kind, _, rest = line.partition(" ")
            if kind == "record":
                partition, offset, count, value = rest.split(" ", 3)
                self.records.append(Record(int(partition), int(offset), int(count), value))
            elif kind == "acked":
                partition, offsets = rest.split(" ")
                self.acked |= {(int(partition), int(o)) for o in offsets.split(",")}

    def _check(self) -> None:
        failed = [line for line in self.lines if line.startswith(("failed", "ack-failed"))]
        assert not failed, f"Java share consumer {self.name}: {failed}"

    def send(self, command: str) -> None:
        self._check()
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()

    def ack(self, *records: Record, how: str) -> None:
        """Acknowledge ``records`` (explicit mode) as ``how``: accept, release or reject."""
        self.send("ack " + " ".join(f"{r.partition}:{r.offset}:{how}" for r in records))

    def wait_records(self, count: int, what: str, timeout: float = JVM_TIMEOUT_S) -> list:
        """The first ``count`` records it got, once it has them."""
        def got():
            self._check()
            return len(self.records) >= count
        wait_for(got, f"{self.name}: {what}", timeout=timeout)
        return self.records[:count]

    def wait_acked(self, records, timeout: float = JVM_TIMEOUT_S) -> None:
        wanted = {(r.partition, r.offset) for r in records}

        def acked():
            self._check()
            return wanted <= self.acked
        wait_for(acked, f"{self.name}: acknowledgements of {sorted(wanted)} taken",
                 timeout=timeout)

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.process.stdin.write("close\n")
                self.process.stdin.flush()
                self.process.wait(30)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait(10)
        self._reader.join(10)

    def kill(self) -> None:
        """Exit at once, as a crashed consumer would: no acknowledgement, no leaving."""
        self.send("kill")
        self.process.wait(30)
        self._reader.join(10)


def share_group(target, base: str, **configs: str) -> str:
    """A new share group's name, its group configs set (it starts at the earliest offset)."""
    group = target.unique(base)
    entries = [ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
               for name, value in {"share.auto.offset.reset": "earliest", **configs}.items()]
    resource = ConfigResource("GROUP", group, incremental_configs=entries)
    target.admin.incremental_alter_configs([resource])[resource].result(timeout=TIMEOUT_S)
    return group


def worker(stack, target, group: str, topic: str, name: str, **config: str) -> ShareWorker:
    member = ShareWorker(target, group, topic, name, **config)
    stack.callback(member.close)
    return member


def produce(target, topic: str, values, partition: int = 0) -> None:
    producer = ck.Producer({"bootstrap.servers": target.bootstrap_servers,
                            "logger": RDKAFKA_LOG})
    for value in values:
        producer.produce(topic, value.encode(), partition=partition)
    assert producer.flush(TIMEOUT_S) == 0


def share_members(target, group: str) -> dict[str, list[int]]:
    """ShareGroupDescribe of ``group`` at its coordinator: client id -> partitions assigned."""
    found = target.coordinator(0, group)
    assert found.error_code == errors.NONE, found
    [entry] = ask(found.port, 77, 1, wire.request_class(77)(
        group_ids=[group], include_authorized_operations=False), host=found.host).groups
    if entry.error_code != errors.NONE:
        return {}
    return {m.client_id: sorted(p for tp in m.assignment.topic_partitions for p in tp.partitions)
            for m in entry.members}


EXPLICIT = {"share.acknowledgement.mode": "explicit"}
#: share.record.lock.duration.ms of the groups whose locks expire: within the broker's bounds,
#: as group.share.min.record.lock.duration.ms is lowered to a second (tests.clients.targets)
LOCK_MS = "5000"


@pytest.mark.parametrize("client", ["java"])
def test_implicit_acknowledgement_delivers_each_record_once(stack, target, client):
    """Each poll accepts what the one before returned: every record reaches the consumer once,
    and a consumer of the group started afterwards gets only what is produced later."""
    topic = target.create_topic("share-implicit", 2)
    group = share_group(target, "share-implicit")
    before = [f"before-{i}" for i in range(20)]
    produce(target, topic, before[:10], partition=0)
    produce(target, topic, before[10:], partition=1)
    first = worker(stack, target, group, topic, "first")
    got = first.wait_records(20, "every record")
    first.wait_acked(got)
    assert sorted(r.value for r in got) == sorted(before)
    assert sorted((r.partition, r.offset) for r in got) == \
        [(p, o) for p in (0, 1) for o in range(10)]
    assert {r.delivery_count for r in got} == {1}
    first.close()
    assert first.lines[-1] == "closed" and first.records == got  # nothing delivered twice

    second = worker(stack, target, group, topic, "second")
    produce(target, topic, ["after-0"], partition=0)
    produce(target, topic, ["after-1"], partition=1)
    second.wait_records(2, "the records produced after")
    second.close()
    assert sorted(second.records) == [Record(0, 10, 1, "after-0"), Record(1, 10, 1, "after-1")]


@pytest.mark.parametrize("client", ["java"])
def test_two_consumers_share_one_partition_and_get_each_record_once(stack, target, client):
    """Two members of a group on a topic of one partition are both assigned it; the records
    produced while both poll go to one or the other, never to both and none lost."""
    topic = target.create_topic("share-one-partition", 1)
    group = share_group(target, "share-one-partition")
    members = [worker(stack, target, group, topic, name) for name in ("one", "two")]
    wait_for(lambda: share_members(target, group) == {"one": [0], "two": [0]},
             "both members assigned partition 0", timeout=JVM_TIMEOUT_S)
    values = [f"job-{i}" for i in range(300)]
    for start in range(0, len(values), 30):
        produce(target, topic, values[start:start + 30])

    def everything():
        for m in members:
            m._check()
        return sum(len(m.records) for m in members) >= len(values)
    wait_for(everything, "every record at one of the members", timeout=JVM_TIMEOUT_S)
    got = [r for m in members for r in m.records]
    assert sorted(r.offset for r in got) == list(range(len(values)))  # each once
    assert sorted(r.value for r in got) == sorted(values)
    assert {r.delivery_count for r in got} == {1}
    for m in members:
        m.close()
    assert sum(len(m.records) for m in members) == len(values)


@pytest.mark.parametrize("client", ["java"])
def test_explicit_release_reject_and_the_delivery_limit(stack, target, client):
    """Explicit acknowledgement: a released record comes back with its delivery count up by
    one, a rejected one never does, and one released as often as the group's
    share.delivery.count.limit (2) allows is archived."""
    topic = target.create_topic("share-explicit", 1)
    group = share_group(target, "share-explicit", **{"share.delivery.count.limit": "2"})
    produce(target, topic, ["a", "b", "c", "d"])
    member = worker(stack, target, group, topic, "explicit", **EXPLICIT)
    first = member.wait_records(4, "the first deliveries")
    assert first == [Record(0, 0, 1, "a"), Record(0, 1, 1, "b"), Record(0, 2, 1, "c"),
                     Record(0, 3, 1, "d")]
    member.ack(first[0], first[2], how="release")
    member.ack(first[1], how="reject")
    member.ack(first[3], how="accept")
    member.send("commit")
    member.wait_acked(first)

    second = member.wait_records(6, "the released records again")[4:]
    assert second == [Record(0, 0, 2, "a"), Record(0, 2, 2, "c")]
    member.ack(second[0], how="accept")
    member.ack(second[1], how="release")  # its second delivery: the limit
    member.send("commit")
    member.wait_acked(second)

    produce(target, topic, ["e"])
    member.wait_records(7, "the record produced after")
    member.ack(member.records[6], how="accept")
    member.send("commit")
    member.wait_acked(member.records[6:7])
    member.close()
    assert member.records[4:] == [Record(0, 0, 2, "a"), Record(0, 2, 2, "c"),
                                  Record(0, 4, 1, "e")]


@pytest.mark.parametrize("client", ["java"])
def test_records_a_killed_consumer_held_go_to_another_delivered_again(stack, target, client):
    """A consumer that dies without acknowledging what it got: another consumer gets those
    records, delivered for the second time.  (Kafka releases them as the dead consumer's
    connection closes, not only when their lock of share.record.lock.duration.ms, 30 s here,
    runs out; the test waits for either.)"""
    topic = target.create_topic("share-killed", 1)
    group = share_group(target, "share-killed")
    values = ["x", "y", "z"]
    produce(target, topic, values)
    doomed = worker(stack, target, group, topic, "doomed", **EXPLICIT)
    got = doomed.wait_records(3, "the records")
    assert got == [Record(0, i, 1, v) for i, v in enumerate(values)]
    doomed.kill()

    heir = worker(stack, target, group, topic, "heir")
    again = heir.wait_records(3, "the records again")
    assert again == [Record(0, i, 2, v) for i, v in enumerate(values)]


@pytest.mark.parametrize("client", ["java"])
def test_records_a_consumer_holds_past_their_lock_go_to_another(stack, target, client):
    """A consumer that stays in the group but stops polling without acknowledging: once the
    group's share.record.lock.duration.ms passes, its records go to another member, delivered
    again.  (Whether the holder's own late acknowledgement is then refused depends on whether
    the other member still holds them, so the test sends none.)"""
    topic = target.create_topic("share-held", 1)
    group = share_group(target, "share-held", **{"share.record.lock.duration.ms": LOCK_MS})
    values = ["p", "q", "r"]
    produce(target, topic, values)  # before it starts: its first poll returns all three
    holder = worker(stack, target, group, topic, "holder", **EXPLICIT)
    got = holder.wait_records(3, "the records")
    assert got == [Record(0, i, 1, v) for i, v in enumerate(values)]
    holder.send("hold")

    other = worker(stack, target, group, topic, "other")
    again = sorted(other.wait_records(3, "the records again"))
    assert [(r.partition, r.offset, r.value) for r in again] == \
        [(0, i, v) for i, v in enumerate(values)]
    # delivered again: twice, or more where a lock ran out once more before a consumer's poll
    # returned the records (seen once under load with a 2 s lock)
    assert all(r.delivery_count >= 2 for r in again), again
    other.wait_acked(again)
    assert holder.records == got


@pytest.mark.parametrize("client", ["java"])
def test_a_read_committed_share_group_skips_aborted_transactions(stack, target, client):
    """A group with share.isolation.level=read_committed gets the records of committed
    transactions and never those of aborted ones (offsets count the transaction markers)."""
    topic = target.create_topic("share-txn", 1)
    group = share_group(target, "share-txn", **{"share.isolation.level": "read_committed"})
    producer = ck.Producer({"bootstrap.servers": target.bootstrap_servers,
                            "transactional.id": target.unique("share-txn"),
                            "logger": RDKAFKA_LOG})
    producer.init_transactions(TIMEOUT_S)
    for values, commit in ((["c1", "c2"], True), (["x1", "x2"], False), (["c3"], True)):
        producer.begin_transaction()
        for value in values:
            producer.produce(topic, value.encode(), partition=0)
        producer.flush(TIMEOUT_S)
        if commit:
            producer.commit_transaction(TIMEOUT_S)
        else:
            producer.abort_transaction(TIMEOUT_S)
    member = worker(stack, target, group, topic, "committed")
    got = member.wait_records(3, "the committed records")
    member.wait_acked(got)
    member.close()
    # c1 c2 marker x1 x2 marker c3 marker
    assert member.records == [Record(0, 0, 1, "c1"), Record(0, 1, 1, "c2"),
                              Record(0, 6, 1, "c3")]


def read_topic(target, topic: str, count: int) -> list:
    """The first ``count`` records of partition 0 of ``topic``: (key, value, headers)."""
    consumer = ck.Consumer({"bootstrap.servers": target.bootstrap_servers,
                            "group.id": target.unique("dlq-reader"), "logger": RDKAFKA_LOG,
                            "enable.auto.commit": False})
    consumer.assign([ck.TopicPartition(topic, 0, 0)])
    got: list = []

    def read():
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            got.append((message.key(), message.value(), message.headers()))
        return len(got) >= count
    try:
        wait_for(read, f"{count} records in {topic}", timeout=JVM_TIMEOUT_S)
    finally:
        consumer.close()
    return got


@pytest.mark.parametrize("client", ["java"])
def test_rejected_and_exhausted_records_go_to_the_dead_letter_queue(stack, target, client):
    """A group with a dead-letter queue (KIP-1191, on by default in Kafka 4.4): a record the
    consumer rejects, and one it releases as often as the delivery limit (2) allows, reach the
    queue's topic with the headers that say where they came from and why, and the original's
    key and value (``errors.deadletterqueue.copy.record.enable``) but not its headers; the
    consumer never sees either again."""
    topic = target.create_topic("share-dlq", 1)
    queue = target.create_topic("dlq.share", 1, **{"errors.deadletterqueue.group.enable": "true"})
    group = share_group(target, "share-dlq", **{
        "share.delivery.count.limit": "2", "errors.deadletterqueue.topic.name": queue,
        "errors.deadletterqueue.copy.record.enable": "true"})
    producer = ck.Producer({"bootstrap.servers": target.bootstrap_servers,
                            "logger": RDKAFKA_LOG})
    for key, value in ((b"ka", b"a"), (b"kb", b"b"), (b"kc", b"c")):
        producer.produce(topic, value, key, partition=0, headers=[("origin", b"test")])
    assert producer.flush(TIMEOUT_S) == 0
    member = worker(stack, target, group, topic, "dlq", **EXPLICIT)
    first = member.wait_records(3, "the first deliveries")
    member.ack(first[0], how="reject")
    member.ack(first[1], how="release")
    member.ack(first[2], how="accept")
    member.send("commit")
    member.wait_acked(first)
    again = member.wait_records(4, "the released record again")[3]
    assert again == Record(0, 1, 2, "b")
    member.ack(again, how="release")  # its second delivery: the limit
    member.send("commit")
    member.wait_acked([again])

    def context(offset: int, count: int, why: str) -> list:
        return [("__dlq.errors.topic", topic.encode()), ("__dlq.errors.partition", b"0"),
                ("__dlq.errors.offset", str(offset).encode()),
                ("__dlq.errors.group", group.encode()),
                ("__dlq.errors.delivery.count", str(count).encode()),
                ("__dlq.errors.message", why.encode())]
    assert read_topic(target, queue, 2) == [
        (b"ka", b"a", context(0, 1, "Offset rejected by client.")),
        (b"kb", b"b", context(1, 2, "Offset delivery count exceeded the threshold."))]
    produce(target, topic, ["d"])
    member.wait_records(5, "the record produced after")
    member.close()
    assert member.records[4] == Record(0, 3, 1, "d")  # a and b never came back
