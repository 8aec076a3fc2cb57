"""What the stock-client tests share: a stack that closes clients before their clusters, and
the two targets of the conformance tests (mockbroker and Apache Kafka)."""

from __future__ import annotations

import contextlib

import pytest

from tests.clients.targets import real_kafka, target  # noqa: F401 (the two-target fixtures)


@pytest.fixture
def stack():
    """Clusters, clients and subprocesses, closed in reverse order of opening."""
    with contextlib.ExitStack() as s:
        yield s
