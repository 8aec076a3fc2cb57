"""The classic group coordinator driven directly, with a ManualClock and no sockets.

Every test asserts what a client would see: error codes, member ids, generations, the leader,
the member list (only the leader gets it), assignments, and the group's state by Kafka's name.
Kafka 4.x's ``GroupMetadataManager`` (classic groups) is the reference for each expectation.

An autouse fixture records the (from, to) state transitions each test takes; the last test
checks that every row of the transition table in ``state.py`` is taken by the test named for it.
"""

from __future__ import annotations

import struct

import pytest

from mockbroker.core.clock import ManualClock
from mockbroker.core.errors import ApiException
from mockbroker.core.groups.classic.group import ClassicGroup
from mockbroker.core.groups.classic_api import JoinRequest, JoinResult, SyncResult
from mockbroker.core.groups.classic.state import TRANSITIONS, Event, GroupState
from mockbroker.core.groups.offsets import OffsetEntry
from mockbroker.core.coordinators.placement import partition_for
from mockbroker.core.deferred import Deferred
from tests.core.harness import full_assignment, make_core, send, subscription
from wire import decode_embedded, embedded_struct, encode_embedded, errors, records

GROUP = "test-group"
SESSION = 10_000
REBALANCE = 30_000

E, PR, CR, ST, DEAD = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE,
                       GroupState.COMPLETING_REBALANCE, GroupState.STABLE, GroupState.DEAD)


# -- recording the transitions ---------------------------------------------------------------------

#: (state, event) pairs fired by the test running now
_FIRED: list[tuple[GroupState, Event]] = []


@pytest.fixture(autouse=True)
def record_transitions(monkeypatch):
    """Every group state change goes through the table; record which rows are fired."""
    original = ClassicGroup.fire
    _FIRED.clear()

    def recording(self, event, now_ms):
        source = self.state
        original(self, event, now_ms)
        assert (source, event) in TRANSITIONS
        _FIRED.append((source, event))

    monkeypatch.setattr(ClassicGroup, "fire", recording)


# -- a coordinator to talk to ---------------------------------------------------------------------


def answer(result):
    """What the client has received: a direct result, or a resolved Deferred's value."""
    if isinstance(result, Deferred):
        assert result.done, "the coordinator has not answered yet"
        return result.value
    return result


def waiting(result) -> bool:
    return isinstance(result, Deferred) and not result.done


class Harness:
    def __init__(self, brokers: int = 1, **settings):
        self.clock = ManualClock(start_ms=0)
        self.core = make_core(brokers, clock=self.clock, **settings)
        self.gc = self.core.groups

    # where the group lives

    def coordinator(self, group_id: str = GROUP) -> int:
        return self.gc.placement.coordinator_for(group_id)

    def other_broker(self, group_id: str = GROUP) -> int:
        current = self.coordinator(group_id)
        return next(b for b in self.core.cluster.brokers if b != current)

    def offsets_partition(self, group_id: str = GROUP):
        """The group's partition of the cluster's own ``__consumer_offsets`` topic."""
        self.coordinator(group_id)  # the topic is created on first use, as in Kafka
        return self.core.cluster.topics["__consumer_offsets"].partitions[
            partition_for(group_id, 50)]

    def group(self, group_id: str = GROUP) -> ClassicGroup | None:
        return self.gc.shard_for(group_id, self.coordinator(group_id)).groups.get(group_id)

    def state(self, group_id: str = GROUP) -> str:
        return self.group(group_id).state.value

    def advance(self, ms: int) -> None:
        self.clock.advance(ms)

    @property
    def now(self) -> int:
        return self.clock.now_ms()

    # requests

    def join(self, member_id: str = "", *, group_id: str = GROUP, instance: str | None = None,
             protocols: list[tuple[str, bytes]] | None = None, meta: bytes = b"sub",
             session: int = SESSION, rebalance: int = REBALANCE, version: int = 5,
             client: str = "client", protocol_type: str = "consumer", broker: int | None = None):
        if protocols is None:
            protocols = [("range", meta)]
        return self.gc.classic.join_group(
            self.coordinator(group_id) if broker is None else broker,
            JoinRequest(group_id, member_id, instance, client, "/127.0.0.1", session, rebalance,
                        protocol_type, protocols, version))

    def join_new(self, **kw) -> tuple[str, JoinResult | Deferred]:
        """A v4+ dynamic member's first join: MEMBER_ID_REQUIRED, then again with that id."""
        first = self.join(**kw)
        assert first.error_code == errors.MEMBER_ID_REQUIRED
        assert first.member_id
        return first.member_id, self.join(first.member_id, **kw)

    def sync(self, member_id: str, generation: int, assignments: dict[str, bytes] | None = None,
             *, group_id: str = GROUP, instance: str | None = None,
             protocol_type: str | None = None, protocol_name: str | None = None,
             broker: int | None = None):
        return self.gc.classic.sync_group(self.coordinator(group_id) if broker is None else broker,
                                  group_id, member_id, instance, generation, protocol_type,
                                  protocol_name, assignments or {})

    def heartbeat(self, member_id: str, generation: int, *, group_id: str = GROUP,
                  instance: str | None = None, broker: int | None = None) -> int:
        return self.gc.classic.heartbeat(self.coordinator(group_id) if broker is None else broker,
                                         group_id, member_id, instance, generation).error_code

    def leave(self, *members: tuple[str, str | None], group_id: str = GROUP,
              broker: int | None = None):
        left = self.gc.classic.leave_group(
            self.coordinator(group_id) if broker is None else broker, group_id, list(members))
        return left.error_code, left.member_errors

    def keep_alive(self, total_ms: int, *members: tuple[str, int], step: int = 5000) -> list:
        """Advance ``total_ms`` in steps, heartbeating each (member id, generation) after each
        step; returns the heartbeat codes of every step."""
        codes = []
        target = self.now + total_ms
        while self.now < target:
            self.advance(min(step, target - self.now))
            codes.append([self.heartbeat(m, g) for m, g in members])
        return codes

    def stable(self, n: int, *, instances: list[str | None] | None = None,
               metas: list[bytes] | None = None,
               protocols: list[list[tuple[str, bytes]]] | None = None) -> list[str]:
        """A Stable group of ``n`` members (the first leads) with assignment ``a<i>`` each;
        member i subscribes with ``sub<i>`` unless told otherwise."""
        instances = instances or [None] * n
        metas = metas or [f"sub{i}".encode() for i in range(n)]
        protocols = protocols or [None] * n
        pending = []
        for instance, meta, offered in zip(instances, metas, protocols):
            if instance is None:
                _, result = self.join_new(meta=meta, protocols=offered)
            else:
                result = self.join(instance=instance, meta=meta, protocols=offered)
            pending.append(result)
        self.advance(0)
        results = [answer(r) for r in pending]
        ids = [r.member_id for r in results]
        generation = results[0].generation_id
        assert all(r.error_code == errors.NONE and r.generation_id == generation for r in results)
        assert self.group().leader_id == ids[0]
        assignments = {m: f"a{i}".encode() for i, m in enumerate(ids)}
        syncs = [self.sync(ids[0], generation, assignments)]
        syncs += [self.sync(m, generation) for m in ids[1:]]
        assert [answer(s).assignment for s in syncs] == list(assignments.values())
        assert self.state() == "Stable"
        return ids


def group_metadata_values(h: Harness, group_id: str = GROUP) -> list:
    """Every GroupMetadataValue written for ``group_id`` (None for a tombstone), in log order."""
    found = []
    for stored in h.offsets_partition(group_id).log.batches:
        for record in records.decode_records(stored.data, verify_crc=False):
            (kind,) = struct.unpack_from(">h", record.key)
            if kind != 2:
                continue
            key = embedded_struct("GroupMetadataKey", 0).decode(bytes(record.key[2:]))[0]
            if key.group != group_id:
                continue
            found.append(None if record.value is None
                         else decode_embedded("GroupMetadataValue", bytes(record.value))[1])
    return found


def leader_members(result: JoinResult) -> dict[str, bytes]:
    return {member_id: metadata for member_id, _, metadata in result.members}


# -- JoinGroup ------------------------------------------------------------------------------------


