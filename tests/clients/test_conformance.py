"""Client conformance: the same scenarios, with the same assertions, against mockbroker and
against Apache Kafka 4.4 (``target``, :mod:`tests.clients.targets`).

Each test is what a user of a client relies on, checked only through what the client shows:
records with their keys, headers, partitions and offsets; a group splitting the partitions,
committing, and a new member resuming after the commits (classic protocol and KIP-848's);
transactions, committed and aborted, through a ``read_committed`` reader; topic administration;
Kafka's own ``kafka-consumer-groups`` tool.  A test id reads ``test_name[target-client]``, and
``ci/conformance.py`` turns the run's JUnit report into the README's matrix.
"""

from __future__ import annotations

import asyncio
import json
import random
import shutil
import subprocess

import aiokafka
import confluent_kafka as ck
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin import NewPartitions as AioPartitions
from aiokafka.admin import NewTopic as AioNewTopic
from aiokafka.admin.config_resource import ConfigResource as AioConfigResource
from aiokafka.admin.config_resource import ConfigResourceType as AioType
import pytest
from confluent_kafka.admin import ConfigResource, NewPartitions
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource as KpConfigResource
from kafka.admin import ConfigResourceType, KafkaAdminClient, NewPartitions as KpNewPartitions
from kafka.admin import NewTopic as KpNewTopic

from tests import jvm
from tests.clients.helpers import (RDKAFKA_LOG, TIMEOUT_S, go_client, kafka_tool, node_client,
                                   wait_for)
from tests.clients.targets import Target
from tests.clients.test_groups import ConfluentMember, KafkaPythonMember, assert_once
from tests.clients.test_consumer_protocol import ADMIN_SOURCE
from tests.clients.test_java_groups import CLASSPATH as JAVA_CLASSPATH
from tests.clients.test_java_groups import JVM_TIMEOUT_S, JavaMember
from tests.clients.test_streams_eos import (START_TIMEOUT_S, Output, StreamsApp,
                                            count_words_once, create_topics, produce_lines)
from tests.clients.test_streams_eos import names as streams_names
from tests.clients.test_transactions import assert_seen, batch, java_records, run_java
from tests.spark.conftest import run_to_end

PARTITIONS = 3
#: (partition, key, value, headers) of the records every client writes and reads back
RECORDS = [(i % PARTITIONS, f"k{i}".encode(), f"v{i}".encode(),
            [("h", f"{i}".encode()), ("n", b"")] if i % 2 else [])
           for i in range(12)]


def _expected() -> list[tuple]:
    """What a reader sees: each partition's records from offset 0, in the order sent."""
    offsets = {p: 0 for p in range(PARTITIONS)}
    out = []
    for partition, key, value, headers in RECORDS:
        out.append((partition, offsets[partition], key, value, headers))
        offsets[partition] += 1
    return sorted(out, key=lambda r: (r[0], r[1]))


# -- records round trip -----------------------------------------------------------------------

def _ck_round_trip(target: Target, topic: str) -> list[tuple]:
    producer = ck.Producer({"bootstrap.servers": target.bootstrap_servers, "linger.ms": 5,
                            "logger": RDKAFKA_LOG})
    for partition, key, value, headers in RECORDS:
        producer.produce(topic, key=key, value=value, partition=partition,
                         headers=headers or None)
    assert producer.flush(TIMEOUT_S) == 0
    consumer = ck.Consumer({"bootstrap.servers": target.bootstrap_servers, "group.id": "unused",
                            "enable.auto.commit": False, "logger": RDKAFKA_LOG})
    consumer.assign([ck.TopicPartition(topic, p, ck.OFFSET_BEGINNING)
                     for p in range(PARTITIONS)])
    got: list[tuple] = []
    try:
        wait_for(lambda: got.extend(
            (m.partition(), m.offset(), m.key(), m.value(), list(m.headers() or []))
            for m in consumer.consume(50, 0.2) if m.error() is None) or
            len(got) >= len(RECORDS), "every record read back")
    finally:
        consumer.close()
    return got


def _kp_round_trip(target: Target, topic: str) -> list[tuple]:
    producer = KafkaProducer(bootstrap_servers=target.bootstrap_servers, linger_ms=5)
    for partition, key, value, headers in RECORDS:
        producer.send(topic, key=key, value=value, partition=partition, headers=headers)
    producer.flush(TIMEOUT_S)
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=target.bootstrap_servers,
                             enable_auto_commit=False, fetch_max_wait_ms=100)
    consumer.assign([TopicPartition(topic, p) for p in range(PARTITIONS)])
    consumer.seek_to_beginning()
    got: list[tuple] = []
    try:
        wait_for(lambda: got.extend(
            (r.partition, r.offset, r.key, r.value, list(r.headers))
            for rs in consumer.poll(timeout_ms=200).values() for r in rs) or
            len(got) >= len(RECORDS), "every record read back")
    finally:
        consumer.close()
    return got


def _aio_round_trip(target: Target, topic: str) -> list[tuple]:
    async def run() -> list[tuple]:
        producer = aiokafka.AIOKafkaProducer(bootstrap_servers=target.bootstrap_servers)
        await producer.start()
        try:
            for partition, key, value, headers in RECORDS:
                await producer.send_and_wait(topic, key=key, value=value, partition=partition,
                                             headers=headers)
        finally:
            await producer.stop()
        consumer = aiokafka.AIOKafkaConsumer(bootstrap_servers=target.bootstrap_servers,
                                             enable_auto_commit=False, fetch_max_wait_ms=100)
        await consumer.start()
        got: list[tuple] = []
        try:
            consumer.assign([aiokafka.TopicPartition(topic, p) for p in range(PARTITIONS)])
            await consumer.seek_to_beginning()
            async with asyncio.timeout(TIMEOUT_S * 3):
                while len(got) < len(RECORDS):
                    batches = await consumer.getmany(timeout_ms=200)
                    got += [(r.partition, r.offset, r.key, r.value, list(r.headers))
                            for rs in batches.values() for r in rs]
        finally:
            await consumer.stop()
        return got
    return asyncio.run(run())


