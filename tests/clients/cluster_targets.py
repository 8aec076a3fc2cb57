"""Three brokers as a target of the client tests: three mockbrokers, or three Apache Kafkas.

A test that needs several brokers takes ``brokers_target`` or ``lifecycle_target`` and runs
twice: on a MockCluster of three brokers of its own, and on the run's three-node Kafka 4.4
(:mod:`tests.kafka_cluster`: brokers 0, 1 and 2, as on mockbroker, and a controller apart).
Both run with the client tests' :data:`~tests.clients.targets.SETTINGS`, three replicas for a
topic created without a replication factor, and no periodic preferred-leader election (leaders
move back when a test asks).

``brokers_target`` is for tests that read the brokers and move the leaders of their own topics:
on Kafka they share the cluster with each other.  ``lifecycle_target`` is for tests that stop
and start brokers: on Kafka such a test has the cluster to itself, which is made whole again
after it (every broker up and in sync, every partition led by its preferred replica).

:class:`BrokersTarget` adds to :class:`~tests.clients.targets.Target` what a test may do to a
cluster of brokers on both: stop a broker (a crash, or a controlled shutdown) and start it again,
each returning once every running broker shows it; read a partition's leader, replicas and ISR
as Metadata tells a client; move a partition's leader as a Kafka operator does (a reassignment
that puts the new leader first, then a preferred election); and find a group's coordinator.
"""

from __future__ import annotations

import contextlib

import confluent_kafka as ck
import pytest
from confluent_kafka.admin import AdminClient, NewTopic

import wire
from mockbroker import MockCluster
from mockbroker.core.log_dirs import DEFAULT_LOG_DIR
from tests.clients.helpers import RDKAFKA_LOG, TIMEOUT_S, wait_for
from tests.clients.targets import MOCK_SETTINGS, SETTINGS, TARGETS, Target
from tests.kafka_cluster import BROKER_IDS, SharedCluster
from tests.real_kafka import ask
from wire import errors

#: how long a leader move or a broker's stop or start may take to show (Kafka fences a killed
#: broker after its session timeout, and a JVM starts in seconds on a busy machine)
CHANGE_S = 90
LIST_OFFSETS = wire.request_class(2)
METADATA = wire.request_class(3)
ELECT_LEADERS = wire.request_class(43)
REASSIGN = wire.request_class(45)