def test_first_joiner_leads_and_everyone_is_answered_at_once_with_the_list_only_to_the_leader():
    h = Harness()
    a, a_join = h.join_new(meta=b"meta-a", client="ca")
    b, b_join = h.join_new(meta=b"meta-b", client="cb")
    assert a.startswith("ca-") and b.startswith("cb-") and a != b
    assert waiting(a_join) and waiting(b_join)
    assert h.state() == "PreparingRebalance"

    h.advance(0)
    ra, rb = answer(a_join), answer(b_join)
    assert (ra.error_code, rb.error_code) == (errors.NONE, errors.NONE)
    assert (ra.member_id, rb.member_id) == (a, b)
    assert ra.generation_id == rb.generation_id == 1
    assert ra.leader == rb.leader == a
    assert (ra.protocol_type, ra.protocol_name) == ("consumer", "range")
    assert (rb.protocol_type, rb.protocol_name) == ("consumer", "range")
    assert leader_members(ra) == {a: b"meta-a", b: b"meta-b"}
    assert rb.members == []
    assert not ra.skip_assignment
    assert h.state() == "CompletingRebalance"


def test_join_v4_without_member_id_is_told_to_rejoin_with_the_id_it_is_given():
    h = Harness()
    first = h.join(version=4)
    assert first.error_code == errors.MEMBER_ID_REQUIRED
    assert first.generation_id == -1 and first.members == []
    assert h.group().pending_members == {first.member_id}
    assert h.group().members == {}
    assert h.state() == "Empty"  # a pending member does not start a rebalance

    second = h.join(first.member_id, version=4)
    assert waiting(second)
    assert h.group().pending_members == set()
    h.advance(0)
    assert answer(second).member_id == first.member_id
    assert answer(second).leader == first.member_id


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_join_before_v4_is_admitted_directly(version):
    h = Harness()
    joined = h.join(version=version, client="old")
    assert waiting(joined)
    member_id = next(iter(h.group().members))
    assert member_id.startswith("old-")
    assert h.group().pending_members == set()
    h.advance(0)
    result = answer(joined)
    assert result.error_code == errors.NONE
    assert result.member_id == result.leader == member_id
    assert result.generation_id == 1


def test_a_pending_member_expires_after_its_session_timeout():
    h = Harness()
    first = h.join(session=7000)
    pending_id = first.member_id
    h.advance(6999)
    assert pending_id in h.group().pending_members
    h.advance(1)
    assert h.group().pending_members == set()
    late = h.join(pending_id, session=7000)
    assert late.error_code == errors.UNKNOWN_MEMBER_ID
    assert late.member_id == pending_id


def test_a_pending_member_holds_up_a_rebalance_until_it_expires():
    h = Harness()
    (a,) = h.stable(1)
    c = h.join().member_id  # MEMBER_ID_REQUIRED; C never comes back
    a_join = h.join(a, meta=b"sub0")  # the leader rejoins: rebalance, waiting for C too
    assert h.state() == "PreparingRebalance"
    assert h.keep_alive(SESSION - 5000, (a, 1)) == [[errors.REBALANCE_IN_PROGRESS]]
    assert waiting(a_join)
    h.advance(5000)  # C's session timeout
    result = answer(a_join)
    assert result.generation_id == 2
    assert leader_members(result) == {a: b"sub0"}
    assert c not in h.group().pending_members


def test_unknown_group_with_a_member_id_and_empty_group_id():
    h = Harness()
    result = h.join("someone")
    assert (result.error_code, result.member_id) == (errors.UNKNOWN_MEMBER_ID, "someone")
    assert h.group() is None
    assert h.join(group_id="").error_code == errors.INVALID_GROUP_ID


def test_a_new_leader_is_chosen_when_the_leader_leaves():
    h = Harness()
    a, b, c = h.stable(3)
    top, per_member = h.leave((a, None))
    assert (top, per_member) == (errors.NONE, [errors.NONE])
    assert h.state() == "PreparingRebalance"
    assert h.heartbeat(a, 1) == errors.UNKNOWN_MEMBER_ID
    assert h.heartbeat(b, 1) == errors.REBALANCE_IN_PROGRESS
    c_join = h.join(c, meta=b"sub2")
    b_join = h.join(b, meta=b"sub1")
    rb, rc = answer(b_join), answer(c_join)  # every remaining member rejoined: no waiting
    assert rb.leader == rc.leader == b  # the first remaining member in join order
    assert rb.generation_id == rc.generation_id == 2
    assert leader_members(rb) == {b: b"sub1", c: b"sub2"}
    assert rc.members == []


def test_a_new_leader_is_chosen_when_the_leader_stops_heartbeating():
    h = Harness()
    a, b = h.stable(2)
    codes = h.keep_alive(SESSION, (b, 1))
    assert codes == [[errors.NONE], [errors.REBALANCE_IN_PROGRESS]]
    assert a not in h.group().members
    result = answer(h.join(b, meta=b"sub1"))
    assert (result.leader, result.generation_id) == (b, 2)
    assert leader_members(result) == {b: b"sub1"}


def test_a_leader_that_has_not_rejoined_is_replaced_by_one_that_has():
    h = Harness()
    a, b = h.stable(2)
    h.gc.admin.force_rebalance(GROUP)
    b_join = h.join(b, meta=b"sub1")
    assert waiting(b_join)
    h.keep_alive(REBALANCE, (a, 1))  # A heartbeats but never rejoins
    result = answer(b_join)
    assert (result.leader, result.generation_id) == (b, 2)
    assert list(h.group().members) == [b]
    assert h.heartbeat(a, 1) == errors.UNKNOWN_MEMBER_ID


# -- the initial rebalance delay ------------------------------------------------------------------


def test_the_default_initial_delay_completes_on_the_next_timer_tick():
    h = Harness()
    _, joined = h.join_new()
    assert waiting(joined)
    h.advance(0)
    assert answer(joined).generation_id == 1


def test_the_initial_delay_holds_a_lone_member_for_the_whole_delay():
    h = Harness(group_initial_rebalance_delay_ms=3000)
    _, joined = h.join_new()
    h.advance(2999)
    assert waiting(joined)
    h.advance(1)
    assert answer(joined).generation_id == 1


def test_a_member_joining_within_the_initial_delay_extends_it():
    h = Harness(group_initial_rebalance_delay_ms=3000)
    a, a_join = h.join_new(rebalance=10_000)
    h.advance(1000)
    b, b_join = h.join_new(rebalance=10_000)
    h.advance(2000)  # t=3000: a new member came, so wait another delay
    assert waiting(a_join) and waiting(b_join)
    h.advance(2999)
    assert waiting(a_join) and waiting(b_join)
    h.advance(1)  # t=6000: nobody new, done
    ra, rb = answer(a_join), answer(b_join)
    assert ra.generation_id == rb.generation_id == 1
    assert ra.leader == a
    assert set(leader_members(ra)) == {a, b}


def test_the_initial_delay_never_goes_beyond_the_rebalance_timeout():
    h = Harness(group_initial_rebalance_delay_ms=3000)
    a, a_join = h.join_new(rebalance=5000)  # 2000 ms left after the first delay
    h.advance(1000)
    h.join_new(rebalance=5000)
    h.advance(2000)  # t=3000: extended by min(3000, 2000)
    h.advance(1000)
    c, c_join = h.join_new(rebalance=5000)  # another newcomer, but no time remains
    h.advance(999)
    assert waiting(a_join)
    h.advance(1)  # t=5000
    assert len(answer(a_join).members) == 3
    assert answer(c_join).generation_id == 1


# -- DelayedJoin ----------------------------------------------------------------------------------


def test_a_rebalance_completes_as_soon_as_every_known_member_rejoins():
    h = Harness()
    a, b, c = h.stable(3)
    a_join = h.join(a, meta=b"sub0")  # the leader rejoins: rebalance
    assert h.state() == "PreparingRebalance"
    b_join = h.join(b, meta=b"sub1")
    assert waiting(a_join) and waiting(b_join)
    c_join = h.join(c, meta=b"sub2")
    results = [answer(r) for r in (a_join, b_join, c_join)]  # no time has passed
    assert [r.generation_id for r in results] == [2, 2, 2]
    assert [r.leader for r in results] == [a, a, a]
    assert [len(r.members) for r in results] == [3, 0, 0]
    assert h.state() == "CompletingRebalance"