def _go_rows(lines: str) -> list[tuple]:
    return [(r["partition"], r["offset"], r["key"].encode(), r["value"].encode(),
             [(k, v.encode()) for k, v in r["headers"]])
            for r in map(json.loads, lines.splitlines())]


def _go_round_trip(target: Target, topic: str) -> list[tuple]:
    go_client("produce", target.bootstrap_servers, topic)
    return _go_rows(go_client("read", target.bootstrap_servers, topic, str(len(RECORDS))))


def _java_round_trip(target: Target, topic: str) -> list[tuple]:
    """Kafka's Java producer and consumer (``java/TxnClient.java plain``)."""
    lines = "".join(f"{partition} {key.decode()} {value.decode()} "
                    + ";".join(f"{k}={v.decode()}" for k, v in headers) + "\n"
                    for partition, key, value, headers in RECORDS)
    got = java_records(run_java("plain", target.bootstrap_servers, topic, stdin=lines))
    return sorted((g.partition, g.offset, g.rec.key, g.rec.value, list(g.rec.headers))
                  for g in got)


def _kcat(*args: str, stdin: str | None = None) -> str:
    if shutil.which("kcat") is None:
        pytest.fail("kcat is not installed: bash ci/dev.sh setup installs Debian's package")
    done = subprocess.run(["kcat", *args], input=stdin, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, f"kcat {' '.join(args)}: {done.stderr[-2000:]}"
    return done.stdout


def _kcat_round_trip(target: Target, topic: str) -> list[tuple]:
    for partition, key, value, headers in RECORDS:  # one kcat per record: its own headers
        _kcat("-P", "-b", target.bootstrap_servers, "-t", topic, "-p", str(partition), "-K:",
              *(f"-H{k}={v.decode()}" for k, v in headers),
              stdin=f"{key.decode()}:{value.decode()}\n")
    out = _kcat("-C", "-b", target.bootstrap_servers, "-t", topic, "-o", "beginning", "-e",
                "-q", "-f", "%p\t%o\t%k\t%s\t%h\n")
    got = []
    for row in out.splitlines():
        partition, offset, key, value, headers = row.split("\t")
        got.append((int(partition), int(offset), key.encode(), value.encode(),
                    [(k, v.encode()) for k, _, v in (h.partition("=")
                                                     for h in headers.split(",") if h)]))
    return got


def _node_rows(lines: str) -> list[tuple]:
    return [(r["partition"], r["offset"], r["key"] and r["key"].encode(), r["value"].encode(),
             [(k, v.encode()) for k, v in r["headers"]])
            for r in map(json.loads, lines.splitlines())]


def _node_round_trip(target: Target, topic: str) -> list[tuple]:
    node_client("produce", target.bootstrap_servers, topic)
    # kafkajs reads only in a group: a new one reads from the start
    return _node_rows(node_client("group", target.bootstrap_servers, topic,
                                  target.unique("reader"), str(len(RECORDS))))


CONSOLE_PRODUCER = "org.apache.kafka.tools.ConsoleProducer"
CONSOLE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"


def _console_produce(target: Target, topic: str, records) -> None:
    """kafka-console-producer with keys (and headers, when the records have them); the
    records' partitions come from their keys, as the producer's partitioner picks them."""
    for with_headers in (False, True):
        lines = "".join(
            (",".join(f"{k}:{v.decode()}" for k, v in headers) + "\t" if with_headers else "")
            + f"{key.decode()}:{value.decode()}\n"
            for _, key, value, headers in records if bool(headers) == with_headers)
        if lines:
            kafka_tool(CONSOLE_PRODUCER, target.bootstrap_servers, "--topic", topic,
                       "--reader-property", "parse.key=true",
                       "--reader-property", "key.separator=:",
                       "--reader-property", f"parse.headers={str(with_headers).lower()}",
                       stdin=lines)


def _console_consume(bootstrap: str, topic: str, count: int, *more: str) -> list[tuple]:
    """(partition, offset, key, value, headers) of ``count`` records kafka-console-consumer
    prints."""
    out = kafka_tool(CONSOLE_CONSUMER, bootstrap, "--topic", topic,
                     "--max-messages", str(count), "--timeout-ms", "60000",
                     *(f"--formatter-property=print.{what}=true"
                       for what in ("partition", "offset", "headers", "key")), *more)
    got = []
    for line in out.splitlines():
        if not line.startswith("Partition:"):
            continue  # a notice the tool prints, not a record
        partition, offset, headers, key, value = line.split("\t")
        got.append((int(partition.split(":")[1]), int(offset.split(":")[1]), key.encode(),
                    value.encode(), [] if headers == "NO_HEADERS" else [
                        (k, v.encode()) for k, _, v in (h.partition(":")
                                                        for h in headers.split(","))]))
    return got


ROUND_TRIP = {"confluent-kafka": _ck_round_trip, "kafka-python": _kp_round_trip,
              "aiokafka": _aio_round_trip, "franz-go": _go_round_trip, "kcat": _kcat_round_trip,
              "kafkajs": _node_round_trip, "java": _java_round_trip}


@pytest.mark.parametrize("client", list(ROUND_TRIP))
def test_records_come_back_with_keys_headers_and_offsets(target, client):
    topic = target.create_topic("records", PARTITIONS)
    got = ROUND_TRIP[client](target, topic)
    assert sorted(got, key=lambda r: (r[0], r[1])) == _expected()


@pytest.mark.parametrize("client", ["kafka-tools"])
def test_console_tools_write_and_read_records(target, client):
    topic = target.create_topic("console", PARTITIONS)
    _console_produce(target, topic, RECORDS)
    got = _console_consume(target.bootstrap_servers, topic, len(RECORDS), "--from-beginning")
    assert sorted((key, value, headers) for _, _, key, value, headers in got) == \
        sorted((key, value, headers) for _, key, value, headers in RECORDS)
    # the keys placed them: in each partition from offset 0, in the order they were sent
    order = [key for with_headers in (False, True)  # as _console_produce sends them
             for _, key, _, headers in RECORDS if bool(headers) == with_headers]
    for p in range(PARTITIONS):
        mine = sorted((offset, key) for partition, offset, key, _, _ in got if partition == p)
        assert [offset for offset, _ in mine] == list(range(len(mine)))
        assert [key for _, key in mine] == sorted((k for _, k in mine), key=order.index)


# -- consumer groups --------------------------------------------------------------------------

def _member(stack, target: Target, client: str, name: str, group: str, topic: str,
            protocol: str):
    if client == "java":
        config = {"group.protocol": "consumer"} if protocol == "consumer" else {}
        joined = JavaMember(target, name, group, classic_timeouts=protocol == "classic",
                            topic=topic, **config)
    elif client == "confluent-kafka":
        config = {"group.protocol": "consumer"} if protocol == "consumer" else {}
        joined = ConfluentMember(target, name, group, topic=topic,
                                 classic_timeouts=protocol == "classic", **config)
    else:
        joined = KafkaPythonMember(target, name, group, topic=topic)
    stack.callback(joined.close)
    return joined


def _split(members) -> dict[str, frozenset]:
    """Wait until the members' own assignments split every partition between them."""
    def split():
        owned = {m.name: m.assignment() for m in members}
        every = [p for parts in owned.values() for p in parts]
        return owned if sorted(every) == list(range(PARTITIONS)) and all(owned.values()) \
            else None
    return wait_for(split, f"{len(members)} members splitting {PARTITIONS} partitions",
                    timeout=JVM_TIMEOUT_S)


def _produce(target: Target, topic: str, tag: str, count: int) -> set[bytes]:
    producer = ck.Producer({"bootstrap.servers": target.bootstrap_servers, "linger.ms": 1,
                            "logger": RDKAFKA_LOG})
    values = {f"{tag}-{i}".encode() for i in range(count)}
    for i, value in enumerate(sorted(values)):
        producer.produce(topic, value=value, partition=i % PARTITIONS)
    assert producer.flush(TIMEOUT_S) == 0
    return values


def _consumed(members, values: set[bytes]) -> None:
    wait_for(lambda: values <= set().union(*(m.values() for m in members)),
             f"{len(values)} records consumed", timeout=JVM_TIMEOUT_S)


def _group_commits_and_resumes(stack, target: Target, client: str, protocol: str) -> None:
    topic = target.create_topic("group", PARTITIONS)
    group = target.unique("group")
    members = [_member(stack, target, client, f"m{i}", group, topic, protocol)
               for i in (1, 2)]
    _split(members)
    first = _produce(target, topic, "first", 30)
    _consumed(members, first)
    for m in members:  # each commits after every poll; closing leaves the group
        m.close()
    later = _produce(target, topic, "later", 9)
    resumed = _member(stack, target, client, "m3", group, topic, protocol)
    assert _split([resumed]) == {"m3": frozenset(range(PARTITIONS))}
    _consumed([resumed], later)
    assert resumed.values() == later  # nothing before the committed offsets again
    assert_once(members + [resumed], first | later)


@pytest.mark.parametrize("client", ["confluent-kafka", "kafka-python", "java"])
def test_a_classic_group_splits_commits_and_resumes(stack, target, client):
    _group_commits_and_resumes(stack, target, client, "classic")


@pytest.mark.parametrize("client", ["confluent-kafka", "java"])
def test_a_consumer_protocol_group_splits_commits_and_resumes(stack, target, client):
    _group_commits_and_resumes(stack, target, client, "consumer")


#: clients run as a process that joins, reads COUNT records, commits them and leaves
def _console_group(bootstrap: str, topic: str, group: str, count: int, *more: str) -> list[str]:
    return [value.decode() for _, _, _, value, _ in _console_consume(
        bootstrap, topic, count, "--group", group,
        "--command-property=auto.offset.reset=earliest", *more)]


def _console_consumer_protocol_group(bootstrap: str, topic: str, group: str,
                                     count: int) -> list[str]:
    return _console_group(bootstrap, topic, group, count,
                          "--command-property=group.protocol=consumer")


def _kcat_group(bootstrap: str, topic: str, group: str, count: int) -> list[str]:
    """kcat's balanced consumer (librdkafka's, committing what it read when it exits)."""
    return _kcat("-b", bootstrap, "-G", group, "-X", "auto.offset.reset=earliest",
                 "-c", str(count), "-f", "%s\n", "-q", topic).splitlines()


def _aio_group(bootstrap: str, topic: str, group: str, count: int) -> list[str]:
    async def run() -> list[str]:
        consumer = aiokafka.AIOKafkaConsumer(
            topic, bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
            auto_offset_reset="earliest", fetch_max_wait_ms=100)
        await consumer.start()
        values: list[str] = []
        try:
            async with asyncio.timeout(JVM_TIMEOUT_S):
                while len(values) < count:
                    batches = await consumer.getmany(timeout_ms=200)
                    values += [r.value.decode() for rs in batches.values() for r in rs]
                    await consumer.commit()
        finally:
            await consumer.stop()  # leaves the group
        return values
    return asyncio.run(run())


ONE_SHOT_GROUP = {
    "aiokafka": _aio_group,
    "kafka-tools": _console_group,
    "franz-go": lambda bootstrap, topic, group, count: go_client(
        "group", bootstrap, topic, group, str(count)).splitlines(),
    "kafkajs": lambda bootstrap, topic, group, count: [row[3].decode() for row in _node_rows(
        node_client("group", bootstrap, topic, group, str(count)))],
    "kcat": _kcat_group,
}
#: the same, speaking KIP-848's consumer group protocol
ONE_SHOT_CONSUMER_GROUP = {
    "kafka-tools": _console_consumer_protocol_group,
    "franz-go": lambda bootstrap, topic, group, count: go_client(
        "consumer-group", bootstrap, topic, group, str(count)).splitlines(),
}


def _one_shot_members_resume(target: Target, consume) -> None:
    topic = target.create_topic("group", PARTITIONS)
    group = target.unique("group")
    first = _produce(target, topic, "first", 30)
    read = consume(target.bootstrap_servers, topic, group, len(first))
    assert sorted(read) == sorted(v.decode() for v in first)
    later = _produce(target, topic, "later", 9)
    resumed = consume(target.bootstrap_servers, topic, group, len(later))
    assert sorted(resumed) == sorted(v.decode() for v in later)  # from the committed offsets


@pytest.mark.parametrize("client", list(ONE_SHOT_GROUP))
def test_a_group_member_commits_and_the_next_resumes(target, client):
    _one_shot_members_resume(target, ONE_SHOT_GROUP[client])


@pytest.mark.parametrize("client", list(ONE_SHOT_CONSUMER_GROUP))
def test_a_consumer_protocol_member_commits_and_the_next_resumes(target, client):
    _one_shot_members_resume(target, ONE_SHOT_CONSUMER_GROUP[client])


# -- transactions -----------------------------------------------------------------------------

def _ck_transactions(target: Target, topic: str) -> None:
    producer = ck.Producer({"bootstrap.servers": target.bootstrap_servers,
                            "transactional.id": target.unique("txn"), "logger": RDKAFKA_LOG})
    producer.init_transactions(TIMEOUT_S * 3)
    for outcome in ("committed", "aborted", "committed-again"):
        producer.begin_transaction()
        for i in range(PARTITIONS * 2):
            producer.produce(topic, value=f"{outcome}-{i}".encode(), partition=i % PARTITIONS)
        if outcome == "aborted":
            producer.abort_transaction(TIMEOUT_S)
        else:
            producer.commit_transaction(TIMEOUT_S)


def _kp_transactions(target: Target, topic: str) -> None:
    producer = KafkaProducer(bootstrap_servers=target.bootstrap_servers,
                             transactional_id=target.unique("txn"))
    producer.init_transactions()
    for outcome in ("committed", "aborted", "committed-again"):
        producer.begin_transaction()
        for i in range(PARTITIONS * 2):
            producer.send(topic, value=f"{outcome}-{i}".encode(), partition=i % PARTITIONS)
        if outcome == "aborted":
            producer.abort_transaction()
        else:
            producer.commit_transaction()
    producer.close()


def _aio_transactions(target: Target, topic: str) -> None:
    async def run() -> None:
        producer = aiokafka.AIOKafkaProducer(bootstrap_servers=target.bootstrap_servers,
                                             transactional_id=target.unique("txn"))
        await producer.start()
        try:
            for outcome in ("committed", "aborted", "committed-again"):
                await producer.begin_transaction()
                for i in range(PARTITIONS * 2):
                    await producer.send_and_wait(topic, value=f"{outcome}-{i}".encode(),
                                                 partition=i % PARTITIONS)
                if outcome == "aborted":
                    await producer.abort_transaction()
                else:
                    await producer.commit_transaction()
        finally:
            await producer.stop()
    asyncio.run(run())


def _java_transactions(target: Target, topic: str) -> list[bytes]:
    """TxnClient.java's three transactions (first, aborted, last), as its own read_committed
    consumer reads them back."""
    lines = run_java("basic", target.bootstrap_servers, topic, target.unique("txn"))
    assert [line for line in lines if not line.startswith("record")] == \
        ["committed 9", "aborted 9", "committed 9", "done"]
    assert_seen(java_records(lines), batch("first") + batch("last"))
    return [rec.value for rec in batch("first") + batch("last")]


def _kcat_transactions(target: Target, topic: str) -> None:
    """kcat's producer with a transactional.id writes what it reads in one transaction, which
    it commits at the end (it cannot abort one): the committed ones come from kcat, one
    transaction per partition, and the aborted one from confluent-kafka in between."""
    def committed(outcome: str) -> None:
        for partition in range(PARTITIONS):
            _kcat("-P", "-b", target.bootstrap_servers, "-t", topic, "-p", str(partition),
                  "-X", f"transactional.id={target.unique('txn')}",
                  stdin="".join(f"{outcome}-{i}\n" for i in range(PARTITIONS * 2)
                                if i % PARTITIONS == partition))
    committed("committed")
    producer = ck.Producer({"bootstrap.servers": target.bootstrap_servers,
                            "transactional.id": target.unique("txn"), "logger": RDKAFKA_LOG})
    producer.init_transactions(TIMEOUT_S * 3)
    producer.begin_transaction()
    for i in range(PARTITIONS * 2):
        producer.produce(topic, value=f"aborted-{i}".encode(), partition=i % PARTITIONS)
    producer.abort_transaction(TIMEOUT_S)
    committed("committed-again")


def _committed_values() -> list[bytes]:
    return [f"{o}-{i}".encode() for o in ("committed", "committed-again")
            for i in range(PARTITIONS * 2)]


TRANSACTIONS = {"confluent-kafka": lambda t, topic: (_ck_transactions(t, topic),
                                                     _committed_values())[1],
                "kafka-python": lambda t, topic: (_kp_transactions(t, topic),
                                                  _committed_values())[1],
                "aiokafka": lambda t, topic: (_aio_transactions(t, topic),
                                              _committed_values())[1],
                "java": _java_transactions,
                "franz-go": lambda t, topic: (go_client("txn", t.bootstrap_servers, topic,
                                                        t.unique("txn")),
                                              _committed_values())[1],
                "kafkajs": lambda t, topic: (node_client("txn", t.bootstrap_servers, topic,
                                                         t.unique("txn")),
                                             _committed_values())[1],
                "kcat": lambda t, topic: (_kcat_transactions(t, topic), _committed_values())[1]}


@pytest.mark.parametrize("client", list(TRANSACTIONS))
def test_a_read_committed_reader_sees_committed_transactions_only(target, client):
    topic = target.create_topic("txn", PARTITIONS)
    expected = TRANSACTIONS[client](target, topic)
    consumer = ck.Consumer({"bootstrap.servers": target.bootstrap_servers, "group.id": "unused",
                            "isolation.level": "read_committed", "enable.auto.commit": False,
                            "enable.partition.eof": True, "logger": RDKAFKA_LOG})
    consumer.assign([ck.TopicPartition(topic, p, ck.OFFSET_BEGINNING)
                     for p in range(PARTITIONS)])
    values: list[bytes] = []
    ends: set[int] = set()

    def read_to_the_end():
        for m in consumer.consume(50, 0.2):
            if m.error() is not None and m.error().code() == ck.KafkaError._PARTITION_EOF:
                ends.add(m.partition())
            elif m.error() is None:
                values.append(m.value())
        return len(ends) == PARTITIONS
    try:
        wait_for(read_to_the_end, "every partition read to its end")
    finally:
        consumer.close()
    assert sorted(values) == sorted(expected)  # the aborted ones never show, none twice


@pytest.mark.parametrize("client", ["kafka-streams"])
def test_an_exactly_once_streams_app_counts_every_word_once(stack, target, client, tmp_path):
    count_words_once(stack, target.bootstrap_servers, tmp_path)


# -- Kafka Streams, at least once -------------------------------------------------------------
# The word count of test_streams_eos.py with Streams' default guarantee: plain (idempotent)
# producers, committed offsets, and the classic group protocol with Streams' own assignor.

AT_LEAST_ONCE = "processing.guarantee=at_least_once"


def _at_least_once(stack, target: Target, tmp_path, names: tuple[str, str, str],
                   instance: str) -> StreamsApp:
    app_id, source, sink = names
    app = StreamsApp(target.bootstrap_servers, app_id, source, sink, tmp_path / instance,
                     tmp_path / f"{instance}.log", AT_LEAST_ONCE)
    stack.callback(app.close)
    return app


def _tasks(admin, group: str) -> list[set[tuple[str, int]]] | None:
    """The partitions each member of a stable group was assigned, or None while it is not."""
    [future] = admin.describe_consumer_groups([group], request_timeout=TIMEOUT_S).values()
    described = future.result(TIMEOUT_S)
    if described.state != ck.ConsumerGroupState.STABLE:
        return None
    return [{(tp.topic, tp.partition) for tp in member.assignment.topic_partitions}
            for member in described.members]


@pytest.mark.parametrize("client", ["kafka-streams"])
def test_a_streams_app_reads_lines_and_writes_counts(stack, target, client, tmp_path):
    """Lines in; through a repartition topic and a store with a changelog; counts out, each
    word's counts exactly 1..n, in order, as nothing failed and nothing moved."""
    count_words_once(stack, target.bootstrap_servers, tmp_path, AT_LEAST_ONCE)


@pytest.mark.parametrize("client", ["kafka-streams"])
def test_two_streams_instances_share_the_tasks_and_one_takes_over(stack, target, client,
                                                                   tmp_path):
    """Two instances of one app split its six tasks' partitions (the input topic's and the
    repartition topic's) between them in its group, count together, and once one closes, the
    other gets every partition and counts on from where the group committed."""
    bootstrap = target.bootstrap_servers
    names = app_id, source, sink = streams_names()
    create_topics(bootstrap, source, sink)
    first = _at_least_once(stack, target, tmp_path, names, "first")
    second = _at_least_once(stack, target, tmp_path, names, "second")
    admin = ck.admin.AdminClient({"bootstrap.servers": bootstrap, "logger": RDKAFKA_LOG})
    everything: set[tuple[str, int]] = set()

    def split():
        first.check()
        second.check()
        members = _tasks(admin, app_id)
        if members is None or len(members) != 2 or not all(members):
            return False
        everything.clear()
        everything.update(*members)
        return sum(map(len, members)) == len(everything)  # none in both
    wait_for(split, "both instances' members holding partitions of their own",
             timeout=START_TIMEOUT_S)
    repartition = {t for t, _ in everything if t != source}
    assert len(repartition) == 1 and next(iter(repartition)).endswith("-repartition")
    assert everything == {(t, p) for t in (source, *repartition) for p in range(PARTITIONS)}

    rng = random.Random(4)
    expected = produce_lines(bootstrap, source, 200, rng, "both")
    output = Output(stack, bootstrap, sink)
    output.wait_for_counts(expected, second)

    first.close()
    assert "closed" in first.lines and first.process.returncode == 0, first.lines
    # Streams keeps a closed instance's member until its session times out (10 s here)
    wait_for(lambda: second.check() or _tasks(admin, app_id) == [everything],
             "the other instance holding every partition", timeout=START_TIMEOUT_S)
    expected += produce_lines(bootstrap, source, 200, rng, "one")
    output.wait_for_counts(expected, second)


# -- administration ---------------------------------------------------------------------------

def _ck_admin(target: Target, name: str) -> tuple:
    admin = ck.admin.AdminClient({"bootstrap.servers": target.bootstrap_servers,
                                  "logger": RDKAFKA_LOG})
    admin.create_topics([ck.admin.NewTopic(name, 2, 1, config={"retention.ms": "123456"})])[
        name].result(TIMEOUT_S)

    def described():  # Kafka's brokers learn of a new topic a moment after its controller
        [future] = admin.describe_configs([ConfigResource("topic", name)]).values()
        try:
            return future.result(TIMEOUT_S)["retention.ms"]
        except ck.KafkaException as exc:
            assert exc.args[0].code() == ck.KafkaError.UNKNOWN_TOPIC_OR_PART, exc
            return None
    entry = wait_for(described, "the new topic's configs")
    retention = (entry.value, ck.admin.ConfigSource(entry.source).name)
    admin.create_partitions([NewPartitions(name, 4)])[name].result(TIMEOUT_S)
    wait_for(lambda: len(admin.list_topics(name, timeout=TIMEOUT_S).topics[name].partitions)
             == 4, "4 partitions")
    admin.delete_topics([name])[name].result(TIMEOUT_S)
    wait_for(lambda: name not in admin.list_topics(timeout=TIMEOUT_S).topics, "topic gone")
    return retention, 4


def _kp_admin(target: Target, name: str) -> tuple:
    admin = KafkaAdminClient(bootstrap_servers=target.bootstrap_servers)
    try:
        admin.create_topics([KpNewTopic(name, 2, 1, topic_configs={"retention.ms": "123456"})])

        def described():  # Kafka's brokers learn of a new topic a moment after its controller
            found = admin.describe_configs([KpConfigResource(ConfigResourceType.TOPIC, name)])
            [by_name] = found.values()
            return by_name.get(name, {}).get("retention.ms")
        entry = wait_for(described, "the new topic's configs")
        retention = (entry["value"], entry["config_source"])
        admin.create_partitions({name: KpNewPartitions(4)})
        count = wait_for(lambda: len(admin.describe_topics([name])[0]["partitions"]) == 4 and 4,
                         "4 partitions")
        admin.delete_topics([name])
        wait_for(lambda: name not in admin.list_topics(), "topic gone")
    finally:
        admin.close()
    return retention, count


def _aio_admin(target: Target, name: str) -> tuple:

    async def run() -> tuple:
        admin = AIOKafkaAdminClient(bootstrap_servers=target.bootstrap_servers)
        await admin.start()
        try:
            await admin.create_topics([AioNewTopic(name, 2, 1,
                                                   topic_configs={"retention.ms": "123456"})])
            async with asyncio.timeout(TIMEOUT_S * 3):
                while True:  # Kafka's brokers learn of a new topic a moment after it is made
                    [response] = await admin.describe_configs(
                        [AioConfigResource(AioType.TOPIC, name)])
                    resource = response.resources[0]
                    if resource[0] == 0:
                        break
                    await asyncio.sleep(0.1)
            entries = {entry[0]: entry for entry in resource[4]}
            retention = entries["retention.ms"][1]
            await admin.create_partitions({name: AioPartitions(4)})
            async with asyncio.timeout(TIMEOUT_S * 3):
                while True:
                    [described] = await admin.describe_topics([name])
                    if len(described["partitions"]) == 4:
                        break
                    await asyncio.sleep(0.1)
            await admin.delete_topics([name])
            async with asyncio.timeout(TIMEOUT_S * 3):
                while name in await admin.list_topics():
                    await asyncio.sleep(0.1)
            return retention, 4
        finally:
            await admin.close()
    value, count = asyncio.run(run())
    return (value, "DYNAMIC_TOPIC_CONFIG"), count


def _printed_admin(out: str) -> tuple:
    """What the franz-go and kafkajs clients print of the admin scenario: the retention and its
    source (a name, or the number the protocol gives it), and the partitions counted."""
    lines = dict(line.split(" ", 1) for line in out.splitlines())
    value, source = lines["retention"].split(" ")
    if source.isdigit():
        source = ck.admin.ConfigSource(int(source)).name
    return (value, source), int(lines["partitions"])


ADMIN = {"confluent-kafka": _ck_admin, "kafka-python": _kp_admin, "aiokafka": _aio_admin,
         "franz-go": lambda target, name: _printed_admin(
             go_client("admin", target.bootstrap_servers, name)),
         "kafkajs": lambda target, name: _printed_admin(
             node_client("admin", target.bootstrap_servers, name))}


@pytest.mark.parametrize("client", list(ADMIN))
def test_topics_are_created_configured_grown_and_deleted(target, client):
    assert ADMIN[client](target, target.unique("admin")) == \
        (("123456", "DYNAMIC_TOPIC_CONFIG"), 4)


@pytest.mark.parametrize("client", ["java"])
def test_the_java_admin_describes_a_consumer_protocol_group(stack, target, client):
    topic = target.create_topic("described", PARTITIONS)
    group = target.unique("described")
    members = [_member(stack, target, "confluent-kafka", f"c{i}", group, topic, "consumer")
               for i in (1, 2)]
    owned = _split(members)

    def listed(name: str) -> str:
        return ",".join(f"{topic}-{p}" for p in sorted(owned[name], key=str))

    def described():
        out = jvm.run(":".join(map(str, JAVA_CLASSPATH)), ADMIN_SOURCE,
                      target.bootstrap_servers, group,
                      capture_output=True, text=True, timeout=JVM_TIMEOUT_S * 2)
        assert out.returncode == 0, out.stderr[-3000:]
        lines = out.stdout.splitlines()
        # the group may still be reconciling for a moment after the members hold their share
        return lines if lines[0].split()[3] == "Stable" else None
    lines = wait_for(described, "the group described as Stable", timeout=JVM_TIMEOUT_S * 2)
    _, name, kind, state, assignor, epoch, target_epoch = lines[0].split()
    assert (name, kind, state, assignor, epoch) == (group, "Consumer", "Stable", "uniform",
                                                    target_epoch)
    assert sorted(line.split(" ", 2)[2] for line in lines if line.startswith("member ")) == \
        sorted(f"{epoch} true {listed(m)} {listed(m)}" for m in ("c1", "c2"))
    assert f"listed {group} Consumer Stable" in lines


CONSUMER_GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"


@pytest.mark.parametrize("client", ["kafka-tools"])
def test_kafka_consumer_groups_describes_resets_and_deletes_a_group(stack, target, client):
    topic = target.create_topic("tools", PARTITIONS)
    group = target.unique("tools")
    member = _member(stack, target, "confluent-kafka", "m1", group, topic, "classic")
    _split([member])
    values = _produce(target, topic, "tools", 6)
    _consumed([member], values)
    member.close()
    rows = [line.split() for line in kafka_tool(
        CONSUMER_GROUPS, target.bootstrap_servers, "--describe", "--group", group).splitlines()
        if line.strip() and not line.startswith("Consumer group")]
    assert rows[0][:6] == ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET",
                           "LAG"]
    assert sorted(row[:6] for row in rows[1:]) == [
        [group, topic, str(p), "2", "2", "0"] for p in range(PARTITIONS)]
    reset = kafka_tool(CONSUMER_GROUPS, target.bootstrap_servers, "--reset-offsets",
                       "--to-earliest", "--execute", "--topic", topic, "--group", group)
    assert sorted(line.split() for line in reset.splitlines()
                  if line.strip() and not line.startswith("GROUP")) == [
        [group, topic, str(p), "0"] for p in range(PARTITIONS)]
    deleted = kafka_tool(CONSUMER_GROUPS, target.bootstrap_servers, "--delete", "--group",
                         group)
    assert f"Deletion of requested consumer groups ('{group}') was successful." in deleted