class BrokersTarget(Target):
    """Three brokers, 0, 1 and 2, on mockbroker (``mock``) or on Kafka (``kafka``)."""

    brokers = BROKER_IDS

    def __init__(self, name: str, bootstrap_servers: str, mock: MockCluster | None,
                 kafka: SharedCluster | None = None):
        super().__init__(name, bootstrap_servers, mock)
        self.kafka = kafka
        #: the topics this test made, deleted after it on the Kafka every test shares
        self.topics: list[str] = []

    # -- the brokers ---------------------------------------------------------------------------

    def address(self, broker_id: int) -> tuple[str, int]:
        """Where broker ``broker_id`` listens (stopped or not)."""
        if self.kafka is not None:
            return self.kafka.cluster.address(broker_id)
        broker = self.mock.call(lambda: self.mock.core.cluster.brokers[broker_id])
        return broker.host, broker.port

    def log_dir(self, broker_id: int) -> str:
        """Broker ``broker_id``'s one log directory (mockbroker's is Kafka's default)."""
        if self.kafka is not None:
            return str(self.kafka.cluster.nodes[broker_id].dir / "data")
        return DEFAULT_LOG_DIR

    @property
    def cluster_id(self) -> str:
        return (self.kafka.cluster.cluster_id if self.kafka is not None
                else self.mock.call(lambda: self.mock.core.cluster.cluster_id))

    def stop_broker(self, broker_id: int, *, controlled: bool = False) -> None:
        """Stop a broker as if it died (Kafka: SIGKILL), or in a ``controlled`` shutdown
        (Kafka: SIGTERM); returns once the running brokers have fenced it.  :attr:`admin` is a
        new client after it: librdkafka's may hold a request for the broker that left
        Metadata until the request times out."""
        if self.kafka is None:
            self.mock.stop_broker(broker_id, controlled=controlled)
        else:
            self.kafka.cluster.stop_broker(broker_id, controlled=controlled)
        self._admin = AdminClient({"bootstrap.servers": self.bootstrap_servers,
                                   "socket.timeout.ms": 5000, "logger": RDKAFKA_LOG})

    def start_broker(self, broker_id: int) -> None:
        """Start a stopped broker again, on its port and with its data; returns once every
        running broker lists it and it is in the ISR wherever there is a leader to catch up
        from."""
        if self.kafka is None:
            self.mock.start_broker(broker_id)
        else:
            self.kafka.cluster.start_broker(broker_id)

    def running(self) -> list[int]:
        """The brokers running (stopped ones are not)."""
        if self.kafka is not None:
            return self.kafka.cluster.running_brokers()
        return self.mock.call(lambda: sorted(i for i, b in self.mock.core.cluster.brokers.items()
                                             if b.alive))

    def ask(self, api_key: int, version: int, body):
        """One request's answer from the first running broker that answers."""
        for broker_id in self.running():
            host, port = self.address(broker_id)
            try:
                return ask(port, api_key, version, body, host)
            except (OSError, EOFError):
                continue
        raise ConnectionError("no broker answers")

    # -- topics and partitions -----------------------------------------------------------------

    def create_topic(self, base: str, partitions: int, replicas: int = 3, **configs: str) -> str:
        """A new topic of ``partitions`` partitions with ``replicas`` replicas each, placed by
        the controller, returned once every partition's leader serves it."""
        return self._made(NewTopic(self.unique(base), partitions, replicas, config=configs))

    def create_placed(self, base: str, assignment: list[list[int]], **configs: str) -> str:
        """A new topic with its replicas placed by hand, one list a partition."""
        return self._made(NewTopic(self.unique(base), len(assignment),
                                   replica_assignment=assignment, config=configs))

    def _create(self, name: str, partitions: int, configs: dict[str, str]) -> str:
        """(what :meth:`create_topics` makes: three replicas of each partition)"""
        return self._made(NewTopic(name, partitions, 3, config=configs))

    def _made(self, topic: NewTopic) -> str:
        futures = self.admin.create_topics([topic], operation_timeout=TIMEOUT_S)
        futures[topic.topic].result(timeout=TIMEOUT_S)
        self.own(topic.topic)
        self.known(topic.topic, topic.num_partitions)
        return topic.topic

    def own(self, topic: str) -> str:
        """Count ``topic`` (made some other way) among the test's, to be deleted after it."""
        self.topics.append(topic)
        return topic

    def known(self, topic: str, partitions: int) -> None:
        """Wait until every running broker knows ``topic``'s ``partitions`` partitions, each
        with a leader that serves it (Kafka names a leader in Metadata a moment before the
        leader serves the partition)."""
        self.everywhere(lambda m: m.error_code == errors.NONE and len(m.partitions) ==
                        partitions and all(p.leader_id >= 0 for p in m.partitions),
                        topic, f"topic {topic} known and led everywhere")
        self._served(topic, partitions)

    def delete_own_topics(self) -> None:
        if self.topics:
            for future in self.admin.delete_topics(self.topics,
                                                   operation_timeout=TIMEOUT_S).values():
                with contextlib.suppress(ck.KafkaException):
                    future.result(timeout=TIMEOUT_S)

    def _served(self, name: str, partitions: int) -> None:
        """Wait until each partition's leader (as Metadata names it) answers ListOffsets."""
        def served() -> bool:
            for p in self.metadata(name).partitions:
                host, port = self.address(p.leader_id)
                body = LIST_OFFSETS(replica_id=-1, topics=[LIST_OFFSETS.ListOffsetsTopic(
                    name=name, partitions=[LIST_OFFSETS.ListOffsetsPartition(
                        partition_index=p.partition_index, timestamp=-1,
                        current_leader_epoch=-1)])])
                try:
                    [answer] = ask(port, 2, 9, body, host).topics[0].partitions
                except (OSError, EOFError):
                    return False
                if answer.error_code != errors.NONE:
                    return False
            return True
        wait_for(served, f"every partition of {name} served by its leader", timeout=CHANGE_S)

    def metadata(self, topic: str, broker_id: int | None = None):
        """Metadata's entry for ``topic``, from ``broker_id`` or the first running broker."""
        body = METADATA(topics=[METADATA.MetadataRequestTopic(name=topic)],
                        allow_auto_topic_creation=False, include_topic_authorized_operations=False)
        if broker_id is None:
            found = self.ask(3, 12, body)
        else:
            host, port = self.address(broker_id)
            found = ask(port, 3, 12, body, host)
        [entry] = found.topics
        return entry

    def partition(self, topic: str, index: int) -> tuple[int, list[int], list[int]]:
        """(leader, replicas, ISR) of a partition, as Metadata tells a client."""
        [p] = [p for p in self.metadata(topic).partitions if p.partition_index == index]
        return p.leader_id, list(p.replica_nodes), list(p.isr_nodes)

    def leaders(self, topic: str) -> dict[int, int]:
        """Partition -> leader, as Metadata tells a client."""
        return {p.partition_index: p.leader_id for p in self.metadata(topic).partitions}

    def settled(self, read, wanted, what: str):
        """``read()`` once it returns ``wanted``: what one broker's Metadata tells may lag a
        change the controller made a moment before.  Fails with what it last returned."""
        last = []

        def there():
            last[:] = [read()]
            return last[0] == wanted
        try:
            wait_for(there, what, timeout=CHANGE_S)
        except AssertionError:
            assert last[0] == wanted, what
        return last[0]

    def move_leader(self, topic: str, index: int, to: int) -> None:
        """Give a partition's lead to replica ``to``, as a Kafka operator does: reassign it to
        its replicas with ``to`` first (done at once: nothing moves), then elect the preferred
        leader; returns once every running broker's Metadata shows ``to`` leading."""
        _, replicas, _ = self.partition(topic, index)
        assert to in replicas, (topic, index, replicas)
        ordered = [to] + [r for r in replicas if r != to]
        answer = self.ask(45, 0, REASSIGN(timeout_ms=30_000, topics=[REASSIGN.ReassignableTopic(
            name=topic, partitions=[REASSIGN.ReassignablePartition(partition_index=index,
                                                                   replicas=ordered)])]))
        assert [p.error_code for r in answer.responses for p in r.partitions] == [errors.NONE]
        wait_for(lambda: self.partition(topic, index)[1] == ordered, "the replicas reordered",
                 timeout=CHANGE_S)
        answer = self.ask(43, 2, ELECT_LEADERS(election_type=0, timeout_ms=30_000,
                                               topic_partitions=[ELECT_LEADERS.TopicPartitions(
                                                   topic=topic, partitions=[index])]))
        [code] = [p.error_code for r in answer.replica_election_results
                  for p in r.partition_result]
        assert code in (errors.NONE, errors.ELECTION_NOT_NEEDED), code
        self.everywhere(lambda m: {p.partition_index: p.leader_id
                                   for p in m.partitions}[index] == to,
                        topic, f"{topic}-{index} led by {to}")

    def everywhere(self, condition, topic: str, what: str) -> None:
        """Wait until ``condition`` holds of ``topic``'s Metadata entry on every running
        broker."""
        def held() -> bool:
            seen = 0
            for broker_id in self.running():
                try:
                    entry = self.metadata(topic, broker_id)
                except (OSError, EOFError):
                    continue
                seen += 1
                if not condition(entry):
                    return False
            return seen > 0
        wait_for(held, what, timeout=CHANGE_S)

    # -- groups --------------------------------------------------------------------------------

    def coordinator(self, key_type: int, key: str):
        """FindCoordinator's answer, asked of the first running broker."""
        [found] = self.ask(10, 4, wire.request_class(10)(
            key_type=key_type, coordinator_keys=[key])).coordinators
        return found

    def coordinator_id(self, group_id: str) -> int:
        """The node coordinating ``group_id``, once one is (a coordinator still loading the
        group's partition answers COORDINATOR_LOAD_IN_PROGRESS, which clients retry)."""
        found = wait_for(lambda: (answer := self.coordinator(0, group_id)).error_code ==
                         errors.NONE and answer, f"a coordinator for {group_id}",
                         timeout=CHANGE_S)
        return found.node_id


