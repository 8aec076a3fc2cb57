"""Fixtures every test directory shares: the two targets of the client tests (mockbroker and
Apache Kafka, :mod:`tests.clients.targets`), defined here once so that each test worker starts
one Kafka, whichever directory's tests use it first."""

from tests.clients.targets import real_kafka, stack, target  # noqa: F401 (shared fixtures)
from tests.clients.secure_targets import secure_kafka, secure_mock, secure_target  # noqa: F401
from tests.clients.cluster_targets import (brokers_target, lifecycle_target,  # noqa: F401
                                           three_node_kafka)
from tests.kafka_cluster import pytest_unconfigure  # noqa: F401 (stops the run's Kafka cluster)
