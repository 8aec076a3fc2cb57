"""Faults injected over HTTP, as stock clients live through them.

Each scenario breaks Kafka the way the admin API promises and checks what the client's user
sees: retried produces land exactly once, a fatal error reaches the delivery callback with its
code, a slowed or silent broker holds back only what it serves, a cut connection is recovered,
and stopped brokers, moved coordinators, forced rebalances and expired members look to the
clients like the real events.  The request log (``GET /requests``) is read where the client
cannot show what the broker did.
"""

from __future__ import annotations

import contextlib

import confluent_kafka as ck
import kafka.errors
import pytest
from kafka import KafkaProducer

from tests.clients.helpers import RDKAFKA_LOG, TIMEOUT_S, wait_for
from tests.clients.test_groups import (ALL, GROUP, PARTITIONS, TOPIC, Scene, consume_all,
                                       group_view, join, produce, settle)

pytestmark = pytest.mark.mockbroker_only("faults")

CLIENTS = ["kafka-python", "confluent-kafka"]


@pytest.fixture
def scene(kafka_cluster) -> Scene:
    """The group tests' view of the test's cluster: its TOPIC and GROUP."""
    return Scene.of(kafka_cluster)


@pytest.fixture
def stack(kafka_cluster):
    """Clients closed in reverse order of opening, and before the test's cluster stops (a
    consumer closing against a stopped cluster waits out its timeouts)."""
    with contextlib.ExitStack() as s:
        yield s


def _produce_with(client: str, stack, bootstrap: str, values: list[bytes]):
    """Produce ``values`` to partition 0 in one go; returns one outcome per value: None for
    delivered, else the client's error (a KafkaError code for confluent-kafka, the exception
    class for kafka-python)."""
    if client == "confluent-kafka":
        producer = ck.Producer({"bootstrap.servers": bootstrap, "logger": RDKAFKA_LOG,
                                "linger.ms": 5, "retry.backoff.ms": 20,
                                "message.timeout.ms": 15000})
        outcomes: list = [None] * len(values)

        def delivered(index):
            def report(err, _msg):
                outcomes[index] = None if err is None else err.code()
            return report

        for i, value in enumerate(values):
            producer.produce(TOPIC, value, key=b"k%d" % i, partition=0,
                             on_delivery=delivered(i))
        assert producer.flush(TIMEOUT_S + 10) == 0
        return outcomes
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5, retry_backoff_ms=20,
                             request_timeout_ms=5000, delivery_timeout_ms=15000)
    stack.callback(producer.close)
    futures = [producer.send(TOPIC, value, key=b"k%d" % i, partition=0)
               for i, value in enumerate(values)]
    producer.flush(TIMEOUT_S + 10)
    return [None if f.succeeded() else type(f.exception) for f in futures]


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.kafka(topics={TOPIC: 1})
def test_retriable_produce_errors_are_retried_and_land_once(client, stack, kafka_bootstrap,
                                                            kafka_admin):
    fault = kafka_admin.add_fault("Produce", error="NOT_LEADER_OR_FOLLOWER", count=3)
    values = [b"v%d" % i for i in range(5)]
    assert _produce_with(client, stack, kafka_bootstrap, values) == [None] * 5
    stored = kafka_admin.records(TOPIC, 0)
    assert [(r.key, r.value) for r in stored] == [(f"k{i}", f"v{i}") for i in range(5)]
    assert kafka_admin.faults() == []  # fired its three times
    errors_seen = [r.error for r in kafka_admin.requests("Produce")]
    assert errors_seen.count("NOT_LEADER_OR_FOLLOWER") == 3 and errors_seen[-1] is None
    assert all(r.fault == fault.id for r in kafka_admin.requests("Produce")[:3])


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.kafka(topics={TOPIC: 1})
def test_a_non_retriable_produce_error_reaches_the_delivery_callback(client, stack,
                                                                     kafka_bootstrap,
                                                                     kafka_admin):
    kafka_admin.add_fault("Produce", error="TOPIC_AUTHORIZATION_FAILED", count=None)
    outcomes = _produce_with(client, stack, kafka_bootstrap, [b"secret"])
    expected = ck.KafkaError.TOPIC_AUTHORIZATION_FAILED if client == "confluent-kafka" \
        else kafka.errors.TopicAuthorizationFailedError
    assert outcomes == [expected]
    assert kafka_admin.records(TOPIC, 0) == []


