"""The rule of the stock-client tests: each runs on both targets or says why it cannot (the
targets themselves are fixtures of ``tests/conftest.py``)."""

from __future__ import annotations

import pytest

from tests.clients.targets import MOCKBROKER_ONLY

#: the fixtures that run a test once on each target (``secure_target``: both secured alike;
#: ``brokers_target`` and ``lifecycle_target``: three brokers on each)
TARGET_FIXTURES = {"target", "secure_target", "brokers_target", "lifecycle_target"}


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
            if TARGET_FIXTURES & set(item.fixturenames):
                raise pytest.UsageError(f"{item.nodeid}: runs on both targets, yet is marked "
                                        "mockbroker_only")
            item.user_properties.append(("mockbroker_only", MOCKBROKER_ONLY[why]))
        elif not TARGET_FIXTURES & set(item.fixturenames):
            raise pytest.UsageError(f"{item.nodeid}: a client test takes the target fixture or "
                                    "says why it cannot with @pytest.mark.mockbroker_only(WHY)")
