"""KIP-848 consumer groups with stock clients over real sockets: confluent-kafka and Kafka's Java
consumer with ``group.protocol=consumer``, alone and together in one group, and beside members
of the same clients still on the classic protocol (a group upgraded and downgraded online).

The broker dictates the heartbeat interval to consumer-protocol members; both targets set it to
500 ms (``SETTINGS`` of ``tests/clients/targets.py``; Kafka's default is 5 s) so that partitions
move in a few heartbeats, and the session timeout to 6 s so an expired member goes quickly.
Each test runs on mockbroker and on Apache Kafka (``target``) with a topic and group of its
own, and reads the group as the Java Admin does, with ConsumerGroupDescribe; one that stops
the coordinator's broker runs on three brokers of either (``lifecycle_target``), and those that
inject faults on a MockCluster of their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import confluent_kafka as ck
import pytest

from mockbroker import MockCluster
from tests import jvm
from tests.clients.helpers import TIMEOUT_S, kafka_tool, wait_for
from tests.clients.targets import Target
from tests.clients.test_groups import (ALL, PARTITIONS, TOPIC, ConfluentMember, Scene,
                                       assert_once, consume_all)
from tests.clients.test_groups import committed_answered, produce
from tests.clients.test_groups import start as start_on
from tests.clients.test_java_groups import CLASSPATH, JVM_TIMEOUT_S, JavaMember
from wire import errors

#: a mockbroker-only test's own cluster: three brokers, with the targets' group settings
SETTINGS = dict(brokers=3, topics={TOPIC: PARTITIONS}, group_consumer_heartbeat_interval_ms=500,
                group_consumer_session_timeout_ms=6000, group_min_session_timeout_ms=1000,
                group_initial_rebalance_delay_ms=0)


def start_mock(stack) -> tuple[Scene, Target]:
    cluster = stack.enter_context(MockCluster(**SETTINGS))
    return Scene.of(cluster), Target("mockbroker", cluster.bootstrap_servers, cluster)


@dataclass(frozen=True)
class MemberView:
    client_id: str
    member_id: str
    instance_id: str | None
    member_epoch: int
    assignment: frozenset  # partitions of the scene's topic
    target_assignment: frozenset
    protocol: str  # "consumer", or "classic" for a classic member of a consumer group


@dataclass(frozen=True)
class GroupView:
    """A group as an Admin client describes it: ConsumerGroupDescribe for a consumer group,
    DescribeGroups for a classic one."""
    type: str
    state: str
    group_epoch: int
    assignment_epoch: int
    members: list[MemberView]
    coordinator: tuple[int, str, int]  # node id, host, port


def _partitions(assignment, topic: str) -> frozenset:
    return frozenset(p for t in (assignment.topic_partitions if assignment else [])
                     if t.topic_name == topic for p in t.partitions)


def group_view(scene: Scene, target: Target) -> GroupView | None:
    found, group = target.describe_consumer_group(scene.group)
    coordinator = (found.node_id, found.host, found.port)
    if group.error_code == errors.NONE:
        return GroupView("consumer", group.group_state, group.group_epoch,
                         group.assignment_epoch, [MemberView(
                             m.client_id, m.member_id, m.instance_id, m.member_epoch,
                             _partitions(m.assignment, scene.topic),
                             _partitions(m.target_assignment, scene.topic),
                             "classic" if m.member_type == 0 else "consumer")
                             for m in group.members], coordinator)
    assert group.error_code == errors.GROUP_ID_NOT_FOUND, group
    [future] = target.admin.describe_consumer_groups([scene.group]).values()
    try:
        classic = future.result(TIMEOUT_S)
    except ck.KafkaException as e:
        assert e.args[0].code() == ck.KafkaError.GROUP_ID_NOT_FOUND, e
        return None
    if classic.state == ck.ConsumerGroupState.DEAD:
        return None
    return GroupView("classic", classic.state.name.title().replace("_", ""), -1, -1, [
        MemberView(m.client_id, m.member_id, m.group_instance_id, -1,
                   frozenset(tp.partition for tp in m.assignment.topic_partitions
                             if tp.topic == scene.topic), frozenset(), "classic")
        for m in classic.members], coordinator)


def member(stack, scene: Scene, name: str, **config) -> ConfluentMember:
    """A confluent-kafka consumer speaking the consumer protocol."""
    joined = ConfluentMember(scene, name, scene.group, topic=scene.topic, classic_timeouts=False,
                             **{"group.protocol": "consumer", **config})
    stack.callback(joined.close)
    return joined


def java(stack, scene: Scene, name: str) -> JavaMember:
    joined = JavaMember(scene, name, scene.group, topic=scene.topic, classic_timeouts=False,
                        **{"group.protocol": "consumer"})
    stack.callback(joined.close)
    return joined


def group_of(scene: Scene, target: Target, group_type: str, members, *,
             timeout: float = 30) -> dict[str, frozenset]:
    """Wait until the group is a Stable group of ``group_type`` with exactly these members,
    each client owning what the coordinator says it owns, together every partition once."""
    def settled():
        view = group_view(scene, target)
        if view is None or view.type != group_type or view.state != "Stable" or \
                len(view.members) != len(members):
            return None
        owned = {m.name: m.assignment() for m in members}
        if sum(map(len, owned.values())) != PARTITIONS or \
                frozenset().union(*owned.values()) != ALL or not all(owned.values()):
            return None
        # each client has caught up with what the coordinator says it owns
        broker_side = {m.client_id: m.assignment for m in view.members}
        return owned if broker_side == owned else None
    return wait_for(settled, f"a stable {group_type} group of {len(members)}", timeout=timeout)


def settle(scene: Scene, target: Target, members, *, timeout: float = 30):
    return group_of(scene, target, "consumer", members, timeout=timeout)


def test_one_member_gets_every_partition_and_three_split_six_evenly(stack, target):
    cluster = start_on(target)
    first = member(stack, cluster, "c1")
    assert settle(cluster, target, [first]) == {"c1": ALL}
    view = group_view(cluster, target)
    assert (view.group_epoch, view.assignment_epoch, view.members[0].member_epoch) == (2, 2, 2)
    others = [member(stack, cluster, f"c{i}") for i in (2, 3)]
    owned = settle(cluster, target, [first, *others])
    assert sorted(map(len, owned.values())) == [2, 2, 2]
    view = group_view(cluster, target)
    assert all(m.assignment == m.target_assignment for m in view.members)
    assert {m.member_epoch for m in view.members} == {view.assignment_epoch}


def test_a_member_joins_and_one_leaves_and_every_record_is_consumed_once(stack, target):
    cluster = start_on(target)
    members = [member(stack, cluster, f"c{i}") for i in range(3)]
    settle(cluster, target, members)
    first = produce(stack, cluster, "first")
    consume_all(members, first)
    fourth = member(stack, cluster, "c3")
    members.append(fourth)
    settle(cluster, target, members)
    second = produce(stack, cluster, "second")
    consume_all(members, first | second)
    leaving = members.pop(0)
    leaving.close()  # leaves with epoch -1: its partitions move
    settle(cluster, target, members)
    third = produce(stack, cluster, "third")
    consume_all(members + [leaving], first | second | third)
    assert_once(members + [leaving], first | second | third)


def test_a_member_killed_without_leaving_is_expired_and_its_partitions_move(stack, target):
    cluster = start_on(target)
    kept = member(stack, cluster, "kept")
    doomed = java(stack, cluster, "doomed")
    settle(cluster, target, [kept, doomed], timeout=JVM_TIMEOUT_S)
    doomed.process.kill()  # no leave: the session timeout (6 s here) removes it
    assert settle(cluster, target, [kept]) == {"kept": ALL}
    values = produce(stack, cluster, "after")
    consume_all([kept], values)


def test_committed_offsets_survive_a_new_member_and_a_coordinator_move(stack,
                                                                      lifecycle_target):
    target = lifecycle_target
    cluster = start_on(target)
    first = member(stack, cluster, "c1")
    settle(cluster, target, [first])
    before = produce(stack, cluster, "before")
    consume_all([first], before)

    def committed() -> int:
        """The offsets committed in all, or -1 while the coordinator moves or still loads them
        (Kafka loads each of its partitions on its own: one may still be loading after the
        group's DescribeGroups has answered).  Asked over plain requests: librdkafka's Admin
        crashes the process on an OffsetFetch answered NOT_COORDINATOR."""
        found = committed_answered(target, cluster.group, cluster.topic)
        return -1 if found is None else sum(found.values())
    wait_for(lambda: committed() == len(before), "every record's offset committed")
    # the coordinator's broker stops: another loads the group from __consumer_offsets
    coordinator = target.coordinator_id(cluster.group)
    target.stop_broker(coordinator)
    assert target.coordinator_id(cluster.group) != coordinator
    wait_for(lambda: target.describe_consumer_group(cluster.group)[1].error_code !=
             errors.COORDINATOR_LOAD_IN_PROGRESS, "the new coordinator to load the group")
    # (on Kafka the newest commits show a moment later: the new leader of the group's
    # partition reads up to a high watermark it learns from its followers)
    wait_for(lambda: committed() == len(before), "the offsets at the new coordinator")
    first.close()
    second = member(stack, cluster, "c2")
    settle(cluster, target, [second])
    after = produce(stack, cluster, "after")
    consume_all([second], after)
    assert not second.values() & before  # it resumed from the committed offsets


def test_a_static_member_restarts_without_its_partitions_moving(stack, target):
    cluster = start_on(target)
    first = member(stack, cluster, "s1", **{"group.instance.id": "i-1"})
    second = member(stack, cluster, "s2", **{"group.instance.id": "i-2"})
    owned = settle(cluster, target, [first, second])
    epoch = group_view(cluster, target).group_epoch
    before = produce(stack, cluster, "before")
    consume_all([first, second], before)
    seen = len(second.events)  # (it may have given partitions up while the two first joined)
    first.close()  # a static member leaves with epoch -2: its slot and partitions wait for it

    def held():
        view = group_view(cluster, target)
        return {m.instance_id: (m.member_epoch, m.assignment) for m in view.members}["i-1"]
    assert wait_for(lambda: held()[0] == -2 and held(), "the static leave") == \
        (-2, owned["s1"])
    again = member(stack, cluster, "s1", **{"group.instance.id": "i-1"})
    assert settle(cluster, target, [again, second]) == {"s1": owned["s1"], "s2": owned["s2"]}
    view = group_view(cluster, target)
    assert view.group_epoch == epoch  # nobody left for good: no new assignment was computed
    assert not [e for e in second.events[seen:] if e[0] == "revoke"]
    after = produce(stack, cluster, "after")
    consume_all([first, again, second], before | after)
    assert_once([first, again, second], before | after)


def test_a_java_and_a_confluent_kafka_member_share_a_consumer_group(stack, target):
    cluster = start_on(target)
    python_member = member(stack, cluster, "librdkafka")
    java_member = java(stack, cluster, "java")
    owned = settle(cluster, target, [python_member, java_member], timeout=JVM_TIMEOUT_S)
    assert sorted(map(len, owned.values())) == [3, 3]
    values = produce(stack, cluster, "mixed")
    consume_all([python_member, java_member], values)
    assert_once([python_member, java_member], values)


ADMIN_SOURCE = Path(__file__).with_name("java") / "ConsumerGroupAdmin.java"


def _admin_lines(scene: Scene) -> list[str]:
    """What ConsumerGroupAdmin.java prints about the group (of the listing, this group's line
    only: one Kafka serves many tests)."""
    out = jvm.run(":".join(map(str, CLASSPATH)), ADMIN_SOURCE, scene.bootstrap_servers,
                  scene.group, capture_output=True, text=True, timeout=JVM_TIMEOUT_S * 2)
    assert out.returncode == 0, out.stderr[-3000:]
    return [line for line in out.stdout.splitlines()
            if not line.startswith("listed ") or line.split(" ")[1] == scene.group]


def test_the_java_admin_describes_and_lists_a_consumer_group(stack, target):
    cluster = start_on(target)
    members = [member(stack, cluster, f"c{i}") for i in (1, 2)]
    owned = settle(cluster, target, members)
    view = group_view(cluster, target)
    lines = _admin_lines(cluster)
    epoch = view.group_epoch

    def listed(name: str) -> str:
        return ",".join(f"{cluster.topic}-{p}" for p in sorted(owned[name], key=str))

    assert lines == [
        f"group {cluster.group} Consumer Stable uniform {epoch} {view.assignment_epoch}",
        *sorted(f"member {name} {epoch} true {listed(name)} {listed(name)}"
                for name in ("c1", "c2")),
        f"listed {cluster.group} Consumer Stable",
    ]


@pytest.mark.mockbroker_only("faults")
def test_a_fault_fences_a_member_which_rejoins_and_the_group_consumes_on(stack):
    cluster, target = start_mock(stack)
    admin = cluster.mock.admin
    first = member(stack, cluster, "c1")
    settle(cluster, target, [first])
    before = produce(stack, cluster, "before")
    consume_all([first], before)
    member_id = group_view(cluster, target).members[0].member_id
    # the member's next heartbeat is told its epoch is fenced: it must give up its partitions
    # and rejoin with epoch 0, as after a coordinator that lost its state
    admin.add_fault("ConsumerGroupHeartbeat", error="FENCED_MEMBER_EPOCH", group=cluster.group)
    wait_for(lambda: any(r.error == "FENCED_MEMBER_EPOCH"
                         for r in admin.requests("ConsumerGroupHeartbeat")),
             "the fenced heartbeat")
    wait_for(lambda: [e for e in first.events if e[0] == "revoke"], "the partitions revoked")
    settle(cluster, target, [first])
    assert group_view(cluster, target).members[0].member_id == member_id
    after = produce(stack, cluster, "after")
    consume_all([first], before | after)


# -- mixed groups: online upgrade and downgrade --------------------------------------------------

def classic_member(stack, scene: Scene, client: str, name: str):
    """A member on the classic protocol (JoinGroup and SyncGroup), as before KIP-848."""
    kind = JavaMember if client == "java" else ConfluentMember
    joined = kind(scene, name, scene.group, topic=scene.topic)
    stack.callback(joined.close)
    return joined


def modern_member(stack, cluster, client: str, name: str):
    return java(stack, cluster, name) if client == "java" else member(stack, cluster, name)


@pytest.mark.parametrize("client", ["java", "confluent-kafka"])
def test_a_running_classic_group_is_upgraded_and_downgraded_consuming_every_record_once(
        stack, target, client):
    cluster = start_on(target)
    old = classic_member(stack, cluster, client, "old")
    assert group_of(cluster, target, "classic", [old], timeout=JVM_TIMEOUT_S) == {"old": ALL}
    first = produce(stack, cluster, "first")
    consume_all([old], first)
    # a member of the consumer protocol joins: the group is upgraded and shared
    new = modern_member(stack, cluster, client, "new")
    owned = group_of(cluster, target, "consumer", [old, new], timeout=JVM_TIMEOUT_S)
    assert sorted(map(len, owned.values())) == [3, 3]
    view = group_view(cluster, target)
    assert {m.client_id: m.protocol for m in view.members} == \
        {"old": "classic", "new": "consumer"}
    # the Java Admin tells them apart as on Kafka: "upgraded" only for the new protocol
    described = _admin_lines(cluster)
    assert sorted(line.split()[1] + " " + line.split()[3] for line in described
                  if line.startswith("member ")) == ["new true", "old false"]
    second = produce(stack, cluster, "second")
    consume_all([old, new], first | second)
    # it leaves: only the classic member is left, and the group is classic again
    new.close()
    assert group_of(cluster, target, "classic", [old], timeout=JVM_TIMEOUT_S) == {"old": ALL}
    third = produce(stack, cluster, "third")
    consume_all([old, new], first | second | third)
    assert_once([old, new], first | second | third)


# -- kafka-consumer-groups.sh -----------------------------------------------------------------

CONSUMER_GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"


def _table(out: str) -> list[list[str]]:
    """The rows of a table the tool prints, split on whitespace (the header first)."""
    return [line.split() for line in out.splitlines() if line.strip()]


def test_kafka_consumer_groups_describes_members_and_state_as_on_kafka(stack, target):
    cluster = start_on(target)
    group = cluster.group
    members = [member(stack, cluster, f"c{i}") for i in (1, 2)]
    owned = settle(cluster, target, members)
    view = group_view(cluster, target)
    epoch = view.group_epoch
    ids = {m.client_id: m.member_id for m in view.members}

    def listed(name: str) -> str:
        return f"{cluster.topic}:" + ",".join(str(p) for p in sorted(owned[name]))

    # the columns Kafka 4.4's coordinator fills in, for a group of the consumer protocol
    rows = _table(kafka_tool(CONSUMER_GROUPS, cluster.bootstrap_servers, "--describe",
                             "--members", "--verbose", "--group", group))
    assert rows[0] == ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS",
                       "CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH",
                       "TARGET-ASSIGNMENT"]
    assert sorted(rows[1:]) == sorted(
        [group, ids[name], "/127.0.0.1", name, "3", str(epoch), listed(name), str(epoch),
         listed(name)] for name in ("c1", "c2"))
    rows = _table(kafka_tool(CONSUMER_GROUPS, cluster.bootstrap_servers, "--describe",
                             "--state", "--verbose", "--group", group))
    assert rows[0] == ["GROUP", "COORDINATOR", "(ID)", "ASSIGNMENT-STRATEGY", "STATE",
                       "GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS"]
    node, host, port = view.coordinator
    assert rows[1] == [group, f"{host}:{port}", f"({node})", "uniform", "Stable", str(epoch),
                       str(view.assignment_epoch), "2"]
    rows = _table(kafka_tool(CONSUMER_GROUPS, cluster.bootstrap_servers, "--list", "--type"))
    assert [row for row in rows if row[0] in ("GROUP", group)] == \
        [["GROUP", "TYPE"], [group, "Consumer"]]
