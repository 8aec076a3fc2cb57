"""A classic group and its members: the state a coordinator keeps for each group.

Kafka's ``ClassicGroup`` and ``ClassicGroupMember`` are the model: members in join order (the
first is the leader until it leaves), members still to be added after MEMBER_ID_REQUIRED
(pending), static members by instance id, and the committed offsets.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from mockbroker.core.coordinator import state
from mockbroker.core.coordinator.state import GroupState
from mockbroker.core.deferred import Deferred
from mockbroker.core.errors import ApiException
from wire import errors




@dataclass(slots=True)
class JoinResult:
    error_code: int
    member_id: str
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    skip_assignment: bool = False
    #: (member id, group instance id, metadata) — only in the leader's answer
    members: list[tuple[str, str | None, bytes]] = field(default_factory=list)


@dataclass(slots=True)
class SyncResult:
    error_code: int
    assignment: bytes = b""
    protocol_type: str | None = None
    protocol_name: str | None = None


@dataclass(slots=True)
class OffsetEntry:
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int = -1


@dataclass(slots=True, eq=False)
class Member:
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


class Group:
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

    # -- state ---------------------------------------------------------------------------------

    def transition_to(self, target: GroupState, now_ms: int) -> None:
        state.check(self.state, target)
        self.previous_state = self.state
        self.state = target
        self.state_timestamp = now_ms

    def is_(self, *states: GroupState) -> bool:
        return self.state in states

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
            for name, _ in member.protocols:
                counts[name] = counts.get(name, 0) + 1
        return {name for name, count in counts.items() if count == len(self.members)}

    def supports_protocols(self, protocol_type: str, protocols: list[tuple[str, bytes]]) -> bool:
        names = {name for name, _ in protocols}
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
            self.transition_to(GroupState.COMPLETING_REBALANCE, now_ms)
        else:
            self.protocol_name = None
            self.transition_to(GroupState.EMPTY, now_ms)
        self.pending_sync.clear()

    def leader_member_list(self) -> list[tuple[str, str | None, bytes]]:
        return [(m.member_id, m.group_instance_id, m.metadata(self.protocol_name))
                for m in self.members.values()]

    def assignments(self) -> dict[str, bytes]:
        return {m.member_id: m.assignment for m in self.members.values()}