@pytest.mark.kafka(brokers=2, topics={TOPIC: 2})
def test_a_delayed_fetch_slows_only_that_broker(stack, kafka_cluster, kafka_admin):
    partitions = kafka_admin.topic(TOPIC).partitions
    if partitions[0].leader == partitions[1].leader:
        kafka_admin.move_leader(TOPIC, 1, next(b for b in partitions[1].replicas
                                               if b != partitions[0].leader))
    slow, fast = (kafka_admin.topic(TOPIC).partitions[i].leader for i in (0, 1))
    assert slow != fast
    # long enough that the fast broker's record arrives first even on a busy machine
    kafka_admin.add_fault("Fetch", action="delay", delay_ms=10_000, broker=slow, count=None)
    producer = ck.Producer({"bootstrap.servers": kafka_cluster.bootstrap_servers,
                            "logger": RDKAFKA_LOG})
    producer.produce(TOPIC, b"from-slow", partition=0)
    producer.produce(TOPIC, b"from-fast", partition=1)
    assert producer.flush(TIMEOUT_S) == 0
    consumer = ck.Consumer({"bootstrap.servers": kafka_cluster.bootstrap_servers,
                            "group.id": "reader", "logger": RDKAFKA_LOG,
                            "fetch.wait.max.ms": 100})
    stack.callback(consumer.close)
    consumer.assign([ck.TopicPartition(TOPIC, 0, 0), ck.TopicPartition(TOPIC, 1, 0)])
    got: list[bytes] = []

    def first():
        message = consumer.poll(0.1)
        if message is not None and message.error() is None:
            got.append(message.value())
        return got

    wait_for(first, "the first message")
    assert got == [b"from-fast"]
    # every fetch to the slowed broker is held by the rule (on a busy machine the first may
    # reach it only after the other broker has answered); none to the other
    slow_fetches = wait_for(lambda: kafka_admin.requests("Fetch", broker=slow),
                            "a fetch to the slowed broker")
    assert all(r.fault is not None for r in slow_fetches)
    assert all(r.fault is None for r in kafka_admin.requests("Fetch", broker=fast))
    wait_for(lambda: first() and len(got) == 2, "the slow broker's message")
    assert got == [b"from-fast", b"from-slow"]


@pytest.mark.kafka(topics={TOPIC: 1})
def test_a_disconnect_mid_request_is_recovered(stack, kafka_bootstrap, kafka_admin):
    kafka_admin.add_fault("Produce", action="disconnect", count=1)
    assert _produce_with("confluent-kafka", stack, kafka_bootstrap, [b"a", b"b"]) == \
        [None, None]
    assert [r.value for r in kafka_admin.records(TOPIC, 0)] == ["a", "b"]
    outcomes = [r.outcome for r in kafka_admin.requests("Produce")]
    assert outcomes[0] == "disconnected" and outcomes[-1] == "answered"
    kafka_admin.add_fault("Fetch", action="disconnect", count=2)
    consumer = ck.Consumer({"bootstrap.servers": kafka_bootstrap, "group.id": "g",
                            "auto.offset.reset": "earliest", "logger": RDKAFKA_LOG})
    stack.callback(consumer.close)
    consumer.subscribe([TOPIC])
    seen: list[bytes] = []
    wait_for(lambda: seen.extend(m.value() for m in consumer.consume(10, 0.1)
                                 if m.error() is None) or len(seen) == 2, "both messages")
    assert seen == [b"a", b"b"]
    assert [r.outcome for r in kafka_admin.requests("Fetch")][:2] == ["disconnected"] * 2


@pytest.mark.kafka(topics={TOPIC: PARTITIONS}, group_min_session_timeout_ms=500)
def test_a_dropped_join_group_answer_makes_the_client_retry(stack, scene, kafka_admin):
    kafka_admin.add_fault("JoinGroup", action="drop", count=1)
    member = join(stack, scene, "confluent-kafka", "m1",
                  **{"session.timeout.ms": 1000, "max.poll.interval.ms": 1000})
    values = produce(stack, scene, "after-drop", count=12)
    consume_all([member], values)
    joins = kafka_admin.requests("JoinGroup")
    assert joins[0].outcome == "dropped"
    assert any(r.outcome == "answered" and r.error is None for r in joins[1:])
    assert kafka_admin.group(GROUP).members[0].assignment == {TOPIC: sorted(ALL)}


