"""Mixed groups and online migration (KIP-848): classic members (JoinGroup, SyncGroup,
Heartbeat) inside a consumer group, a classic group upgraded when a consumer-protocol member
joins it, and a consumer group downgraded when its last consumer-protocol member leaves.

The first test replays a sequence a Kafka 4.4 broker answered, request for request: a classic
member "A" (range, six partitions) alone in its group, then a consumer-protocol member "B"
joining, A revoking by rejoining, and B leaving again.
"""

from __future__ import annotations

import pytest

import wire
from mockbroker.core.groups.consumer.member import MemberState
from tests.core.harness import answer, assignment_of, full_assignment, send, subscription
from tests.core.test_consumer_groups import GROUP, Group
from wire import errors

SESSION_MS, CLASSIC_REBALANCE_MS = 30_000, 20_000
JOIN = wire.request_class(11)
SYNC = wire.request_class(14)
COMMIT = wire.request_class(8)
LEAVE = wire.request_class(13)


class Mixed(Group):
    """A Group whose members may also speak the classic protocol, as the Java consumer does
    with ``group.protocol=classic`` and the range assignor."""

    def classic_join(self, member_id: str = "", *, owned=(), instance: str | None = None,
                     protocols=None, protocol_type: str = "consumer", version: int = 9,
                     rebalance_ms: int = CLASSIC_REBALANCE_MS):
        protocols = protocols or [("range", subscription(owned))]
        result = send(self.core, 11, version, broker=self.coordinator(), group_id=GROUP,
                      session_timeout_ms=SESSION_MS, rebalance_timeout_ms=rebalance_ms,
                      member_id=member_id, group_instance_id=instance,
                      protocol_type=protocol_type, reason=None,
                      protocols=[JOIN.JoinGroupRequestProtocol(name=n, metadata=m)
                                 for n, m in protocols])
        self.clock.advance(0)  # an initial rebalance completes on the clock
        return answer(result)

    def classic_sync(self, member_id: str, generation: int, assignments=None,
                     instance: str | None = None):
        result = send(self.core, 14, 5, broker=self.coordinator(), group_id=GROUP,
                      generation_id=generation, member_id=member_id, group_instance_id=instance,
                      protocol_type="consumer", protocol_name="range",
                      assignments=[SYNC.SyncGroupRequestAssignment(member_id=m, assignment=a)
                                   for m, a in (assignments or {}).items()])
        result = answer(result)
        return result.error_code, assignment_of(result.assignment)

    def classic_heartbeat(self, member_id: str, generation: int,
                          instance: str | None = None) -> int:
        return send(self.core, 12, 4, broker=self.coordinator(), group_id=GROUP,
                    generation_id=generation, member_id=member_id,
                    group_instance_id=instance).error_code

    def classic_leave(self, member_id: str, instance: str | None = None):
        return send(self.core, 13, 5, broker=self.coordinator(), group_id=GROUP, members=[
            LEAVE.MemberIdentity(member_id=member_id, group_instance_id=instance, reason=None)])

    def commit(self, member_id: str, generation: int, version: int = 8) -> int:
        result = send(self.core, 8, version, broker=self.coordinator(), group_id=GROUP,
                      generation_id_or_member_epoch=generation, member_id=member_id,
                      group_instance_id=None, topics=[COMMIT.OffsetCommitRequestTopic(
                          name="t", partitions=[COMMIT.OffsetCommitRequestPartition(
                              partition_index=0, committed_offset=5, committed_leader_epoch=-1,
                              committed_metadata="")])])
        return result.topics[0].partitions[0].error_code

    def classic_group_of_one(self) -> tuple[str, int]:
        """A classic group whose only member, A, holds all six partitions."""
        first = self.classic_join()
        assert first.error_code == errors.MEMBER_ID_REQUIRED
        joined = self.classic_join(first.member_id)
        assert (joined.error_code, joined.generation_id, joined.leader, joined.protocol_name) \
            == (errors.NONE, 1, first.member_id, "range")
        synced = self.classic_sync(first.member_id, 1,
                                   {first.member_id: full_assignment(range(6))})
        assert synced == (errors.NONE, [0, 1, 2, 3, 4, 5])
        return first.member_id, 1

    def describe(self):
        """(state, group epoch, assignment epoch, {member: (epoch, type, assignment, target)})
        as ConsumerGroupDescribe v1 tells it."""
        group = send(self.core, 69, 1, broker=self.coordinator(), group_ids=[GROUP],
                     include_authorized_operations=False).groups[0]

        def parts(a):
            return sorted(p for tp in a.topic_partitions for p in tp.partitions)

        return (group.group_state, group.group_epoch, group.assignment_epoch, {
            m.member_id: (m.member_epoch, m.member_type, parts(m.assignment),
                          parts(m.target_assignment)) for m in group.members})


