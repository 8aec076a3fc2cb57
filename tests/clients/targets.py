"""The two targets of the client tests: mockbroker, and Apache Kafka itself.

A :class:`Target` is what a test may rely on of either: a bootstrap address, fresh topic and
group names of its own (one Kafka serves every test of a worker, so names never repeat), topics
created through the Admin API as a user would, and what an Admin client can ask a coordinator.
``target.mock`` is the MockCluster on the mockbroker target and None on Kafka: a test may read
mockbroker's request log through it for checks of its own there, never for what both targets
must show.

Both targets run with the same settings, in Kafka's names (:data:`SETTINGS`): short session
timeouts and heartbeat intervals so groups move within seconds, which a real broker allows once
its minimums are lowered too.

A client test either takes ``target`` and runs on both, or says with
``@pytest.mark.mockbroker_only(WHY)`` why it cannot: WHY is one of :data:`MOCKBROKER_ONLY`, the
things only mockbroker has.  ``tests/clients/conftest.py`` refuses a client test that does
neither, and records each test's target (or WHY) in the JUnit report for ``ci/conformance.py``.
"""

from __future__ import annotations

import contextlib
import uuid

import confluent_kafka as ck
import pytest
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

import wire
from mockbroker import MockCluster
from tests.clients.helpers import RDKAFKA_LOG, TIMEOUT_S, wait_for
from tests.real_kafka import RealKafka, ask
from wire import errors

TARGETS = ("mockbroker", "kafka")
#: why a client test runs on mockbroker alone -> what it needs that Kafka cannot give it
MOCKBROKER_ONLY = {
    "faults": "faults injected through control rules",
    "brokers": "a KRaft quorum of the brokers themselves, its leader moved on command (the "
               "three-node Kafka target runs its controller apart)",
    "internals": "broker state set or read directly, as no client can",
    "broker-settings": "broker settings of its own, where one Kafka serves many tests",
    "lifecycle": "a group member expired, or a whole cluster stopped, on command",
    "shared-kafka": "changes what every test on a shared Kafka relies on (an internal topic, "
                    "a feature level)",
    "beyond-kafka": "behaviour mockbroker adds on purpose, documented at the test",
    "mockbroker": "mockbroker's own interfaces (the HTTP API, its CLI, its view of the cluster)",
    "clock": "a broker clock the test moves, which no Kafka has",
    "schema-registry": "the Schema Registry, which Apache Kafka does not include",
}
#: broker settings of both targets
SETTINGS = {
    "group.initial.rebalance.delay.ms": "0",
    "num.partitions": "2",
    "group.min.session.timeout.ms": "1000",
    "group.consumer.heartbeat.interval.ms": "500",
    "group.consumer.min.heartbeat.interval.ms": "500",
    "group.consumer.session.timeout.ms": "6000",
    "group.consumer.min.session.timeout.ms": "6000",
    # share groups: a member is assigned its partitions on its second heartbeat, so heartbeats
    # come often (the session timeout stays Kafka's 45 s: test_share_tools' member heartbeats
    # only between tool runs); a group may lower its record lock duration
    # (share.record.lock.duration.ms) to a second, for tests of locks that expire
    "group.share.heartbeat.interval.ms": "500",
    "group.share.min.heartbeat.interval.ms": "500",
    "group.share.min.record.lock.duration.ms": "1000",
    # streams groups (KIP-1071): members heartbeat often, one that died leaves within seconds,
    # and a new group's first assignment is not held back for more members to come
    "group.streams.heartbeat.interval.ms": "500",
    "group.streams.min.heartbeat.interval.ms": "500",
    "group.streams.session.timeout.ms": "6000",
    "group.streams.min.session.timeout.ms": "6000",
    "group.streams.initial.rebalance.delay.ms": "0",
    # a transaction past its timeout is aborted within a moment, not after up to 10 s
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "100",
}
#: the same, as MockCluster settings (the bounds of group configs included)
MOCK_SETTINGS = {name.replace(".", "_"): int(value) for name, value in SETTINGS.items()}


