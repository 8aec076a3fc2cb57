"""Fixtures every test directory shares: the two targets of the client tests (mockbroker and
Apache Kafka, :mod:`tests.clients.targets`), defined here once so that each test worker starts
one Kafka, whichever directory's tests use it first."""

from tests.clients.targets import real_kafka, stack, target  # noqa: F401 (shared fixtures)
