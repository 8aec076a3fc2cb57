"""Spark's Kafka streaming source: which records a query reads, from where.

Input is produced with kafka-python; Spark's own Java client (Admin on the driver, assigned
consumers on the executors) does the reading; the test checks the rows Spark hands out.  Each
test runs on mockbroker and on Apache Kafka (``target``), with topics of its own.
"""

from __future__ import annotations

import json

from tests.clients.helpers import wait_for
from tests.spark.conftest import QUERY_TIMEOUT_S, In, memory_query, produce, unique

#: 2024-01-01T00:00:00Z, in milliseconds
T0 = 1_704_067_200_000


def stream(spark, bootstrap: str, **options):
    reader = spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
    for name, value in options.items():
        reader = reader.option(name, value)
    return reader.load()


def plain(df):
    """The columns a test compares, with key and value as text."""
    return df.selectExpr("topic", "partition", "offset", "CAST(key AS STRING) AS key",
                         "CAST(value AS STRING) AS value")


def rows(spark, df) -> list[tuple]:
    return [tuple(r) for r in memory_query(spark, plain(df))]


def nine_records() -> list[In]:
    return [In(f"v{i}", key=f"k{i}", partition=i % 3) for i in range(9)]


def test_subscribe_reads_every_partition_from_the_earliest_offset(spark, target):
    t = target.create_topics({"events": 3})
    produce(target.bootstrap_servers, t["events"], nine_records())
    df = stream(spark, target.bootstrap_servers, subscribe=t["events"],
                startingOffsets="earliest")
    assert rows(spark, df) == [(t["events"], i % 3, i // 3, f"k{i}", f"v{i}")
                               for i in sorted(range(9), key=lambda i: (i % 3, i))]


def test_subscribe_pattern_reads_the_matching_topics_only(spark, target):
    t = target.create_topics({"orders-eu": 2, "orders-us": 1, "payments": 1})
    bootstrap = target.bootstrap_servers
    produce(bootstrap, t["orders-eu"], [In("eu-0", partition=0), In("eu-1", partition=1)])
    produce(bootstrap, t["orders-us"], [In("us-0", partition=0)])
    produce(bootstrap, t["payments"], [In("pay-0", partition=0)])
    tag = t["payments"].split("-")[0]  # the topics' names share it: the pattern finds ours only
    df = stream(spark, bootstrap, subscribePattern=f"{tag}-orders-.*",
                startingOffsets="earliest")
    assert rows(spark, df) == [(t["orders-eu"], 0, 0, None, "eu-0"),
                               (t["orders-eu"], 1, 0, None, "eu-1"),
                               (t["orders-us"], 0, 0, None, "us-0")]


def test_assign_reads_the_given_partitions_only(spark, target):
    t = target.create_topics({"events": 3})
    produce(target.bootstrap_servers, t["events"], nine_records())
    df = stream(spark, target.bootstrap_servers,
                assign=json.dumps({t["events"]: [0, 2]}), startingOffsets="earliest")
    assert rows(spark, df) == [(t["events"], 0, 0, "k0", "v0"), (t["events"], 0, 1, "k3", "v3"),
                               (t["events"], 0, 2, "k6", "v6"), (t["events"], 2, 0, "k2", "v2"),
                               (t["events"], 2, 1, "k5", "v5"), (t["events"], 2, 2, "k8", "v8")]


def test_starting_offsets_per_partition_as_json(spark, target):
    t = target.create_topics({"events": 3})
    produce(target.bootstrap_servers, t["events"], nine_records())
    # partition 0 from offset 1, partition 1 from the earliest (-2), partition 2 from the
    # latest (-1): nothing of it was there yet
    starting = {t["events"]: {"0": 1, "1": -2, "2": -1}}
    df = stream(spark, target.bootstrap_servers, subscribe=t["events"],
                startingOffsets=json.dumps(starting))
    assert rows(spark, df) == [(t["events"], 0, 1, "k3", "v3"), (t["events"], 0, 2, "k6", "v6"),
                               (t["events"], 1, 0, "k1", "v1"), (t["events"], 1, 1, "k4", "v4"),
                               (t["events"], 1, 2, "k7", "v7")]


def test_starting_offsets_latest_reads_only_what_comes_after_the_start(spark, target):
    t = target.create_topics({"events": 2})
    bootstrap = target.bootstrap_servers
    produce(bootstrap, t["events"], [In("before-0", partition=0), In("before-1", partition=1)])
    name = unique("latest")
    query = (plain(stream(spark, bootstrap, subscribe=t["events"], startingOffsets="latest"))
             .writeStream.format("memory").queryName(name)
             .trigger(processingTime="100 milliseconds").start())
    try:
        # the first trigger fixes the starting offsets at the ends of the partitions
        wait_for(lambda: query.lastProgress is not None, "the query's first trigger",
                 QUERY_TIMEOUT_S)
        produce(bootstrap, t["events"], [In("after-0", partition=0), In("after-1", partition=1)])
        query.processAllAvailable()
        got = sorted(tuple(r) for r in spark.table(name).collect())
    finally:
        query.stop()
        spark.catalog.dropTempView(name)
    assert got == [(t["events"], 0, 1, None, "after-0"), (t["events"], 1, 1, None, "after-1")]


def test_starting_offsets_by_timestamp(spark, target):
    t = target.create_topics({"events": 3})
    bootstrap = target.bootstrap_servers
    produce(bootstrap, t["events"], [
        In("p0-a", partition=0, timestamp_ms=T0 + 1000),
        In("p0-b", partition=0, timestamp_ms=T0 + 2000),
        In("p0-c", partition=0, timestamp_ms=T0 + 3000),
        In("p1-a", partition=1, timestamp_ms=T0 + 1500),
        In("p1-b", partition=1, timestamp_ms=T0 + 2500),
        In("p2-a", partition=2, timestamp_ms=T0 + 500),
    ])
    # per partition: the first offset whose timestamp is at or after the one given
    by_partition = {t["events"]: {"0": T0 + 2000, "1": T0 + 1000, "2": T0}}
    df = stream(spark, bootstrap, subscribe=t["events"],
                startingOffsetsByTimestamp=json.dumps(by_partition))
    got = memory_query(spark, df.selectExpr("partition", "offset", "CAST(value AS STRING)",
                                            "timestamp", "timestampType"))
    assert [(r[0], r[1], r[2], int(r[3].timestamp() * 1000), r[4]) for r in got] == [
        (0, 1, "p0-b", T0 + 2000, 0), (0, 2, "p0-c", T0 + 3000, 0),
        (1, 0, "p1-a", T0 + 1500, 0), (1, 1, "p1-b", T0 + 2500, 0),
        (2, 0, "p2-a", T0 + 500, 0)]

    # one timestamp for every partition; partition 2 has nothing that late, and the "latest"
    # strategy starts it at its end instead of failing the query
    df = stream(spark, bootstrap, subscribe=t["events"], startingTimestamp=str(T0 + 2000),
                startingOffsetsByTimestampStrategy="latest")
    assert rows(spark, df) == [(t["events"], 0, 1, None, "p0-b"),
                               (t["events"], 0, 2, None, "p0-c"),
                               (t["events"], 1, 1, None, "p1-b")]


def test_include_headers_gives_every_header_in_order(spark, target):
    t = target.create_topics({"events": 2})
    produce(target.bootstrap_servers, t["events"], [
        In("with", partition=0, headers=[("trace", b"abc"), ("trace", b"def"), ("empty", b"")]),
        In("without", partition=1),
    ])
    df = stream(spark, target.bootstrap_servers, subscribe=t["events"],
                startingOffsets="earliest", includeHeaders="true")
    got = memory_query(spark, df.selectExpr("partition", "CAST(value AS STRING)", "headers"))
    # Spark gives a record without headers a null headers column, not an empty array
    assert [(r[0], r[1], r[2] and [(h.key, bytes(h.value)) for h in r[2]]) for r in got] == [
        (0, "with", [("trace", b"abc"), ("trace", b"def"), ("empty", b"")]),
        (1, "without", None),
    ]


def test_max_offsets_per_trigger_spreads_the_backlog_over_batches(spark, target):
    t = target.create_topics({"events": 3})
    produce(target.bootstrap_servers, t["events"],
            [In(f"v{i}", partition=i % 3) for i in range(30)])
    name = unique("limited")
    df = stream(spark, target.bootstrap_servers, subscribe=t["events"],
                startingOffsets="earliest", maxOffsetsPerTrigger="10")
    query = plain(df).writeStream.format("memory").queryName(name) \
        .trigger(availableNow=True).start()
    try:
        assert query.awaitTermination(QUERY_TIMEOUT_S)
        got = sorted(tuple(r) for r in spark.table(name).collect())
        batches = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
    finally:
        if query.isActive:
            query.stop()
        spark.catalog.dropTempView(name)
    assert got == sorted((t["events"], i % 3, i // 3, None, f"v{i}") for i in range(30))
    assert sum(batches) == 30
    assert len(batches) >= 3 and max(batches) <= 10, batches
