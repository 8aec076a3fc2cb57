"""Spark's Kafka source and sink in batch queries (``spark.read`` / ``df.write``)."""

from __future__ import annotations

import json

import pytest

from tests.spark.conftest import In, landed, produce


def batch(spark, bootstrap: str, **options):
    reader = spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
    for name, value in options.items():
        reader = reader.option(name, value)
    df = reader.load().selectExpr("partition", "offset", "CAST(key AS STRING) AS key",
                                  "CAST(value AS STRING) AS value")
    return sorted(tuple(r) for r in df.collect())


@pytest.mark.kafka(topics={"events": 3})
def test_batch_read_between_starting_and_ending_offsets(spark, kafka_cluster):
    bootstrap = kafka_cluster.bootstrap_servers
    produce(bootstrap, "events", [In(f"v{i}", key=f"k{i}", partition=i % 3) for i in range(15)])
    # partition 0: offsets 1 to 3; partition 1: from the earliest to offset 2;
    # partition 2: from offset 3 to the latest (-1)
    starting = {"events": {"0": 1, "1": -2, "2": 3}}
    ending = {"events": {"0": 4, "1": 2, "2": -1}}
    assert batch(spark, bootstrap, subscribe="events", startingOffsets=json.dumps(starting),
                 endingOffsets=json.dumps(ending)) == [
        (0, 1, "k3", "v3"), (0, 2, "k6", "v6"), (0, 3, "k9", "v9"),
        (1, 0, "k1", "v1"), (1, 1, "k4", "v4"),
        (2, 3, "k11", "v11"), (2, 4, "k14", "v14"),
    ]
    # the defaults are the earliest and the latest offsets: everything
    assert len(batch(spark, bootstrap, subscribe="events")) == 15


@pytest.mark.kafka(topics={"events": 2})
def test_batch_read_ends_at_a_timestamp(spark, kafka_cluster):
    bootstrap = kafka_cluster.bootstrap_servers
    t0 = 1_704_067_200_000
    produce(bootstrap, "events", [In(f"p{i % 2}-{i // 2}", partition=i % 2,
                                     timestamp_ms=t0 + 1000 * i) for i in range(6)])
    # the end is exclusive: the first offset at or after the timestamp is not read
    ending = {"events": {"0": t0 + 4000, "1": t0 + 1000}}
    assert batch(spark, bootstrap, subscribe="events",
                 endingOffsetsByTimestamp=json.dumps(ending)) == [
        (0, 0, None, "p0-0"), (0, 1, None, "p0-1"),
    ]


@pytest.mark.kafka(topics={"out": 3})
def test_batch_write_lands_keys_values_headers_and_partitions(spark, kafka_cluster):
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
     .option("kafka.bootstrap.servers", kafka_cluster.bootstrap_servers)
     .option("topic", "out").save())
    assert landed(kafka_cluster, "out") == [
        (0, 0, "k1", "v1", []),
        (1, 0, None, "no-key", [("n", b"2")]),
        (2, 0, "k0", "v0", [("source", b"test"), ("n", b"0")]),
        (2, 1, "k3", "v3", [("n", b"3")]),
    ]


@pytest.mark.kafka(topics={"left": 1, "right": 2})
def test_batch_write_routes_rows_by_their_topic_column(spark, kafka_cluster):
    df = spark.createDataFrame([("left", "a"), ("right", "b"), ("left", "c")],
                               "topic STRING, value STRING")
    (df.write.format("kafka").option("kafka.bootstrap.servers", kafka_cluster.bootstrap_servers)
     .save())
    assert sorted(r[3] for r in landed(kafka_cluster, "left")) == ["a", "c"]
    assert [r[3] for r in landed(kafka_cluster, "right")] == ["b"]
