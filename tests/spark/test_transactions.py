"""Spark reading a transactionally produced topic with ``kafka.isolation.level=read_committed``:
a streaming query sees the records of committed transactions only, in log order, and goes past
the offsets that commit and abort markers take without stalling on them.  Each test runs on
mockbroker and on Apache Kafka (``target``).

Input comes from confluent-kafka's transactional producer, whose delivery reports say where each
record landed.  A transaction left open while the
query runs holds back everything after it on its partitions (the last stable offset), so the
tests check how far the query's source got, in its progress reports, before checking that
something is absent.
"""

from __future__ import annotations

import dataclasses
import json

import confluent_kafka as ck
from tests.clients.helpers import RDKAFKA_LOG, wait_for
from tests.spark.conftest import QUERY_TIMEOUT_S, In, unique
from tests.spark.test_reference_pipeline import (by_window, event, output, pipeline,
                                                 stop_between_batches, wait_for_output, window)

#: a record as it landed: (partition, offset, key, value)
Landed = tuple[int, int, "str | None", str]

READ_COMMITTED = {"kafka.isolation.level": "read_committed"}


def transactional_producer(bootstrap: str, name: str) -> ck.Producer:
    producer = ck.Producer({"bootstrap.servers": bootstrap, "transactional.id": unique(name),
                            "logger": RDKAFKA_LOG})
    producer.init_transactions(30)
    return producer


def transaction(producer: ck.Producer, topic: str, records: list[In],
                end: str | None) -> list[Landed]:
    """Produce ``records`` in one transaction and, once they are all in the log, end it with
    ``end`` ("commit" or "abort") or leave it open (None).  Returns where they landed."""
    landed: list[Landed] = []

    def delivered(error, msg) -> None:
        assert error is None, error
        key = msg.key()
        landed.append((msg.partition(), msg.offset(), key and key.decode(),
                       msg.value().decode()))
    producer.begin_transaction()
    for r in records:
        producer.produce(topic, r.value.encode(), None if r.key is None else r.key.encode(),
                         partition=r.partition, on_delivery=delivered)
    assert producer.flush(30) == 0, "records of the transaction still unacknowledged"
    assert len(landed) == len(records), landed
    if end == "commit":
        producer.commit_transaction(30)
    elif end == "abort":
        producer.abort_transaction(30)
    else:
        assert end is None, end
    return landed


def batch(tag: str, n: int, partitions: int = 2) -> list[In]:
    return [In(f"{tag}-{i}", key=f"k{tag}-{i}", partition=i % partitions) for i in range(n)]


def source_end(query, topic: str) -> dict[int, int]:
    """Up to where (exclusive, per partition) the query's last completed batch read ``topic``;
    {} before the first."""
    progress = query.lastProgress
    if not progress or not progress["sources"]:
        return {}
    end = progress["sources"][0]["endOffset"]
    end = json.loads(end) if isinstance(end, str) else end
    return {int(p): o for p, o in (end or {}).get(topic, {}).items()}


def reached(query, topic: str, offsets: dict[int, int], timeout: float = QUERY_TIMEOUT_S):
    """Wait until the query has read ``topic`` at least up to ``offsets``; returns where its
    source stopped (which a test compares with ``offsets``: a source reading past the last
    stable offset would show here)."""
    def ahead():
        if query.exception() is not None:
            raise AssertionError(f"the query failed: {query.exception()}")
        end = source_end(query, topic)
        return end if all(end.get(p, -1) >= o for p, o in offsets.items()) else None
    return wait_for(ahead, f"the query to read {topic} up to {offsets}", timeout)


def offset_of(landed: list[Landed], value: str) -> int:
    [offset] = [o for _, o, _, v in landed if v == value]
    return offset


def past_marker(landed: list[Landed], partition: int) -> int:
    """Where ``partition`` ends once the transaction of its last record in ``landed`` has
    ended: one past the marker that follows that record."""
    return max(o for p, o, _, _ in landed if p == partition) + 2