# -- the sequence Kafka 4.4 answered ----------------------------------------------------------

def test_a_classic_group_is_upgraded_reconciled_and_downgraded_as_on_kafka():
    g = Mixed()
    a, generation = g.classic_group_of_one()
    g.clock.advance(1200)
    b = g.heartbeat("B", join=True)
    # B joins the upgraded group at epoch 2 with nothing: A still owns every partition
    assert (b.error_code, b.member_epoch, g.assigned(b)) == (errors.NONE, 2, [])
    assert g.group.type == "consumer"
    assert g.describe() == ("Reconciling", 2, 2, {
        a: (1, 0, [0, 1, 2, 3, 4, 5], [0, 1, 2]), "B": (2, 1, [], [3, 4, 5])})
    assert g.classic_heartbeat(a, generation) == errors.REBALANCE_IN_PROGRESS
    assert g.heartbeat("B").assignment is None
    # A rejoins still owning everything: it must revoke 3-5 first, at generation 1
    rejoined = g.classic_join(a, owned=range(6))
    assert (rejoined.error_code, rejoined.generation_id, rejoined.leader,
            rejoined.protocol_name, rejoined.members) == (errors.NONE, 1, "", "range", [])
    assert g.classic_sync(a, 1) == (errors.NONE, [0, 1, 2])
    assert g.classic_heartbeat(a, 1) == errors.REBALANCE_IN_PROGRESS
    assert g.describe()[3][a] == (1, 0, [0, 1, 2, 3, 4, 5], [0, 1, 2])
    # once it rejoins without them it moves to epoch 2, and B gets them
    again = g.classic_join(a, owned=[0, 1, 2])
    assert (again.error_code, again.generation_id) == (errors.NONE, 2)
    assert g.classic_sync(a, 2) == (errors.NONE, [0, 1, 2])
    assert g.classic_heartbeat(a, 2) == errors.NONE
    released = g.heartbeat("B", owned=[])
    assert (released.member_epoch, g.assigned(released)) == (2, [3, 4, 5])
    assert g.describe() == ("Stable", 2, 2, {
        a: (2, 0, [0, 1, 2], [0, 1, 2]), "B": (2, 1, [3, 4, 5], [3, 4, 5])})
    # a classic member commits with its generation (OffsetCommit v8 is fine for it)
    assert g.commit(a, 2) == errors.NONE
    assert g.commit(a, 7) == errors.ILLEGAL_GENERATION
    # B leaves: only a classic member is left, and the group becomes classic again
    assert g.heartbeat("B", -1).error_code == errors.NONE
    listed = send(g.core, 16, 5, broker=g.coordinator(), states_filter=[], types_filter=[])
    assert [(x.group_id, x.group_state, x.group_type) for x in listed.groups] == \
        [(GROUP, "PreparingRebalance", "classic")]
    described = send(g.core, 15, 5, broker=g.coordinator(), groups=[GROUP],
                     include_authorized_operations=False).groups[0]
    assert (described.error_code, described.group_state, described.protocol_type) == \
        (errors.NONE, "PreparingRebalance", "consumer")
    assert [(m.member_id, assignment_of(m.member_assignment)) for m in described.members] == \
        [(a, [0, 1, 2])]
    assert g.classic_heartbeat(a, 2) == errors.REBALANCE_IN_PROGRESS
    back = g.classic_join(a)
    assert (back.error_code, back.generation_id, back.leader, back.protocol_name,
            len(back.members)) == (errors.NONE, 3, a, "range", 1)
    assert g.group.offsets[("t", 0)].offset == 5  # the commit survived both conversions


