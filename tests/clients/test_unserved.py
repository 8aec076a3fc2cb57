"""What Kafka 4.4 serves and mockbroker does not yet: a stock client that asks for it is told at
once, by the APIs mockbroker leaves out of its ApiVersions answer, and reports it as it would to
its user.  None of it may hang.  On Kafka these capabilities work, so these tests run on
mockbroker alone."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from mockbroker import MockCluster
from tests.clients.helpers import wait_for
from tests.clients.targets import MOCK_SETTINGS
from tests.clients.test_streams_eos import (CLASSPATH, START_TIMEOUT_S, StreamsApp,
                                            create_topics, names)

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


def test_a_share_consumer_is_told_share_groups_are_not_served(stack):
    """KIP-932's share groups (``KafkaShareConsumer``): its first poll throws the Java client's
    error for a cluster without the share group protocol."""
    cluster = stack.enter_context(MockCluster(topics={"jobs": 1}, **MOCK_SETTINGS))
    source = Path(__file__).with_name("java") / "ShareGroupProbe.java"
    jars = [p for p in CLASSPATH if p.name.startswith(("kafka-clients-", "slf4j-api-"))]
    assert all(p.exists() for p in jars) and shutil.which("java"), \
        f"the probe needs java and {jars} (bash ci/dev.sh setup fetches them)"
    done = subprocess.run(["java", "-cp", os.pathsep.join(map(str, jars)), str(source),
                           cluster.bootstrap_servers, "workers", "jobs", "30"],
                          capture_output=True, text=True, timeout=START_TIMEOUT_S)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == [
        "failed org.apache.kafka.common.errors.UnsupportedVersionException: The cluster does "
        "not support the share group protocol using ShareGroupHeartbeat API version 1 or later. "
        "This version of the API was introduced in Apache Kafka v4.1."], done.stdout
