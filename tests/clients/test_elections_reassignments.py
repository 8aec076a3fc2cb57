"""Leader elections and partition reassignments through the clients a Kafka user has:
``kafka-leader-election.sh`` (``LeaderElectionCommand``), ``kafka-reassign-partitions.sh``
(``ReassignPartitionsCommand``: ``--generate``, ``--execute``, ``--verify``, ``--list``,
``--cancel``), the Java Admin's ``electLeaders``, ``alterPartitionReassignments`` and
``listPartitionReassignments`` (``java/ReassignAdmin.java``, run from source), and
confluent-kafka's ``AdminClient.elect_leaders``.

What one node can show runs on both targets: an election that is not needed, partitions and
topics that do not exist, the controller's refusals of a reassignment (a broker that is not
registered, a broker named twice, a cancel with nothing running), the tool's own checks, a
reassignment to the replicas a partition already has, and nothing listed.  What needs brokers
stopped runs on three brokers of either (``lifecycle_target``: three mockbrokers, or the run's
three-node Kafka 4.4, brokers 0, 1 and 2 on both): a preferred election after a broker came
back, elections with the preferred broker or every replica stopped, an unclean election of a
replica outside the ISR, and the controller's refusals on three brokers.  Reassignments watched
while they run on a broker clock the test moves (``replica_catch_up_ms``), completed, or
cancelled, run on mockbroker alone, checked against what a three-node Kafka 4.4 printed in the
same steps (its brokers were 1, 2 and 3; mockbroker's are 0, 1 and 2).

Left out as different by nature: ports, the log-dir paths ``--generate`` and ``--execute`` print
(``/tmp/kafka-logs`` on mockbroker, a temporary directory on Kafka), the random proposal of
``--generate`` on several brokers (its shape is checked), and the order the election tool lists
partitions in (a Java ``HashSet``'s, which the client alone decides: lists are compared as sets).
"""

from __future__ import annotations

import json
from pathlib import Path

import confluent_kafka as ck
import pytest
from confluent_kafka.admin import ConfigResource, ConfigSource, NewTopic

from mockbroker import MockCluster
from tests import jvm
from tests.clients.helpers import TIMEOUT_S, ToolRun, ck_admin, run_kafka_tool
from tests.clients.targets import MOCK_SETTINGS
from wire.definitions import KAFKA_VERSION

LEADER_ELECTION = "org.apache.kafka.tools.LeaderElectionCommand"
REASSIGN = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
ROOT = Path(__file__).resolve().parents[2]
SOURCE = Path(__file__).with_name("java") / "ReassignAdmin.java"
CLASSPATH = [ROOT / ".cache" / "jars" / f"kafka-clients-{KAFKA_VERSION}.jar",
             ROOT / ".cache" / "jars" / "slf4j-api-1.7.36.jar"]
JVM_TIMEOUT_S = 120
#: the tool's TerseException, word for word (two spaces after the first sentence)
EXISTING = ("Cannot execute because there is an existing partition assignment.  Use "
            "--additional to override this and create a new partition assignment in addition "
            "to the existing one. The --additional flag can also be used to change the "
            "throttle by resubmitting the current reassignment.")
NOT_NEEDED = "ElectionNotNeededException: Leader election not needed for topic partition."
NOT_AVAILABLE = ("org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: The "
                 "preferred leader was not available.")
NO_ELIGIBLE = ("org.apache.kafka.common.errors.EligibleLeadersNotAvailableException: "
               "Eligible topic partition leaders are not available.")
UNKNOWN = "org.apache.kafka.common.errors.UnknownTopicOrPartitionException"
TOPIC_THROTTLES = ("leader.replication.throttled.replicas",
                   "follower.replication.throttled.replicas")
BROKER_THROTTLES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
#: a topic no test creates
NOPE = "no-such-topic"


# -- running the clients ---------------------------------------------------------------------

def run_tool(main_class: str, bootstrap: str, *args: str) -> ToolRun:
    """(exit code, stdout, stderr lines) of one of Kafka's tools, which may refuse."""
    return run_kafka_tool(main_class, "--bootstrap-server", bootstrap, *args,
                          timeout=JVM_TIMEOUT_S)