TOPICS_TOOL = "org.apache.kafka.tools.TopicCommand"
TRANSACTIONS_TOOL = "org.apache.kafka.tools.TransactionsCommand"


def _tool_table(out: str) -> list[dict[str, str]]:
    """The rows of a table one of Kafka's tools prints, by column name."""
    header, *rows = [line.split() for line in out.splitlines() if line.strip()]
    return [dict(zip(header, row)) for row in rows]


@pytest.mark.parametrize("client", ["kafka-tools"])
def test_kafka_topics_creates_describes_grows_and_deletes_a_topic(target, client):
    name = target.unique("tools")
    bootstrap = target.bootstrap_servers
    kafka_tool(TOPICS_TOOL, bootstrap, "--create", "--topic", name, "--partitions", "2",
               "--replication-factor", "1", "--config", "retention.ms=123456")

    def described() -> tuple[dict, int]:
        lines = kafka_tool(TOPICS_TOOL, bootstrap, "--describe", "--topic", name).splitlines()
        summary = dict(field.split(": ", 1) for field in lines[0].split("\t") if ": " in field)
        return summary, sum(1 for line in lines if "\tPartition: " in line)
    summary, partitions = described()
    # what the topic was given, and min.insync.replicas, set cluster-wide on both (eligible
    # leader replicas are on)
    configs = dict(entry.split("=", 1) for entry in summary["Configs"].split(","))
    assert configs["min.insync.replicas"] == "1"
    assert (summary["Topic"], summary["PartitionCount"], summary["ReplicationFactor"],
            configs["retention.ms"], partitions) == (name, "2", "1", "123456", 2)
    kafka_tool(TOPICS_TOOL, bootstrap, "--alter", "--topic", name, "--partitions", "4")
    wait_for(lambda: described()[1] == 4, "four partitions")
    assert name in kafka_tool(TOPICS_TOOL, bootstrap, "--list").split()
    kafka_tool(TOPICS_TOOL, bootstrap, "--delete", "--topic", name)
    wait_for(lambda: name not in kafka_tool(TOPICS_TOOL, bootstrap, "--list").split(),
             "the topic gone")


