"""Kafka Streams on streams groups (KIP-1071, ``group.protocol=streams``), on both targets.

The app is the word count of ``test_streams_eos.py`` (``java/WordCountEos.java``): lines in, a
``groupBy`` through the repartition topic ``<app>-words-repartition``, counts in a store logged
to ``<app>-counts-changelog``, every new count out.  With ``group.protocol=streams`` its
consumer joins a streams group: it sends its topology in StreamsGroupHeartbeat, the broker
creates the internal topics, sizes them from the input topic, and hands out tasks (subtopology
``0`` reads the input, ``1`` the repartition topic and keeps the store; three partitions give
six tasks) with Kafka's sticky assignor, standbys included when the group asks for them.

What a user sees is checked: every word's counts exactly 1..n in order (``Output``, as in the
exactly-once tests), the group as Kafka's Java Admin describes it (``java/StreamsGroupAdmin.java``,
the calls ``kafka-streams-groups.sh`` makes), the internal topics and their configs, and what
``kafka-streams-groups.sh`` itself prints.  Each Streams JVM logs its group membership to a
file of the test's; a test that times out shows the end of those logs.

Both targets run with short streams heartbeats and sessions and no initial rebalance delay
(``SETTINGS`` in ``targets.py``), so a member that died is gone within seconds.
"""

from __future__ import annotations

import collections
import os
import queue
import random
import re
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from confluent_kafka.admin import ConfigResource, ConfigSource

from tests import jvm
from tests.clients.helpers import TIMEOUT_S, ToolRun, run_kafka_tool, wait_for
from tests.clients.test_streams_eos import (CLASSPATH, PARTITIONS, Output, StreamsApp,
                                            assert_counted_once, create_topics, names,
                                            produce_lines)

STREAMS_PROTOCOL = "group.protocol=streams"
AT_LEAST_ONCE = "processing.guarantee=at_least_once"
EXACTLY_ONCE = "processing.guarantee=exactly_once_v2"
TOOL = "org.apache.kafka.tools.streams.StreamsGroupCommand"  # kafka-streams-groups.sh
ADMIN_SOURCE = Path(__file__).with_name("java") / "StreamsGroupAdmin.java"
#: the word count's tasks: (subtopology, partition)
ALL_TASKS = {(sub, p) for sub in ("0", "1") for p in range(PARTITIONS)}
#: every count in the output, or a member's tasks moved, after a start or a member's end
WAIT_S = 180


# -- the apps and their logs --------------------------------------------------------------------

def tails(apps) -> str:
    """The end of each app's log, for a failure's message."""
    return "".join(f"\n--- {app.log.name} ends:\n{app.log.read_text(errors='replace')[-3000:]}"
                   for app in apps)


def waiting(predicate, what: str, apps, timeout: float = WAIT_S):
    """``wait_for``, failing with the end of the apps' logs, or at once if one of them that
    the test did not close failed."""
    def checked():
        for app in apps:
            if "closed" not in app.lines:
                app.check()
        return predicate()
    try:
        return wait_for(checked, what, timeout=timeout)
    except AssertionError as failure:
        raise AssertionError(f"{failure}{tails(apps)}") from None


def counted(output: Output, expected: collections.Counter, app: StreamsApp, apps) -> None:
    """Every count of ``expected`` in the output (``app`` writes them), each word's counts
    exactly 1..n in order."""
    try:
        output.wait_for_counts(expected, app)
    except AssertionError as failure:
        raise AssertionError(f"{failure}{tails(apps)}") from None
    assert_counted_once(output, expected)


def start(stack, target, tmp_path, app_names: tuple[str, str, str], instance: str,
          *properties: str) -> StreamsApp:
    """One instance of the word count on a streams group, closed when the test ends."""
    app_id, source, sink = app_names
    app = StreamsApp(target.bootstrap_servers, app_id, source, sink, tmp_path / instance,
                     tmp_path / f"{instance}.log", STREAMS_PROTOCOL, *properties,
                     client_logs=True)
    stack.callback(app.close)
    return app


# -- the group, as the Java Admin describes it ----------------------------------------------------