def election(bootstrap: str, *args: str) -> tuple[int, str, list[str]]:
    """``kafka-leader-election.sh``, with the partition lists of its lines sorted and its
    error lines in name order (the tool prints both in Java hash order)."""
    code, out, err = run_tool(LEADER_ELECTION, bootstrap, *args)
    lines, errors = [], []
    for line in out.splitlines():
        head, found, listed = line.partition(" for partitions ")
        if found:
            line = head + found + ", ".join(sorted(listed.split(", ")))
        (errors if line.startswith("Error completing") else lines).append(line)
    return code, "".join(f"{line}\n" for line in lines + sorted(errors)), err


def reassign(bootstrap: str, *args: str) -> tuple[int, str]:
    """``kafka-reassign-partitions.sh``: (exit code, stdout), where it prints its errors."""
    code, out, _ = run_tool(REASSIGN, bootstrap, *args)
    return code, out


def reassign_admin(bootstrap: str, *calls: str) -> list[str]:
    """What ``ReassignAdmin.java`` prints for its calls (see its header)."""
    missing = [str(p) for p in CLASSPATH if not p.exists()]
    assert not missing, f"the Java client needs {missing} (bash ci/dev.sh setup fetches them)"
    done = jvm.run(":".join(map(str, CLASSPATH)), SOURCE, bootstrap, *calls,
                   capture_output=True, text=True, timeout=JVM_TIMEOUT_S)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


def json_file(tmp_path: Path, name: str, data) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def moves(tmp_path: Path, name: str, targets: dict[tuple[str, int], list[int]]) -> str:
    """A reassignment JSON file: (topic, partition) -> target replicas."""
    return json_file(tmp_path, name, {"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": r} for (t, p), r in targets.items()]})


def assignment_json(line: str) -> list[tuple[str, int, list[int], list[str]]]:
    """A compact reassignment JSON line the tool printed: (topic, partition, replicas,
    log dirs) in its order, after its fields were checked to come in the tool's order."""
    found = json.loads(line)
    assert list(found) == ["version", "partitions"] and found["version"] == 1, line
    assert all(list(p) == ["topic", "partition", "replicas", "log_dirs"]
               for p in found["partitions"]), line
    assert line == json.dumps(found, separators=(",", ":")), line
    return [(p["topic"], p["partition"], p["replicas"], p["log_dirs"])
            for p in found["partitions"]]


def a_path(log_dir: str) -> bool:
    return log_dir.startswith("/") and log_dir != "any"


def partition_state(admin, topic: str, index: int) -> tuple[int, list[int], list[int]]:
    """(leader, replicas, ISR) of a partition, as Metadata tells a client."""
    found = admin.list_topics(topic, timeout=TIMEOUT_S).topics[topic].partitions[index]
    return found.leader, list(found.replicas), list(found.isrs)


def only_node(target) -> int:
    [node] = target.admin.list_topics(timeout=TIMEOUT_S).brokers
    return node


def three_brokers(stack, **settings) -> MockCluster:
    """Three mockbrokers whose clock stands still, so that the controller's periodic preferred
    election (every 300 s) never comes before the test's own."""
    return stack.enter_context(MockCluster(brokers=3, clock="manual",
                                           **{**MOCK_SETTINGS, **settings}))


def create(admin, name: str, assignment: list[list[int]]) -> str:
    """A topic with its replicas placed by hand, as CreateTopics places them."""
    futures = admin.create_topics([NewTopic(name, len(assignment),
                                            replica_assignment=assignment)],
                                  operation_timeout=TIMEOUT_S)
    futures[name].result(timeout=TIMEOUT_S)
    return name


