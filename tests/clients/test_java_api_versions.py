"""Kafka 4.4's Java client negotiates ApiVersions v5 (KIP-1242) with us: once it knows the
cluster, it names the cluster and the node it means to reach in each new connection's
ApiVersions, and each broker accepts it as itself.  Its Admin then deletes groups with
DeleteGroups v3.  The client is the kafka-clients jar of ``wire.definitions.KAFKA_VERSION``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mockbroker.mock_cluster import MockCluster
from tests import jvm
from wire import errors
from wire.definitions import KAFKA_VERSION

# it reads the requests each broker logged, and counts them with a control rule
pytestmark = pytest.mark.mockbroker_only("mockbroker")

ROOT = Path(__file__).resolve().parents[2]
SOURCE = Path(__file__).with_name("java") / "AdminProbe.java"
CLASSPATH = [ROOT / ".cache" / "jars" / f"kafka-clients-{KAFKA_VERSION}.jar",
             ROOT / ".cache" / "jars" / "slf4j-api-1.7.36.jar"]
PARTITIONS = 3


def run_probe(cluster: MockCluster, topic: str) -> list[str]:
    missing = [str(p) for p in CLASSPATH if not p.exists()]
    assert not missing and shutil.which("java"), \
        f"the Java client needs java and {missing} (bash ci/dev.sh setup fetches them)"
    done = jvm.run(":".join(map(str, CLASSPATH)), SOURCE, cluster.bootstrap_servers, topic,
                   str(PARTITIONS), capture_output=True, text=True, timeout=120)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, lines
    return lines


def test_the_java_client_names_each_broker_in_api_versions_v5_and_is_accepted():
    with MockCluster(brokers=3) as cluster:
        seen: list[tuple[int, int, str | None, int]] = []
        cluster.control(18, lambda r: seen.append(
            (r.broker_id, r.api_version, r.body.cluster_id, r.body.node_id)), keep=True)
        lines = run_probe(cluster, "java-v5")
        core = cluster.core
        logged = cluster.call(lambda: [(r.api_key, r.api_version, r.outcome, r.error_code)
                                       for r in core.requests if r.api_key in (18, 42)])
        cluster_id = cluster.call(lambda: core.cluster.cluster_id)
    assert lines[:3] == [f"cluster {cluster_id} 3", "created java-v5",
                         "delete-group GroupIdNotFoundException"]
    assert lines[3:] == [f"produced {p} 0" for p in range(PARTITIONS)]
    assert {version for _, version, _, _ in seen} == {5}
    # bootstrap connections know no cluster yet; the others name the broker they reach
    named = [(broker, node) for broker, _, cluster_sent, node in seen if cluster_sent is not None]
    assert named and all(broker == node for broker, node in named)
    assert {cluster_sent for _, _, cluster_sent, _ in seen} == {None, cluster_id}
    assert all(node == -1 for _, _, cluster_sent, node in seen if cluster_sent is None)
    assert {entry for entry in logged if entry[0] == 18} == {(18, 5, "answered", errors.NONE)}
    assert [entry for entry in logged if entry[0] == 42] == \
        [(42, 3, "answered", errors.GROUP_ID_NOT_FOUND)]
