"""Faults injected over HTTP while a streaming query runs: the Java client inside Spark retries
retriable Fetch and Produce errors and follows a broker stopped through the admin API, and the
query delivers every record exactly once."""

from __future__ import annotations

import pytest

from tests.clients.helpers import wait_for
from tests.spark.conftest import QUERY_TIMEOUT_S, In, landed, produce, start_copy


def _values_by_partition(cluster, topic: str, partitions: int) -> list[list[str]]:
    out = landed(cluster, topic)
    return [[r[3] for r in out if r[0] == p] for p in range(partitions)]


@pytest.mark.kafka(topics={"in": 2, "out": 2})
def test_retriable_fetch_and_produce_errors_are_survived(spark, kafka_cluster, kafka_admin,
                                                         checkpoint):
    bootstrap = kafka_cluster.bootstrap_servers
    query = start_copy(spark, bootstrap, checkpoint)
    try:
        first = [In(f"a-{i}", key=f"k{i}", partition=i % 2) for i in range(10)]
        produce(bootstrap, "in", first)
        wait_for(lambda: len(landed(kafka_cluster, "out")) == 10, "the first records",
                 QUERY_TIMEOUT_S)
        fetch = kafka_admin.add_fault("Fetch", error="NOT_LEADER_OR_FOLLOWER", topic="in",
                                      partition=0, count=3)
        sink = kafka_admin.add_fault("Produce", error="NOT_ENOUGH_REPLICAS", topic="out",
                                     count=3)
        second = [In(f"b-{i}", key=f"k{i}", partition=i % 2) for i in range(10)]
        produce(bootstrap, "in", second)
        wait_for(lambda: len(landed(kafka_cluster, "out")) >= 20, "the records after the "
                 "faults", QUERY_TIMEOUT_S)
        assert query.isActive and query.exception() is None
    finally:
        query.stop()
    fired = {f.id for f in kafka_admin.faults()}
    assert fetch.id not in fired and sink.id not in fired  # each fired all three times
    fetch_errors = [r for r in kafka_admin.requests("Fetch") if r.fault == fetch.id]
    produce_errors = [r for r in kafka_admin.requests("Produce") if r.fault == sink.id]
    assert [r.error for r in fetch_errors] == ["NOT_LEADER_OR_FOLLOWER"] * 3
    assert [r.error for r in produce_errors] == ["NOT_ENOUGH_REPLICAS"] * 3
    assert all(r.client_id and "producer" in r.client_id for r in produce_errors)
    # every record exactly once, in order within its partition
    assert _values_by_partition(kafka_cluster, "out", 2) == \
        [[r.value for r in first + second if r.partition == p] for p in range(2)]


@pytest.mark.kafka(brokers=3, topics={"in": 3, "out": 3})
def test_a_broker_stopped_over_http_is_survived(spark, kafka_cluster, kafka_admin, checkpoint):
    bootstrap = kafka_cluster.bootstrap_servers
    query = start_copy(spark, bootstrap, checkpoint)
    try:
        before = [In(f"before-{i}", partition=i % 3) for i in range(15)]
        produce(bootstrap, "in", before)
        wait_for(lambda: len(landed(kafka_cluster, "out")) == 15, "the first records",
                 QUERY_TIMEOUT_S)
        victim = kafka_admin.topic("out").partitions[1].leader
        assert kafka_admin.stop_broker(victim).state == "down"
        after = [In(f"after-{i}", partition=i % 3) for i in range(15)]
        produce(bootstrap, "in", after)
        wait_for(lambda: len(landed(kafka_cluster, "out")) >= 30, "the records after the "
                 "stop", QUERY_TIMEOUT_S)
        kafka_admin.start_broker(victim)
        assert query.isActive and query.exception() is None
    finally:
        query.stop()
    assert _values_by_partition(kafka_cluster, "out", 3) == \
        [[r.value for r in before + after if r.partition == p] for p in range(3)]