class Target:
    def __init__(self, name: str, bootstrap_servers: str, mock: MockCluster | None):
        self.name = name
        self.bootstrap_servers = bootstrap_servers
        self.mock = mock
        self._admin = AdminClient({"bootstrap.servers": bootstrap_servers,
                                   "socket.timeout.ms": 5000, "logger": RDKAFKA_LOG})

    @staticmethod
    def unique(base: str) -> str:
        return f"{base}-{uuid.uuid4().hex[:10]}"

    def create_topic(self, base: str, partitions: int, **configs: str) -> str:
        """A new topic named after ``base``, created through CreateTopics, returned once every
        partition has a leader that serves it."""
        return self._create(self.unique(base), partitions, configs)

    def create_topics(self, partitions: dict[str, int]) -> dict[str, str]:
        """New topics, base name -> name, all named ``<tag>-<base>`` with one fresh tag (so
        that a pattern ``<tag>-...`` matches this test's topics only)."""
        tag = uuid.uuid4().hex[:10]
        return {base: self._create(f"{tag}-{base}", count, {})
                for base, count in partitions.items()}

    def _create(self, name: str, partitions: int, configs: dict[str, str]) -> str:
        futures = self._admin.create_topics([NewTopic(name, partitions, 1, config=configs)],
                                            operation_timeout=TIMEOUT_S)
        futures[name].result(timeout=TIMEOUT_S)

        def led():
            topic = self._admin.list_topics(name, timeout=TIMEOUT_S).topics.get(name)
            return topic is not None and topic.error is None and \
                len(topic.partitions) == partitions and \
                all(p.leader >= 0 for p in topic.partitions.values())
        wait_for(led, f"topic {name} with {partitions} led partitions")
        # Kafka names a leader in Metadata a moment before the leader serves the partition;
        # a client retries NOT_LEADER_OR_FOLLOWER, a test's bare request would not
        wanted = {ck.TopicPartition(name, p): OffsetSpec.latest() for p in range(partitions)}

        def served():
            try:
                return all(f.result(timeout=TIMEOUT_S).offset == 0
                           for f in self._admin.list_offsets(wanted).values())
            except ck.KafkaException:
                return False
        wait_for(served, f"every partition of {name} served by its leader")
        return name

    @property
    def admin(self) -> AdminClient:
        """A confluent-kafka AdminClient of the target."""
        return self._admin

    def coordinator(self, key_type: int, key: str):
        """FindCoordinator's answer for a group (0) or a transactional id (1): its
        ``node_id``, ``host``, ``port`` and ``error_code``."""
        host, port = self.bootstrap_servers.split(",")[0].rsplit(":", 1)
        [found] = ask(int(port), 10, 4, wire.request_class(10)(
            key_type=key_type, coordinator_keys=[key]), host=host).coordinators
        return found

    def describe_transaction(self, transactional_id: str):
        """DescribeTransactions of ``transactional_id``, asked of its coordinator, as
        ``kafka-transactions describe`` does: the answer's entry, or None while the coordinator
        does not know the id."""
        found = self.coordinator(1, transactional_id)
        if found.error_code != errors.NONE:
            return None
        [entry] = ask(found.port, 65, 0, wire.request_class(65)(
            transactional_ids=[transactional_id]), host=found.host).transaction_states
        return None if entry.error_code == errors.TRANSACTIONAL_ID_NOT_FOUND else entry

    def describe_consumer_group(self, group_id: str):
        """ConsumerGroupDescribe (v1, with member types) of a KIP-848 group, asked of its
        coordinator as the Java Admin does: (the coordinator, the group's entry); the entry's
        error is GROUP_ID_NOT_FOUND for a classic group or none at all."""
        found = self.coordinator(0, group_id)
        assert found.error_code == errors.NONE, found
        [entry] = ask(found.port, 69, 1, wire.request_class(69)(
            group_ids=[group_id], include_authorized_operations=False),
            host=found.host).groups
        return found, entry

    def delete_records(self, topic: str, partition: int, before: int) -> None:
        """Move a partition's log start to ``before`` with DeleteRecords."""
        futures = self._admin.delete_records([ck.TopicPartition(topic, partition, before)],
                                             operation_timeout=TIMEOUT_S)
        [result] = futures.values()
        assert result.result(timeout=TIMEOUT_S).low_watermark == before


@pytest.fixture
def stack():
    """Clusters, clients and subprocesses, closed in reverse order of opening."""
    with contextlib.ExitStack() as s:
        yield s


@pytest.fixture(scope="session")
def real_kafka():
    """One Apache Kafka node for the worker's whole run, started on first use."""
    kafka = RealKafka(SETTINGS).start()  # KafkaUnavailable says what set-up step is missing
    yield kafka
    kafka.stop()


@pytest.fixture(params=TARGETS)
def target(request, stack) -> Target:
    """Each conformance test runs once on mockbroker and once on Apache Kafka."""
    request.node.user_properties.append(("target", request.param))
    if request.param == "kafka":
        kafka = request.getfixturevalue("real_kafka")
        return Target("kafka", kafka.bootstrap_servers, None)
    cluster = stack.enter_context(MockCluster(**MOCK_SETTINGS))
    return Target("mockbroker", cluster.bootstrap_servers, cluster)