def test_members_that_miss_the_rebalance_timeout_are_dropped():
    h = Harness()
    a, b, c = h.stable(3)
    a_join = h.join(a, meta=b"sub0")
    b_join = h.join(b, meta=b"sub1")
    # C keeps heartbeating (it is told to rejoin) but never does.
    codes = h.keep_alive(REBALANCE - 5000, (c, 1))
    assert codes == [[errors.REBALANCE_IN_PROGRESS]] * 5
    assert waiting(a_join) and waiting(b_join)
    h.advance(5000)
    ra = answer(a_join)
    assert ra.generation_id == answer(b_join).generation_id == 2
    assert set(leader_members(ra)) == {a, b}
    assert h.heartbeat(c, 1) == errors.UNKNOWN_MEMBER_ID
    assert h.join(c, meta=b"sub2").error_code == errors.UNKNOWN_MEMBER_ID


def test_static_members_are_not_dropped_at_the_rebalance_timeout():
    h = Harness()
    a, b = h.stable(2, instances=[None, "i-b"])
    a_join = h.join(a, meta=b"sub0")
    h.keep_alive(REBALANCE, (b, 1))  # B heartbeats but does not rejoin
    ra = answer(a_join)
    assert ra.generation_id == 2
    assert set(leader_members(ra)) == {a, b}  # B is static: it keeps its place
    assert waiting(h.sync(b, 2, instance="i-b"))  # and takes part in generation 2


# -- protocols, timeouts, sizes -------------------------------------------------------------------


def test_the_protocol_every_member_supports_with_the_most_votes_is_chosen():
    h = Harness()
    _, a_join = h.join_new(protocols=[("range", b"ra"), ("roundrobin", b"rra")])
    _, b_join = h.join_new(protocols=[("roundrobin", b"rrb"), ("range", b"rb")])
    _, c_join = h.join_new(protocols=[("range", b"rc"), ("roundrobin", b"rrc")])
    h.advance(0)
    ra = answer(a_join)
    assert ra.protocol_name == answer(b_join).protocol_name == "range"  # two votes to one
    assert sorted(leader_members(ra).values()) == [b"ra", b"rb", b"rc"]


def test_only_a_protocol_all_members_support_can_win():
    h = Harness()
    _, a_join = h.join_new(protocols=[("range", b"ra"), ("roundrobin", b"rra")])
    _, b_join = h.join_new(protocols=[("range", b"rb"), ("roundrobin", b"rrb")])
    _, c_join = h.join_new(protocols=[("sticky", b"sc"), ("roundrobin", b"rrc")])
    h.advance(0)
    ra = answer(a_join)
    assert ra.protocol_name == answer(c_join).protocol_name == "roundrobin"
    assert sorted(leader_members(ra).values()) == [b"rra", b"rrb", b"rrc"]


def test_inconsistent_group_protocol():
    h = Harness()
    a, b = h.stable(2)
    new = h.join(protocols=[("roundrobin", b"x")])
    assert (new.error_code, new.member_id) == (errors.INCONSISTENT_GROUP_PROTOCOL, "")
    other_type = h.join(protocol_type="connect")
    assert other_type.error_code == errors.INCONSISTENT_GROUP_PROTOCOL
    existing = h.join(b, protocols=[("roundrobin", b"x")])
    assert (existing.error_code, existing.member_id) == (errors.INCONSISTENT_GROUP_PROTOCOL, b)
    assert h.state() == "Stable"
    assert h.sync(b, 1, protocol_name="roundrobin").error_code == \
        errors.INCONSISTENT_GROUP_PROTOCOL
    assert h.sync(b, 1, protocol_type="connect").error_code == errors.INCONSISTENT_GROUP_PROTOCOL
    assert h.sync(b, 1, protocol_type="consumer", protocol_name="range").error_code == errors.NONE
    # an empty group needs a protocol type and at least one protocol
    assert h.join(group_id="g2", protocol_type="").error_code == errors.INCONSISTENT_GROUP_PROTOCOL
    assert h.join(group_id="g2", protocols=[]).error_code == errors.INCONSISTENT_GROUP_PROTOCOL


def test_invalid_session_timeout():
    h = Harness()
    assert h.join(session=5999).error_code == errors.INVALID_SESSION_TIMEOUT
    assert h.join(session=1_800_001).error_code == errors.INVALID_SESSION_TIMEOUT
    assert h.join(session=6000).error_code == errors.MEMBER_ID_REQUIRED
    h = Harness(group_min_session_timeout_ms=100, group_max_session_timeout_ms=20_000)
    assert h.join(session=100).error_code == errors.MEMBER_ID_REQUIRED
    assert h.join(session=20_001).error_code == errors.INVALID_SESSION_TIMEOUT


def test_group_max_size_reached():
    h = Harness(group_max_size=2)
    _, a_join = h.join_new()
    _, b_join = h.join_new()
    refused = h.join()
    assert (refused.error_code, refused.member_id) == (errors.GROUP_MAX_SIZE_REACHED, "")
    assert h.join(version=3).error_code == errors.GROUP_MAX_SIZE_REACHED
    h.advance(0)
    a, b = answer(a_join).member_id, answer(b_join).member_id
    assert len(h.group().members) == 2
    h.sync(a, 1, {a: b"a", b: b"b"})
    assert h.join().error_code == errors.GROUP_MAX_SIZE_REACHED  # Stable and full
    assert answer(h.join(b, meta=b"sub")).error_code == errors.NONE  # members are welcome


def test_a_member_refused_for_group_size_is_removed():
    # Kafka removes a member it refuses for size: with max size lowered, the last members to
    # rejoin a rebalance are kicked out, not left waiting to time out.
    h = Harness()
    a, b, c = h.stable(3)
    h.gc.settings["group_max_size"] = 2
    a_join = h.join(a, meta=b"sub0")
    b_join = h.join(b, meta=b"sub1")
    refused = h.join(c, meta=b"sub2")
    assert (refused.error_code, refused.member_id) == (errors.GROUP_MAX_SIZE_REACHED, "")
    assert c not in h.group().members
    assert h.heartbeat(c, 1) == errors.UNKNOWN_MEMBER_ID
    h.advance(REBALANCE)
    ra = answer(a_join)
    assert answer(b_join).generation_id == ra.generation_id == 2
    assert set(leader_members(ra)) == {a, b}


# -- SyncGroup ------------------------------------------------------------------------------------


def test_the_leaders_assignment_is_stored_before_the_followers_are_answered():
    h = Harness()
    _, a_join = h.join_new(meta=b"meta-a")
    _, b_join = h.join_new(meta=b"meta-b")
    h.advance(0)
    a, b = answer(a_join).member_id, answer(b_join).member_id
    records_before = len(group_metadata_values(h))

    b_sync = h.sync(b, 1)
    assert waiting(b_sync)
    h.advance(SESSION - 1)  # a follower waits for the leader
    assert waiting(b_sync)
    assert h.state() == "CompletingRebalance"

    stored_when_answered = []
    b_sync.add_callback(lambda _: stored_when_answered.append(group_metadata_values(h)))
    a_sync = h.sync(a, 1, {a: b"assign-a", b: b"assign-b"})
    assert answer(a_sync) == SyncResult(errors.NONE, b"assign-a", "consumer", "range")
    assert answer(b_sync) == SyncResult(errors.NONE, b"assign-b", "consumer", "range")
    assert h.state() == "Stable"

    (values,) = stored_when_answered
    assert len(values) == records_before + 1
    value = values[-1]
    assert (value.protocol_type, value.generation, value.protocol, value.leader) == \
        ("consumer", 1, "range", a)
    assert {m.member_id: (m.subscription, m.assignment) for m in value.members} == \
        {a: (b"meta-a", b"assign-a"), b: (b"meta-b", b"assign-b")}
    assert {m.client_host for m in value.members} == {"/127.0.0.1"}


def test_members_missing_from_the_assignment_get_empty_bytes():
    h = Harness()
    joins = [h.join_new()[1] for _ in range(3)]
    h.advance(0)
    a, b, c = (answer(j).member_id for j in joins)
    b_sync = h.sync(b, 1)
    a_sync = h.sync(a, 1, {a: b"only-a", "not-a-member": b"x"})
    c_sync = h.sync(c, 1)  # after the leader: answered at once from the stored assignment
    assert isinstance(c_sync, SyncResult)
    assert [answer(s).error_code for s in (a_sync, b_sync, c_sync)] == [errors.NONE] * 3
    assert [answer(s).assignment for s in (a_sync, b_sync, c_sync)] == [b"only-a", b"", b""]
    assert {m.member_id for m in group_metadata_values(h)[-1].members} == {a, b, c}


