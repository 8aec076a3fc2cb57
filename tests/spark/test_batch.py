"""Spark's Kafka source and sink in batch queries (``spark.read`` / ``df.write``).

Each test runs on mockbroker and on Apache Kafka (``target``), with topics of its own; what
landed is read back by Spark itself, and how it is stored (compression, batching) with a bare
Fetch.
"""

from __future__ import annotations

import json
import time

import pytest

import wire
from tests.real_kafka import ask
from tests.spark.conftest import In, produce, read_back
from wire.records import split_batches


def stored_batches(bootstrap: str, topic: str, partition: int) -> list:
    """The headers of the batches a partition holds, as a bare Fetch from offset 0 returns
    them (the test's broker leads every partition: both targets have one)."""
    fetch = wire.request_class(1)
    body = fetch(max_wait_ms=0, min_bytes=0, max_bytes=50 << 20, topics=[fetch.FetchTopic(
        topic=topic, partitions=[fetch.FetchPartition(
            partition=partition, fetch_offset=0, partition_max_bytes=50 << 20,
            current_leader_epoch=-1)])])
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    [part] = ask(int(port), 1, 12, body, host=host).responses[0].partitions
    assert part.error_code == 0, part
    return [header for header, _ in split_batches(part.records)]


def batch(spark, bootstrap: str, **options):
    reader = spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
    for name, value in options.items():
        reader = reader.option(name, value)
    df = reader.load().selectExpr("partition", "offset", "CAST(key AS STRING) AS key",
                                  "CAST(value AS STRING) AS value")
    return sorted(tuple(r) for r in df.collect())


def test_batch_read_between_starting_and_ending_offsets(spark, target):
    t = target.create_topics({"events": 3})
    bootstrap = target.bootstrap_servers
    produce(bootstrap, t["events"],
            [In(f"v{i}", key=f"k{i}", partition=i % 3) for i in range(15)])
    # partition 0: offsets 1 to 3; partition 1: from the earliest to offset 2;
    # partition 2: from offset 3 to the latest (-1)
    starting = {t["events"]: {"0": 1, "1": -2, "2": 3}}
    ending = {t["events"]: {"0": 4, "1": 2, "2": -1}}
    assert batch(spark, bootstrap, subscribe=t["events"], startingOffsets=json.dumps(starting),
                 endingOffsets=json.dumps(ending)) == [
        (0, 1, "k3", "v3"), (0, 2, "k6", "v6"), (0, 3, "k9", "v9"),
        (1, 0, "k1", "v1"), (1, 1, "k4", "v4"),
        (2, 3, "k11", "v11"), (2, 4, "k14", "v14"),
    ]
    # the defaults are the earliest and the latest offsets: everything
    assert len(batch(spark, bootstrap, subscribe=t["events"])) == 15


def test_batch_read_ends_at_a_timestamp(spark, target):
    t = target.create_topics({"events": 2})
    bootstrap = target.bootstrap_servers
    t0 = 1_704_067_200_000
    produce(bootstrap, t["events"], [In(f"p{i % 2}-{i // 2}", partition=i % 2,
                                        timestamp_ms=t0 + 1000 * i) for i in range(6)])
    # the end is exclusive: the first offset at or after the timestamp is not read
    ending = {t["events"]: {"0": t0 + 4000, "1": t0 + 1000}}
    assert batch(spark, bootstrap, subscribe=t["events"],
                 endingOffsetsByTimestamp=json.dumps(ending)) == [
        (0, 0, None, "p0-0"), (0, 1, None, "p0-1"),
    ]


def test_batch_write_lands_keys_values_headers_and_partitions(spark, target):
    t = target.create_topics({"out": 3})
    rows = [
        ("k0", "v0", 2, [("source", b"test"), ("n", b"0")]),
        ("k1", "v1", 0, []),
        (None, "no-key", 1, [("n", b"2")]),
        ("k3", "v3", 2, [("n", b"3")]),
    ]
    df = spark.createDataFrame(
        rows, "key STRING, value STRING, partition INT, "
              "headers ARRAY<STRUCT<key: STRING, value: BINARY>>")
    # one task writes the rows in order, so offsets follow the input within each partition
    (df.coalesce(1).write.format("kafka")
     .option("kafka.bootstrap.servers", target.bootstrap_servers)
     .option("topic", t["out"]).save())
    assert read_back(spark, target.bootstrap_servers, t["out"]) == [
        (0, 0, "k1", "v1", []),
        (1, 0, None, "no-key", [("n", b"2")]),
        (2, 0, "k0", "v0", [("source", b"test"), ("n", b"0")]),
        (2, 1, "k3", "v3", [("n", b"3")]),
    ]