@pytest.fixture(scope="session")
def three_node_kafka(request) -> SharedCluster:
    """This worker's handle on the run's three-node Kafka, started on first use by whichever
    worker needs it first (the main pytest process stops it when the run ends)."""
    return SharedCluster(request.config, SETTINGS)


def _brokers_target(request, stack, *, exclusive: bool) -> BrokersTarget:
    request.node.user_properties.append(("target", request.param))
    if request.param == "kafka":
        shared: SharedCluster = request.getfixturevalue("three_node_kafka")
        cluster = stack.enter_context(shared.held(exclusive=exclusive))
        target = BrokersTarget("kafka", cluster.bootstrap_servers, None, shared)
        stack.callback(target.delete_own_topics)
        return target
    mock = stack.enter_context(MockCluster(brokers=3, auto_leader_rebalance_enable=False,
                                           **MOCK_SETTINGS))
    return BrokersTarget("mockbroker", mock.bootstrap_servers, mock)


@pytest.fixture(params=TARGETS)
def brokers_target(request, stack) -> BrokersTarget:
    """Three brokers, read and led by the test's own topics: three mockbrokers of the test's
    own, or the run's three Kafkas shared with other such tests."""
    return _brokers_target(request, stack, exclusive=False)


@pytest.fixture(params=TARGETS)
def lifecycle_target(request, stack) -> BrokersTarget:
    """Three brokers the test may stop and start: three mockbrokers of its own, or the run's
    three Kafkas all to itself (made whole again after it)."""
    return _brokers_target(request, stack, exclusive=True)