def test_sync_errors():
    h = Harness()
    a, b = h.stable(2)
    assert h.sync(a, 2).error_code == errors.ILLEGAL_GENERATION
    assert h.sync("stranger", 1).error_code == errors.UNKNOWN_MEMBER_ID
    assert h.sync(a, 1, group_id="no-such-group").error_code == errors.UNKNOWN_MEMBER_ID
    assert h.sync(a, 1, instance="i-x").error_code == errors.UNKNOWN_MEMBER_ID
    # Stable: a repeated SyncGroup gets the stored assignment again
    assert h.sync(b, 1) == SyncResult(errors.NONE, b"a1", "consumer", "range")


def test_the_first_members_sync_arrives_before_the_second_members_join():
    # seed 000, first order: the lone member's SyncGroup wins, the group is Stable, then the
    # second JoinGroup starts a rebalance the first member hears of by heartbeat.
    h = Harness()
    _, a_join = h.join_new(meta=b"meta-a")
    h.advance(0)
    a = answer(a_join).member_id
    assert answer(h.sync(a, 1, {a: b"all"})).assignment == b"all"
    assert h.state() == "Stable"

    b, b_join = h.join_new(meta=b"meta-b")
    assert h.state() == "PreparingRebalance"
    assert waiting(b_join)
    assert h.heartbeat(a, 1) == errors.REBALANCE_IN_PROGRESS
    a_join = h.join(a, meta=b"meta-a")
    ra, rb = answer(a_join), answer(b_join)
    assert ra.generation_id == rb.generation_id == 2
    assert ra.leader == rb.leader == a
    assert leader_members(ra) == {a: b"meta-a", b: b"meta-b"}
    b_sync = h.sync(b, 2)
    assert answer(h.sync(a, 2, {a: b"half-a", b: b"half-b"})).assignment == b"half-a"
    assert answer(b_sync).assignment == b"half-b"


def test_the_second_members_join_arrives_before_the_first_members_sync():
    # seed 000, second order: the JoinGroup wins, so the SyncGroup that follows is told the
    # group is rebalancing, and the first member rejoins.
    h = Harness()
    _, a_join = h.join_new(meta=b"meta-a")
    h.advance(0)
    a = answer(a_join).member_id
    assert h.state() == "CompletingRebalance"

    b, b_join = h.join_new(meta=b"meta-b")
    assert h.state() == "PreparingRebalance"
    assert h.sync(a, 1, {a: b"all"}) == SyncResult(errors.REBALANCE_IN_PROGRESS)
    assert waiting(b_join)
    a_join = h.join(a, meta=b"meta-a")
    ra, rb = answer(a_join), answer(b_join)
    assert ra.generation_id == rb.generation_id == 2
    assert ra.leader == a
    assert leader_members(ra) == {a: b"meta-a", b: b"meta-b"}


def test_a_waiting_sync_is_told_of_a_rebalance_a_new_join_starts():
    h = Harness()
    joins = [h.join_new()[1] for _ in range(2)]
    h.advance(0)
    a, b = (answer(j).member_id for j in joins)
    b_sync = h.sync(b, 1)
    assert waiting(b_sync)
    _, c_join = h.join_new()
    assert answer(b_sync) == SyncResult(errors.REBALANCE_IN_PROGRESS)
    assert h.sync(a, 1, {a: b"x"}).error_code == errors.REBALANCE_IN_PROGRESS
    assert h.sync(b, 1).error_code == errors.REBALANCE_IN_PROGRESS
    h.join(a)
    h.join(b)
    assert answer(c_join).generation_id == 2
    assert len(h.group().members) == 3


def test_a_join_with_unchanged_metadata_while_completing_gets_the_current_result():
    h = Harness()
    _, a_join = h.join_new(meta=b"meta-a")
    _, b_join = h.join_new(meta=b"meta-b")
    h.advance(0)
    a, b = answer(a_join).member_id, answer(b_join).member_id

    again_b = h.join(b, meta=b"meta-b")
    assert isinstance(again_b, JoinResult)
    assert (again_b.error_code, again_b.generation_id, again_b.leader, again_b.members) == \
        (errors.NONE, 1, a, [])
    again_a = h.join(a, meta=b"meta-a")
    assert (again_a.generation_id, leader_members(again_a)) == (1, {a: b"meta-a", b: b"meta-b"})
    assert h.state() == "CompletingRebalance"

    changed = h.join(b, meta=b"meta-b2")  # new metadata: a rebalance
    assert waiting(changed)
    assert h.state() == "PreparingRebalance"
    a_again = h.join(a, meta=b"meta-a")
    assert (answer(changed).generation_id, answer(changed).members) == (2, [])
    assert leader_members(answer(a_again)) == {a: b"meta-a", b: b"meta-b2"}


def test_a_follower_rejoining_a_stable_group_unchanged_gets_the_current_result():
    h = Harness()
    a, b = h.stable(2)
    again = h.join(b, meta=b"sub1")
    assert isinstance(again, JoinResult)
    assert (again.error_code, again.generation_id, again.leader, again.members) == \
        (errors.NONE, 1, a, [])
    assert h.state() == "Stable"
    changed = h.join(b, meta=b"sub1-new")
    assert waiting(changed)
    assert h.state() == "PreparingRebalance"


def test_a_member_that_never_syncs_is_removed_after_the_rebalance_timeout():
    h = Harness()
    joins = [h.join_new()[1] for _ in range(2)]
    h.advance(0)
    a, b = (answer(j).member_id for j in joins)
    assert answer(h.sync(a, 1, {a: b"x", b: b"y"})).assignment == b"x"
    assert h.state() == "Stable"
    # B heartbeats (its session holds) but never sends its SyncGroup
    codes = h.keep_alive(REBALANCE, (a, 1), (b, 1))
    assert codes[:-1] == [[errors.NONE, errors.NONE]] * 5
    assert codes[-1] == [errors.REBALANCE_IN_PROGRESS, errors.UNKNOWN_MEMBER_ID]
    assert list(h.group().members) == [a]
    assert h.state() == "PreparingRebalance"
    result = answer(h.join(a))
    assert (result.generation_id, list(leader_members(result))) == (2, [a])


def test_a_leader_that_never_syncs_is_removed_and_the_waiting_followers_told():
    h = Harness()
    joins = [h.join_new()[1] for _ in range(2)]
    h.advance(0)
    a, b = (answer(j).member_id for j in joins)
    b_sync = h.sync(b, 1)
    h.keep_alive(REBALANCE - 5000, (a, 1))
    assert waiting(b_sync)
    assert h.state() == "CompletingRebalance"
    h.advance(5000)
    assert answer(b_sync) == SyncResult(errors.REBALANCE_IN_PROGRESS)
    assert list(h.group().members) == [b]
    result = answer(h.join(b))
    assert (result.leader, result.generation_id) == (b, 2)


# -- Heartbeat ------------------------------------------------------------------------------------


def test_heartbeats_keep_a_member_alive_and_its_absence_removes_it():
    h = Harness()
    (a,) = h.stable(1)
    h.advance(8000)
    assert h.heartbeat(a, 1) == errors.NONE
    h.advance(SESSION - 1)  # 17999: the heartbeat at 8000 moved the deadline to 18000
    assert a in h.group().members
    h.advance(1)
    assert a not in h.group().members
    assert h.state() == "Empty"  # the last member gone: Stable -> PreparingRebalance -> Empty
    assert h.group().generation_id == 2
    assert h.heartbeat(a, 1) == errors.UNKNOWN_MEMBER_ID
    last = group_metadata_values(h)[-1]
    assert (last.generation, last.members, last.protocol) == (2, [], None)


def test_heartbeat_answers_by_state():
    h = Harness()
    _, a_join = h.join_new()
    a = h.group().leader_id
    assert h.heartbeat(a, 0) == errors.REBALANCE_IN_PROGRESS  # initial rebalance
    h.advance(0)
    assert answer(a_join).generation_id == 1
    assert h.heartbeat(a, 1) == errors.NONE  # CompletingRebalance
    assert h.heartbeat(a, 0) == errors.ILLEGAL_GENERATION
    assert h.heartbeat(a, 2) == errors.ILLEGAL_GENERATION
    h.sync(a, 1, {a: b"x"})
    assert h.heartbeat(a, 1) == errors.NONE  # Stable
    assert h.heartbeat("stranger", 1) == errors.UNKNOWN_MEMBER_ID
    assert h.heartbeat(a, 1, group_id="no-such-group") == errors.UNKNOWN_MEMBER_ID
    h.join_new()
    assert h.heartbeat(a, 1) == errors.REBALANCE_IN_PROGRESS  # PreparingRebalance