def throttles(admin, topic: str, brokers: list[int]) -> dict[str, str]:
    """The reassignment throttles set on a topic and on brokers (``name`` or
    ``broker N name`` -> value), the dynamic ones only."""
    found = {}
    # one call a resource: librdkafka sends a broker's configs to that broker
    for resource in [ConfigResource("TOPIC", topic)] + [ConfigResource("BROKER", str(b))
                                                        for b in brokers]:
        [future] = admin.describe_configs([resource]).values()
        for name, entry in future.result(timeout=TIMEOUT_S).items():
            source = ConfigSource(entry.source)
            if name in TOPIC_THROTTLES and source is ConfigSource.DYNAMIC_TOPIC_CONFIG:
                found[name] = entry.value
            elif name in BROKER_THROTTLES and source is ConfigSource.DYNAMIC_BROKER_CONFIG:
                found[f"broker {resource.name} {name}"] = entry.value
    return found


# -- kafka-leader-election.sh ----------------------------------------------------------------

def test_the_election_tool_finds_nothing_to_elect_on_one_node(target, tmp_path):
    topic = target.create_topic("elect", 3)
    bootstrap = target.bootstrap_servers
    for kind in ("preferred", "UNCLEAN"):  # any case
        assert election(bootstrap, "--election-type", kind, "--topic", topic,
                        "--partition", "0") == (
            0, f"Valid replica already elected for partitions {topic}-0\n", [])
        assert election(bootstrap, "--election-type", kind, "--all-topic-partitions") == (
            0, "", [])
    asked = json_file(tmp_path, "elect.json", {"partitions": [
        {"topic": topic, "partition": 0}, {"topic": topic, "partition": 2},
        {"topic": NOPE, "partition": 0}, {"topic": topic, "partition": 7}]})
    code, out, err = election(bootstrap, "--election-type", "preferred",
                              "--path-to-json-file", asked)
    failed = sorted([
        f"Error completing leader election (PREFERRED) for partition: {NOPE}-0: {UNKNOWN}: "
        f"No such topic as {NOPE}\n",
        f"Error completing leader election (PREFERRED) for partition: {topic}-7: {UNKNOWN}: "
        f"No such partition as {topic}-7\n"])
    assert (code, out) == (1, f"Valid replica already elected for partitions {topic}-0, "
                              f"{topic}-2\n" + "".join(failed))
    assert err[0] == "2 replica(s) could not be elected", err


def test_the_election_tool_gives_the_lead_back_and_says_why_it_cannot(lifecycle_target):
    target = lifecycle_target
    bootstrap = target.bootstrap_servers
    t = target.create_placed("t", [[2, 0], [0, 1], [1, 2]])
    solo = target.create_placed("solo", [[2]])
    target.stop_broker(2)
    target.start_broker(2)
    # broker 2 is back in the ISR, the lead stays where it went
    assert target.partition(t, 0) == (0, [2, 0], [0, 2])
    assert election(bootstrap, "--election-type", "preferred", "--topic", t,
                    "--partition", "0") == (
        0, f"Successfully completed leader election (PREFERRED) for partitions {t}-0\n", [])
    target.settled(lambda: target.partition(t, 0)[0], 2, "broker 2 leading again")

    target.stop_broker(2)  # t-0 is led by 0 again, solo-0 by nobody
    assert (target.partition(t, 0)[0], target.partition(solo, 0)[0]) == (0, -1)
    code, out, err = election(bootstrap, "--election-type", "preferred", "--topic", t,
                              "--partition", "0")
    assert (code, out, err[0]) == (
        1, f"Error completing leader election (PREFERRED) for partition: {t}-0: "
           f"{NOT_AVAILABLE}\n", "1 replica(s) could not be elected")
    code, out, err = election(bootstrap, "--election-type", "unclean", "--topic", solo,
                              "--partition", "0")
    assert (code, out, err[0]) == (
        1, f"Error completing leader election (UNCLEAN) for partition: {solo}-0: "
           f"{NO_ELIGIBLE}\n", "1 replica(s) could not be elected")
    assert election(bootstrap, "--election-type", "unclean", "--topic", t,
                    "--partition", "0") == (
        0, f"Valid replica already elected for partitions {t}-0\n", [])
    # every partition: the ones that need no election are left out (on Kafka, the partitions
    # of __consumer_offsets that broker 2 led are listed too; only this test's are compared)
    code, out, err = election(bootstrap, "--election-type", "preferred",
                              "--all-topic-partitions")
    assert (code, mine(out, t, solo), err[0]) == (1, (
        f"Error completing leader election (PREFERRED) for partition: {solo}-0: "
        f"{NOT_AVAILABLE}\n"
        f"Error completing leader election (PREFERRED) for partition: {t}-0: "
        f"{NOT_AVAILABLE}\n"), f"{out.count('Error completing')} replica(s) could not be elected")


