"""What the stock-client tests share: a stack that closes clients before their clusters, and
the two targets of the conformance tests (mockbroker and Apache Kafka)."""

from __future__ import annotations

import pytest

from tests.clients.targets import MOCKBROKER_ONLY
from tests.clients.targets import real_kafka, stack, target  # noqa: F401 (shared fixtures)


def pytest_collection_modifyitems(items):
    """Every client test runs on both targets or says why it cannot (``mockbroker_only``)."""
    for item in items:
        if "tests/clients/" not in item.nodeid.replace("\\", "/"):
            continue
        marker = item.get_closest_marker("mockbroker_only")
        if marker is not None:
            why = marker.args[0] if marker.args else None
            if why not in MOCKBROKER_ONLY:
                raise pytest.UsageError(f"{item.nodeid}: mockbroker_only needs one of "
                                        f"{sorted(MOCKBROKER_ONLY)}, not {why!r}")
            if "target" in item.fixturenames:
                raise pytest.UsageError(f"{item.nodeid}: runs on both targets, yet is marked "
                                        "mockbroker_only")
            item.user_properties.append(("mockbroker_only", MOCKBROKER_ONLY[why]))
        elif "target" not in item.fixturenames:
            raise pytest.UsageError(f"{item.nodeid}: a client test takes the target fixture or "
                                    "says why it cannot with @pytest.mark.mockbroker_only(WHY)")