# -- upgrade ----------------------------------------------------------------------------------

@pytest.mark.parametrize("policy", ["disabled", "downgrade"])
def test_the_migration_policy_can_refuse_the_upgrade(policy):
    g = Mixed(group_consumer_migration_policy=policy)
    g.classic_group_of_one()
    refused = g.heartbeat("B", join=True)
    assert (refused.error_code, refused.error_message) == (errors.GROUP_ID_NOT_FOUND, (
        f"Cannot upgrade classic group {GROUP} to consumer group because online upgrade is "
        f"disabled."))
    assert g.group.type == "classic" and len(g.group.members) == 1


def test_a_classic_group_of_another_protocol_type_or_too_big_is_not_upgraded():
    g = Mixed()
    first = g.classic_join(protocol_type="connect", protocols=[("v1", b"x")])
    g.classic_join(first.member_id, protocol_type="connect", protocols=[("v1", b"x")])
    refused = g.heartbeat("B", join=True)
    assert (refused.error_code, refused.error_message) == (errors.GROUP_ID_NOT_FOUND, (
        f"Cannot upgrade classic group {GROUP} to consumer group because the group does not "
        f"use the consumer embedded protocol."))
    small = Mixed(group_consumer_max_size=1)
    small.classic_group_of_one()
    second = small.classic_join()
    waiting = send(small.core, 11, 9, broker=small.coordinator(), group_id=GROUP,
                   session_timeout_ms=SESSION_MS, rebalance_timeout_ms=CLASSIC_REBALANCE_MS,
                   member_id=second.member_id, group_instance_id=None, protocol_type="consumer",
                   reason=None, protocols=[JOIN.JoinGroupRequestProtocol(
                       name="range", metadata=subscription())])
    assert not waiting.done  # a rebalance waits for the first member
    refused = small.heartbeat("B", join=True)
    assert refused.error_message == (
        f"Cannot upgrade classic group {GROUP} to consumer group because the group size "
        f"exceeds the consumer group maximum size.")


def test_members_waiting_in_a_classic_rebalance_are_told_to_rejoin_on_upgrade():
    g = Mixed()
    a, _ = g.classic_group_of_one()

    def join(member_id: str, owned=()):
        return send(g.core, 11, 9, broker=g.coordinator(), group_id=GROUP,
                    session_timeout_ms=SESSION_MS, rebalance_timeout_ms=CLASSIC_REBALANCE_MS,
                    member_id=member_id, group_instance_id=None, protocol_type="consumer",
                    reason=None, protocols=[JOIN.JoinGroupRequestProtocol(
                        name="range", metadata=subscription(owned))])

    second = answer(join("")).member_id
    waiting = join(second)  # a second member: the group rebalances, waiting for A
    assert not waiting.done
    assert g.group.state.value == "PreparingRebalance"
    g.clock.advance(1200)
    assert g.heartbeat("B", join=True).error_code == errors.NONE
    assert answer(waiting).error_code == errors.REBALANCE_IN_PROGRESS
    group = g.group
    assert (group.type, set(group.members)) == ("consumer", {a, second, "B"})
    # A keeps what it had at generation 1; the newcomers start with nothing
    assert g.describe()[3][a][:3] == (1, 0, [0, 1, 2, 3, 4, 5])
    assert g.describe()[3][second][:3] == (1, 0, [])


# -- classic members inside a consumer group --------------------------------------------------

