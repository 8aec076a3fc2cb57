"""The two targets of the client conformance tests: mockbroker, and Apache Kafka itself.

A :class:`Target` is what a test may rely on of either: a bootstrap address, fresh topic and
group names of its own (one Kafka serves every test of a worker, so names never repeat), and
topics created through the Admin API as a user would.  ``target.mock`` is the MockCluster on
the mockbroker target and None on Kafka; a test that needs it is not a conformance test.

Both targets run with the same settings, in Kafka's names (:data:`SETTINGS`): short session
timeouts and heartbeat intervals so groups move within seconds, which a real broker allows once
its minimums are lowered too.
"""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from mockbroker import MockCluster
from tests.clients.helpers import RDKAFKA_LOG, TIMEOUT_S, wait_for
from tests.real_kafka import RealKafka

TARGETS = ("mockbroker", "kafka")
#: broker settings of both targets
SETTINGS = {
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "1000",
    "group.consumer.heartbeat.interval.ms": "500",
    "group.consumer.min.heartbeat.interval.ms": "500",
    "group.consumer.session.timeout.ms": "6000",
    "group.consumer.min.session.timeout.ms": "6000",
}
#: the same, as MockCluster settings (mockbroker has no separate minimums for consumer groups)
MOCK_SETTINGS = {name.replace(".", "_"): int(value) for name, value in SETTINGS.items()
                 if ".min." not in name or name == "group.min.session.timeout.ms"}


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
        """A new topic named after ``base``, created through CreateTopics, once every
        partition has a leader the clients can find."""
        name = self.unique(base)
        futures = self._admin.create_topics([NewTopic(name, partitions, 1, config=configs)],
                                            operation_timeout=TIMEOUT_S)
        futures[name].result(timeout=TIMEOUT_S)

        def led():
            topic = self._admin.list_topics(name, timeout=TIMEOUT_S).topics.get(name)
            return topic is not None and topic.error is None and \
                len(topic.partitions) == partitions and \
                all(p.leader >= 0 for p in topic.partitions.values())
        wait_for(led, f"topic {name} with {partitions} led partitions")
        return name


@pytest.fixture(scope="session")
def real_kafka():
    """One Apache Kafka node for the worker's whole run, started on first use."""
    kafka = RealKafka(SETTINGS).start()  # KafkaUnavailable says what set-up step is missing
    yield kafka
    kafka.stop()


@pytest.fixture(params=TARGETS)
def target(request, stack) -> Target:
    """Each conformance test runs once on mockbroker and once on Apache Kafka."""
    if request.param == "kafka":
        kafka = request.getfixturevalue("real_kafka")
        return Target("kafka", kafka.bootstrap_servers, None)
    cluster = stack.enter_context(MockCluster(**MOCK_SETTINGS))
    return Target("mockbroker", cluster.bootstrap_servers, cluster)