def _tasks(text: str) -> set[tuple[str, int]]:
    """``0:0,1;1:2`` -> {("0", 0), ("0", 1), ("1", 2)}; ``-`` is none."""
    if text == "-":
        return set()
    return {(sub, int(p)) for part in text.split(";")
            for sub, ps in [part.split(":")] for p in ps.split(",")}


def _topics(text: str) -> dict[str, int]:
    """``a:3,b:3`` -> {"a": 3, "b": 3}; ``-`` is none."""
    return {} if text == "-" else {name: int(count) for name, count in
                                   (item.rsplit(":", 1) for item in text.split(","))}


@dataclass
class Member:
    member_id: str
    process: str
    epoch: int
    client_id: str
    active: set[tuple[str, int]]
    standby: set[tuple[str, int]]
    warmup: set[tuple[str, int]]
    target_active: set[tuple[str, int]]
    target_standby: set[tuple[str, int]]


@dataclass
class Subtopology:
    sources: list[str]
    sinks: list[str]
    repartition_sources: dict[str, int]
    changelogs: dict[str, int]


@dataclass
class Group:
    group_id: str
    state: str
    group_epoch: int
    target_epoch: int
    topology_epoch: int
    assignor: str
    subtopologies: dict[str, Subtopology] = field(default_factory=dict)
    members: list[Member] = field(default_factory=list)

    def holders(self, task: tuple[str, int], role: str) -> list[str]:
        """The processes whose member holds ``task`` as ``active`` or ``standby``."""
        return [m.process for m in self.members if task in getattr(m, role)]


class AdminFailed(Exception):
    """A command of StreamsGroupAdmin failed: the Java exception's class and message."""

    def __init__(self, kind: str, message: str):
        super().__init__(f"{kind}: {message}")
        self.kind, self.message = kind, message