def test_a_classic_member_joins_a_consumer_group_and_gets_its_share():
    g = Mixed()
    g.heartbeat("B", join=True)
    g.clock.advance(1200)
    first = g.classic_join()
    assert first.error_code == errors.MEMBER_ID_REQUIRED  # KIP-394 holds here too
    a = first.member_id
    joined = g.classic_join(a)
    # a new member bumps the epoch; B must give up half first
    assert (joined.error_code, joined.generation_id, joined.leader) == (errors.NONE, 3, "")
    assert g.classic_sync(a, 3) == (errors.NONE, [])
    revoke = g.heartbeat("B")
    assert (revoke.member_epoch, len(g.owned["B"])) == (2, 3)
    g.heartbeat("B", owned=g.owned["B"])
    assert g.classic_heartbeat(a, 3) == errors.REBALANCE_IN_PROGRESS  # its partitions are free
    again = g.classic_join(a)
    assert again.generation_id == 3
    code, mine = g.classic_sync(a, 3)
    assert code == errors.NONE and sorted(mine + g.owned["B"]) == [0, 1, 2, 3, 4, 5]
    assert g.classic_heartbeat(a, 3) == errors.NONE
    assert g.group.state.value == "Stable"


def test_classic_requests_to_a_consumer_group_are_checked_as_kafka_checks_them():
    g = Mixed()
    g.heartbeat("B", join=True)
    a = g.classic_join(g.classic_join().member_id).member_id
    # a protocol no classic member shares, or another protocol type
    other = g.classic_join(protocols=[("roundrobin", subscription())])
    assert (other.error_code, other.member_id) == (errors.INCONSISTENT_GROUP_PROTOCOL, "")
    refused = g.classic_join(a, protocols=[("roundrobin", subscription())])
    assert refused.error_code == errors.INCONSISTENT_GROUP_PROTOCOL
    assert g.classic_join(a, protocol_type="connect").error_code == \
        errors.INCONSISTENT_GROUP_PROTOCOL
    assert g.classic_sync(a, 99)[0] == errors.ILLEGAL_GENERATION
    assert g.classic_heartbeat("nobody", 3) == errors.UNKNOWN_MEMBER_ID
    assert g.classic_heartbeat("B", 2) == errors.UNKNOWN_MEMBER_ID  # B is not classic
    assert g.classic_sync("B", 2)[0] == errors.UNKNOWN_MEMBER_ID
    left = g.classic_leave("nobody")
    assert [m.error_code for m in left.members] == [errors.UNKNOWN_MEMBER_ID]


def test_a_classic_member_that_leaves_is_fenced_and_its_partitions_move():
    g = Mixed()
    g.heartbeat("B", join=True)
    a = g.classic_join(g.classic_join().member_id).member_id
    left = g.classic_leave(a)
    assert (left.error_code, [m.error_code for m in left.members]) == \
        (errors.NONE, [errors.NONE])
    assert list(g.group.members) == ["B"] and g.group.type == "consumer"
    g.settle("B")
    assert g.owned["B"] == [0, 1, 2, 3, 4, 5]