@pytest.mark.parametrize("client", ["kafka-tools"])
def test_kafka_transactions_lists_and_describes_an_open_transaction(stack, target, client):
    topic = target.create_topic("tools-txn", 2)
    txn_id = target.unique("tools-txn")
    bootstrap = target.bootstrap_servers
    producer = ck.Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id,
                            "logger": RDKAFKA_LOG})
    producer.init_transactions(TIMEOUT_S)
    producer.begin_transaction()
    for partition in (0, 1):
        producer.produce(topic, b"open", partition=partition)
    assert producer.flush(TIMEOUT_S) == 0

    [listed] = [row for row in _tool_table(kafka_tool(TRANSACTIONS_TOOL, bootstrap, "list"))
                if row["TransactionalId"] == txn_id]
    assert listed["TransactionState"] == "Ongoing"
    producer_id = listed["ProducerId"]
    [described] = _tool_table(kafka_tool(TRANSACTIONS_TOOL, bootstrap, "describe",
                                         "--transactional-id", txn_id))
    assert (described["TransactionalId"], described["ProducerId"],
            described["TransactionState"], sorted(described["TopicPartitions"].split(","))) == \
        (txn_id, producer_id, "Ongoing", [f"{topic}-0", f"{topic}-1"])
    [producing] = _tool_table(kafka_tool(TRANSACTIONS_TOOL, bootstrap, "describe-producers",
                                         "--topic", topic, "--partition", "0"))
    assert (producing["ProducerId"], producing["CurrentTransactionStartOffset"]) == \
        (producer_id, "0")

    producer.commit_transaction(TIMEOUT_S)
    wait_for(lambda: _tool_table(kafka_tool(
        TRANSACTIONS_TOOL, bootstrap, "describe", "--transactional-id", txn_id))[0][
        "TransactionState"] == "CompleteCommit", "the commit complete")


