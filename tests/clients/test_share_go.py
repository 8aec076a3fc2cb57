"""franz-go's share consumer (``kgo.ShareGroup``, KIP-932) on both targets: it reads every
record once with its delivery count, accepts them, and the group is left with nothing to
deliver, as ``kafka-share-groups.sh`` then shows."""

from __future__ import annotations

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource

from tests.clients.helpers import RDKAFKA_LOG, go_client, kafka_tool
from tests.clients.test_share_tools import SHARE_GROUPS, _rows


@pytest.mark.parametrize("client", ["franz-go"])
def test_a_franz_go_share_consumer_reads_and_accepts_every_record(target, client):
    topic = target.create_topic("share-go", 2)
    group = target.unique("share-go")
    admin = AdminClient({"bootstrap.servers": target.bootstrap_servers, "logger": RDKAFKA_LOG})
    resource = ConfigResource("GROUP", group, incremental_configs=[ConfigEntry(
        "share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([resource])[resource].result(timeout=30)
    producer = Producer({"bootstrap.servers": target.bootstrap_servers, "logger": RDKAFKA_LOG})
    values = [f"job-{i}" for i in range(6)]
    for i, value in enumerate(values):
        producer.produce(topic, value.encode(), partition=i % 2)
    assert producer.flush(30) == 0
    lines = go_client("share", target.bootstrap_servers, topic, group, str(len(values)))
    got = sorted(line.split() for line in lines.splitlines())
    assert got == sorted([str(i % 2), "1", value] for i, value in enumerate(values))
    offsets = _rows(kafka_tool(SHARE_GROUPS, target.bootstrap_servers, "--describe",
                               "--group", group), "GROUP")
    # every record done: no lag (the start offset is the one the acknowledgements were written
    # with, as Kafka writes it)
    assert sorted((row[2], row[4]) for row in offsets[1:]) == [("0", "0"), ("1", "0")]