def test_an_unclean_election_gives_the_lead_to_a_replica_outside_the_isr(lifecycle_target):
    target = lifecycle_target
    bootstrap = target.bootstrap_servers
    x = target.create_placed("x", [[0, 1]])
    target.stop_broker(1)  # leaves the ISR
    target.stop_broker(0)  # the last of the ISR: no leader
    target.start_broker(1)  # alive, out of the ISR: no clean election can pick it
    assert target.partition(x, 0)[0] == -1
    code, out, _ = election(bootstrap, "--election-type", "preferred", "--topic", x,
                            "--partition", "0")
    assert (code, out) == (1, "Error completing leader election (PREFERRED) for partition: "
                              f"{x}-0: {NOT_AVAILABLE}\n")
    assert election(bootstrap, "--election-type", "unclean", "--all-topic-partitions") == (
        0, f"Successfully completed leader election (UNCLEAN) for partitions {x}-0\n", [])
    target.settled(lambda: target.partition(x, 0), (1, [0, 1], [1]), "broker 1 leading")


def mine(out: str, *topics: str) -> str:
    """The lines of the election tool's output that name one of ``topics``."""
    return "".join(line + "\n" for line in out.splitlines()
                   if any(f" {topic}-" in line for topic in topics))


# -- confluent-kafka's elect_leaders ---------------------------------------------------------

def errors_of(results) -> dict[str, tuple[str, str] | None]:
    """elect_leaders' results: ``topic-partition`` -> (error name, message) or None."""
    return {f"{tp.topic}-{tp.partition}": None if error is None else (error.name(), error.str())
            for tp, error in results.items()}


def test_confluent_elect_leaders_answers_each_partition(target):
    topic = target.create_topic("ck-elect", 2)
    admin = target.admin
    asked = [ck.TopicPartition(topic, 0), ck.TopicPartition(topic, 9),
             ck.TopicPartition(NOPE, 0)]
    found = admin.elect_leaders(ck.ElectionType.PREFERRED, asked).result(timeout=TIMEOUT_S)
    assert errors_of(found) == {
        f"{topic}-0": ("ELECTION_NOT_NEEDED", "Leader election not needed for topic "
                                              "partition."),
        f"{topic}-9": ("UNKNOWN_TOPIC_OR_PART", f"No such partition as {topic}-9"),
        f"{NOPE}-0": ("UNKNOWN_TOPIC_OR_PART", f"No such topic as {NOPE}")}
    found = admin.elect_leaders(ck.ElectionType.UNCLEAN, asked[:1]).result(timeout=TIMEOUT_S)
    assert errors_of(found) == {f"{topic}-0": ("ELECTION_NOT_NEEDED", "Leader election not "
                                                                      "needed for topic "
                                                                      "partition.")}
    assert admin.elect_leaders(ck.ElectionType.PREFERRED, None).result(timeout=TIMEOUT_S) == {}