# -- Spark ------------------------------------------------------------------------------------

def _spark_read(spark, bootstrap: str, topic: str) -> list[tuple]:
    """(partition, offset, key, value, headers) of everything in ``topic``, by a batch query."""
    rows = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic).option("includeHeaders", "true").load()
            .select("partition", "offset", "key", "value", "headers").collect())
    return sorted((r.partition, r.offset, bytes(r.key), bytes(r.value),
                   [(h.key, bytes(h.value)) for h in r.headers or []]) for r in rows)


@pytest.mark.parametrize("client", ["java"])
def test_spark_writes_reads_and_streams_records(spark, target, client, tmp_path):
    """Spark's Kafka connector, which is built on the Java client: a batch write of the records
    (keys, values, headers, partitions), a batch read of them, and a streaming query that copies
    them from the earliest offsets to a second topic, each to the partition it came from."""
    bootstrap = target.bootstrap_servers
    source = target.create_topic("spark-in", PARTITIONS)
    sink = target.create_topic("spark-out", PARTITIONS)
    df = spark.createDataFrame(
        [(key, value, partition, headers) for partition, key, value, headers in RECORDS],
        "key BINARY, value BINARY, partition INT, "
        "headers ARRAY<STRUCT<key: STRING, value: BINARY>>")
    # one task writes the rows in order, so offsets follow them within each partition
    (df.coalesce(1).write.format("kafka").option("kafka.bootstrap.servers", bootstrap)
     .option("topic", source).save())
    assert _spark_read(spark, bootstrap, source) == _expected()

    copy = (spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", source).option("startingOffsets", "earliest")
            .option("includeHeaders", "true").load()
            .selectExpr("key", "value", "partition", "headers")
            .writeStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
            .option("topic", sink).option("checkpointLocation", str(tmp_path / "checkpoint")))
    run_to_end(copy)
    assert _spark_read(spark, bootstrap, sink) == _expected()