def test_read_committed_stream_sees_committed_transactions_only(spark, target):
    bootstrap, events = target.bootstrap_servers, target.create_topic("events", 2)
    writer = transactional_producer(bootstrap, "writer")
    landed = transaction(writer, events, batch("a", 6), "commit")
    landed += transaction(writer, events, batch("b", 4), "abort")
    landed += transaction(writer, events, batch("c", 4), "commit")
    # open on partition 0 while the query runs
    straggler = transactional_producer(bootstrap, "straggler")
    landed += transaction(straggler, events, batch("d", 3, partitions=1), None)
    # committed after it: readable on partition 1 at once, on partition 0 once d ends
    landed += transaction(writer, events, batch("e", 4), "commit")
    landed += transaction(writer, events, batch("f", 4), "abort")

    name = unique("committed")
    reader = spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap) \
        .option("subscribe", events).option("startingOffsets", "earliest")
    for option, value in READ_COMMITTED.items():
        reader = reader.option(option, value)
    query = (reader.load()
             .selectExpr("partition", "offset", "CAST(key AS STRING) AS key",
                         "CAST(value AS STRING) AS value")
             .writeStream.format("memory").queryName(name)
             .trigger(processingTime="200 milliseconds").start())

    def seen() -> list[tuple]:
        return sorted(tuple(r) for r in spark.table(name).collect())

    def expected(*tags: str) -> list[tuple]:
        """What the query must hold: the records with these tags, where they landed."""
        return sorted(r for r in landed if r[3].split("-")[0] in tags)

    try:
        # partition 0 stops at d's first record, the last stable offset; partition 1 has
        # nothing open and is read to its end, past e's commit and f's abort markers
        stable = {0: offset_of(landed, "d-0"), 1: past_marker(landed, 1)}
        assert reached(query, events, stable) == stable
        before = [r for r in expected("a", "c", "e") if r[0] == 1 or r[1] < stable[0]]
        assert seen() == before
        assert not [r for r in seen() if r[3].startswith(("b", "d", "f"))]

        straggler.commit_transaction(30)
        landed += transaction(writer, events, batch("g", 2), "abort")
        landed += transaction(writer, events, batch("h", 4), "commit")
        end = {p: past_marker(landed, p) for p in (0, 1)}
        assert reached(query, events, end) == end
    finally:
        query.stop()
    try:
        got = seen()
    finally:
        spark.catalog.dropTempView(name)

    assert got == expected("a", "c", "d", "e", "h")
    # per partition in log order: d, committed later, comes in at its place on partition 0,
    # ahead of e, which waited behind it
    assert [v for p, _, _, v in got if p == 0] == [
        "a-0", "a-2", "a-4", "c-0", "c-2", "d-0", "d-1", "d-2", "e-0", "e-2", "h-0", "h-2"]
    assert [(k, v) for p, _, k, v in got if p == 1] == [
        (f"k{v}", v) for v in ("a-1", "a-3", "a-5", "c-1", "c-3", "e-1", "e-3", "h-1", "h-3")]
    # the markers take offsets the query never hands out
    assert len(got) < sum(end.values())


def on(partition: int, record: In) -> In:
    return dataclasses.replace(record, partition=partition)


def test_reference_pipeline_counts_committed_transactions_only(spark, target, checkpoint):
    t = target.create_topics({"events": 2, "counts": 1})
    bootstrap, events, counts = target.bootstrap_servers, t["events"], t["counts"]
    writer = transactional_producer(bootstrap, "events-writer")
    query = pipeline.start(spark, bootstrap, events, counts, checkpoint,
                           trigger="200 milliseconds", source_options=READ_COMMITTED)
    try:
        landed = transaction(writer, events, [
            on(0, event("alice", "click", 0, 5)),
            on(1, event("bob", "click", 0, 20)),
            on(1, event("alice", "view", 0, 50)),
        ], "commit")
        # aborted: two more clicks in the first minute, and an event that would move the
        # watermark to 00:08:30 and close every window so far
        landed += transaction(writer, events, [
            on(0, event("mallory", "click", 0, 30)),
            on(1, event("mallory", "click", 0, 40)),
            on(0, event("zed", "view", 9, 0)),
        ], "abort")
        # the watermark moves to 00:01:10, closing the first minute
        landed += transaction(writer, events, [
            on(1, event("carol", "click", 1, 10)),
            on(0, event("alice", "click", 1, 40)),
        ], "commit")
        wait_for_output(bootstrap, counts, 2, "the first minute's counts")
        assert by_window(output(bootstrap, counts)) == [window(0, "click", 2),
                                                        window(0, "view", 1)]

        # open on partition 0: bob's view, and frank's click committed behind it, count only
        # once it commits; frank's click would move the watermark to 00:04:30
        straggler = transactional_producer(bootstrap, "events-straggler")
        bobs_view = event("bob", "view", 2, 10)
        landed += transaction(straggler, events, [on(0, bobs_view)], None)
        landed += transaction(writer, events, [on(0, event("frank", "click", 5, 0))], "commit")
        # partition 1 was last written by carol's transaction, committed
        stable = {0: offset_of(landed, bobs_view.value), 1: past_marker(landed, 1)}
        # had the source read frank's click, it would be past the last stable offset here
        assert reached(query, events, stable) == stable
        assert len(output(bootstrap, counts)) == 2

        straggler.commit_transaction(30)
        wait_for_output(bootstrap, counts, 4, "minutes 1 and 2")
    finally:
        stop_between_batches(query)

    # every window of committed events exactly once, in the order the watermark closed them
    out = output(bootstrap, counts)
    assert by_window(out[:2]) == [window(0, "click", 2), window(0, "view", 1)]
    assert by_window(out[2:]) == [window(1, "click", 2), window(2, "view", 1)]
