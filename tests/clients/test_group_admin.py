"""Group administration with stock admin clients over real sockets: kafka-python's
``KafkaAdminClient`` and confluent-kafka's ``AdminClient`` describe, list and delete groups that
real consumers formed, and read, alter and delete what they committed.

What is checked is what a user of those clients sees: group ids, states, members, assignments,
committed offsets, and the error each refusal carries.
"""

from __future__ import annotations

import logging

import confluent_kafka as ck
import kafka.errors as kerr
import pytest
from confluent_kafka import ConsumerGroupState, ConsumerGroupTopicPartitions, ConsumerGroupType
from confluent_kafka import TopicPartition as CKTopicPartition
from confluent_kafka.admin import AclOperation
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

from mockbroker import MockCluster
from tests.clients import helpers
from tests.clients.helpers import RDKAFKA_LOG, TIMEOUT_S, ck_admin, ck_error, ck_result, \
    kp_admin

# not converted to run on Kafka as well yet; a test marked with its own reason needs mockbroker
pytestmark = pytest.mark.mockbroker_only("unconverted")

TOPICS = {"orders": 3, "audit": 2}
PER_PARTITION = 2  # records produced to each partition of "orders"
logging.getLogger("kafka").setLevel(logging.CRITICAL)


@pytest.fixture
def cluster(stack) -> MockCluster:
    cluster = stack.enter_context(MockCluster(brokers=3, topics=TOPICS))
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks=1,
                             request_timeout_ms=5000)
    try:
        for partition in range(TOPICS["orders"]):
            for i in range(PER_PARTITION):
                producer.send("orders", value=f"o{partition}-{i}".encode(), partition=partition)
        producer.flush(TIMEOUT_S)
    finally:
        producer.close(0)
    return cluster


def wait_for(what: str, check):
    """Poll ``check`` until it returns something truthy (and return that), with a deadline."""
    return helpers.wait_for(check, what)


def coordinator_of(cluster: MockCluster, group_id: str) -> int:
    return cluster.call(lambda: cluster.core.groups.placement.coordinator_for(group_id))


# -- consumers that form the groups ---------------------------------------------------------

def kp_group(stack, cluster: MockCluster, group_id: str, clients: list[str]) -> dict:
    """kafka-python consumers of "orders" in ``group_id``, polled until the group is stable with
    all of them, each has read its partitions to the end and committed: client id -> consumer."""
    consumers = {}
    for client in clients:
        consumer = KafkaConsumer("orders", bootstrap_servers=cluster.bootstrap_servers,
                                 group_id=group_id, client_id=client, enable_auto_commit=False,
                                 auto_offset_reset="earliest", heartbeat_interval_ms=200,
                                 session_timeout_ms=6000, request_timeout_ms=5000,
                                 fetch_max_wait_ms=100)
        stack.callback(consumer.close)
        # learn the topic's partitions before the first poll joins, or kafka-python 3.0.12 may
        # lose its own rejoin and never take its partitions (see test_groups.KafkaPythonMember)
        consumer.partitions_for_topic("orders")
        consumers[client] = consumer

    def settled():
        for consumer in consumers.values():
            consumer.poll(timeout_ms=50)
        owned = [tp for c in consumers.values() for tp in c.assignment()]
        return len(owned) == TOPICS["orders"] and all(c.assignment() for c in consumers.values()) \
            and all(c.position(tp) == PER_PARTITION for c in consumers.values()
                    for tp in c.assignment())

    wait_for("a stable group that read everything", settled)
    for consumer in consumers.values():
        consumer.commit()
    return consumers


def ck_group(stack, cluster: MockCluster, group_id: str, client: str) -> ck.Consumer:
    consumer = ck.Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": group_id,
                            "client.id": client, "enable.auto.commit": False,
                            "auto.offset.reset": "earliest", "fetch.wait.max.ms": 100,
                            "logger": RDKAFKA_LOG})
    stack.callback(consumer.close)
    consumer.subscribe(["orders"])
    got = []

    def read_all():
        message = consumer.poll(0.1)
        if message is not None and message.error() is None:
            got.append(message)
        return len(got) == PER_PARTITION * TOPICS["orders"]

    wait_for("the consumer to read every record", read_all)
    consumer.commit(asynchronous=False)
    return consumer


# -- kafka-python ---------------------------------------------------------------------------

