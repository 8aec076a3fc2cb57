"""The KRaft controller quorum and log directories through Kafka's own tools and Java Admin:
``kafka-metadata-quorum.sh`` (``MetadataQuorumCommand``: ``describe --status``, ``describe
--replication``, ``add-controller``, ``remove-controller``), the Admin's
``describeMetadataQuorum``, ``alterReplicaLogDirs`` and ``describeReplicaLogDirs``.

On both targets a one-node cluster shows the same quorum: one voter, the node itself, leading
with a static voter's zero directory id and a CONTROLLER endpoint, no observers; the tool's
output has the same lines and table.  What differs by nature is left out: the high watermark
(Kafka's grows by a no-op record every 500 ms), the epoch, ports and times.  Voter changes are
refused as a static quorum refuses them, and a replica moved to a directory the broker does not
have is refused, on both.  Failover, elections when brokers stop, and moves between two log
directories run on mockbroker alone.
"""

from __future__ import annotations

import base64
import json
import re
import uuid
from pathlib import Path

import pytest

from mockbroker import MockCluster
from tests import jvm
from tests.clients.helpers import TIMEOUT_S, ToolRun, kafka_tool, run_kafka_tool
from tests.clients.targets import MOCK_SETTINGS
from wire.definitions import KAFKA_VERSION

QUORUM_TOOL = "org.apache.kafka.tools.MetadataQuorumCommand"
LOG_DIRS_TOOL = "org.apache.kafka.tools.LogDirsCommand"
ROOT = Path(__file__).resolve().parents[2]
SOURCE = Path(__file__).with_name("java") / "QuorumAdmin.java"
CLASSPATH = [ROOT / ".cache" / "jars" / f"kafka-clients-{KAFKA_VERSION}.jar",
             ROOT / ".cache" / "jars" / "slf4j-api-1.7.36.jar"]
JVM_TIMEOUT_S = 120
#: a static voter's directory id, the zero UUID, as Kafka prints a Uuid
ZERO = "AAAAAAAAAAAAAAAAAAAAAA"
STATUS_LABELS = ["ClusterId", "LeaderId", "LeaderEpoch", "HighWatermark", "MaxFollowerLag",
                 "MaxFollowerLagTimeMs", "CurrentVoters", "CurrentObservers"]
REPLICATION_HEADER = ["NodeId", "DirectoryId", "LogEndOffset", "Lag", "LastFetchTimestamp",
                      "LastCaughtUpTimestamp", "Status"]


def quorum_tool(bootstrap: str, *args: str) -> ToolRun:
    """(exit code, stdout, stderr lines) of ``kafka-metadata-quorum.sh``, which may refuse."""
    return run_kafka_tool(QUORUM_TOOL, "--bootstrap-server", bootstrap, *args,
                          timeout=JVM_TIMEOUT_S)


def status(bootstrap: str) -> dict[str, str]:
    """``describe --status``: label -> value, each label padded to 24 columns."""
    out = kafka_tool(QUORUM_TOOL, bootstrap, "describe", "--status")
    found = {}
    for line in out.splitlines():
        label, _, value = line.partition(":")
        assert line.startswith(f"{label}:".ljust(24)) and line[24] != " ", line
        found[label] = value.strip()
    assert list(found) == STATUS_LABELS, out
    return found


def replication(bootstrap: str, *flags: str) -> list[list[str]]:
    """``describe --replication``'s rows below its header, as ``ToolsUtils.prettyPrintTable``
    writes them: tab-separated cells padded to their column's width, a tab after the last."""
    out = kafka_tool(QUORUM_TOOL, bootstrap, "describe", "--replication", *flags)
    lines = out.splitlines()
    table = [line.split("\t") for line in lines]
    assert all(line.endswith("\t") and cells[-1] == "" for line, cells in zip(lines, table))
    table = [cells[:-1] for cells in table]
    widths = [max(len(cells[i].rstrip()) for cells in table) for i in range(len(table[0]))]
    assert all(cells == [c.rstrip().ljust(w) for c, w in zip(cells, widths)]
               for cells in table), out
    table = [[c.rstrip() for c in cells] for cells in table]
    assert table[0] == REPLICATION_HEADER
    return table[1:]