CONFIGS_TOOL = "org.apache.kafka.tools.ConfigCommand"


@pytest.mark.parametrize("client", ["kafka-tools"])
def test_kafka_configs_adds_describes_and_deletes_a_topic_config(target, client):
    topic = target.create_topic("configs", 1)
    bootstrap = target.bootstrap_servers
    entity = ("--entity-type", "topics", "--entity-name", topic)

    def described() -> dict[str, str]:
        """config -> "VALUE SOURCE" of the topic's dynamic configs the tool lists."""
        out = kafka_tool(CONFIGS_TOOL, bootstrap, "--describe", *entity)
        assert out.splitlines()[0] == f"Dynamic configs for topic {topic} are:", out
        found = {}
        for line in out.splitlines()[1:]:
            setting, _, synonyms = line.strip().partition(" sensitive=false synonyms={")
            name, _, value = setting.partition("=")
            found[name] = f"{value} {synonyms.split(':', 1)[0]}"
        return found
    kafka_tool(CONFIGS_TOOL, bootstrap, "--alter", *entity,
               "--add-config", "retention.ms=123456,max.message.bytes=5000")
    wait_for(lambda: described() == {"retention.ms": "123456 DYNAMIC_TOPIC_CONFIG",
                                     "max.message.bytes": "5000 DYNAMIC_TOPIC_CONFIG"},
             "both configs described")
    kafka_tool(CONFIGS_TOOL, bootstrap, "--alter", *entity, "--delete-config", "retention.ms")
    wait_for(lambda: described() == {"max.message.bytes": "5000 DYNAMIC_TOPIC_CONFIG"},
             "retention.ms deleted")