def test_kafka_python_describes_lists_and_deletes_a_consumer_group(stack, cluster):
    admin = kp_admin(stack, cluster)
    # an offset for a topic the consumers will not read, set while the group is still empty
    assert admin.alter_group_offsets("kp-group", {TopicPartition("audit", 0): OffsetAndMetadata(
        1, "", -1)}) == {TopicPartition("audit", 0): kerr.NoError}
    consumers = kp_group(stack, cluster, "kp-group", ["kp-a", "kp-b"])

    group = admin.describe_groups(["kp-group"])["kp-group"]
    assert (group["error"], group["group_state"], group["protocol_type"],
            group["protocol_data"]) == (None, "Stable", "consumer", "range")
    members = {m["client_id"]: m for m in group["members"]}
    assert set(members) == {"kp-a", "kp-b"}
    assigned = {}
    for client, member in members.items():
        assert member["client_host"] == "/127.0.0.1"
        assert member["member_metadata"]["topics"] == ["orders"]
        (entry,) = member["member_assignment"]["assigned_partitions"]
        assert entry["topic"] == "orders"
        assigned[client] = set(entry["partitions"])
        assert assigned[client] == {tp.partition for tp in consumers[client].assignment()}
    assert sorted(p for ps in assigned.values() for p in ps) == [0, 1, 2]

    listed = admin.list_groups()
    assert [g for g in listed if g["group_id"] == "kp-group"] == [
        {"group_id": "kp-group", "protocol_type": "consumer", "group_state": "Stable",
         "group_type": "classic"}]
    assert [g["group_id"] for g in admin.list_groups(states_filter=["stable"])] == ["kp-group"]
    assert admin.list_groups(states_filter=["Empty"]) == []

    offsets = admin.list_group_offsets("kp-group")["kp-group"]
    assert {tp: o.offset for tp, o in offsets.items()} == {
        TopicPartition("orders", 0): 2, TopicPartition("orders", 1): 2,
        TopicPartition("orders", 2): 2, TopicPartition("audit", 0): 1}

    # members are in it: the group stays, and so do the offsets of the topic it reads
    assert admin.delete_groups(["kp-group"]) == {"kp-group": "NonEmptyGroupError"}
    assert admin.delete_group_offsets("kp-group", [
        TopicPartition("audit", 0), TopicPartition("orders", 1), TopicPartition("nope", 0)]) == {
        TopicPartition("audit", 0): kerr.NoError,
        TopicPartition("orders", 1): kerr.GroupSubscribedToTopicError,
        TopicPartition("nope", 0): kerr.UnknownTopicOrPartitionError}
    assert set(admin.list_group_offsets("kp-group")["kp-group"]) == {
        TopicPartition("orders", p) for p in range(3)}

    for consumer in consumers.values():
        consumer.close()  # each leaves the group
    wait_for("the group to be empty", lambda: admin.describe_groups(["kp-group"])[
        "kp-group"]["group_state"] == "Empty")
    assert admin.delete_groups(["kp-group", "never-was"]) == {
        "kp-group": "OK", "never-was": "GroupIdNotFoundError"}

    gone = admin.describe_groups(["kp-group"])["kp-group"]
    assert (gone["group_state"], gone["members"]) == ("Dead", [])
    assert "GroupIdNotFoundError" in gone["error"]
    assert admin.list_group_offsets("kp-group")["kp-group"] == {}
    assert [g for g in admin.list_groups() if g["group_id"] == "kp-group"] == []
    with pytest.raises(kerr.GroupIdNotFoundError):
        admin.delete_group_offsets("kp-group", [TopicPartition("orders", 0)])


def test_kafka_python_lists_each_group_once_from_the_broker_that_coordinates_it(stack, cluster):
    admin = kp_admin(stack, cluster)
    names = [f"simple-{i}" for i in range(8)]
    for name in names:
        assert admin.alter_group_offsets(name, {TopicPartition("orders", 0): OffsetAndMetadata(
            1, "", -1)}) == {TopicPartition("orders", 0): kerr.NoError}
    assert sorted(g["group_id"] for g in admin.list_groups()) == names
    assert len({coordinator_of(cluster, name) for name in names}) > 1
    for broker in range(3):
        assert sorted(g["group_id"] for g in admin.list_groups(broker_ids=[broker])) == sorted(
            name for name in names if coordinator_of(cluster, name) == broker)
    assert all((g["protocol_type"], g["group_state"]) == ("", "Empty")
               for g in admin.list_groups())


def test_kafka_python_deletes_offsets_of_an_empty_group(stack, cluster):
    admin = kp_admin(stack, cluster)
    consumers = kp_group(stack, cluster, "kp-empty", ["kp-a"])
    consumers["kp-a"].close()
    wait_for("the group to be empty", lambda: admin.describe_groups(["kp-empty"])[
        "kp-empty"]["group_state"] == "Empty")
    # nobody consumes now, so even the offsets of "orders" may go
    assert admin.delete_group_offsets("kp-empty", [TopicPartition("orders", 0),
                                                   TopicPartition("orders", 1)]) == {
        TopicPartition("orders", 0): kerr.NoError, TopicPartition("orders", 1): kerr.NoError}
    offsets = admin.list_group_offsets("kp-empty")["kp-empty"]
    assert {tp: o.offset for tp, o in offsets.items()} == {TopicPartition("orders", 2): 2}


# -- confluent-kafka ------------------------------------------------------------------------

