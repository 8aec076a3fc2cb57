"""What the stock-client tests share: a stack that closes clients before their clusters."""

from __future__ import annotations

import contextlib

import pytest


@pytest.fixture
def stack():
    """Clusters, clients and subprocesses, closed in reverse order of opening."""
    with contextlib.ExitStack() as s:
        yield s
