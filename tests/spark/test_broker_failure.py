"""A running query outlives a broker: its partitions move to live replicas and Spark's
consumers and producer follow them (new leader, new leader epoch), and back again when the
broker returns and the preferred-leader election (every second here) gives them back."""

from __future__ import annotations

import pytest

from tests.clients.helpers import wait_for
from tests.spark.conftest import QUERY_TIMEOUT_S, In, landed, produce, start_copy


@pytest.mark.kafka(brokers=3, topics={"in": 3, "out": 3},
                  leader_imbalance_check_interval_seconds=1)
def test_a_running_query_survives_a_stopped_broker(spark, kafka_cluster, checkpoint):
    bootstrap = kafka_cluster.bootstrap_servers
    admin = kafka_cluster.admin
    query = start_copy(spark, bootstrap, checkpoint)
    try:
        before = [In(f"before-{i}", key=f"k{i}", partition=i % 3) for i in range(30)]
        produce(bootstrap, "in", before)
        wait_for(lambda: len(landed(kafka_cluster, "out")) >= 30, "the first records",
                 QUERY_TIMEOUT_S)

        victim = admin.topic("in").partitions[0].leader
        kafka_cluster.stop_broker(victim)
        moved = admin.topic("in").partitions[0]
        assert moved.leader != victim and moved.leader_epoch > 0

        after = [In(f"after-{i}", key=f"k{i}", partition=i % 3) for i in range(30)]
        produce(bootstrap, "in", after)
        wait_for(lambda: len(landed(kafka_cluster, "out")) >= 60, "the records produced "
                 "after the broker stopped", QUERY_TIMEOUT_S)
        assert query.isActive and query.exception() is None

        # back again, the broker rejoins the ISR and the preferred-leader election gives it
        # back the partitions it is the preferred leader of
        kafka_cluster.start_broker(victim)
        wait_for(lambda: admin.topic("in").partitions[0].leader == victim,
                 "the preferred leader to lead again", QUERY_TIMEOUT_S)
        returned = admin.topic("in").partitions[0]
        assert returned.leader_epoch > moved.leader_epoch
        back = [In(f"back-{i}", key=f"k{i}", partition=i % 3) for i in range(30)]
        produce(bootstrap, "in", back)
        wait_for(lambda: len(landed(kafka_cluster, "out")) >= 90, "the records produced "
                 "after the broker returned", QUERY_TIMEOUT_S)
        assert query.isActive and query.exception() is None
    finally:
        query.stop()

    out = landed(kafka_cluster, "out")
    # every record once, in its own partition, in the order it was produced
    for p in range(3):
        assert [r[3] for r in out if r[0] == p] == \
            [r.value for r in before + after + back if r.partition == p]
    assert all(r[2] == "k" + r[3].split("-")[1] for r in out)