def test_confluent_lists_describes_alters_and_deletes_a_consumer_group(stack, cluster):
    admin = ck_admin(cluster)
    consumer = ck_group(stack, cluster, "ck-group", "ck-a")
    assert ck_result(admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(
        "simple", [CKTopicPartition("audit", 1, 4)])])["simple"]).group_id == "simple"

    stable = ck_result(admin.list_consumer_groups(states={ConsumerGroupState.STABLE},
                                                  request_timeout=TIMEOUT_S))
    assert stable.errors == []
    assert [(g.group_id, g.state, g.type, g.is_simple_consumer_group) for g in stable.valid] == [
        ("ck-group", ConsumerGroupState.STABLE, ConsumerGroupType.CLASSIC, False)]
    empty = ck_result(admin.list_consumer_groups(states={ConsumerGroupState.EMPTY},
                                                 request_timeout=TIMEOUT_S))
    assert [(g.group_id, g.is_simple_consumer_group) for g in empty.valid] == [("simple", True)]
    every = ck_result(admin.list_consumer_groups(request_timeout=TIMEOUT_S))
    assert sorted(g.group_id for g in every.valid) == ["ck-group", "simple"]

    described = ck_result(admin.describe_consumer_groups(
        ["ck-group"], include_authorized_operations=True, request_timeout=TIMEOUT_S)["ck-group"])
    assert (described.group_id, described.state, described.partition_assignor,
            described.is_simple_consumer_group) == \
        ("ck-group", ConsumerGroupState.STABLE, "range", False)
    assert described.coordinator.id == coordinator_of(cluster, "ck-group")
    assert {AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE} <= \
        set(described.authorized_operations)
    (member,) = described.members
    assert (member.client_id, member.host, member.group_instance_id) == \
        ("ck-a", "/127.0.0.1", None)
    assert sorted((tp.topic, tp.partition) for tp in member.assignment.topic_partitions) == \
        [("orders", 0), ("orders", 1), ("orders", 2)]

    def committed(group_id):
        result = ck_result(admin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group_id)])[group_id])
        return {(tp.topic, tp.partition): tp.offset for tp in result.topic_partitions}

    assert committed("ck-group") == {("orders", p): PER_PARTITION for p in range(3)}

    # while the consumer is in the group, an outsider may neither rewrite nor delete it
    altered = ck_result(admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(
        "ck-group", [CKTopicPartition("orders", 0, 0)])])["ck-group"])
    assert [tp.error.code() for tp in altered.topic_partitions] == \
        [ck.KafkaError.UNKNOWN_MEMBER_ID]
    error = ck_error(admin.delete_consumer_groups(["ck-group"],
                                                  request_timeout=TIMEOUT_S)["ck-group"])
    assert error.code() == ck.KafkaError.NON_EMPTY_GROUP

    consumer.close()
    wait_for("the group to be empty", lambda: ck_result(admin.describe_consumer_groups(
        ["ck-group"], request_timeout=TIMEOUT_S)["ck-group"]).state == ConsumerGroupState.EMPTY)
    altered = ck_result(admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(
        "ck-group", [CKTopicPartition("orders", 0, 0)])])["ck-group"])
    assert [tp.error for tp in altered.topic_partitions] == [None]
    assert committed("ck-group") == {("orders", 0): 0, ("orders", 1): 2, ("orders", 2): 2}

    results = admin.delete_consumer_groups(["ck-group", "simple", "ghost"],
                                           request_timeout=TIMEOUT_S)
    assert ck_result(results["ck-group"]) is None and ck_result(results["simple"]) is None
    assert ck_error(results["ghost"]).code() == ck.KafkaError.GROUP_ID_NOT_FOUND

    gone = ck_result(admin.describe_consumer_groups(["ck-group"],
                                                    request_timeout=TIMEOUT_S)["ck-group"])
    assert (gone.state, gone.members) == (ConsumerGroupState.DEAD, [])
    assert committed("ck-group") == {} and committed("simple") == {}
    assert ck_result(admin.list_consumer_groups(request_timeout=TIMEOUT_S)).valid == []


def test_confluent_describes_a_group_while_it_rebalances(stack, cluster):
    admin = ck_admin(cluster)
    ck_group(stack, cluster, "ck-moving", "ck-a")
    # a member that joins and never comes back keeps the group rebalancing (until the
    # rebalance timeout), which DescribeGroups shows without a protocol
    joiner = KafkaConsumer("orders", bootstrap_servers=cluster.bootstrap_servers,
                           group_id="ck-moving", client_id="kp-late", enable_auto_commit=False,
                           request_timeout_ms=5000)
    stack.callback(joiner.close)

    def rebalancing():
        joiner.poll(timeout_ms=50)
        described = ck_result(admin.describe_consumer_groups(
            ["ck-moving"], request_timeout=TIMEOUT_S)["ck-moving"])
        return described if described.state in (ConsumerGroupState.PREPARING_REBALANCING,
                                                ConsumerGroupState.COMPLETING_REBALANCING) \
            else None

    described = wait_for("a rebalance", rebalancing)
    assert described.partition_assignor == ""
    assert "kp-late" in {m.client_id for m in described.members}
