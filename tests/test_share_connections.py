"""Share groups on a running broker: a share consumer whose connection drops has what it
acquired released at once (Kafka's share session cache ends the sessions of a closed
connection), and the admin API shows the share partition's records in flight."""

from __future__ import annotations

import uuid

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource

from mockbroker import MockCluster
from tests.clients.helpers import RDKAFKA_LOG, wait_for
from tests.share_client import RawShareConsumer

GROUP, TOPIC = "workers", "jobs"


def _joined(cluster: MockCluster) -> RawShareConsumer:
    topic_id = uuid.UUID(cluster.admin.topic(TOPIC).topic_id)
    consumer = RawShareConsumer(cluster.bootstrap_servers, GROUP, TOPIC, topic_id)
    assert consumer.heartbeat() == []  # its partitions get their share state first
    assert wait_for(lambda: consumer.heartbeat(), "the partition assigned") == [0]
    return consumer


def _prepared(cluster: MockCluster) -> None:
    """The group starts at the earliest offset; two records wait in the topic."""
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers, "logger": RDKAFKA_LOG})
    resource = ConfigResource("GROUP", GROUP, incremental_configs=[ConfigEntry(
        "share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([resource])[resource].result(timeout=30)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "logger": RDKAFKA_LOG})
    for value in (b"a", b"b"):
        producer.produce(TOPIC, value, partition=0)
    assert producer.flush(30) == 0


def test_a_dropped_connection_releases_the_records_its_consumer_held():
    with MockCluster(topics={TOPIC: 1}) as cluster:
        _prepared(cluster)
        first = _joined(cluster)
        assert first.fetch([0]) == {0: [(0, b"a"), (1, b"b")]}
        (held,) = cluster.admin.group(GROUP).share_partitions[0].in_flight
        assert (held.state, held.member_id) == ("Acquired", first.member_id)
        first.close()
        wait_for(lambda: [r.state for r in cluster.admin.group(GROUP).share_partitions[0]
                          .in_flight] == ["Available"], "the records released")
        second = _joined(cluster)
        assert second.fetch([0]) == {0: [(0, b"a"), (1, b"b")]}
        (run,) = cluster.admin.group(GROUP).share_partitions[0].in_flight
        assert (run.first_offset, run.last_offset, run.state, run.delivery_count) == \
            (0, 1, "Acquired", 2)
        second.close()