def test_confluent_elect_leaders_elects_or_says_why_not(lifecycle_target):
    target = lifecycle_target
    t = target.create_placed("t", [[2, 0], [0, 1]])
    solo = target.create_placed("solo", [[2]])
    target.stop_broker(2)
    target.start_broker(2)
    found = target.admin.elect_leaders(ck.ElectionType.PREFERRED, None).result(
        timeout=TIMEOUT_S)
    # (on Kafka, partitions of __consumer_offsets that broker 2 led are elected too)
    assert {k: v for k, v in errors_of(found).items()
            if k.rsplit("-", 1)[0] in (t, solo)} == {f"{t}-0": None}
    target.stop_broker(2)
    found = target.admin.elect_leaders(ck.ElectionType.PREFERRED, [
        ck.TopicPartition(t, 0), ck.TopicPartition(t, 1)]).result(timeout=TIMEOUT_S)
    assert errors_of(found) == {
        f"{t}-0": ("PREFERRED_LEADER_NOT_AVAILABLE", "The preferred leader was not available."),
        f"{t}-1": ("ELECTION_NOT_NEEDED", "Leader election not needed for topic partition.")}
    found = target.admin.elect_leaders(ck.ElectionType.UNCLEAN, [
        ck.TopicPartition(solo, 0)]).result(timeout=TIMEOUT_S)
    assert errors_of(found) == {f"{solo}-0": ("ELIGIBLE_LEADERS_NOT_AVAILABLE", "Eligible topic "
                                              "partition leaders are not available.")}


# -- the Java Admin --------------------------------------------------------------------------

def test_the_java_admin_is_answered_per_partition_on_one_node(target):
    node = only_node(target)
    t = target.create_topic("java", 2)
    lines = reassign_admin(
        target.bootstrap_servers,
        f"elect PREFERRED {t}-0,{t}-9,{NOPE}-0", f"elect UNCLEAN {t}-0",
        "elect PREFERRED none", "elect PREFERRED all",
        f"alter allow {t}-0={node},99 {t}-1={node},{node}",
        f"alter allow {NOPE}-0={node} {t}-9={node}",
        f"alter allow {t}-0=cancel", f"alter disallow {t}-1={node}",
        "list all", f"list {t}-0,{t}-9,{NOPE}-0")
    assert lines == [
        f"elect {t}-0 {NOT_NEEDED}",
        f"elect {t}-9 UnknownTopicOrPartitionException: No such partition as {t}-9",
        f"elect {NOPE}-0 UnknownTopicOrPartitionException: No such topic as {NOPE}",
        f"elect {t}-0 {NOT_NEEDED}",
        "elect {}",
        "elect {}",
        f"alter {t}-0 InvalidReplicaAssignmentException: The manual partition assignment "
        "includes broker 99, but no such broker is registered.",
        f"alter {t}-1 InvalidReplicaAssignmentException: The manual partition assignment "
        f"includes the broker {node} more than once.",
        f"alter {t}-9 UnknownTopicOrPartitionException: Unable to find partition {t}:9.",
        f"alter {NOPE}-0 UnknownTopicOrPartitionException: Unable to find a topic named "
        f"{NOPE}.",
        f"alter {t}-0 NoReassignmentInProgressException: No partition reassignment is in "
        "progress.",
        f"alter {t}-1 OK",
        "list {}",
        "list {}"]


@pytest.mark.mockbroker_only("clock")
def test_the_java_admin_reassigns_and_elects_across_brokers(stack):
    cluster = three_brokers(stack, replica_catch_up_ms=5000)
    admin = ck_admin(cluster)
    create(admin, "t", [[1, 2], [2, 0], [0, 1]])
    bootstrap = cluster.bootstrap_servers
    lines = reassign_admin(bootstrap, "alter disallow t-0=0,1,2 t-1=1,0 t-2=1,0",
                           "list all", "list t-0,t-1", "elect PREFERRED t-1")
    assert lines == [
        "alter t-0 InvalidReplicationFactorException: The replication factor is changed from "
        "2 to 3",
        "alter t-1 OK", "alter t-2 OK",
        "list t-1 replicas=1,0,2 adding=1 removing=2",
        "list t-1 replicas=1,0,2 adding=1 removing=2",
        # the partition runs with its target's first replica, which is not yet in the ISR
        "elect t-1 PreferredLeaderNotAvailableException: The preferred leader was not "
        "available."]
    # while it runs, Metadata lists every replica, the adding one included
    assert partition_state(admin, "t", 1) == (2, [1, 0, 2], [2, 0])
    # a new order of the same replicas is done at once, its leader kept
    assert partition_state(admin, "t", 2) == (0, [1, 0], [0, 1])
    cluster.advance_clock(5000)  # broker 1 caught up: the reassignment completes
    assert partition_state(admin, "t", 1) == (1, [1, 0], [0, 1])
    lines = reassign_admin(bootstrap, "list all", "elect PREFERRED all",
                           "alter allow t-1=cancel")
    assert lines == ["list {}", "elect t-2 OK", "alter t-1 NoReassignmentInProgressException: "
                                                "No partition reassignment is in progress."]
    assert partition_state(admin, "t", 2)[0] == 1