def test_a_member_that_stops_heartbeating_is_removed_and_the_group_rebalances():
    h = Harness()
    a, b = h.stable(2)
    h.keep_alive(SESSION - 5000, (a, 1))
    assert h.state() == "Stable"
    h.advance(5000)
    assert h.state() == "PreparingRebalance"
    assert b not in h.group().members
    result = answer(h.join(a, meta=b"sub0"))
    assert (result.generation_id, list(leader_members(result))) == (2, [a])


def test_a_member_that_got_its_join_answer_but_went_silent_is_removed():
    h = Harness()
    joins = [h.join_new()[1] for _ in range(2)]
    h.advance(0)
    a, b = (answer(j).member_id for j in joins)
    assert h.state() == "CompletingRebalance"
    b_sync = h.sync(b, 1)
    # A (the leader) neither syncs nor heartbeats: its session ends before the sync deadline
    h.advance(SESSION)
    assert answer(b_sync) == SyncResult(errors.REBALANCE_IN_PROGRESS)
    assert list(h.group().members) == [b]
    assert h.state() == "PreparingRebalance"


def test_a_new_member_that_never_completes_its_join_is_dropped_by_the_join_timeout():
    # Kafka's group.classic.new.member.join.timeout.ms (5 minutes): a brand-new member's
    # JoinGroup does not hold a rebalance forever.
    h = Harness()
    (a,) = h.stable(1)
    b_join = h.join(version=3, rebalance=600_000)  # a v3 member, admitted at once
    assert waiting(b_join)
    b = next(m for m in h.group().members if m != a)
    h.keep_alive(300_000, (a, 1), step=5000)
    assert answer(b_join) == JoinResult(errors.UNKNOWN_MEMBER_ID, "")
    assert b not in h.group().members


# -- static membership (KIP-345) ------------------------------------------------------------------


def test_a_static_member_rejoining_with_a_new_id_takes_over_without_a_rebalance():
    h = Harness()
    a, b = h.stable(2, instances=["i-a", "i-b"])
    generations_stored = len(group_metadata_values(h))

    restarted = h.join(instance="i-b", meta=b"sub1", version=5)  # a follower restarts
    result = answer(restarted)
    new_b = result.member_id
    assert new_b != b and new_b.startswith("i-b-")
    assert (result.error_code, result.generation_id, result.leader, result.members,
            result.skip_assignment) == (errors.NONE, 1, a, [], False)
    assert h.state() == "Stable"
    assert h.heartbeat(a, 1) == errors.NONE  # nobody was told to rebalance
    assert h.sync(new_b, 1, instance="i-b") == \
        SyncResult(errors.NONE, b"a1", "consumer", "range")  # the old assignment

    assert h.heartbeat(b, 1, instance="i-b") == errors.FENCED_INSTANCE_ID
    assert h.sync(b, 1, instance="i-b").error_code == errors.FENCED_INSTANCE_ID
    assert h.join(b, instance="i-b", meta=b"sub1").error_code == errors.FENCED_INSTANCE_ID
    assert h.heartbeat(b, 1) == errors.UNKNOWN_MEMBER_ID
    assert h.heartbeat(new_b, 1, instance="i-b") == errors.NONE

    values = group_metadata_values(h)
    assert len(values) == generations_stored + 1  # the new member id is persisted
    assert {(m.member_id, m.group_instance_id, m.assignment) for m in values[-1].members} == \
        {(a, "i-a", b"a0"), (new_b, "i-b", b"a1")}


def test_a_static_leader_rejoining_on_v9_skips_the_assignment_but_gets_the_members():
    h = Harness()
    a, b = h.stable(2, instances=["i-a", "i-b"])
    result = answer(h.join(instance="i-a", meta=b"sub0", version=9))
    new_a = result.member_id
    assert new_a != a
    assert (result.generation_id, result.leader, result.skip_assignment) == (1, new_a, True)
    assert {m: (i, md) for m, i, md in result.members} == \
        {new_a: ("i-a", b"sub0"), b: ("i-b", b"sub1")}
    assert h.state() == "Stable"
    assert answer(h.sync(new_a, 1, instance="i-a")).assignment == b"a0"


def test_a_static_leader_rejoining_before_v9_is_told_the_old_leader():
    h = Harness()
    a, _ = h.stable(2, instances=["i-a", "i-b"])
    result = answer(h.join(instance="i-a", meta=b"sub0", version=8))
    assert (result.leader, result.members, result.skip_assignment) == (a, [], False)
    assert h.group().leader_id == result.member_id


def test_a_static_member_rejoining_with_other_protocols_rebalances_only_if_the_choice_changes():
    h = Harness()
    prefers_rr = [("roundrobin", b"rr"), ("range", b"r")]
    a, b, c = h.stable(3, instances=["i-a", "i-b", "i-c"],
                       protocols=[prefers_rr, prefers_rr, [("range", b"r"), ("roundrobin", b"rr")]])
    assert h.group().protocol_name == "roundrobin"  # two votes to one
    # B now offers roundrobin alone: different metadata, but roundrobin is still the choice
    restarted = answer(h.join(instance="i-b", protocols=[("roundrobin", b"rr2")]))
    assert (restarted.error_code, restarted.generation_id) == (errors.NONE, 1)
    assert h.state() == "Stable"
    # C now offers range alone: no longer supported by all, so the choice changes
    assert h.join(instance="i-c", protocols=[("range", b"r")]).error_code == \
        errors.INCONSISTENT_GROUP_PROTOCOL  # B no longer supports range
    restarted = h.join(instance="i-a", protocols=[("range", b"r"), ("roundrobin", b"rr")])
    assert answer(restarted).generation_id == 1  # A prefers range, but B cannot have it
    restarted = h.join(instance="i-c", protocols=[("range", b"r"), ("roundrobin", b"rr")])
    assert answer(restarted).generation_id == 1  # A and C prefer range now, but B cannot
    assert h.state() == "Stable"
    new_b = h.group().static_members["i-b"]
    moved = h.join(instance="i-b", protocols=[("range", b"r2"), ("roundrobin", b"rr")])
    assert waiting(moved)  # now range is the choice: a rebalance
    assert h.state() == "PreparingRebalance"
    assert h.heartbeat(new_b, 1, instance="i-b") == errors.FENCED_INSTANCE_ID


def test_a_static_member_replaced_while_completing_forces_a_rebalance():
    h = Harness()
    a_join = h.join(instance="i-a", meta=b"sub0")
    b_join = h.join(instance="i-b", meta=b"sub1")
    h.advance(0)
    a, b = answer(a_join).member_id, answer(b_join).member_id
    b_sync = h.sync(b, 1, instance="i-b")
    restarted = h.join(instance="i-b", meta=b"sub1")
    assert answer(b_sync) == SyncResult(errors.FENCED_INSTANCE_ID)  # the old B is fenced
    assert h.state() == "PreparingRebalance"
    assert waiting(restarted)
    answer(h.join(a, instance="i-a", meta=b"sub0"))
    result = answer(restarted)
    assert result.generation_id == 2
    assert result.member_id != b
    assert set(h.group().members) == {a, result.member_id}


def test_a_static_member_replaced_while_rebalancing_fences_the_old_join():
    h = Harness()
    a, b, c = h.stable(3, instances=["i-a", "i-b", "i-c"])
    a_join = h.join(a, instance="i-a", meta=b"sub0")  # the leader rejoins: rebalance
    old_b_join = h.join(b, instance="i-b", meta=b"sub1")
    assert waiting(old_b_join)
    new_b_join = h.join(instance="i-b", meta=b"sub1")  # B's process restarted meanwhile
    assert answer(old_b_join) == JoinResult(errors.FENCED_INSTANCE_ID, b)
    assert waiting(new_b_join) and waiting(a_join)
    h.join(c, instance="i-c", meta=b"sub2")
    result = answer(new_b_join)
    assert (result.generation_id, result.leader) == (2, a)
    assert result.member_id != b
    assert {m: i for m, i, _ in answer(a_join).members} == \
        {a: "i-a", result.member_id: "i-b", c: "i-c"}


