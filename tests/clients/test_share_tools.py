"""``kafka-share-groups.sh`` (Kafka's ``ShareGroupCommand``) on both targets: listing a share
group, describing its offsets, members and state, resetting its offsets and deleting them and
the group, as it prints them on Kafka 4.4.  The group is a share consumer spoken over a socket
(:mod:`tests.share_client`), which acknowledges what the test says."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Producer, TopicCollection
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource

from tests.clients.helpers import RDKAFKA_LOG, kafka_tool, wait_for
from tests.share_client import RawShareConsumer

SHARE_GROUPS = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"


def _rows(out: str, header: str) -> list[list[str]]:
    """The rows of one of the tool's tables, header first."""
    lines = [line.split() for line in out.splitlines() if line.strip()]
    start = next(i for i, line in enumerate(lines) if line[:1] == [header])
    return lines[start:]


def _share_group(target, topic: str, group: str, values: list[bytes]) -> RawShareConsumer:
    admin = AdminClient({"bootstrap.servers": target.bootstrap_servers, "logger": RDKAFKA_LOG})
    resource = ConfigResource("GROUP", group, incremental_configs=[ConfigEntry(
        "share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([resource])[resource].result(timeout=30)
    producer = Producer({"bootstrap.servers": target.bootstrap_servers, "logger": RDKAFKA_LOG})
    for value in values:
        producer.produce(topic, value, partition=0)
    assert producer.flush(30) == 0
    described = admin.describe_topics(TopicCollection([topic]))[topic].result(timeout=30)
    topic_id = described.topic_id
    consumer = RawShareConsumer(target.bootstrap_servers, group, topic, uuid.UUID(int=(
        (topic_id.get_most_significant_bits() % (1 << 64)) << 64)
        | (topic_id.get_least_significant_bits() % (1 << 64))))
    wait_for(lambda: consumer.heartbeat() == [0], "the partition assigned")
    return consumer


@pytest.mark.parametrize("client", ["kafka-tools"])
def test_kafka_share_groups_lists_describes_resets_and_deletes(target, client):
    topic = target.create_topic("share-tools", 1)
    group = target.unique("share-tools")
    consumer = _share_group(target, topic, group, [b"a", b"b", b"c"])
    try:
        got = wait_for(lambda: consumer.fetch([0]), "records acquired")
        assert got == {0: [(0, b"a"), (1, b"b"), (2, b"c")]}
        consumer.fetch([0], acks={0: [(0, 1, [1])]})  # two accepted, one still held
        bootstrap = target.bootstrap_servers
        assert group in kafka_tool(SHARE_GROUPS, bootstrap, "--list").split()
        offsets = _rows(kafka_tool(SHARE_GROUPS, bootstrap, "--describe", "--group", group),
                        "GROUP")
        # the start offset the acknowledgement was written with; lag past what is done
        assert offsets == [["GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LAG"],
                           [group, topic, "0", "0", "1"]]
        members = _rows(kafka_tool(SHARE_GROUPS, bootstrap, "--describe", "--members",
                                   "--group", group), "GROUP")
        assert members[0] == ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS",
                              "ASSIGNMENT"]
        assert members[1] == [group, consumer.member_id, "/127.0.0.1", "raw-share", "1",
                              f"{topic}:0"]
        state = _rows(kafka_tool(SHARE_GROUPS, bootstrap, "--describe", "--state",
                                 "--group", group), "GROUP")
        assert state[0] == ["GROUP", "COORDINATOR", "(ID)", "STATE", "#MEMBERS"]
        assert (state[1][0], state[1][-2:]) == (group, ["Stable", "1"])
        consumer.leave()
        reset = _rows(kafka_tool(SHARE_GROUPS, bootstrap, "--reset-offsets", "--to-latest",
                                 "--execute", "--topic", topic, "--group", group), "GROUP")
        assert reset == [["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"], [group, topic, "0", "3"]]
        after = _rows(kafka_tool(SHARE_GROUPS, bootstrap, "--describe", "--group", group),
                      "GROUP")
        assert after[1] == [group, topic, "0", "3", "0"]
        deleted = _rows(kafka_tool(SHARE_GROUPS, bootstrap, "--delete-offsets", "--group",
                                   group, "--topic", topic), "TOPIC")
        assert deleted == [["TOPIC", "STATUS"], [topic, "Successful"]]
        gone = kafka_tool(SHARE_GROUPS, bootstrap, "--delete", "--group", group)
        assert f"Deletion of requested share groups ('{group}') was successful." in gone
        assert group not in kafka_tool(SHARE_GROUPS, bootstrap, "--list").split()
    finally:
        consumer.close()