# -- kafka-reassign-partitions.sh --------------------------------------------------------------

def test_the_reassign_tool_on_one_node(target, tmp_path):
    node = only_node(target)
    t = target.create_topic("moving", 2)
    bootstrap, admin = target.bootstrap_servers, target.admin
    assert reassign(bootstrap, "--list") == (0, "No partition reassignments found.\n")

    # the tool's own checks, before anything is asked of the controller
    cases = {
        (t, 0): ([node, 99], "Error: Unknown broker id 99"),
        (t, 9): ([node], f"Error: {UNKNOWN}: Unable to find partition: {t}-9"),
        (NOPE, 0): ([node], f"Error: {UNKNOWN}: Topic {NOPE} not found."),
        (t, 1): ([node, node], "Error: Partition replica lists may not contain duplicate "
                               f"entries: {t}-1 contains multiple entries for {node}"),
    }
    for i, ((topic, index), (replicas, error)) in enumerate(cases.items()):
        code, out = reassign(bootstrap, "--execute", "--reassignment-json-file",
                             moves(tmp_path, f"bad{i}.json", {(topic, index): replicas}))
        assert (code, out.splitlines()[0]) == (1, error), out
    wanted = json_file(tmp_path, "topics.json", {"version": 1, "topics": [{"topic": NOPE}]})
    code, out = reassign(bootstrap, "--generate", "--topics-to-move-json-file", wanted,
                         "--broker-list", str(node))
    assert (code, out.splitlines()[0]) == (1, f"Error: {UNKNOWN}: Topic {NOPE} not found.")
    wanted = json_file(tmp_path, "topics.json", {"version": 1, "topics": [{"topic": t}]})
    code, out = reassign(bootstrap, "--generate", "--topics-to-move-json-file", wanted,
                         "--broker-list", f"{node},{node}")
    assert (code, out.splitlines()[0]) == (1, f"Error: Broker list contains duplicate "
                                              f"entries: [{node}]")

    # with one broker, the proposal is where the partitions are
    code, out = reassign(bootstrap, "--generate", "--topics-to-move-json-file", wanted,
                         "--broker-list", str(node))
    lines = out.splitlines()
    assert code == 0 and [lines[0], lines[2], lines[3]] == [
        "Current partition replica assignment", "", "Proposed partition reassignment "
                                                    "configuration"] and len(lines) == 5, out
    current = assignment_json(lines[1])
    assert [c[:3] for c in current] == [(t, 0, [node]), (t, 1, [node])]
    assert all(a_path(d) for c in current for d in c[3]), out
    assert assignment_json(lines[4]) == [(t, 0, [node], ["any"]), (t, 1, [node], ["any"])]

    # a reassignment to where the partition is: nothing moves, throttles come and go
    same = moves(tmp_path, "same.json", {(t, 0): [node]})
    code, out = reassign(bootstrap, "--execute", "--reassignment-json-file", same,
                         "--throttle", "1048576")
    lines = out.splitlines()
    assert code == 0 and lines[:2] == ["Current partition replica assignment", ""], out
    [(topic, index, replicas, [log_dir])] = assignment_json(lines[2])
    assert (topic, index, replicas) == (t, 0, [node]) and a_path(log_dir)
    assert lines[3:] == [
        "", "Save this to use as the --reassignment-json-file option during rollback",
        "Warning: You must run --verify periodically, until the reassignment completes, to "
        "ensure the throttle is removed.",
        "The inter-broker throttle limit was set to 1048576 B/s",
        f"Successfully started partition reassignment for {t}-0"]
    assert throttles(admin, t, [node]) == {
        "leader.replication.throttled.replicas": f"0:{node}",
        "follower.replication.throttled.replicas": "",
        f"broker {node} leader.replication.throttled.rate": "1048576",
        f"broker {node} follower.replication.throttled.rate": "1048576"}
    assert reassign(bootstrap, "--verify", "--reassignment-json-file", same) == (0, (
        f"Status of partition reassignment:\nReassignment of partition {t}-0 is completed.\n\n"
        f"Clearing broker-level throttles on broker {node}\n"
        f"Clearing topic-level throttles on topic {t}\n"))
    assert throttles(admin, t, [node]) == {}
    assert reassign(bootstrap, "--cancel", "--reassignment-json-file", same) == (0, (
        "None of the specified partition reassignments are active.\n"
        "None of the specified partition moves are active."
        f"Clearing broker-level throttles on broker {node}\n"
        f"Clearing topic-level throttles on topic {t}\n"))