def test_leave_group_v3_batch_by_instance_id():
    h = Harness()
    a, b, c = h.stable(3, instances=["i-a", "i-b", None])
    top, per_member = h.leave(("", "i-a"), ("", "i-unknown"), (b, "i-wrong"), (c, None),
                              ("", "i-b"))
    assert top == errors.NONE
    assert per_member == [errors.NONE, errors.UNKNOWN_MEMBER_ID, errors.UNKNOWN_MEMBER_ID,
                          errors.NONE, errors.NONE]
    assert h.group().members == {}
    assert h.state() == "Empty"
    assert h.heartbeat(a, 1, instance="i-a") == errors.UNKNOWN_MEMBER_ID


def test_leave_group_errors_and_pending_members():
    h = Harness()
    a, b = h.stable(2, instances=["i-a", None])
    # Kafka 4 answers an unknown group member by member, NONE at the top
    assert h.leave((a, None), group_id="no-such-group") == (errors.NONE, [errors.UNKNOWN_MEMBER_ID])
    assert h.leave(("other-id", "i-a")) == (errors.NONE, [errors.FENCED_INSTANCE_ID])
    assert h.leave(("stranger", None)) == (errors.NONE, [errors.UNKNOWN_MEMBER_ID])
    assert h.state() == "Stable"  # nobody left
    pending = h.join().member_id
    assert h.state() == "Stable"  # a pending member is not yet a member
    assert h.leave((pending, None)) == (errors.NONE, [errors.NONE])
    assert h.group().pending_members == set()
    # Kafka counts it as a member that left: a Stable group rebalances
    assert h.state() == "PreparingRebalance"


def test_leaving_while_completing_starts_a_new_rebalance():
    h = Harness()
    joins = [h.join_new()[1] for _ in range(2)]
    h.advance(0)
    a, b = (answer(j).member_id for j in joins)
    b_sync = h.sync(b, 1)
    assert h.leave((a, None)) == (errors.NONE, [errors.NONE])
    assert answer(b_sync).error_code == errors.REBALANCE_IN_PROGRESS
    assert h.state() == "PreparingRebalance"
    assert answer(h.join(b)).leader == b


def test_everyone_leaving_an_initial_rebalance_leaves_an_empty_group():
    h = Harness(group_initial_rebalance_delay_ms=3000)
    a, a_join = h.join_new()
    assert h.leave((a, None)) == (errors.NONE, [errors.NONE])
    assert answer(a_join) == JoinResult(errors.UNKNOWN_MEMBER_ID, "")
    assert h.state() == "PreparingRebalance"  # the initial delay still runs
    h.advance(3000)
    assert h.state() == "Empty"
    assert h.group().generation_id == 1


def test_expire_member_and_force_rebalance():
    h = Harness()
    a, b = h.stable(2)
    h.gc.admin.force_rebalance(GROUP)
    assert h.heartbeat(b, 1) == errors.REBALANCE_IN_PROGRESS
    h.join(a, meta=b"sub0")
    b_join = h.join(b, meta=b"sub1")
    assert answer(b_join).generation_id == 2
    h.gc.admin.expire_member(GROUP, b)
    assert h.state() == "PreparingRebalance"
    assert list(h.group().members) == [a]
    with pytest.raises(ApiException):
        h.gc.admin.expire_member(GROUP, b)
    with pytest.raises(ApiException):
        h.gc.admin.force_rebalance("no-such-group")


# -- offsets --------------------------------------------------------------------------------------


def commit(h: Harness, member_id: str = "", generation: int = -1, *, version: int = 8,
           instance: str | None = None, group_id: str = GROUP, offsets=None, broker=None):
    """An OffsetCommit as its handler makes it: validate, then store; returns the error."""
    try:
        group = h.gc.validate_offset_commit(
            h.coordinator(group_id) if broker is None else broker, group_id, member_id,
            instance, generation, version)
    except ApiException as exc:
        return exc.error_code
    entries = {key: OffsetEntry(offset, -1, "", h.now)
               for key, offset in (offsets or {("t", 0): 1}).items()}
    h.gc.offsets.store(group, entries)
    return errors.NONE


def test_a_commit_with_generation_minus_one_creates_a_simple_group():
    h = Harness()
    assert commit(h, offsets={("t", 0): 10, ("t", 1): 20}) == errors.NONE
    assert h.state() == "Empty"
    assert h.gc.offsets.fetch(0, GROUP, None) == {
        ("t", 0): OffsetEntry(10, -1, "", 0), ("t", 1): OffsetEntry(20, -1, "", 0)}
    assert h.gc.offsets.fetch(0, GROUP, [("t", 1), ("t", 2), ("u", 0)]) == {
        ("t", 1): OffsetEntry(20, -1, "", 0), ("t", 2): None, ("u", 0): None}
    assert h.gc.offsets.fetch(0, "no-such-group", [("t", 0)]) == {("t", 0): None}
    h.advance(5)
    assert commit(h, offsets={("t", 0): 11}) == errors.NONE  # again, while the group is empty
    assert h.gc.offsets.fetch(0, GROUP, [("t", 0)])[("t", 0)] == OffsetEntry(11, -1, "", 5)


@pytest.mark.parametrize("version,expected", [(2, errors.ILLEGAL_GENERATION),
                                              (8, errors.ILLEGAL_GENERATION),
                                              (9, errors.GROUP_ID_NOT_FOUND),
                                              (10, errors.GROUP_ID_NOT_FOUND)])
def test_a_commit_with_a_generation_to_an_unknown_group(version, expected):
    h = Harness()
    assert commit(h, "m", 1, version=version) == expected
    assert h.group() is None


def test_commit_rules_by_group_state():
    h = Harness()
    joins = [h.join_new()[1] for _ in range(2)]
    h.advance(0)
    a, b = (answer(j).member_id for j in joins)
    assert h.state() == "CompletingRebalance"
    assert commit(h, a, 1) == errors.REBALANCE_IN_PROGRESS
    h.sync(a, 1, {a: b"x", b: b"y"})
    assert h.state() == "Stable"
    assert commit(h, a, 1, offsets={("t", 0): 5}) == errors.NONE
    assert commit(h, a, 0) == errors.ILLEGAL_GENERATION
    assert commit(h, "stranger", 1) == errors.UNKNOWN_MEMBER_ID
    assert commit(h) == errors.UNKNOWN_MEMBER_ID  # generation -1 only while the group is empty
    assert commit(h, a, -1) == errors.ILLEGAL_GENERATION
    assert commit(h, a, 1, instance="i-x") == errors.UNKNOWN_MEMBER_ID
    h.join(a)  # the leader rejoins: PreparingRebalance
    assert h.state() == "PreparingRebalance"
    assert commit(h, b, 1, offsets={("t", 0): 6}) == errors.NONE  # allowed while preparing
    assert h.gc.offsets.fetch(0, GROUP, [("t", 0)])[("t", 0)].offset == 6


def test_a_commit_counts_as_a_heartbeat_while_stable():
    h = Harness()
    a, b = h.stable(2)
    h.advance(8000)
    assert h.heartbeat(a, 1) == errors.NONE
    assert commit(h, b, 1) == errors.NONE
    h.advance(SESSION - 1)
    assert set(h.group().members) == {a, b}
    assert h.state() == "Stable"


def test_a_commit_counts_as_a_heartbeat_while_preparing_a_rebalance():
    # Kafka keeps the session of a classic member that commits in Stable or PreparingRebalance
    # (a consumer commits in onPartitionsRevoked, before it rejoins).
    h = Harness()
    a, b = h.stable(2)
    a_join = h.join(a, meta=b"sub0")
    h.advance(8000)
    assert commit(h, b, 1) == errors.NONE
    h.advance(SESSION - 8000)  # B's old deadline passes
    assert b in h.group().members
    assert waiting(a_join)
    h.advance(8000)  # the commit's deadline
    assert b not in h.group().members
    assert list(leader_members(answer(a_join))) == [a]


def test_offsets_and_groups_are_records_in_the_offsets_partition():
    h = Harness()
    a, b = h.stable(2)
    commit(h, a, 1, offsets={("t", 0): 7})
    partition = h.offsets_partition()
    assert partition.topic.name == "__consumer_offsets"
    assert partition.index == partition_for(GROUP, 50)
    kinds = []
    for stored in partition.log.batches:
        for record in records.decode_records(stored.data, verify_crc=False):
            kinds.append(struct.unpack_from(">h", record.key)[0])
    assert kinds == [2, 1]  # the group at the leader's SyncGroup, then the commit
    assert partition.log.high_watermark == 2


# -- a coordinator that moves ---------------------------------------------------------------------