def quorum_admin(*args: str) -> list[str]:
    missing = [str(p) for p in CLASSPATH if not p.exists()]
    assert not missing, f"the Java client needs {missing} (bash ci/dev.sh setup fetches them)"
    done = jvm.run(":".join(map(str, CLASSPATH)), SOURCE, *args,
                   capture_output=True, text=True, timeout=JVM_TIMEOUT_S)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


def only_node(target) -> int:
    [node] = target.admin.list_topics(timeout=TIMEOUT_S).brokers
    return node


# -- one node: the same on both targets ------------------------------------------------------

def test_kafka_metadata_quorum_describes_a_one_node_quorum(target):
    bootstrap = target.bootstrap_servers
    node = only_node(target)
    found = status(bootstrap)
    cluster_id = target.admin.describe_cluster().result(timeout=TIMEOUT_S).cluster_id
    assert found["ClusterId"] == cluster_id
    assert found["LeaderId"] == str(node)
    assert int(found["LeaderEpoch"]) >= 1 and int(found["HighWatermark"]) > 0
    assert (found["MaxFollowerLag"], found["MaxFollowerLagTimeMs"]) == ("0", "0")
    assert re.fullmatch(r'\[\{"id": %d, "endpoints": \["CONTROLLER://127\.0\.0\.1:\d+"\]\}\]'
                        % node, found["CurrentVoters"]), found
    assert found["CurrentObservers"] == "[]"
    [row] = replication(bootstrap)
    assert (row[0], row[1], row[3], row[6]) == (str(node), ZERO, "0", "Leader")
    assert int(row[2]) >= int(found["HighWatermark"])
    # the leader's own fetch times are the moment it answers
    assert row[4] == row[5] and int(row[4]) > 0
    [row] = replication(bootstrap, "--human-readable")
    assert re.fullmatch(r"\d+ ms ago", row[4]) and re.fullmatch(r"\d+ ms ago", row[5])


def test_the_java_admin_describes_the_metadata_quorum(target):
    node = only_node(target)
    lines = quorum_admin("quorum", target.bootstrap_servers)
    assert len(lines) == 3, lines
    leader, epoch, high_watermark = map(int, lines[0].split()[1:])
    assert leader == node and epoch >= 1 and high_watermark > 0
    assert re.fullmatch(rf"voter {node} {ZERO} \d+ true true", lines[1]), lines
    assert re.fullmatch(rf"node {node} CONTROLLER://127\.0\.0\.1:\d+", lines[2]), lines


def test_a_static_quorum_refuses_to_add_or_remove_a_controller(target, tmp_path):
    bootstrap = target.bootstrap_servers
    node = only_node(target)
    code, out, err = quorum_tool(bootstrap, "remove-controller", "--controller-id", str(node),
                                 "--controller-directory-id", ZERO)
    assert (code, out) == (1, "")
    assert err[0] == "org.apache.kafka.common.errors.InvalidRequestException: Remove voter " \
                     "request didn't include a valid voter", err
    directory = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
    code, out, err = quorum_tool(bootstrap, "remove-controller", "--controller-id", str(node),
                                 # one word: a random id may start with "-"
                                 f"--controller-directory-id={directory}")
    assert (code, err[0]) == (1, "org.apache.kafka.common.errors.UnsupportedVersionException: "
                                 "Cluster doesn't support removing voter because the "
                                 "kraft.version feature is 0"), err
    # the controller to add, as its own configuration and metadata directory describe it
    cluster_id = target.admin.describe_cluster().result(timeout=TIMEOUT_S).cluster_id
    metadata = tmp_path / "metadata"
    metadata.mkdir()
    (metadata / "meta.properties").write_text(
        f"version=1\ncluster.id={cluster_id}\nnode.id={node + 10}\ndirectory.id={directory}\n")
    config = tmp_path / "controller.properties"
    config.write_text(f"node.id={node + 10}\nprocess.roles=controller\n"
                      "controller.listener.names=CONTROLLER\n"
                      "listeners=CONTROLLER://127.0.0.1:19093\n"
                      f"metadata.log.dir={metadata}\n")
    code, out, err = quorum_tool(bootstrap, "--command-config", str(config), "add-controller")
    assert (code, err[0]) == (1, "org.apache.kafka.common.errors.UnsupportedVersionException: "
                                 "Cluster doesn't support adding voter because the "
                                 "kraft.version feature is 0"), err
    assert status(bootstrap)["CurrentVoters"].startswith(f'[{{"id": {node}, ')