@pytest.mark.mockbroker_only("clock")
def test_a_throttled_reassignment_runs_until_its_replicas_catch_up(stack, tmp_path):
    cluster = three_brokers(stack, replica_catch_up_ms=5000)
    admin = ck_admin(cluster)
    bootstrap = cluster.bootstrap_servers
    create(admin, "t", [[1, 2], [2, 0], [0, 1]])

    wanted = json_file(tmp_path, "topics.json", {"version": 1, "topics": [{"topic": "t"}]})
    code, out = reassign(bootstrap, "--generate", "--topics-to-move-json-file", wanted,
                         "--broker-list", "0,1,7")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 5 and lines[2] == "", out
    current = assignment_json(lines[1])
    assert [c[:3] for c in current] == [("t", 0, [1, 2]), ("t", 1, [2, 0]), ("t", 2, [0, 1])]
    assert all(a_path(d) for c in current for d in c[3]), out
    # a random placement over the brokers listed that exist, with the same replication factor
    proposed = assignment_json(lines[4])
    assert [(p[0], p[1], sorted(p[2]), p[3]) for p in proposed] == [
        ("t", i, [0, 1], ["any", "any"]) for i in range(3)], out

    plan = moves(tmp_path, "plan.json", {("t", 0): [0, 1], ("t", 1): [1, 0]})
    code, out = reassign(bootstrap, "--execute", "--reassignment-json-file", plan,
                         "--throttle", "1")
    lines = out.splitlines()
    assert code == 0 and lines[:2] == ["Current partition replica assignment", ""], out
    rollback = assignment_json(lines[2])
    assert [r[:3] for r in rollback] == [("t", 0, [1, 2]), ("t", 1, [2, 0])]
    assert lines[3:] == [
        "", "Save this to use as the --reassignment-json-file option during rollback",
        "Warning: You must run --verify periodically, until the reassignment completes, to "
        "ensure the throttle is removed.",
        "The inter-broker throttle limit was set to 1 B/s",
        "Successfully started partition reassignments for t-0,t-1"]
    # (the one-node test checks the brokers' throttle values)
    set_now = throttles(admin, "t", [0, 1, 2])
    assert (set_now["leader.replication.throttled.replicas"],
            set_now["follower.replication.throttled.replicas"]) == ("0:1,0:2,1:0,1:2", "0:0,1:1")
    assert sorted(set_now) == sorted([*TOPIC_THROTTLES, *(
        f"broker {b} {name}" for b in (0, 1, 2) for name in BROKER_THROTTLES)])

    assert reassign(bootstrap, "--list") == (0, (
        "Current partition reassignments:\n"
        "t-0: replicas: 0,1,2. adding: 0. removing: 2.\n"
        "t-1: replicas: 1,0,2. adding: 1. removing: 2.\n"))
    assert reassign(bootstrap, "--execute", "--reassignment-json-file", plan) == (
        1, EXISTING + "\n")
    assert reassign(bootstrap, "--verify", "--reassignment-json-file", plan) == (0, (
        "Status of partition reassignment:\n"
        "Reassignment of partition t-0 is still in progress.\n"
        "Reassignment of partition t-1 is still in progress.\n\n"))
    assert throttles(admin, "t", [0, 1, 2]) == set_now  # kept while it runs

    cluster.advance_clock(5000)  # the adding replicas caught up
    assert reassign(bootstrap, "--verify", "--reassignment-json-file", plan) == (0, (
        "Status of partition reassignment:\n"
        "Reassignment of partition t-0 is completed.\n"
        "Reassignment of partition t-1 is completed.\n\n"
        "Clearing broker-level throttles on brokers 0,1,2\n"
        "Clearing topic-level throttles on topic t\n"))
    assert throttles(admin, "t", [0, 1, 2]) == {}
    assert reassign(bootstrap, "--list") == (0, "No partition reassignments found.\n")
    # t-0 kept its leader; t-1's left, and the first of its target in the ISR leads
    assert partition_state(admin, "t", 0) == (1, [0, 1], [0, 1])
    assert partition_state(admin, "t", 1) == (1, [1, 0], [0, 1])