@pytest.mark.kafka(brokers=3, topics={TOPIC: PARTITIONS}, group_min_session_timeout_ms=1000)
def test_a_stopped_broker_moves_partitions_and_the_group_and_clients_follow(stack, scene,
                                                                             kafka_admin):
    member = join(stack, scene, "confluent-kafka", "m1")
    settle(scene, [member])
    before = produce(stack, scene, "before")
    consume_all([member], before)
    coordinator = kafka_admin.group(GROUP).coordinator
    kafka_admin.stop_broker(coordinator)
    assert kafka_admin.broker(coordinator).state == "down"
    assert all(p.leader != coordinator for p in kafka_admin.topic(TOPIC).partitions)
    after = produce(stack, scene, "after")
    consume_all([member], after)
    group = wait_for(lambda: (g := kafka_admin.group(GROUP)).coordinator != coordinator
                     and sum(g.offsets.get(TOPIC, {}).values()) == 120 and g, "new commits")
    assert group.state == "Stable"
    assert sum(group.offsets[TOPIC].values()) == 120  # nothing consumed twice, nothing lost
    assert sorted(member.values()) == sorted(before | after)


@pytest.mark.kafka(brokers=3, topics={TOPIC: PARTITIONS}, group_min_session_timeout_ms=1000)
def test_a_moved_coordinator_is_rediscovered(stack, scene, kafka_admin):
    member = join(stack, scene, "confluent-kafka", "m1")
    settle(scene, [member])
    consume_all([member], produce(stack, scene, "before"))
    old = kafka_admin.group(GROUP).coordinator
    new = (old + 1) % 3
    kafka_admin.move_coordinator(GROUP, new)
    assert kafka_admin.group(GROUP).coordinator == new
    after = produce(stack, scene, "after")
    consume_all([member], after)
    wait_for(lambda: sum(kafka_admin.group(GROUP).offsets[TOPIC].values()) == 120,
             "commits at the new coordinator")
    finds = [r for r in kafka_admin.requests("FindCoordinator")]
    assert len(finds) >= 2  # looked up again after the move
    assert any(r.broker == new and r.api == "OffsetCommit" and r.error is None
               for r in kafka_admin.requests("OffsetCommit"))


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.kafka(topics={TOPIC: PARTITIONS}, group_min_session_timeout_ms=1000)
def test_a_forced_rebalance_is_a_real_rebalance_to_the_clients(client, stack, scene,
                                                               kafka_admin):
    member = join(stack, scene, client, "m1")
    settle(scene, [member])
    generation = kafka_admin.group(GROUP).generation
    events_before = len(member.events)
    kafka_admin.rebalance(GROUP)
    wait_for(lambda: (g := kafka_admin.group(GROUP)).state == "Stable"
             and g.generation > generation, "a later generation")
    wait_for(lambda: ("assign", ALL) in member.events[events_before:], "a new assignment")
    assert ("revoke", ALL) in member.events[events_before:]  # eager: everything revoked first
    values = produce(stack, scene, "after")
    consume_all([member], values)


@pytest.mark.kafka(topics={TOPIC: PARTITIONS}, group_min_session_timeout_ms=1000)
def test_an_expired_member_rejoins_as_a_new_member(stack, scene, kafka_admin):
    member = join(stack, scene, "confluent-kafka", "m1")
    settle(scene, [member])
    (old,) = kafka_admin.group(GROUP).members
    kafka_admin.expire_member(GROUP, old.member_id)

    def rejoined():
        group = kafka_admin.group(GROUP)
        return group.state == "Stable" and len(group.members) == 1 and \
            group.members[0].member_id != old.member_id and group

    group = wait_for(rejoined, "the member to rejoin with a new id")
    assert group.members[0].assignment == {TOPIC: sorted(ALL)}
    assert group_view(scene).members == {group.members[0].member_id: None}
    consume_all([member], produce(stack, scene, "after"))
