"""A classic group and its members.

Kafka's ``ClassicGroup`` and ``ClassicGroupMember`` are the model: members in join order (the
first is the leader until it leaves), members still to be added after MEMBER_ID_REQUIRED
(pending), static members by instance id, and the committed offsets (kept by
:mod:`mockbroker.core.groups.offsets`, as for every group type).  Every call of the protocol
answers with a result object of :mod:`mockbroker.core.groups.classic_api` carrying Kafka's
error code; refusals inside are :class:`~mockbroker.core.errors.ApiException`.
"""

from __future__ import annotations

import uuid

from msgspec import Struct

from mockbroker.core.deferred import Deferred
from mockbroker.core.errors import ApiException
from mockbroker.core.groups.classic.state import Event, GroupState, next_state
from mockbroker.core.groups.classic_api import CONSUMER_PROTOCOL_TYPE, JoinResult, SyncResult
from mockbroker.core.groups.records import OffsetEntry
from wire import WireError, embedded_codec, errors


def _supersede(earlier: Deferred | None, later: Deferred) -> None:
    if earlier is not None and earlier is not later and not earlier.done:
        later.add_callback(earlier.resolve)


class Member(Struct, eq=False):
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    join_waiter: Deferred | None = None
    sync_waiter: Deferred | None = None
    is_new: bool = False

    @property
    def awaiting_join(self) -> bool:
        return self.join_waiter is not None

    def await_join(self, waiter: Deferred) -> None:
        """The member's JoinGroup waits on ``waiter``.  A JoinGroup it sent earlier and that
        still waits gets the same answer: Kafka drops it, leaving its client to wait until the
        request times out, a silent hang a test double should not copy."""
        _supersede(self.join_waiter, waiter)
        self.join_waiter = waiter

    def await_sync(self, waiter: Deferred) -> None:
        """The member's SyncGroup waits on ``waiter`` (an earlier one gets the same answer)."""
        _supersede(self.sync_waiter, waiter)
        self.sync_waiter = waiter

    @property
    def awaiting_sync(self) -> bool:
        return self.sync_waiter is not None

    def has_satisfied_heartbeat(self) -> bool:
        """At its session deadline: a member waiting in a rebalance is alive unless brand new."""
        if self.is_new:
            return False
        return self.awaiting_join or self.awaiting_sync

    def matches(self, protocols: list[tuple[str, bytes]]) -> bool:
        return self.protocols == protocols

    def metadata(self, protocol: str) -> bytes:
        for name, meta in self.protocols:
            if name == protocol:
                return meta
        raise KeyError(protocol)

    def vote(self, candidates: set[str]) -> str:
        for name, _ in self.protocols:
            if name in candidates:
                return name
        raise ValueError("member supports none of the candidate protocols")