@pytest.mark.mockbroker_only("clock")
def test_a_cancelled_reassignment_goes_back_and_verify_says_so(stack, tmp_path):
    cluster = three_brokers(stack, replica_catch_up_ms=5000)
    admin = ck_admin(cluster)
    bootstrap = cluster.bootstrap_servers
    create(admin, "t", [[1, 2], [2, 0]])
    plan = moves(tmp_path, "plan.json", {("t", 0): [0, 1], ("t", 1): [1, 0]})
    code, out = reassign(bootstrap, "--execute", "--reassignment-json-file", plan)
    assert code == 0 and out.splitlines()[3:] == [
        "", "Save this to use as the --reassignment-json-file option during rollback",
        "Successfully started partition reassignments for t-0,t-1"], out
    assert reassign(bootstrap, "--cancel", "--reassignment-json-file", plan) == (0, (
        "Successfully cancelled partition reassignments for: t-0,t-1\n"
        "None of the specified partition moves are active."
        "Clearing broker-level throttles on brokers 0,1,2\n"
        "Clearing topic-level throttles on topic t\n"))
    # back without the adding replicas, in the order the reassignment listed them
    assert partition_state(admin, "t", 0) == (1, [1, 2], [1, 2])
    assert partition_state(admin, "t", 1) == (2, [0, 2], [2, 0])
    assert reassign(bootstrap, "--verify", "--reassignment-json-file", plan) == (0, (
        "Status of partition reassignment:\n"
        "There is no active reassignment of partition t-0, but replica set is 1,2 rather "
        "than 0,1.\n"
        "There is no active reassignment of partition t-1, but replica set is 0,2 rather "
        "than 1,0.\n\n"
        "Clearing broker-level throttles on brokers 0,1,2\n"
        "Clearing topic-level throttles on topic t\n"))
    assert reassign(bootstrap, "--cancel", "--reassignment-json-file", plan)[1].startswith(
        "None of the specified partition reassignments are active.\n")
    cluster.advance_clock(5000)  # nothing left to catch up
    assert reassign(bootstrap, "--list") == (0, "No partition reassignments found.\n")


def test_the_reassign_tool_reports_what_the_controller_refuses(lifecycle_target, tmp_path):
    target = lifecycle_target
    bootstrap = target.bootstrap_servers
    t = target.create_placed("t", [[1, 2]])
    grown = moves(tmp_path, "grown.json", {(t, 0): [0, 1, 2]})
    code, out = reassign(bootstrap, "--execute", "--reassignment-json-file", grown,
                         "--disallow-replication-factor-change")
    lines = out.splitlines()
    assert code == 1 and lines[3:] == [
        "", "Save this to use as the --reassignment-json-file option during rollback",
        "Error reassigning partition(s):",
        f"{t}-0: The replication factor is changed from 2 to 3"], out
    assert target.partition(t, 0) == (1, [1, 2], [1, 2])
    # a registered broker that is stopped is unknown to the tool, which asks DescribeCluster
    target.stop_broker(0)
    code, out = reassign(bootstrap, "--execute", "--reassignment-json-file", grown)
    assert (code, out.splitlines()[0]) == (1, "Error: Unknown broker id 0"), out
