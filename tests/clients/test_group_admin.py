"""Group administration with stock admin clients over real sockets: kafka-python's
``KafkaAdminClient`` and confluent-kafka's ``AdminClient`` describe, list and delete groups that
real consumers formed, and read, alter and delete what they committed.

What is checked is what a user of those clients sees: group ids, states, members, assignments,
committed offsets, and the error each refusal carries.  Each test runs on mockbroker and on
Apache Kafka (``target``) with topics and groups of its own, and looks only at its own groups in
a listing; the one that needs three brokers runs on three of either (``brokers_target``).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

import confluent_kafka as ck
import kafka.errors as kerr
import pytest
from confluent_kafka import ConsumerGroupState, ConsumerGroupTopicPartitions, ConsumerGroupType
from confluent_kafka import TopicPartition as CKTopicPartition
from confluent_kafka.admin import AclOperation
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

from tests.clients.targets import Target
from tests.clients import helpers
from tests.clients.helpers import RDKAFKA_LOG, TIMEOUT_S, ck_admin, ck_error, ck_result, \
    kp_admin


TOPICS = {"orders": 3, "audit": 2}
PER_PARTITION = 2  # records produced to each partition of "orders"
logging.getLogger("kafka").setLevel(logging.CRITICAL)


@dataclass
class Env:
    """A test's own topics, "orders" (with records) and "audit", and group ids of its own
    (:meth:`group`), on either target."""
    bootstrap_servers: str
    orders: str
    audit: str
    target: Target

    def group(self, base: str) -> str:
        return self.groups.setdefault(base, self.target.unique(base))

    def __post_init__(self):
        self.groups: dict[str, str] = {}


@pytest.fixture
def cluster(target) -> Env:
    env = Env(target.bootstrap_servers, target.create_topic("orders", TOPICS["orders"]),
              target.create_topic("audit", TOPICS["audit"]), target)
    producer = KafkaProducer(bootstrap_servers=env.bootstrap_servers, acks=1,
                             request_timeout_ms=5000)
    try:
        for partition in range(TOPICS["orders"]):
            for i in range(PER_PARTITION):
                producer.send(env.orders, value=f"o{partition}-{i}".encode(),
                              partition=partition)
        producer.flush(TIMEOUT_S)
    finally:
        producer.close(0)
    return env


def wait_for(what: str, check):
    """Poll ``check`` until it returns something truthy (and return that), with a deadline."""
    return helpers.wait_for(check, what)


# -- consumers that form the groups ---------------------------------------------------------

def kp_group(stack, cluster: Env, group_id: str, clients: list[str]) -> dict:
    """kafka-python consumers of the orders topic in ``group_id``, polled until the group is
    stable with all of them, each has read its partitions to the end and committed: client id ->
    consumer."""
    consumers = {}
    for client in clients:
        consumer = KafkaConsumer(cluster.orders, bootstrap_servers=cluster.bootstrap_servers,
                                 group_id=group_id, client_id=client, enable_auto_commit=False,
                                 auto_offset_reset="earliest", heartbeat_interval_ms=200,
                                 session_timeout_ms=6000, request_timeout_ms=5000,
                                 fetch_max_wait_ms=100)
        stack.callback(consumer.close)
        # learn the topic's partitions before the first poll joins, or kafka-python 3.0.12 may
        # lose its own rejoin and never take its partitions (see test_groups.KafkaPythonMember)
        consumer.partitions_for_topic(cluster.orders)
        consumers[client] = consumer

    # Each consumer polls on a thread of its own: kafka-python completes a rebalance only inside
    # poll(), and consumers polled in turn from one thread can keep rejoining one another for
    # good (see test_groups.Member).  Each thread says what its consumer holds and whether it has
    # read it all; the consumers are used from this thread again only once theirs have ended.
    seen: dict[str, tuple[frozenset, bool]] = {}
    stop = threading.Event()

    def run(client: str, consumer: KafkaConsumer) -> None:
        while not stop.is_set():
            consumer.poll(timeout_ms=50)
            held = frozenset(consumer.assignment())
            seen[client] = (held, bool(held) and all(consumer.position(tp) == PER_PARTITION
                                                     for tp in held))

    threads = [threading.Thread(target=run, args=item, daemon=True)
               for item in consumers.items()]
    for thread in threads:
        thread.start()

    def settled():
        views = [seen.get(client) for client in consumers]
        return all(v is not None and v[1] for v in views) and \
            sum(len(v[0]) for v in views) == TOPICS["orders"]

    try:
        wait_for("a stable group that read everything", settled)
    finally:
        stop.set()
        for thread in threads:
            thread.join(TIMEOUT_S)
    for consumer in consumers.values():
        consumer.commit()
    return consumers


def ck_group(stack, cluster: Env, group_id: str, client: str) -> ck.Consumer:
    consumer = ck.Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": group_id,
                            "client.id": client, "enable.auto.commit": False,
                            "auto.offset.reset": "earliest", "fetch.wait.max.ms": 100,
                            "logger": RDKAFKA_LOG})
    stack.callback(consumer.close)
    consumer.subscribe([cluster.orders])
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
    kp_group_id = cluster.group("kp-group")
    never_was = cluster.group("never-was")
    admin = kp_admin(stack, cluster)
    # an offset for a topic the consumers will not read, set while the group is still empty
    audit0 = TopicPartition(cluster.audit, 0)
    assert admin.alter_group_offsets(kp_group_id, {audit0: OffsetAndMetadata(1, "", -1)}) == \
        {audit0: kerr.NoError}
    consumers = kp_group(stack, cluster, kp_group_id, ["kp-a", "kp-b"])

    group = admin.describe_groups([kp_group_id])[kp_group_id]
    assert (group["error"], group["group_state"], group["protocol_type"],
            group["protocol_data"]) == (None, "Stable", "consumer", "range")
    members = {m["client_id"]: m for m in group["members"]}
    assert set(members) == {"kp-a", "kp-b"}
    assigned = {}
    for client, member in members.items():
        assert member["client_host"] == "/127.0.0.1"
        assert member["member_metadata"]["topics"] == [cluster.orders]
        (entry,) = member["member_assignment"]["assigned_partitions"]
        assert entry["topic"] == cluster.orders
        assigned[client] = set(entry["partitions"])
        assert assigned[client] == {tp.partition for tp in consumers[client].assignment()}
    assert sorted(p for ps in assigned.values() for p in ps) == [0, 1, 2]

    listed = admin.list_groups()
    assert [g for g in listed if g["group_id"] == kp_group_id] == [
        {"group_id": kp_group_id, "protocol_type": "consumer", "group_state": "Stable",
         "group_type": "classic"}]
    ours = {kp_group_id}  # one Kafka serves many tests: only this test's groups are looked at
    assert [g["group_id"] for g in admin.list_groups(states_filter=["stable"])
            if g["group_id"] in ours] == [kp_group_id]
    assert [g for g in admin.list_groups(states_filter=["Empty"]) if g["group_id"] in ours] == []

    offsets = admin.list_group_offsets(kp_group_id)[kp_group_id]
    assert {tp: o.offset for tp, o in offsets.items()} == {
        TopicPartition(cluster.orders, 0): 2, TopicPartition(cluster.orders, 1): 2,
        TopicPartition(cluster.orders, 2): 2, TopicPartition(cluster.audit, 0): 1}

    # members are in it: the group stays, and so do the offsets of the topic it reads
    assert admin.delete_groups([kp_group_id]) == {kp_group_id: "NonEmptyGroupError"}
    assert admin.delete_group_offsets(kp_group_id, [
        TopicPartition(cluster.audit, 0), TopicPartition(cluster.orders, 1),
        TopicPartition("nope", 0)]) == {
        TopicPartition(cluster.audit, 0): kerr.NoError,
        TopicPartition(cluster.orders, 1): kerr.GroupSubscribedToTopicError,
        TopicPartition("nope", 0): kerr.UnknownTopicOrPartitionError}
    assert set(admin.list_group_offsets(kp_group_id)[kp_group_id]) == {
        TopicPartition(cluster.orders, p) for p in range(3)}

    for consumer in consumers.values():
        consumer.close()  # each leaves the group
    wait_for("the group to be empty", lambda: admin.describe_groups([kp_group_id])[
        kp_group_id]["group_state"] == "Empty")
    assert admin.delete_groups([kp_group_id, never_was]) == {
        kp_group_id: "OK", never_was: "GroupIdNotFoundError"}

    gone = admin.describe_groups([kp_group_id])[kp_group_id]
    assert (gone["group_state"], gone["members"]) == ("Dead", [])
    assert "GroupIdNotFoundError" in gone["error"]
    assert admin.list_group_offsets(kp_group_id)[kp_group_id] == {}
    assert [g for g in admin.list_groups() if g["group_id"] == kp_group_id] == []
    with pytest.raises(kerr.GroupIdNotFoundError):
        admin.delete_group_offsets(kp_group_id, [TopicPartition(cluster.orders, 0)])


def test_kafka_python_lists_each_group_once_from_the_broker_that_coordinates_it(
        stack, brokers_target):
    orders = brokers_target.create_topic("orders", TOPICS["orders"])
    admin = kp_admin(stack, brokers_target)
    # groups enough that each broker coordinates some (FindCoordinator says which)
    tag = brokers_target.unique("simple")
    names, coordinators = [], {}
    while len(set(coordinators.values())) < 3:
        names.append(f"{tag}-{len(names)}")
        coordinators[names[-1]] = brokers_target.coordinator_id(names[-1])
    for name in names:
        assert admin.alter_group_offsets(name, {TopicPartition(orders, 0): OffsetAndMetadata(
            1, "", -1)}) == {TopicPartition(orders, 0): kerr.NoError}

    def ours(listed) -> list:
        """This test's groups of a listing (the Kafka of three brokers serves many tests)."""
        return [g for g in listed if g["group_id"] in coordinators]
    assert sorted(g["group_id"] for g in ours(admin.list_groups())) == sorted(names)
    for broker in range(3):
        assert sorted(g["group_id"] for g in ours(admin.list_groups(broker_ids=[broker]))) == \
            sorted(name for name in names if coordinators[name] == broker)
    assert all((g["protocol_type"], g["group_state"]) == ("", "Empty")
               for g in ours(admin.list_groups()))