def test_a_new_coordinator_rebuilds_groups_and_offsets_from_the_log():
    h = Harness(brokers=2)
    old = h.coordinator()
    a, b = h.stable(2, metas=[b"meta-a", b"meta-b"])
    commit(h, a, 1, offsets={("t", 0): 42, ("t", 1): 43})
    old_group = h.group()

    new = h.other_broker()
    h.core.cluster.set_leader(h.offsets_partition(), new)
    assert h.coordinator() == new
    assert old_group.state is DEAD

    # the old broker is no longer the coordinator
    assert h.heartbeat(a, 1, broker=old) == errors.NOT_COORDINATOR
    assert h.join(a, broker=old).error_code == errors.NOT_COORDINATOR
    assert h.sync(a, 1, broker=old).error_code == errors.NOT_COORDINATOR
    assert h.leave((a, None), broker=old) == (errors.NOT_COORDINATOR, [])
    assert commit(h, a, 1, broker=old) == errors.NOT_COORDINATOR
    with pytest.raises(ApiException) as raised:
        h.gc.offsets.fetch(old, GROUP, None)
    assert raised.value.error_code == errors.NOT_COORDINATOR

    # the new one knows the group, its members, generation, assignments and offsets
    group = h.group()
    assert group is not old_group
    assert (group.state.value, group.generation_id, group.leader_id) == ("Stable", 1, a)
    assert (group.protocol_type, group.protocol_name) == ("consumer", "range")
    assert list(group.members) == [a, b]
    assert h.heartbeat(a, 1) == errors.NONE
    assert h.heartbeat(b, 1) == errors.NONE
    assert h.sync(b, 1) == SyncResult(errors.NONE, b"a1", "consumer", "range")
    rejoined = h.join(b, meta=b"meta-b")  # a follower with unchanged metadata: no rebalance
    assert (rejoined.error_code, rejoined.generation_id, rejoined.leader) == (errors.NONE, 1, a)
    assert h.gc.offsets.fetch(new, GROUP, None) == {
        ("t", 0): OffsetEntry(42, -1, "", 0), ("t", 1): OffsetEntry(43, -1, "", 0)}
    assert commit(h, a, 1, offsets={("t", 0): 44}) == errors.NONE

    # the session timers run on the new coordinator: a silent member is removed
    h.keep_alive(SESSION, (a, 1))
    assert list(h.group().members) == [a]
    assert h.state() == "PreparingRebalance"

    # and moving back replays what the new coordinator wrote
    h.core.cluster.set_leader(h.offsets_partition(), old)
    assert h.gc.offsets.fetch(old, GROUP, [("t", 0)])[("t", 0)].offset == 44
    assert list(h.group().members) == [a, b]  # the last stored generation: 1, both members


def test_waiting_joins_and_syncs_are_answered_not_coordinator_by_the_old_coordinator():
    h = Harness(brokers=2)
    old = h.coordinator()
    a, b, c = h.stable(3)
    a_join = h.join(a, meta=b"sub0")
    b_join = h.join(b, meta=b"sub1")
    preparing = h.group()
    assert preparing.state is PR
    h.core.cluster.set_leader(h.offsets_partition(), h.other_broker())
    assert answer(a_join) == JoinResult(errors.NOT_COORDINATOR, a)
    assert answer(b_join) == JoinResult(errors.NOT_COORDINATOR, b)
    assert preparing.state is DEAD
    # the new coordinator has generation 1, as last stored; the members rejoin there
    new = h.coordinator()
    assert new != old
    assert h.heartbeat(c, 1) == errors.NONE
    a_join = h.join(a, meta=b"sub0")
    assert h.heartbeat(c, 1) == errors.REBALANCE_IN_PROGRESS
    h.join(b, meta=b"sub1")
    h.join(c, meta=b"sub2")
    assert answer(a_join).generation_id == 2

    # a sync waiting in CompletingRebalance on the now-current coordinator
    b_sync = h.sync(b, 2)
    completing = h.group()
    assert completing.state is CR
    h.core.cluster.stop_broker(new)
    assert h.coordinator() == old
    assert answer(b_sync) == SyncResult(errors.NOT_COORDINATOR)
    assert completing.state is DEAD
    assert h.group().generation_id == 1  # generation 2 was never stored: its sync never came


def test_an_empty_group_goes_dead_when_its_coordinator_moves():
    h = Harness(brokers=2)
    commit(h, offsets={("t", 0): 3})
    empty = h.group()
    h.core.cluster.stop_broker(h.coordinator())
    assert empty.state is DEAD
    assert h.state() == "Empty"
    assert h.gc.offsets.fetch(h.coordinator(), GROUP, [("t", 0)])[("t", 0)].offset == 3


def test_a_loaded_group_over_the_max_size_rebalances():
    # Kafka starts a rebalance for a freshly loaded group larger than group.max.size (the
    # setting was lowered), so its members can commit before the extra ones are let go.
    h = Harness(brokers=2)
    a, b, c = h.stable(3)
    h.gc.settings["group_max_size"] = 2
    h.core.cluster.set_leader(h.offsets_partition(), h.other_broker())
    assert h.state() == "PreparingRebalance"
    assert h.heartbeat(c, 1) == errors.REBALANCE_IN_PROGRESS
    assert commit(h, c, 1) == errors.NONE
    a_join = h.join(a, meta=b"sub0")
    h.join(b, meta=b"sub1")
    assert h.join(c, meta=b"sub2").error_code == errors.GROUP_MAX_SIZE_REACHED
    h.advance(REBALANCE)
    result = answer(a_join)
    assert (result.generation_id, set(leader_members(result))) == (2, {a, b})


def test_no_coordinator_while_the_offsets_partition_has_no_leader():
    h = Harness(brokers=1)
    (a,) = h.stable(1)
    h.core.cluster.stop_broker(0)
    with pytest.raises(ApiException) as refused:
        h.gc.placement.coordinator_for(GROUP)
    assert refused.value.error_code == errors.COORDINATOR_NOT_AVAILABLE
    assert h.heartbeat(a, 1, broker=0) == errors.COORDINATOR_NOT_AVAILABLE
    h.core.cluster.start_broker(0)
    assert h.heartbeat(a, 1) == errors.NONE


def test_a_deleted_group_leaves_tombstones_and_is_gone_after_a_move():
    h = Harness(brokers=2)
    commit(h, offsets={("t", 0): 3, ("t", 1): 4})
    shard = h.gc.shard_for(GROUP, h.coordinator())
    group = h.group()
    h.gc.delete_group(shard, group)
    assert group.state is DEAD
    assert h.group() is None
    assert group_metadata_values(h)[-1] is None
    h.core.cluster.set_leader(h.offsets_partition(), h.other_broker())
    assert h.group() is None
    assert h.gc.offsets.fetch(h.coordinator(), GROUP, None) == {}


# -- the transition table -------------------------------------------------------------------------

def _completing(h: Harness, members: int = 1) -> list[str]:
    """A group whose join phase has just completed (CompletingRebalance); the member ids."""
    pending = [h.join_new(meta=f"sub{i}".encode()) for i in range(members)]
    h.advance(0)
    assert h.state() == "CompletingRebalance"
    return [member_id for member_id, _ in pending]


def _simple_group(h: Harness) -> None:
    """An Empty group that only holds offsets (a commit from outside the group)."""
    assert commit(h) == errors.NONE
    assert h.state() == "Empty"


def _move_coordinator(h: Harness) -> None:
    h.core.cluster.set_leader(h.offsets_partition(), h.other_broker())


def _delete(h: Harness) -> None:
    h.gc.delete_group(h.gc.shard_for(GROUP, h.coordinator()), h.group())


def _initial_rebalance(h: Harness) -> str:
    member_id, _ = h.join_new()
    assert h.state() == "PreparingRebalance"
    return member_id


def _leave_initial_rebalance(h: Harness) -> None:
    h.leave((_initial_rebalance(h), None))
    h.advance(3000)


def _miss_sync(h: Harness, leader_syncs: bool) -> None:
    leader, follower = _completing(h, 2)
    if leader_syncs:
        h.sync(leader, 1, {leader: b"a", follower: b"b"})
    h.keep_alive(REBALANCE, (leader, 1), (follower, 1))  # sessions hold; the sync does not


def _join_stable(h: Harness) -> None:
    h.stable(1)
    h.join_new(meta=b"other")


