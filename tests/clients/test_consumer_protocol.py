"""KIP-848 consumer groups with stock clients over real sockets: confluent-kafka and Kafka's Java
consumer with ``group.protocol=consumer``, alone and together in one group, and beside members
of the same clients still on the classic protocol (a group upgraded and downgraded online).

The broker dictates the heartbeat interval to consumer-protocol members; these tests set it to
500 ms (``group_consumer_heartbeat_interval_ms``; Kafka's default is 5 s) so that partitions
move in a few heartbeats, and the session timeout to 6 s so an expired member goes quickly.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mockbroker import AdminError, MockCluster
from tests.clients.helpers import kafka_tool, wait_for
from tests.clients.test_groups import (ALL, GROUP, PARTITIONS, TOPIC, ConfluentMember, Scene,
                                       assert_once, consume_all)
from tests.clients.test_groups import produce as produce_to
from tests.clients.test_java_groups import CLASSPATH, JVM_TIMEOUT_S, JavaMember

# not converted to run on Kafka as well yet; a test marked with its own reason needs mockbroker
pytestmark = pytest.mark.mockbroker_only("unconverted")

SETTINGS = dict(brokers=3, topics={TOPIC: PARTITIONS}, group_consumer_heartbeat_interval_ms=500,
                group_consumer_session_timeout_ms=6000, group_min_session_timeout_ms=1000,
                group_initial_rebalance_delay_ms=0)


def start(stack, **settings) -> MockCluster:
    return stack.enter_context(MockCluster(**{**SETTINGS, **settings}))


def produce(stack, cluster: MockCluster, tag: str) -> set[bytes]:
    return produce_to(stack, Scene.of(cluster), tag)


def member(stack, cluster, name: str, **config) -> ConfluentMember:
    """A confluent-kafka consumer speaking the consumer protocol."""
    joined = ConfluentMember(cluster, name, classic_timeouts=False,
                             **{"group.protocol": "consumer", **config})
    stack.callback(joined.close)
    return joined


def java(stack, cluster, name: str) -> JavaMember:
    joined = JavaMember(cluster, name, classic_timeouts=False, **{"group.protocol": "consumer"})
    stack.callback(joined.close)
    return joined


def settle(cluster: MockCluster, members, *, timeout: float = 30) -> dict[str, frozenset]:
    """Wait until the group is Stable with exactly these members, each client owning what
    the coordinator says it owns, together every partition once."""
    def settled():
        try:
            view = cluster.admin.group(GROUP)
        except AdminError:  # not created yet
            return None
        if view.type != "consumer" or view.state != "Stable" or \
                len(view.members) != len(members):
            return None
        owned = {m.name: m.assignment() for m in members}
        if sum(map(len, owned.values())) != PARTITIONS or \
                frozenset().union(*owned.values()) != ALL or not all(owned.values()):
            return None
        # each client has caught up with what the coordinator says it owns
        broker_side = {m.client_id: frozenset(m.assignment.get(TOPIC, [])) if m.assignment
                       else frozenset() for m in view.members}
        return owned if broker_side == owned else None
    return wait_for(settled, f"a stable consumer group of {len(members)}", timeout=timeout)


def test_one_member_gets_every_partition_and_three_split_six_evenly(stack):
    cluster = start(stack)
    first = member(stack, cluster, "c1")
    assert settle(cluster, [first]) == {"c1": ALL}
    view = cluster.admin.group(GROUP)
    assert (view.group_epoch, view.assignment_epoch, view.members[0].member_epoch) == (2, 2, 2)
    others = [member(stack, cluster, f"c{i}") for i in (2, 3)]
    owned = settle(cluster, [first, *others])
    assert sorted(map(len, owned.values())) == [2, 2, 2]
    view = cluster.admin.group(GROUP)
    assert all(m.assignment == m.target_assignment for m in view.members)
    assert {m.member_epoch for m in view.members} == {view.assignment_epoch}


def test_a_member_joins_and_one_leaves_and_every_record_is_consumed_once(stack):
    cluster = start(stack)
    members = [member(stack, cluster, f"c{i}") for i in range(3)]
    settle(cluster, members)
    first = produce(stack, cluster, "first")
    consume_all(members, first)
    fourth = member(stack, cluster, "c3")
    members.append(fourth)
    settle(cluster, members)
    second = produce(stack, cluster, "second")
    consume_all(members, first | second)
    leaving = members.pop(0)
    leaving.close()  # leaves with epoch -1: its partitions move
    settle(cluster, members)
    third = produce(stack, cluster, "third")
    consume_all(members + [leaving], first | second | third)
    assert_once(members + [leaving], first | second | third)


def test_a_member_killed_without_leaving_is_expired_and_its_partitions_move(stack):
    cluster = start(stack)
    kept = member(stack, cluster, "kept")
    doomed = java(stack, cluster, "doomed")
    settle(cluster, [kept, doomed], timeout=JVM_TIMEOUT_S)
    doomed.process.kill()  # no leave: the session timeout (6 s here) removes it
    assert settle(cluster, [kept]) == {"kept": ALL}
    values = produce(stack, cluster, "after")
    consume_all([kept], values)


@pytest.mark.mockbroker_only("lifecycle")
def test_committed_offsets_survive_a_new_member_and_a_coordinator_move(stack):
    cluster = start(stack)
    first = member(stack, cluster, "c1")
    settle(cluster, [first])
    before = produce(stack, cluster, "before")
    consume_all([first], before)
    wait_for(lambda: sum(cluster.admin.group(GROUP).offsets.get(TOPIC, {}).values())
             == len(before), "every record's offset committed")
    coordinator = cluster.admin.group(GROUP).coordinator
    cluster.admin.move_coordinator(GROUP, (coordinator + 1) % 3)
    first.close()
    second = member(stack, cluster, "c2")
    settle(cluster, [second])
    after = produce(stack, cluster, "after")
    consume_all([second], after)
    assert not second.values() & before  # it resumed from the committed offsets


def test_a_static_member_restarts_without_its_partitions_moving(stack):
    cluster = start(stack)
    first = member(stack, cluster, "s1", **{"group.instance.id": "i-1"})
    second = member(stack, cluster, "s2", **{"group.instance.id": "i-2"})
    owned = settle(cluster, [first, second])
    epoch = cluster.admin.group(GROUP).group_epoch
    before = produce(stack, cluster, "before")
    consume_all([first, second], before)
    seen = len(second.events)  # (it may have given partitions up while the two first joined)
    first.close()  # a static member leaves with epoch -2: its slot and partitions wait for it

    def held():
        view = cluster.admin.group(GROUP)
        return {m.group_instance_id: (m.member_epoch, frozenset(m.assignment.get(TOPIC, [])))
                for m in view.members}["i-1"]
    assert wait_for(lambda: held()[0] == -2 and held(), "the static leave") == \
        (-2, owned["s1"])
    again = member(stack, cluster, "s1", **{"group.instance.id": "i-1"})
    assert settle(cluster, [again, second]) == {"s1": owned["s1"], "s2": owned["s2"]}
    view = cluster.admin.group(GROUP)
    assert view.group_epoch == epoch  # nobody left for good: no new assignment was computed
    assert not [e for e in second.events[seen:] if e[0] == "revoke"]
    after = produce(stack, cluster, "after")
    consume_all([first, again, second], before | after)
    assert_once([first, again, second], before | after)


def test_a_java_and_a_confluent_kafka_member_share_a_consumer_group(stack):
    cluster = start(stack)
    python_member = member(stack, cluster, "librdkafka")
    java_member = java(stack, cluster, "java")
    owned = settle(cluster, [python_member, java_member], timeout=JVM_TIMEOUT_S)
    assert sorted(map(len, owned.values())) == [3, 3]
    values = produce(stack, cluster, "mixed")
    consume_all([python_member, java_member], values)
    assert_once([python_member, java_member], values)


ADMIN_SOURCE = Path(__file__).with_name("java") / "ConsumerGroupAdmin.java"


def _admin_lines(cluster: MockCluster) -> list[str]:
    """What ConsumerGroupAdmin.java prints about the group."""
    out = subprocess.run(["java", "-cp", ":".join(map(str, CLASSPATH)), str(ADMIN_SOURCE),
                          cluster.bootstrap_servers, GROUP],
                         capture_output=True, text=True, timeout=JVM_TIMEOUT_S * 2)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.splitlines()


def test_the_java_admin_describes_and_lists_a_consumer_group(stack):
    cluster = start(stack)
    members = [member(stack, cluster, f"c{i}") for i in (1, 2)]
    owned = settle(cluster, members)
    view = cluster.admin.group(GROUP)
    lines = _admin_lines(cluster)
    epoch = view.group_epoch

    def listed(name: str) -> str:
        return ",".join(f"{TOPIC}-{p}" for p in sorted(owned[name], key=str))

    assert lines == [
        f"group {GROUP} Consumer Stable uniform {epoch} {view.assignment_epoch}",
        *sorted(f"member {name} {epoch} true {listed(name)} {listed(name)}"
                for name in ("c1", "c2")),
        f"listed {GROUP} Consumer Stable",
    ]


@pytest.mark.mockbroker_only("faults")
def test_a_fault_fences_a_member_which_rejoins_and_the_group_consumes_on(stack):
    cluster = start(stack)
    first = member(stack, cluster, "c1")
    settle(cluster, [first])
    before = produce(stack, cluster, "before")
    consume_all([first], before)
    member_id = cluster.admin.group(GROUP).members[0].member_id
    # the member's next heartbeat is told its epoch is fenced: it must give up its partitions
    # and rejoin with epoch 0, as after a coordinator that lost its state
    cluster.admin.add_fault("ConsumerGroupHeartbeat", error="FENCED_MEMBER_EPOCH",
                            group=GROUP)
    wait_for(lambda: any(r.error == "FENCED_MEMBER_EPOCH"
                         for r in cluster.admin.requests("ConsumerGroupHeartbeat")),
             "the fenced heartbeat")
    wait_for(lambda: [e for e in first.events if e[0] == "revoke"], "the partitions revoked")
    settle(cluster, [first])
    assert cluster.admin.group(GROUP).members[0].member_id == member_id
    after = produce(stack, cluster, "after")
    consume_all([first], before | after)


# -- mixed groups: online upgrade and downgrade --------------------------------------------------

def classic_member(stack, cluster, client: str, name: str):
    """A member on the classic protocol (JoinGroup and SyncGroup), as before KIP-848."""
    joined = JavaMember(cluster, name) if client == "java" else ConfluentMember(cluster, name)
    stack.callback(joined.close)
    return joined


def modern_member(stack, cluster, client: str, name: str):
    return java(stack, cluster, name) if client == "java" else member(stack, cluster, name)


def group_of(cluster: MockCluster, group_type: str, members) -> dict[str, frozenset]:
    """Wait until the group is a Stable group of ``group_type`` with these members, each
    client owning what the coordinator says, together every partition once."""
    def settled():
        try:
            view = cluster.admin.group(GROUP)
        except AdminError:
            return None
        if view.type != group_type or view.state != "Stable" or \
                len(view.members) != len(members):
            return None
        owned = {m.name: m.assignment() for m in members}
        broker_side = {m.client_id: frozenset((m.assignment or {}).get(TOPIC, []))
                       for m in view.members}
        if owned != broker_side or frozenset().union(*owned.values()) != ALL or \
                sum(map(len, owned.values())) != PARTITIONS:
            return None
        return owned
    return wait_for(settled, f"a stable {group_type} group of {len(members)}",
                    timeout=JVM_TIMEOUT_S)


@pytest.mark.parametrize("client", ["java", "confluent-kafka"])
def test_a_running_classic_group_is_upgraded_and_downgraded_consuming_every_record_once(
        stack, client):
    cluster = start(stack)
    old = classic_member(stack, cluster, client, "old")
    assert group_of(cluster, "classic", [old]) == {"old": ALL}
    first = produce(stack, cluster, "first")
    consume_all([old], first)
    # a member of the consumer protocol joins: the group is upgraded and shared
    new = modern_member(stack, cluster, client, "new")
    owned = group_of(cluster, "consumer", [old, new])
    assert sorted(map(len, owned.values())) == [3, 3]
    view = cluster.admin.group(GROUP)
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
    assert group_of(cluster, "classic", [old]) == {"old": ALL}
    third = produce(stack, cluster, "third")
    consume_all([old, new], first | second | third)
    assert_once([old, new], first | second | third)


# -- kafka-consumer-groups.sh -----------------------------------------------------------------

CONSUMER_GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"


def _table(out: str) -> list[list[str]]:
    """The rows of a table the tool prints, split on whitespace (the header first)."""
    return [line.split() for line in out.splitlines() if line.strip()]


def test_kafka_consumer_groups_describes_members_and_state_as_on_kafka(stack):
    cluster = start(stack)
    members = [member(stack, cluster, f"c{i}") for i in (1, 2)]
    owned = settle(cluster, members)
    view = cluster.admin.group(GROUP)
    epoch = view.group_epoch
    ids = {m.client_id: m.member_id for m in view.members}

    def listed(name: str) -> str:
        return f"{TOPIC}:" + ",".join(str(p) for p in sorted(owned[name]))

    # the columns Kafka 4.4's coordinator fills in, for a group of the consumer protocol
    rows = _table(kafka_tool(CONSUMER_GROUPS, cluster.bootstrap_servers, "--describe",
                             "--members", "--verbose", "--group", GROUP))
    assert rows[0] == ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS",
                       "CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH",
                       "TARGET-ASSIGNMENT"]
    assert sorted(rows[1:]) == sorted(
        [GROUP, ids[name], "/127.0.0.1", name, "3", str(epoch), listed(name), str(epoch),
         listed(name)] for name in ("c1", "c2"))
    rows = _table(kafka_tool(CONSUMER_GROUPS, cluster.bootstrap_servers, "--describe",
                             "--state", "--verbose", "--group", GROUP))
    assert rows[0] == ["GROUP", "COORDINATOR", "(ID)", "ASSIGNMENT-STRATEGY", "STATE",
                       "GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS"]
    coordinator = cluster.admin.broker(view.coordinator)
    assert rows[1] == [GROUP, f"{coordinator.host}:{coordinator.port}", f"({view.coordinator})",
                       "uniform", "Stable", str(epoch), str(view.assignment_epoch), "2"]
    rows = _table(kafka_tool(CONSUMER_GROUPS, cluster.bootstrap_servers, "--list", "--type"))
    assert rows == [["GROUP", "TYPE"], [GROUP, "Consumer"]]