class GroupAdmin:
    """Kafka's Java Admin in a JVM of its own (``java/StreamsGroupAdmin.java``), asked one
    command at a time."""

    def __init__(self, stack, bootstrap: str):
        self.process = subprocess.Popen(
            [*jvm.program(ADMIN_SOURCE, os.pathsep.join(map(str, CLASSPATH[1:]))),
             bootstrap], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        stack.callback(self.close)
        self.answers: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.answers.put(line.rstrip("\n"))
        self.answers.put(None)

    def ask(self, command: str) -> list[str]:
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        lines = []
        while True:
            try:  # the first answer waits for the JVM to compile the source and start
                line = self.answers.get(timeout=120)
            except queue.Empty:
                raise AssertionError(f"StreamsGroupAdmin did not answer {command!r}") from None
            if line is None:
                raise AssertionError(f"StreamsGroupAdmin ended: {self.process.stderr.read()}")
            if line == "end":
                break
            lines.append(line)
        if lines and lines[0].startswith("error "):
            _, kind, message = (lines[0] + " ").split(" ", 2)
            raise AdminFailed(kind, message.strip())
        return lines

    def describe(self, group_id: str) -> Group | None:
        """describeStreamsGroups of one group; None while there is no such group."""
        try:
            lines = self.ask(f"describe {group_id}")
        except AdminFailed as failed:
            if failed.kind == "GroupIdNotFoundException":
                return None
            raise
        head = lines[0].split(" ")
        group = Group(head[1], head[2], int(head[3]), int(head[4]), int(head[5]), head[6])
        for line in lines[1:]:
            kind, *words = line.split(" ")
            if kind == "subtopology":
                sub, sources, sinks, repartition, changelogs = words
                group.subtopologies[sub] = Subtopology(
                    [] if sources == "-" else sources.split(","),
                    [] if sinks == "-" else sinks.split(","),
                    _topics(repartition), _topics(changelogs))
            else:
                member_id, process, epoch, client_id, *tasks = words
                group.members.append(Member(member_id, process, int(epoch), client_id,
                                            *map(_tasks, tasks)))
        return group

    def set_group_config(self, group_id: str, name: str, value: str) -> None:
        assert self.ask(f"set-config {group_id} {name} {value}") == ["ok"]

    def group_configs(self, group_id: str) -> dict[str, tuple[str, str]]:
        """name -> (value, source) of the group's configs."""
        found = {}
        for line in self.ask(f"config {group_id}"):
            _, name, rest = line.split(" ", 2)
            value, _, source = rest.rpartition(" ")
            found[name] = (value, source)
        return found

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.process.stdin.write("quit\n")
                self.process.stdin.flush()
                self.process.wait(30)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait(10)


def split_between(group: Group | None, processes: int) -> bool:
    """Whether the group is stable with ``processes`` members, each holding active tasks of
    its own, none held twice, all held."""
    if group is None or group.state != "Stable" or len(group.members) != processes:
        return False
    held = [m.active for m in group.members]
    return all(held) and sum(map(len, held)) == len(ALL_TASKS) and set().union(*held) == \
        ALL_TASKS


# -- the word count on a streams group ----------------------------------------------------------

def _count_words(stack, target, tmp_path, guarantee: str) -> None:
    """The word count over 300 lines on a streams group: every count written once, a clean
    close, and the group left Empty with the app's topology."""
    bootstrap = target.bootstrap_servers
    app_names = app_id, source, sink = names()
    create_topics(bootstrap, source, sink)
    expected = produce_lines(bootstrap, source, 300, random.Random(1), "a")
    app = start(stack, target, tmp_path, app_names, "app", guarantee)
    app.wait_running()
    counted(Output(stack, bootstrap, sink), expected, app, [app])
    admin = GroupAdmin(stack, bootstrap)
    group = admin.describe(app_id)
    assert group is not None and [m.active for m in group.members] == [ALL_TASKS], group

    app.close()
    assert "closed" in app.lines and app.process.returncode == 0, f"{app.lines}{tails([app])}"
    group = waiting(lambda: (g := admin.describe(app_id)) and g.state == "Empty" and g,
                    "the group Empty once the app closed", [])
    assert group.members == [] and group.assignor == "sticky"
    assert group.subtopologies == {
        "0": Subtopology([source], [f"{app_id}-words-repartition"], {}, {}),
        "1": Subtopology([], [], {f"{app_id}-words-repartition": PARTITIONS},
                         {f"{app_id}-counts-changelog": PARTITIONS})}


@pytest.mark.parametrize("client", ["kafka-streams"])
def test_a_streams_group_app_counts_every_word_at_least_once(stack, target, client, tmp_path):
    _count_words(stack, target, tmp_path, AT_LEAST_ONCE)


@pytest.mark.parametrize("client", ["kafka-streams"])
def test_a_streams_group_app_counts_every_word_exactly_once(stack, target, client, tmp_path):
    _count_words(stack, target, tmp_path, EXACTLY_ONCE)


@pytest.mark.parametrize("client", ["kafka-streams"])
def test_two_instances_split_the_tasks_and_one_takes_over_from_the_other(stack, target, client,
                                                                         tmp_path):
    """Two instances of one app: each member holds active tasks of its own and together all
    six; they count together; once one closes (leaving the group), the other holds every task
    and counts on from where the group committed."""
    bootstrap = target.bootstrap_servers
    app_names = app_id, source, sink = names()
    create_topics(bootstrap, source, sink)
    first = start(stack, target, tmp_path, app_names, "first", AT_LEAST_ONCE)
    second = start(stack, target, tmp_path, app_names, "second", AT_LEAST_ONCE)
    apps = [first, second]
    admin = GroupAdmin(stack, bootstrap)
    group = waiting(lambda: (g := admin.describe(app_id)) and split_between(g, 2) and g,
                    "both instances' members holding active tasks of their own", apps)
    assert len({m.process for m in group.members}) == 2, group
    assert all(m.epoch == group.target_epoch and m.active == m.target_active
               for m in group.members), group

    rng = random.Random(4)
    expected = produce_lines(bootstrap, source, 200, rng, "both")
    output = Output(stack, bootstrap, sink)
    counted(output, expected, second, apps)

    first.close()
    assert "closed" in first.lines and first.process.returncode == 0, first.lines
    group = waiting(lambda: (g := admin.describe(app_id)) and split_between(g, 1) and g,
                    "the other instance holding every task", apps)
    [remaining] = group.members
    assert remaining.client_id.startswith(f"{app_id}-{remaining.process}-")
    expected += produce_lines(bootstrap, source, 200, rng, "one")
    counted(output, expected, second, apps)


@pytest.mark.parametrize("client", ["kafka-streams"])
def test_a_standby_replica_takes_over_a_killed_instance_and_counts_on(stack, target, client,
                                                                      tmp_path):
    """The group asks for a standby of each stateful task (``streams.num.standby.replicas=1``,
    a group config set before the app starts): with two instances, each task of the counting
    subtopology is active on one and standby on the other.  One is killed (SIGKILL); once its
    session ends the other holds every task and, exactly once, counts on from n+1."""
    bootstrap = target.bootstrap_servers
    app_names = app_id, source, sink = names()
    create_topics(bootstrap, source, sink)
    admin = GroupAdmin(stack, bootstrap)
    admin.set_group_config(app_id, "streams.num.standby.replicas", "1")
    # Kafka's brokers learn a group config from the controller a moment later
    wait_for(lambda: admin.group_configs(app_id).get("streams.num.standby.replicas") ==
             ("1", "DYNAMIC_GROUP_CONFIG"), "the group's standby config described")

    first = start(stack, target, tmp_path, app_names, "first")  # exactly once: the default
    second = start(stack, target, tmp_path, app_names, "second")
    apps = [first, second]

    def standbys_placed():
        group = admin.describe(app_id)
        if not split_between(group, 2):
            return None
        stateful = {sub for sub, s in group.subtopologies.items() if s.changelogs}
        for task in ALL_TASKS:
            standby, [active] = group.holders(task, "standby"), group.holders(task, "active")
            if standby != ([] if task[0] not in stateful else
                           [p for p in {m.process for m in group.members} if p != active]):
                return None
        return group
    group = waiting(standbys_placed, "each stateful task active on one instance and standby "
                    "on the other", apps)
    assert set(group.subtopologies) == {"0", "1"} and \
        [sub for sub, s in group.subtopologies.items() if s.changelogs] == ["1"], group
    assert all(not m.warmup and m.standby == m.target_standby for m in group.members), group

    rng = random.Random(5)
    expected = produce_lines(bootstrap, source, 300, rng, "both")
    output = Output(stack, bootstrap, sink)
    counted(output, expected, second, apps)

    before = {m.process: m for m in group.members}
    first.kill()
    group = waiting(lambda: (g := admin.describe(app_id)) and split_between(g, 1) and g,
                    "the surviving instance holding every task once the killed one's "
                    "session ended", apps)
    [member] = group.members
    # the survivor's standbys became its active tasks, and it has no standby left to keep
    assert member.process in before and before[member.process].standby <= member.active and \
        member.standby == set(), (before, group)

    expected += produce_lines(bootstrap, source, 300, rng, "one")
    counted(output, expected, second, apps)


@pytest.mark.parametrize("client", ["kafka-streams"])
def test_the_broker_creates_the_internal_topics_of_the_topology(stack, target, client,
                                                                 tmp_path):
    """The word count's ``groupBy`` needs a repartition topic and its store a changelog: with
    the streams protocol the broker creates both, from the topology the app sends in its
    heartbeat, with the input topic's partition count and the configs the topology asks for
    (and nothing else set on them)."""
    bootstrap = target.bootstrap_servers
    app_names = app_id, source, sink = names()
    create_topics(bootstrap, source, sink)
    expected = produce_lines(bootstrap, source, 100, random.Random(6), "a")
    app = start(stack, target, tmp_path, app_names, "app", AT_LEAST_ONCE)
    app.wait_running()
    counted(Output(stack, bootstrap, sink), expected, app, [app])

    repartition, changelog = f"{app_id}-words-repartition", f"{app_id}-counts-changelog"
    topics = target.admin.list_topics(timeout=TIMEOUT_S).topics
    assert sorted(name for name in topics if name.startswith(f"{app_id}-")) == \
        sorted([repartition, changelog])
    assert {name: len(topics[name].partitions) for name in (repartition, changelog)} == \
        {repartition: PARTITIONS, changelog: PARTITIONS}
    assert all(len(p.replicas) == 1 for name in (repartition, changelog)
               for p in topics[name].partitions.values())

    futures = target.admin.describe_configs(
        [ConfigResource("topic", name) for name in (repartition, changelog)])
    dynamic = {resource.name: {name: entry.value
                               for name, entry in future.result(TIMEOUT_S).items()
                               if entry.source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value}
               for resource, future in futures.items()}
    assert dynamic == {
        repartition: {"cleanup.policy": "delete", "retention.ms": "-1",
                      "segment.bytes": "52428800", "message.timestamp.type": "CreateTime"},
        changelog: {"cleanup.policy": "compact", "message.timestamp.type": "CreateTime"}}


# -- kafka-streams-groups.sh ----------------------------------------------------------------------

def streams_groups(target, *args: str) -> ToolRun:
    """``kafka-streams-groups.sh --bootstrap-server ... ARGS``, which may fail."""
    return run_kafka_tool(TOOL, "--bootstrap-server", target.bootstrap_servers, *args)


def table(out: str) -> list[list[str]]:
    """The non-empty lines of a tool's output, split into words."""
    return [line.split() for line in out.splitlines() if line.strip()]


UUID_TEXT = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
#: a member id the Streams client chose: a Kafka Uuid in URL-safe base64
MEMBER_ID = re.compile(r"^[A-Za-z0-9_-]{22}$")


@pytest.mark.parametrize("client", ["kafka-tools"])
def test_kafka_streams_groups_lists_describes_resets_and_deletes_a_group(stack, target, client,
                                                                        tmp_path):
    """``kafka-streams-groups.sh`` on a running app's group (listed with its state; its member,
    process, client id and tasks; its coordinator and state; its offsets and lags; refused
    deletion), and on the group once the app stopped (Empty; its input offsets reset to the
    earliest, which a restarted app then counts again; deleted)."""
    bootstrap = target.bootstrap_servers
    app_names = app_id, source, sink = names()
    create_topics(bootstrap, source, sink)
    rng = random.Random(7)
    expected = produce_lines(bootstrap, source, 100, rng, "a")
    app = start(stack, target, tmp_path, app_names, "app", AT_LEAST_ONCE)
    app.wait_running()
    output = Output(stack, bootstrap, sink)
    counted(output, expected, app, [app])
    admin = GroupAdmin(stack, bootstrap)
    group = waiting(lambda: (g := admin.describe(app_id)) and split_between(g, 1) and g,
                    "the app's member holding every task", [app])
    [member] = group.members
    repartition = f"{app_id}-words-repartition"
    coordinator = target.coordinator(0, app_id)
    at = [f"{coordinator.host}:{coordinator.port}", f"({coordinator.node_id})"]

    def run(*args: str) -> ToolRun:
        done = streams_groups(target, *args)
        assert done.code == 0, f"{' '.join(args)}: {done}"
        assert not done.err, done.err
        return done

    # listed, alone or with its state
    assert app_id in run("--list").out.splitlines()
    listed = table(run("--list", "--state").out)
    assert listed[0] == ["GROUP", "STATE"] and [app_id, "Stable"] in listed[1:], listed

    # its member: id, process, client id and tasks
    assert MEMBER_ID.match(member.member_id) and UUID_TEXT.match(member.process), member
    client_id = f"{app_id}-{member.process}-StreamThread-1-consumer"
    tasks = ["ACTIVE:", "0:[0,1,2];", "1:[0,1,2];"]
    assert table(run("--describe", "--group", app_id, "--members").out) == [
        ["GROUP", "MEMBER", "PROCESS", "CLIENT-ID", "ASSIGNMENTS"],
        [app_id, member.member_id, member.process, client_id, *tasks]]
    epoch = str(group.target_epoch)
    assert table(run("--describe", "--group", app_id, "--members", "--verbose").out) == [
        ["GROUP", "TARGET-ASSIGNMENT-EPOCH", "TOPOLOGY-EPOCH", "MEMBER", "MEMBER-PROTOCOL",
         "MEMBER-EPOCH", "PROCESS", "CLIENT-ID", "ASSIGNMENTS"],
        [app_id, epoch, "0", member.member_id, "streams", epoch, member.process, client_id,
         *tasks, "TARGET-ACTIVE:", "0:[0,1,2];", "1:[0,1,2];"]]

    # its coordinator, assignor, state and size
    assert table(run("--describe", "--group", app_id, "--state").out) == [
        ["GROUP", "COORDINATOR", "(ID)", "ASSIGNOR", "STATE", "#MEMBERS"],
        [app_id, *at, "sticky", "Stable", "1"]]
    assert table(run("--describe", "--group", app_id, "--state", "--verbose").out) == [
        ["GROUP", "COORDINATOR", "(ID)", "ASSIGNOR", "STATE", "GROUP-EPOCH",
         "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS"],
        [app_id, *at, "sticky", "Stable", str(group.group_epoch), epoch, "1"]]

    # its offsets: every input and repartition partition, read to its end
    def offsets(*more: str) -> list[list[str]]:
        return table(run("--describe", "--group", app_id, "--offsets", *more).out)
    everything = {(topic, str(p)) for topic in (source, repartition) for p in range(PARTITIONS)}
    waiting(lambda: sorted(offsets()) == sorted(
        [["GROUP", "TOPIC", "PARTITION", "OFFSET-LAG"]] +
        [[app_id, topic, p, "0"] for topic, p in everything]),
        "every partition's offset lag 0", [app])
    verbose = offsets("--verbose")
    assert verbose[0] == ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LEADER-EPOCH",
                          "LOG-END-OFFSET", "OFFSET-LAG"], verbose
    rows = {(row[1], row[2]): row for row in verbose[1:]}
    assert set(rows) == everything and all(
        row[0] == app_id and row[3] == row[5] and row[4] == "0" and row[6] == "0"
        for row in rows.values()), verbose
    assert sum(int(rows[(source, str(p))][5]) for p in range(PARTITIONS)) == 100  # the lines

    # a group with a member is not deleted
    refused = run("--delete", "--group", app_id)
    assert table(refused.out) == table(
        "Error: Deletion of some streams groups failed:\n"
        f"* Group '{app_id}' could not be deleted due to: "
        "org.apache.kafka.common.errors.GroupNotEmptyException: "
        f"Streams group '{app_id}' is not EMPTY.")

    # the app stops: the group is Empty, it has no members to show
    app.close()
    assert "closed" in app.lines and app.process.returncode == 0, f"{app.lines}{tails([app])}"
    waiting(lambda: (g := admin.describe(app_id)) and g.state == "Empty",
            "the group Empty once the app closed", [])
    assert table(run("--describe", "--group", app_id, "--state").out) == [
        ["Error:", "Streams", "group", f"'{app_id}'", "has", "no", "active", "members."],
        ["GROUP", "COORDINATOR", "(ID)", "ASSIGNOR", "STATE", "#MEMBERS"],
        [app_id, *at, "sticky", "Empty", "0"]]
    assert run("--describe", "--group", app_id, "--members").out.strip() == ""
    assert [app_id, "Empty"] in table(run("--list", "--state", "Empty").out)

    # its input offsets go back to the earliest, so a restarted app counts every line again
    reset = run("--reset-offsets", "--group", app_id, "--to-earliest", "--all-input-topics",
                "--execute")
    assert sorted(table(reset.out)) == sorted(
        [["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"]] +
        [[app_id, source, str(p), "0"] for p in range(PARTITIONS)])
    again = start(stack, target, tmp_path, app_names, "again", AT_LEAST_ONCE)
    again.wait_running()
    counted(output, expected + expected, again, [again])
    again.close()
    assert "closed" in again.lines and again.process.returncode == 0, \
        f"{again.lines}{tails([again])}"
    waiting(lambda: (g := admin.describe(app_id)) and g.state == "Empty",
            "the group Empty once the restarted app closed", [])

    # an Empty group is deleted; its internal topics stay
    assert run("--delete", "--group", app_id).out.splitlines() == [
        f"Deletion of requested streams groups ('{app_id}') was successful."]
    assert app_id not in run("--list").out.splitlines()
    gone = streams_groups(target, "--describe", "--group", app_id, "--state")
    assert gone.code == 1 and table(gone.out) == table(
        "Error: Executing streams group command failed due to "
        "org.apache.kafka.common.errors.GroupIdNotFoundException: "
        f"Group {app_id} not found."), gone
    topics = target.admin.list_topics(timeout=TIMEOUT_S).topics
    assert {repartition, f"{app_id}-counts-changelog"} <= set(topics)
