"""Core tests: no timer may fail unnoticed.  The timers log a failing callback and go on (so
one bad timer cannot stop the others), which would hide a bug here; every core a test made is
checked after it."""

from __future__ import annotations

import pytest

from tests.core import harness


@pytest.fixture(autouse=True)
def no_failed_timers():
    harness.MADE.clear()
    yield
    failed = [core for core in harness.MADE if core.timers.failures]
    harness.MADE.clear()
    assert not failed, "a timer callback raised (see the log)"