def test_a_classic_member_is_expired_by_its_own_session_timeout():
    g = Mixed()
    g.heartbeat("B", join=True)
    a = g.classic_join(g.classic_join().member_id).member_id
    g.classic_sync(a, 3)
    for _ in range(SESSION_MS // 5000):  # B keeps heartbeating; A says nothing
        g.clock.advance(5000)
        g.heartbeat("B", owned=g.owned.get("B"))
    assert a not in g.group.members
    g.settle("B")
    assert g.owned["B"] == [0, 1, 2, 3, 4, 5]


def test_a_classic_member_that_does_not_rejoin_or_sync_in_time_is_fenced():
    g = Mixed(group_consumer_session_timeout_ms=120_000)
    g.heartbeat("B", join=True)
    a = g.classic_join(g.classic_join().member_id).member_id
    # joined but never synced: fenced after its rebalance timeout
    g.clock.advance(CLASSIC_REBALANCE_MS - 1)
    assert a in g.group.members
    g.clock.advance(1)
    assert a not in g.group.members
    a = g.classic_join(g.classic_join().member_id).member_id
    epoch = g.group.members[a].member_epoch
    assert g.classic_sync(a, epoch)[0] == errors.NONE
    # a new target: told to rejoin, and does not, so it is fenced after its rebalance timeout
    g.clock.advance(1200)
    g.heartbeat("C", join=True)
    assert g.group.assignment_epoch > epoch
    assert g.classic_heartbeat(a, epoch) == errors.REBALANCE_IN_PROGRESS
    g.clock.advance(CLASSIC_REBALANCE_MS - 1)
    assert g.classic_heartbeat(a, epoch) == errors.REBALANCE_IN_PROGRESS  # does not re-arm
    g.clock.advance(1)
    assert a not in g.group.members


def test_classic_members_survive_a_coordinator_move():
    g = Mixed(brokers=3)
    a, _ = g.classic_group_of_one()
    g.heartbeat("B", join=True)
    old = g.coordinator()
    partition = g.core.groups.placement.partition(GROUP)
    g.core.cluster.move_leader(partition, next(b for b in partition.replicas if b != old))
    rebuilt = g.group.members[a]
    assert rebuilt.uses_classic and rebuilt.classic.session_timeout_ms == SESSION_MS
    assert rebuilt.classic.protocol_name == "range"
    assert g.describe()[3][a][:2] == (1, 0)
    assert g.classic_heartbeat(a, 1) == errors.REBALANCE_IN_PROGRESS
    assert g.classic_join(a, owned=range(6)).generation_id == 1
    assert g.group.members[a].state is MemberState.UNREVOKED_PARTITIONS


def test_a_downgraded_group_is_rebuilt_as_classic_by_a_new_coordinator():
    g = Mixed(brokers=3)
    a, _ = g.classic_group_of_one()
    g.heartbeat("B", join=True)
    g.heartbeat("B", -1)
    assert g.group.type == "classic"
    old = g.coordinator()
    partition = g.core.groups.placement.partition(GROUP)
    g.core.cluster.move_leader(partition, next(b for b in partition.replicas if b != old))
    group = g.group
    assert (group.type, group.generation_id, list(group.members)) == ("classic", 2, [a])
    # the target assignment it had in the consumer group (B's half was never taken)
    assert assignment_of(group.members[a].assignment) == [0, 1, 2]


def test_without_downgrade_a_group_of_classic_members_stays_a_consumer_group():
    g = Mixed(group_consumer_migration_policy="upgrade")
    a, _ = g.classic_group_of_one()
    g.heartbeat("B", join=True)
    g.heartbeat("B", -1)
    assert g.group.type == "consumer" and list(g.group.members) == [a]
    assert g.classic_heartbeat(a, 1) == errors.REBALANCE_IN_PROGRESS
    g.clock.advance(1200)
    again = g.classic_join(a, owned=range(6))
    assert again.generation_id == 3
    assert g.classic_sync(a, 3) == (errors.NONE, [0, 1, 2, 3, 4, 5])


# -- static members ---------------------------------------------------------------------------

def test_a_classic_static_member_replacing_the_last_consumer_member_downgrades():
    g = Mixed()
    a, _ = g.classic_group_of_one()
    g.heartbeat("B", join=True, instance_id="i-b")
    g.heartbeat("B", owned=[])
    # B's instance restarts with the classic protocol under a new member id
    joined = g.classic_join(instance="i-b")
    assert joined.error_code == errors.NONE
    group = g.group
    assert (group.type, sorted(group.members)) == ("classic", sorted([a, joined.member_id]))
    assert group.static_members == {"i-b": joined.member_id}


def test_a_consumer_static_member_may_take_over_a_classic_static_member():
    g = Mixed()
    g.heartbeat("B", join=True)
    first = g.classic_join(instance="i-a")
    assert first.error_code == errors.NONE  # a static member needs no second join
    # the same instance comes back with the consumer protocol, without a leave first
    took = g.heartbeat("A2", join=True, instance_id="i-a")
    assert took.error_code == errors.NONE
    assert first.member_id not in g.group.members
    assert not g.group.members["A2"].uses_classic
