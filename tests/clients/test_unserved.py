"""What Kafka 4.4 serves and mockbroker does not yet: a stock client that asks for it is told at
once, by the APIs mockbroker leaves out of its ApiVersions answer, and reports it as it would to
its user.  None of it may hang.  On Kafka these capabilities work, so these tests run on
mockbroker alone."""

from __future__ import annotations

import pytest

from mockbroker import MockCluster
from tests.clients.helpers import wait_for
from tests.clients.targets import MOCK_SETTINGS
from tests.clients.test_streams_eos import START_TIMEOUT_S, StreamsApp, create_topics, names

pytestmark = pytest.mark.mockbroker_only("not-served")


def test_a_streams_app_asking_for_streams_groups_is_told_they_are_not_served(stack, tmp_path):
    """KIP-1071's streams groups (``group.protocol=streams``): the app stops with Kafka
    Streams' own error for a cluster without the protocol, instead of waiting to join."""
    cluster = stack.enter_context(MockCluster(**MOCK_SETTINGS))
    app_id, source, sink = names()
    create_topics(cluster.bootstrap_servers, source, sink)
    app = StreamsApp(cluster.bootstrap_servers, app_id, source, sink, tmp_path / "state",
                     tmp_path / "streams.log", "group.protocol=streams")
    stack.callback(app.close)
    wait_for(lambda: "state ERROR" in app.lines, "the app in state ERROR",
             timeout=START_TIMEOUT_S)
    [failed] = [line for line in app.lines if line.startswith("failed")]
    assert "UnsupportedVersionException: The cluster does not support the STREAMS group " \
           "protocol" in failed, app.lines
    assert "state RUNNING" not in app.lines