class ClassicGroup:
    type = "classic"

    def __init__(self, group_id: str, now_ms: int):
        self.group_id = group_id
        self.state = GroupState.EMPTY
        self.previous_state = GroupState.EMPTY
        self.state_timestamp = now_ms
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.generation_id = 0
        self.leader_id: str | None = None
        self.members: dict[str, Member] = {}
        self.pending_members: set[str] = set()
        self.pending_sync: set[str] = set()
        self.static_members: dict[str, str] = {}
        self.new_member_added = False
        self.offsets: dict[tuple[str, int], OffsetEntry] = {}
        #: offsets committed in open transactions, by producer id, until the marker
        self.pending_offsets: dict[int, dict[tuple[str, int], OffsetEntry]] = {}

    @classmethod
    def from_record(cls, group_id: str, value, now_ms: int) -> "ClassicGroup":
        """A group as its last GroupMetadataValue record left it.  A loaded group with members
        is Stable (Kafka does the same): they carry on heartbeating."""
        group = cls(group_id, now_ms)
        group.protocol_type = value.protocol_type or None
        group.generation_id = value.generation
        group.protocol_name = value.protocol
        group.leader_id = value.leader
        for m in value.members:
            member = Member(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                            m.rebalance_timeout if m.rebalance_timeout >= 0
                            else m.session_timeout,
                            m.session_timeout, group.protocol_type or "",
                            [(group.protocol_name or "", m.subscription)], m.assignment)
            group.members[member.member_id] = member
            if member.group_instance_id is not None:
                group.static_members[member.group_instance_id] = member.member_id
        group.state = GroupState.STABLE if group.members else GroupState.EMPTY
        return group

    # -- state ---------------------------------------------------------------------------------

    def fire(self, event: Event, now_ms: int) -> None:
        """Move to the state the transition table gives for ``event``."""
        target = next_state(self.state, event)
        self.previous_state = self.state
        self.state = target
        self.state_timestamp = now_ms

    def is_(self, *states: GroupState) -> bool:
        return self.state in states

    def deleted(self, now_ms: int) -> None:
        self.fire(Event.GROUP_DELETED, now_ms)

    def converted(self, now_ms: int) -> None:
        """A group of the other type takes its place under the same id."""
        self.fire(Event.CONVERTED, now_ms)

    def unloaded(self, now_ms: int) -> None:
        """Its coordinator moved away: the group is Dead here (as Kafka's onUnloaded has it),
        and members waiting for a JoinGroup or SyncGroup answer learn it is not theirs."""
        self.fire(Event.COORDINATOR_UNLOADS, now_ms)
        self.answer_waiting(errors.NOT_COORDINATOR)

    def answer_waiting(self, error_code: int) -> None:
        """Members waiting for a JoinGroup or SyncGroup answer get ``error_code``."""
        for member in self.members.values():
            if member.join_waiter is not None:
                waiter, member.join_waiter = member.join_waiter, None
                waiter.resolve(JoinResult(error_code, member.member_id))
            if member.sync_waiter is not None:
                waiter, member.sync_waiter = member.sync_waiter, None
                waiter.resolve(SyncResult(error_code))

    # -- members -------------------------------------------------------------------------------

    @staticmethod
    def new_member_id(client_id: str, group_instance_id: str | None) -> str:
        return f"{group_instance_id or client_id}-{uuid.uuid4()}"

    def add(self, member: Member, waiter: Deferred | None) -> None:
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        member.join_waiter = waiter
        self.pending_members.discard(member.member_id)

    def remove(self, member_id: str) -> Member | None:
        member = self.members.pop(member_id, None)
        if member is not None and member.group_instance_id is not None:
            self.static_members.pop(member.group_instance_id, None)
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        self.pending_members.discard(member_id)
        self.pending_sync.discard(member_id)
        return member

    def replace_static_member(self, instance_id: str, old_id: str, new_id: str) -> Member:
        """A static member rejoining with a new member id takes over the old one's place."""
        old = self.members.pop(old_id)
        fenced_join = JoinResult(errors.FENCED_INSTANCE_ID, old_id)
        if old.join_waiter is not None:
            waiter, old.join_waiter = old.join_waiter, None
            waiter.resolve(fenced_join)
        if old.sync_waiter is not None:
            waiter, old.sync_waiter = old.sync_waiter, None
            waiter.resolve(SyncResult(errors.FENCED_INSTANCE_ID))
        new = Member(new_id, old.group_instance_id, old.client_id, old.client_host,
                     old.rebalance_timeout_ms, old.session_timeout_ms, old.protocol_type,
                     old.protocols, old.assignment)
        self.members[new_id] = new
        if self.leader_id == old_id:
            self.leader_id = new_id
        self.static_members[instance_id] = new_id
        return new

    def validate_member(self, member_id: str, group_instance_id: str | None) -> None:
        if group_instance_id is not None:
            existing = self.static_members.get(group_instance_id)
            if existing is None:
                raise ApiException(errors.UNKNOWN_MEMBER_ID)
            if existing != member_id:
                raise ApiException(errors.FENCED_INSTANCE_ID)
        if member_id not in self.members:
            raise ApiException(errors.UNKNOWN_MEMBER_ID)

    def num_awaiting_join(self) -> int:
        return sum(1 for m in self.members.values() if m.awaiting_join)

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.num_awaiting_join() and not self.pending_members

    def not_yet_rejoined(self) -> list[Member]:
        return [m for m in self.members.values() if not m.awaiting_join]

    def maybe_elect_new_joined_leader(self) -> bool:
        """If the leader has not rejoined, the first member that has takes over."""
        if self.leader_id is None:
            return False
        if self.members[self.leader_id].awaiting_join:
            return True
        for member in self.members.values():
            if member.awaiting_join:
                self.leader_id = member.member_id
                return True
        return False

    @property
    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    # -- protocols -----------------------------------------------------------------------------

    def candidate_protocols(self) -> set[str]:
        counts: dict[str, int] = {}
        for member in self.members.values():
            for name in {name for name, _ in member.protocols}:
                counts[name] = counts.get(name, 0) + 1
        return {name for name, count in counts.items() if count == len(self.members)}

    def supports_protocols(self, protocol_type: str, protocols: list[tuple[str, bytes]]) -> bool:
        """Whether a member with these protocols may join.  A list naming a protocol twice is
        refused: Kafka 4.4 counts such a member twice for that protocol, finds no protocol every
        member supports when the join completes, and leaves the group in PreparingRebalance for
        good, refusing everyone after; refusing the one malformed join keeps the group usable."""
        names = {name for name, _ in protocols}
        if len(names) != len(protocols):
            return False
        if self.state is GroupState.EMPTY:
            return bool(protocol_type) and bool(names)
        return self.protocol_type == protocol_type and bool(names & self.candidate_protocols())

    def select_protocol(self) -> str:
        """The protocol most members vote for, among those every member supports (a tie goes
        to the one the earliest-joined voter prefers)."""
        candidates = self.candidate_protocols()
        votes: dict[str, int] = {}
        for member in self.members.values():
            choice = member.vote(candidates)
            votes[choice] = votes.get(choice, 0) + 1
        return max(votes, key=lambda name: votes[name])

    def init_next_generation(self, now_ms: int) -> None:
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.fire(Event.JOIN_COMPLETES, now_ms)
        else:
            self.protocol_name = None
            self.fire(Event.JOIN_COMPLETES_EMPTY, now_ms)
        self.pending_sync.clear()

    def leader_member_list(self) -> list[tuple[str, str | None, bytes]]:
        return [(m.member_id, m.group_instance_id, m.metadata(self.protocol_name))
                for m in self.members.values()]

    def assignments(self) -> dict[str, bytes]:
        return {m.member_id: m.assignment for m in self.members.values()}

    # -- what the shared parts ask of a group -------------------------------------------------

    @property
    def is_dead(self) -> bool:
        return self.state is GroupState.DEAD

    @property
    def is_empty(self) -> bool:
        """No members: the group may be deleted (Kafka's ClassicGroup.validateDeleteGroup)."""
        return self.state is GroupState.EMPTY

    def subscribed_topics(self) -> set[str] | None:
        """The topics the members subscribe to, read from their consumer-protocol
        Subscription for the group's protocol; None when the coordinator cannot know (not the
        consumer protocol, no generation yet, metadata it cannot parse).

        Kafka computes this when a generation starts (ClassicGroup.computeSubscribedTopics) and
        keeps it until the next one; computed here from the members at hand, which is the same
        set except while a rebalance is changing the membership."""
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        if not self.members:
            return set()
        if self.protocol_name is None:
            # Members are joining a group whose last generation (if any) had none.
            return set() if self.generation_id > 0 else None
        topics: set[str] = set()
        try:
            for member in self.members.values():
                # Version 0 is a prefix of every Subscription version (Kafka reads it so too).
                data = bytes(member.metadata(self.protocol_name))
                if len(data) < 2:
                    return None
                subscription, _ = embedded_codec("ConsumerProtocolSubscription", 0).decode(
                    data, 2)
                topics.update(subscription.topics)
        except (KeyError, WireError):
            return None
        return topics

    def consumes(self, topic: str, subscribed: set[str] | None = None) -> bool:
        """Kafka's ClassicGroup.isSubscribedToTopic: when the subscriptions are unknown, a
        consumer-protocol group is assumed to consume every topic."""
        if subscribed is None:
            subscribed = self.subscribed_topics()
        if subscribed is None:
            return self.protocol_type == CONSUMER_PROTOCOL_TYPE
        return topic in subscribed

    def offset_expiry_base(self) -> tuple[bool, int | None]:
        """Which clock this group's offsets age by (Kafka's offsetExpirationCondition):
        (False, _) when none of them may expire now; (True, None) for each offset's commit time;
        (True, t) for the time ``t`` the group became empty."""
        if self.state is GroupState.DEAD:
            return False, None
        if self.protocol_type is None:
            return True, None  # a simple consumer's: by commit time
        if self.state is GroupState.EMPTY:
            return True, self.state_timestamp
        if self.state is GroupState.STABLE and self.protocol_type == CONSUMER_PROTOCOL_TYPE \
                and self.subscribed_topics() is not None:
            return True, None  # only topics no member subscribes to (checked per offset)
        return False, None

    def may_expire_offset_of(self, topic: str) -> bool:
        if self.state is GroupState.EMPTY or self.protocol_type is None:
            return True
        return not self.consumes(topic)

    @property
    def deletable_when_offsets_expire(self) -> bool:
        return self.state is GroupState.EMPTY and not self.members