def _consumer_member_joins(h: Harness) -> None:
    """A member of the consumer protocol (KIP-848) joins: the classic group with the same id
    becomes a consumer group (an empty one is replaced; one with members is upgraded)."""
    answer = send(h.core, 68, 1, broker=h.coordinator(), group_id=GROUP, member_id="c1",
                  member_epoch=0, rebalance_timeout_ms=REBALANCE, subscribed_topic_names=["t"],
                  topic_partitions=[])
    assert answer.error_code == errors.NONE
    assert h.gc.find_group(GROUP).type == "consumer"


def _consumer_protocol_members(h: Harness, stable: bool) -> None:
    """A classic group of one member whose Subscription and Assignment a consumer group can
    read, CompletingRebalance (or Stable once it has synced)."""
    leader, _ = h.join_new(meta=subscription())
    h.advance(0)
    if stable:
        h.sync(leader, 1, {leader: full_assignment([])})


#: For each row of the table: the harness settings and the operations that fire it.
ROW_SCENARIOS = {
    (E, Event.MEMBER_JOINS): ({}, _initial_rebalance),
    (E, Event.GROUP_DELETED): ({}, lambda h: (_simple_group(h), _delete(h))),
    (E, Event.COORDINATOR_UNLOADS): ({"brokers": 2},
                                     lambda h: (_simple_group(h), _move_coordinator(h))),
    (E, Event.CONVERTED): ({}, lambda h: (_simple_group(h), _consumer_member_joins(h))),
    (PR, Event.CONVERTED): ({"group_initial_rebalance_delay_ms": 3000},
                            lambda h: (h.join_new(meta=subscription()),
                                       _consumer_member_joins(h))),
    (CR, Event.CONVERTED): ({}, lambda h: (_consumer_protocol_members(h, stable=False),
                                           _consumer_member_joins(h))),
    (ST, Event.CONVERTED): ({}, lambda h: (_consumer_protocol_members(h, stable=True),
                                           _consumer_member_joins(h))),
    (PR, Event.JOIN_COMPLETES): ({}, _completing),
    (PR, Event.JOIN_COMPLETES_EMPTY): ({"group_initial_rebalance_delay_ms": 3000},
                                       _leave_initial_rebalance),
    (PR, Event.COORDINATOR_UNLOADS): ({"brokers": 2, "group_initial_rebalance_delay_ms": 3000},
                                      lambda h: (_initial_rebalance(h), _move_coordinator(h))),
    (CR, Event.ASSIGNMENT_STORED): ({}, lambda h: h.stable(1)),
    (CR, Event.MEMBER_JOINS): ({}, lambda h: (_completing(h), h.join_new(meta=b"new"))),
    (CR, Event.MEMBER_LEAVES): ({}, lambda h: h.leave((_completing(h)[0], None))),
    (CR, Event.SYNC_TIMES_OUT): ({}, lambda h: _miss_sync(h, leader_syncs=False)),
    (CR, Event.REBALANCE_REQUESTED): ({}, lambda h: (_completing(h),
                                                     h.gc.admin.force_rebalance(GROUP))),
    (CR, Event.COORDINATOR_UNLOADS): ({"brokers": 2},
                                      lambda h: (_completing(h), _move_coordinator(h))),
    (ST, Event.MEMBER_JOINS): ({}, _join_stable),
    (ST, Event.MEMBER_LEAVES): ({}, lambda h: h.leave((h.stable(2)[1], None))),
    (ST, Event.SYNC_TIMES_OUT): ({}, lambda h: _miss_sync(h, leader_syncs=True)),
    (ST, Event.REBALANCE_REQUESTED): ({}, lambda h: (h.stable(1),
                                                     h.gc.admin.force_rebalance(GROUP))),
    (ST, Event.COORDINATOR_UNLOADS): ({"brokers": 2},
                                      lambda h: (h.stable(1), _move_coordinator(h))),
}


def test_every_row_of_the_table_has_a_scenario():
    assert set(ROW_SCENARIOS) == set(TRANSITIONS)


@pytest.mark.parametrize("row", list(TRANSITIONS), ids=lambda row: f"{row[0].value}-{row[1].name}")
def test_each_row_of_the_table_is_fired_by_real_operations(row):
    settings, scenario = ROW_SCENARIOS[row]
    h = Harness(**settings)
    scenario(h)
    assert row in _FIRED
    target = TRANSITIONS[row]
    group = h.group() if h.group() is not None else None
    if target is not DEAD and row[1] is not Event.COORDINATOR_UNLOADS and group is not None:
        # the group moved on only by rows of the table, and the last one left it where it is
        assert group.state is TRANSITIONS[_FIRED[-1]]


def test_the_diagram_in_the_docs_is_the_table():
    from pathlib import Path

    from mockbroker.core.groups.classic import state

    readme = Path(state.__file__).with_name("README.md").read_text()
    assert "```mermaid\n" + state.mermaid() + "```" in readme



# -- offset retention -----------------------------------------------------------------------------


def _commit(h, group_id, topic, offset, generation=-1, member_id=""):
    group = h.gc.validate_offset_commit(h.coordinator(group_id), group_id, member_id,
                                        None, generation, 8)
    h.gc.offsets.store(group, {(topic, 0): OffsetEntry(offset, -1, "", h.clock.now_ms())})
    return group


def test_offsets_of_a_simple_group_expire_after_the_retention_and_the_group_goes():
    h = Harness(brokers=2, offsets_retention_minutes=1,
                offsets_retention_check_interval_ms=10_000)
    h.core.cluster.create_topic("t", 1)
    _commit(h, "simple", "t", 5)
    h.clock.advance(50_000)
    assert h.gc.offsets.fetch(h.coordinator("simple"), "simple", None)[("t", 0)].offset == 5
    h.clock.advance(20_000)  # the check after the commit is a minute old
    assert h.gc.offsets.fetch(h.coordinator("simple"), "simple", None) == {}
    assert h.group("simple") is None
    # the expiry is in the log: a new coordinator does not bring the offset back
    h.core.cluster.set_leader(h.offsets_partition("simple"), h.other_broker("simple"))
    assert h.gc.offsets.fetch(h.coordinator("simple"), "simple", None) == {}


def test_a_stable_consumer_groups_subscribed_offsets_do_not_expire():
    h = Harness(offsets_retention_minutes=1, offsets_retention_check_interval_ms=10_000)
    h.core.cluster.create_topic("t", 1)
    h.core.cluster.create_topic("other", 1)
    sub = embedded_struct("ConsumerProtocolSubscription", 0).cls(topics=["t"])
    (member,) = h.stable(1, metas=[encode_embedded("ConsumerProtocolSubscription", 0, sub)])
    generation = h.group().generation_id
    _commit(h, GROUP, "t", 7, generation, member)
    _commit(h, GROUP, "other", 3, generation, member)
    for _ in range(12):  # keep the member alive across the retention period
        h.clock.advance(9_000)
        assert h.heartbeat(member, generation) == errors.NONE
    left = h.gc.offsets.fetch(h.coordinator(), GROUP, None)
    assert set(left) == {("t", 0)} and left[("t", 0)].offset == 7


def test_a_classic_group_gives_the_shared_parts_all_they_ask_of_a_group():
    from mockbroker.core.groups import Group as GroupProtocol

    asked = {name for name in vars(GroupProtocol) if not name.startswith("_")} | \
        set(GroupProtocol.__annotations__)
    group = ClassicGroup("g", 0)
    missing = sorted(name for name in asked if not hasattr(group, name))
    assert not missing
    assert group.type == "classic" and group.is_empty and not group.is_dead


def test_a_join_or_sync_sent_again_while_the_first_waits_answers_both():
    """Kafka drops the earlier request (its client waits until it times out); here both get the
    answer, so no connection hangs behind an unanswered request."""
    h = Harness()
    a, b = h.stable(2)
    first = h.join(a, meta=b"sub0")  # a rejoins: the group rebalances, waiting for b
    again = h.join(a, meta=b"sub0")
    assert waiting(first) and waiting(again)
    b_join = h.join(b, meta=b"sub1")
    assert answer(first) == answer(again) and answer(first).error_code == errors.NONE
    generation = answer(b_join).generation_id
    leader = answer(first).leader
    follower = b if leader == a else a
    first_sync = h.sync(follower, generation)
    again_sync = h.sync(follower, generation)
    assert waiting(first_sync) and waiting(again_sync)
    h.sync(leader, generation, {a: b"x", b: b"y"})
    assert answer(first_sync).assignment == answer(again_sync).assignment == \
        {a: b"x", b: b"y"}[follower]