def test_kafka_python_deletes_offsets_of_an_empty_group(stack, cluster):
    kp_empty = cluster.group("kp-empty")
    admin = kp_admin(stack, cluster)
    consumers = kp_group(stack, cluster, kp_empty, ["kp-a"])
    consumers["kp-a"].close()
    wait_for("the group to be empty", lambda: admin.describe_groups([kp_empty])[
        kp_empty]["group_state"] == "Empty")
    # nobody consumes now, so even the offsets of the orders topic may go
    orders0, orders1 = TopicPartition(cluster.orders, 0), TopicPartition(cluster.orders, 1)
    assert admin.delete_group_offsets(kp_empty, [orders0, orders1]) == {
        orders0: kerr.NoError, orders1: kerr.NoError}
    offsets = admin.list_group_offsets(kp_empty)[kp_empty]
    assert {tp: o.offset for tp, o in offsets.items()} == {TopicPartition(cluster.orders, 2): 2}


# -- confluent-kafka ------------------------------------------------------------------------

def test_confluent_lists_describes_alters_and_deletes_a_consumer_group(stack, cluster):
    ck_group_id = cluster.group("ck-group")
    simple = cluster.group("simple")
    ghost = cluster.group("ghost")
    admin = ck_admin(cluster)
    consumer = ck_group(stack, cluster, ck_group_id, "ck-a")
    assert ck_result(admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(
        simple, [CKTopicPartition(cluster.audit, 1, 4)])])[simple]).group_id == simple

    ours = {ck_group_id, simple}  # one Kafka serves many tests: only this test's groups count

    def listed(**kwargs):
        result = ck_result(admin.list_consumer_groups(request_timeout=TIMEOUT_S, **kwargs))
        assert result.errors == []
        return [g for g in result.valid if g.group_id in ours]
    assert [(g.group_id, g.state, g.type, g.is_simple_consumer_group)
            for g in listed(states={ConsumerGroupState.STABLE})] == [
        (ck_group_id, ConsumerGroupState.STABLE, ConsumerGroupType.CLASSIC, False)]
    assert [(g.group_id, g.is_simple_consumer_group)
            for g in listed(states={ConsumerGroupState.EMPTY})] == [(simple, True)]
    assert sorted(g.group_id for g in listed()) == sorted([ck_group_id, simple])

    described = ck_result(admin.describe_consumer_groups(
        [ck_group_id], include_authorized_operations=True, request_timeout=TIMEOUT_S)[ck_group_id])
    assert (described.group_id, described.state, described.partition_assignor,
            described.is_simple_consumer_group) == \
        (ck_group_id, ConsumerGroupState.STABLE, "range", False)
    assert described.coordinator.id in admin.list_topics(timeout=TIMEOUT_S).brokers
    assert {AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE} <= \
        set(described.authorized_operations)
    (member,) = described.members
    assert (member.client_id, member.host, member.group_instance_id) == \
        ("ck-a", "/127.0.0.1", None)
    assert sorted((tp.topic, tp.partition) for tp in member.assignment.topic_partitions) == \
        [(cluster.orders, 0), (cluster.orders, 1), (cluster.orders, 2)]

    def committed(group_id):
        result = ck_result(admin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group_id)])[group_id])
        return {(tp.topic, tp.partition): tp.offset for tp in result.topic_partitions}

    assert committed(ck_group_id) == {(cluster.orders, p): PER_PARTITION for p in range(3)}

    # while the consumer is in the group, an outsider may neither rewrite nor delete it
    altered = ck_result(admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(
        ck_group_id, [CKTopicPartition(cluster.orders, 0, 0)])])[ck_group_id])
    assert [tp.error.code() for tp in altered.topic_partitions] == \
        [ck.KafkaError.UNKNOWN_MEMBER_ID]
    error = ck_error(admin.delete_consumer_groups([ck_group_id],
                                                  request_timeout=TIMEOUT_S)[ck_group_id])
    assert error.code() == ck.KafkaError.NON_EMPTY_GROUP

    consumer.close()
    wait_for("the group to be empty", lambda: ck_result(admin.describe_consumer_groups(
        [ck_group_id], request_timeout=TIMEOUT_S)[ck_group_id]).state == ConsumerGroupState.EMPTY)
    altered = ck_result(admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(
        ck_group_id, [CKTopicPartition(cluster.orders, 0, 0)])])[ck_group_id])
    assert [tp.error for tp in altered.topic_partitions] == [None]
    assert committed(ck_group_id) == {(cluster.orders, 0): 0, (cluster.orders, 1): 2,
                                      (cluster.orders, 2): 2}

    results = admin.delete_consumer_groups([ck_group_id, simple, ghost],
                                           request_timeout=TIMEOUT_S)
    assert ck_result(results[ck_group_id]) is None and ck_result(results[simple]) is None
    assert ck_error(results[ghost]).code() == ck.KafkaError.GROUP_ID_NOT_FOUND

    gone = ck_result(admin.describe_consumer_groups([ck_group_id],
                                                    request_timeout=TIMEOUT_S)[ck_group_id])
    assert (gone.state, gone.members) == (ConsumerGroupState.DEAD, [])
    assert committed(ck_group_id) == {} and committed(simple) == {}
    assert listed() == []


def test_confluent_describes_a_group_while_it_rebalances(stack, cluster):
    ck_moving = cluster.group("ck-moving")
    admin = ck_admin(cluster)
    ck_group(stack, cluster, ck_moving, "ck-a")
    # a member that joins and never comes back keeps the group rebalancing (until the
    # rebalance timeout), which DescribeGroups shows without a protocol
    joiner = KafkaConsumer(cluster.orders, bootstrap_servers=cluster.bootstrap_servers,
                           group_id=ck_moving, client_id="kp-late", enable_auto_commit=False,
                           request_timeout_ms=5000)
    stack.callback(joiner.close)

    def rebalancing():
        joiner.poll(timeout_ms=50)
        described = ck_result(admin.describe_consumer_groups(
            [ck_moving], request_timeout=TIMEOUT_S)[ck_moving])
        return described if described.state in (ConsumerGroupState.PREPARING_REBALANCING,
                                                ConsumerGroupState.COMPLETING_REBALANCING) \
            else None

    described = wait_for("a rebalance", rebalancing)
    assert described.partition_assignor == ""
    assert "kp-late" in {m.client_id for m in described.members}