def test_the_java_admin_moves_a_replica_only_to_a_directory_of_its_broker(target):
    node = only_node(target)
    topic = target.create_topic("moved", 1)
    lines = quorum_admin("logdirs", target.bootstrap_servers, str(node), topic, "0",
                         "/no/such/dir")
    [log_dir] = lines[0].removeprefix("dirs ").split(",")
    assert lines[1:] == ["moved LogDirNotFoundException", f"replica {log_dir} null"]
    lines = quorum_admin("logdirs", target.bootstrap_servers, str(node), topic, "0", log_dir)
    assert lines == [f"dirs {log_dir}", "moved OK", f"replica {log_dir} null"]


# -- mockbroker alone --------------------------------------------------------------------------

@pytest.mark.mockbroker_only("brokers")
def test_failover_and_elections_show_in_the_tools_output(stack):
    cluster = stack.enter_context(MockCluster(brokers=3, **MOCK_SETTINGS))
    admin = cluster.admin
    addresses = cluster.bootstrap_servers.split(",")
    first = addresses[0]
    found = status(first)
    assert (found["LeaderId"], found["LeaderEpoch"]) == ("0", "1")
    assert found["CurrentVoters"] == "[" + ", ".join(
        f'{{"id": {i}, "endpoints": ["CONTROLLER://{address}"]}}'
        for i, address in enumerate(addresses)) + "]"
    assert [(row[0], row[3], row[6]) for row in replication(first)] == [
        ("0", "0", "Leader"), ("1", "0", "Follower"), ("2", "0", "Follower")]

    view = admin.quorum_failover()
    assert (view.leader_id, view.leader_epoch) == (1, 2)
    found = status(first)
    assert (found["LeaderId"], found["LeaderEpoch"]) == ("1", "2")
    assert [(row[0], row[6]) for row in replication(first)] == [
        ("1", "Leader"), ("0", "Follower"), ("2", "Follower")]

    admin.stop_broker(1)  # the leader: the lowest live voter is elected
    found = status(first)
    high_watermark = int(found["HighWatermark"])
    assert (found["LeaderId"], found["LeaderEpoch"]) == ("0", "3")
    # as Kafka shows a voter that has not fetched from the new leader
    assert (found["MaxFollowerLag"], found["MaxFollowerLagTimeMs"]) == (
        str(high_watermark + 1), "-1")
    rows = replication(first)
    assert [(row[0], row[2], row[3], row[4], row[5], row[6]) for row in rows[1:2]] == [
        ("1", "-1", str(int(rows[0][2]) + 1), "-1", "-1", "Follower")]
    assert [e["leader"] for e in admin.events("quorum_leader_changed")] == [1, 0]

    admin.start_broker(1)
    assert {row[3] for row in replication(first)} == {"0"}
    assert status(first)["LeaderId"] == "0"


@pytest.mark.mockbroker_only("broker-settings")
def test_a_replica_moves_between_two_log_directories(stack):
    cluster = stack.enter_context(MockCluster(log_dirs="/data/a,/data/b", topics={"t": 2},
                                              **MOCK_SETTINGS))
    lines = quorum_admin("logdirs", cluster.bootstrap_servers, "0", "t", "0", "/data/b")
    assert lines == ["dirs /data/a,/data/b", "moved OK", "replica /data/b null"]
    out = kafka_tool(LOG_DIRS_TOOL, cluster.bootstrap_servers, "--describe",
                     "--topic-list", "t")
    [described] = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    [broker] = described["brokers"]
    assert sorted((d["logDir"], d["error"], sorted(p["partition"] for p in d["partitions"]),
                   {p["isFuture"] for p in d["partitions"]}) for d in broker["logDirs"]) == [
        ("/data/a", None, [], set()), ("/data/b", None, ["t-0", "t-1"], {False})]