def test_batch_write_routes_rows_by_their_topic_column(spark, target):
    t = target.create_topics({"left": 1, "right": 2})
    df = spark.createDataFrame([(t["left"], "a"), (t["right"], "b"), (t["left"], "c")],
                               "topic STRING, value STRING")
    (df.write.format("kafka").option("kafka.bootstrap.servers", target.bootstrap_servers)
     .save())
    bootstrap = target.bootstrap_servers
    assert sorted(r[3] for r in read_back(spark, bootstrap, t["left"])) == ["a", "c"]
    assert [r[3] for r in read_back(spark, bootstrap, t["right"])] == ["b"]


CODECS = {"gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def test_compressed_writes_are_stored_compressed_and_read_back(spark, target):
    t = target.create_topics({codec: 1 for codec in CODECS})
    bootstrap = target.bootstrap_servers
    for codec in CODECS:
        rows = [(f"{codec}-{i:03d}",) for i in range(200)]
        (spark.createDataFrame(rows, "value STRING").coalesce(1).write.format("kafka")
         .option("kafka.bootstrap.servers", bootstrap).option("kafka.compression.type", codec)
         .option("topic", t[codec]).save())
    for codec, attribute in CODECS.items():
        stored = [header.compression for header in stored_batches(bootstrap, t[codec], 0)]
        assert stored and set(stored) == {attribute}, (codec, stored)
        assert batch(spark, bootstrap, subscribe=t[codec]) == \
            [(0, i, None, f"{codec}-{i:03d}") for i in range(200)]


def test_min_partitions_splits_a_partition_between_readers(spark, target):
    events = target.create_topic("events", 2)
    bootstrap = target.bootstrap_servers
    for chunk in range(4):
        produce(bootstrap, events, [In(f"v{chunk * 50 + i}", partition=(chunk * 50 + i) % 2)
                                    for i in range(50)])
    batches = [header for p in (0, 1) for header in stored_batches(bootstrap, events, p)]
    # batches of several records, so readers of sub-ranges start inside a batch
    assert len(batches) < 100, batches
    df = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
          .option("subscribe", events).option("minPartitions", "7").load())
    assert df.rdd.getNumPartitions() >= 7
    got = sorted(tuple(r) for r in df.selectExpr("partition", "offset",
                                                  "CAST(value AS STRING)").collect())
    assert got == sorted((i % 2, i // 2, f"v{i}") for i in range(200))


def test_log_append_time_topics_give_the_brokers_timestamps(spark, target):
    stamped = target.create_topic("stamped", 1, **{"message.timestamp.type": "LogAppendTime"})
    bootstrap = target.bootstrap_servers
    before = int(time.time() * 1000)
    produce(bootstrap, stamped, [In("a", timestamp_ms=1000), In("b", timestamp_ms=2000)])
    after = int(time.time() * 1000)
    rows = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", stamped).load()
            .selectExpr("CAST(value AS STRING)", "timestamp", "timestampType").collect())
    assert [r[0] for r in rows] == ["a", "b"]
    # the producer's timestamps are replaced by the time the broker appended the records
    assert all(r[2] == 1 and before <= r[1].timestamp() * 1000 <= after for r in rows), rows


def test_a_record_over_the_topics_size_limit_fails_the_write_as_on_kafka(spark, target):
    small = target.create_topic("small", 1, **{"max.message.bytes": "1000"})
    df = spark.createDataFrame([("x" * 5000,)], "value STRING")
    with pytest.raises(Exception) as failure:
        (df.write.format("kafka")
         .option("kafka.bootstrap.servers", target.bootstrap_servers)
         .option("topic", small).save())
    # the broker answers MESSAGE_TOO_LARGE with no message of its own, so the Java client
    # raises the error's standard text, as it does against Kafka
    assert "RecordTooLargeException: The request included a message larger than the max " \
           "message size the server will accept." in str(failure.value), str(failure.value)[:2000]
    assert read_back(spark, target.bootstrap_servers, small) == []
