"""Retention as stock clients see it: old records go by segment, the earliest offset moves up,
and a consumer whose committed offset was deleted resets to the new earliest."""

from __future__ import annotations

import confluent_kafka as ck
import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

from mockbroker import MockCluster
from tests.clients.helpers import RDKAFKA_LOG, wait_for

MIB = 1024 * 1024
VALUE = b"x" * 10_000


# a retention check every 100 ms would, on a Kafka shared by many tests, delete the records of
# every test that writes old timestamps
@pytest.mark.mockbroker_only("broker-settings")
@pytest.mark.parametrize("client", ["kafka-python", "confluent-kafka"])
def test_a_consumer_behind_the_deleted_segments_resets_to_the_new_earliest(stack, client):
    cluster = stack.enter_context(MockCluster(log_retention_check_interval_ms=100))
    cluster.admin.create_topic("t", 1, configs={"segment.bytes": str(MIB),
                                                  "retention.bytes": str(MIB)})
    bootstrap = cluster.bootstrap_servers
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=0, acks="all")
    stack.callback(producer.close)
    for i in range(250):
        producer.send("t", key=b"k%d" % i, value=VALUE, partition=0).get(timeout=10)
    tp = TopicPartition("t", 0)
    # a group that had read up to offset 5 before retention ran
    kp = KafkaConsumer(bootstrap_servers=bootstrap, group_id="g", enable_auto_commit=False)
    stack.callback(kp.close)
    kp.commit({tp: OffsetAndMetadata(5, "", -1)})
    # 2.5 MB under a 1 MiB limit: the first 1 MiB segment (offsets 0-103) goes
    assert wait_for(lambda: kp.beginning_offsets([tp])[tp] == 104, "the log start to move")
    assert kp.end_offsets([tp])[tp] == 250
    kp.close()

    if client == "kafka-python":
        consumer = KafkaConsumer("t", bootstrap_servers=bootstrap, group_id="g",
                                 auto_offset_reset="earliest", enable_auto_commit=False)
        stack.callback(consumer.close)
        consumer.partitions_for_topic("t")  # before it joins: see test_groups.KafkaPythonMember
        first = wait_for(lambda: next(iter(consumer.poll(200).values()), None), "records")[0]
        offset = first.offset
    else:
        consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "g",
                                "auto.offset.reset": "earliest", "enable.auto.commit": False,
                                "logger": RDKAFKA_LOG})
        stack.callback(consumer.close)
        consumer.subscribe(["t"])
        message = wait_for(lambda: (lambda m: m if m is not None and not m.error() else None)(
            consumer.poll(0.2)), "records")
        offset = message.offset()
    assert offset == 104
