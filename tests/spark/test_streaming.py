"""Streaming queries end to end: Kafka in, Kafka out, a checkpoint between runs, and what
happens when the records a checkpoint points at are deleted.  Each test runs on mockbroker and
on Apache Kafka (``target``), with topics of its own."""

from __future__ import annotations

import pytest
from kafka import TopicPartition
from kafka.admin import KafkaAdminClient

from tests.spark.conftest import In, QUERY_TIMEOUT_S, produce, read_back, run_to_end


def copy_query(spark, bootstrap: str, checkpoint: str, t: dict[str, str], **source_options):
    """A query copying topic ``t["in"]`` to topic ``t["out"]`` record for record: key, value,
    headers and partition."""
    reader = (spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", t["in"]).option("startingOffsets", "earliest")
              .option("includeHeaders", "true"))
    for name, value in source_options.items():
        reader = reader.option(name, value)
    return (reader.load().selectExpr("key", "value", "headers", "partition")
            .writeStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
            .option("topic", t["out"]).option("checkpointLocation", checkpoint))


def delete_records_before(bootstrap: str, topic: str, partition: int, offset: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    try:
        result = admin.delete_records({TopicPartition(topic, partition): offset})
        assert result[TopicPartition(topic, partition)]["low_watermark"] == offset
    finally:
        admin.close()


def test_streaming_write_lands_keys_values_headers_and_partitions(spark, target,
                                                                  checkpoint):
    t = target.create_topics({"in": 3, "out": 3})
    bootstrap = target.bootstrap_servers
    records = [In(f"v{i}", key=f"k{i}", partition=i % 3,
                  headers=[("seq", str(i).encode())] if i % 2 else []) for i in range(12)]
    produce(bootstrap, t["in"], records)
    run_to_end(copy_query(spark, bootstrap, checkpoint, t))
    # each input partition is one task writing in offset order to the same partition
    assert read_back(spark, bootstrap, t["out"]) == [
        (i % 3, i // 3, f"k{i}", f"v{i}", [("seq", str(i).encode())] if i % 2 else [])
        for i in sorted(range(12), key=lambda i: (i % 3, i))
    ]


def test_restart_from_a_checkpoint_processes_exactly_the_new_records(spark, target,
                                                                    checkpoint):
    t = target.create_topics({"in": 2, "out": 2})
    bootstrap = target.bootstrap_servers
    produce(bootstrap, t["in"], [In(f"first-{i}", partition=i % 2) for i in range(6)])
    run_to_end(copy_query(spark, bootstrap, checkpoint, t))
    assert sorted(r[3] for r in read_back(spark, bootstrap, t["out"])) == \
        sorted(f"first-{i}" for i in range(6))

    produce(bootstrap, t["in"], [In(f"second-{i}", partition=i % 2) for i in range(4)])
    query = run_to_end(copy_query(spark, bootstrap, checkpoint, t))
    out = read_back(spark, bootstrap, t["out"])
    assert sorted(r[3] for r in out) == sorted([f"first-{i}" for i in range(6)] +
                                               [f"second-{i}" for i in range(4)])
    # the second run read only the four new records, each partition from where it stopped
    assert sum(p["numInputRows"] for p in query.recentProgress) == 4
    assert [(r[0], r[1], r[3]) for r in out if r[3].startswith("second")] == [
        (0, 3, "second-0"), (0, 4, "second-2"), (1, 3, "second-1"), (1, 4, "second-3")]

    # nothing new: a third run writes nothing
    run_to_end(copy_query(spark, bootstrap, checkpoint, t))
    assert read_back(spark, bootstrap, t["out"]) == out


def lose_checkpointed_records(spark, target, checkpoint) -> tuple[dict[str, str], str]:
    """Copy five records, write five more, and delete the input below offset 8: the checkpoint
    resumes at offset 5, where the log no longer starts.  Returns the topics and bootstrap."""
    t = target.create_topics({"in": 1, "out": 1})
    bootstrap = target.bootstrap_servers
    produce(bootstrap, t["in"], [In(f"v{i}") for i in range(5)])
    run_to_end(copy_query(spark, bootstrap, checkpoint, t))
    produce(bootstrap, t["in"], [In(f"v{i}") for i in range(5, 10)])
    delete_records_before(bootstrap, t["in"], 0, 8)
    return t, bootstrap


def test_fail_on_data_loss_fails_the_query_when_checkpointed_offsets_are_deleted(
        spark, target, checkpoint):
    from pyspark.errors import StreamingQueryException

    t, bootstrap = lose_checkpointed_records(spark, target, checkpoint)
    query = copy_query(spark, bootstrap, checkpoint, t, failOnDataLoss="true") \
        .trigger(availableNow=True).start()
    with pytest.raises(StreamingQueryException) as failure:
        query.awaitTermination(QUERY_TIMEOUT_S)
    assert not query.isActive
    message = str(failure.value)
    # the executor's consumer asked for offset 5 and the broker said it is out of range
    assert "Some data may have been lost" in message, message
    assert f"offset [5, 10) for topic partition {t['in']}-0" in message, message
    assert [r[3] for r in read_back(spark, bootstrap, t["out"])] == [f"v{i}" for i in range(5)]


def test_without_fail_on_data_loss_the_query_skips_to_the_log_start(spark, target,
                                                                   checkpoint):
    t, bootstrap = lose_checkpointed_records(spark, target, checkpoint)
    run_to_end(copy_query(spark, bootstrap, checkpoint, t, failOnDataLoss="false"))
    assert [r[3] for r in read_back(spark, bootstrap, t["out"])] == \
        [f"v{i}" for i in range(5)] + ["v8", "v9"]
