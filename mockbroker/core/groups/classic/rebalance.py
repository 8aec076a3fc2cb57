"""Rebalancing a classic group: the join phase (InitialDelayedJoin and DelayedJoin), the sync
phase, session expiry, and the knobs the admin API turns (a forced rebalance, an expired
member).  :class:`~mockbroker.core.groups.classic.protocol.ClassicProtocol` builds the requests
on top of this.

Faithful to Kafka's classic group coordinator (``GroupMetadataManager`` for classic groups, the
Scala ``GroupCoordinator`` before it): InitialDelayedJoin and DelayedJoin; the first member to
join leads; every member's JoinGroup is answered at once, with the member list only to the
leader; the leader's SyncGroup assignment is stored before anyone is answered; heartbeats reset
session expiry.  Every state change fires an event on the group's transition table
(:mod:`~mockbroker.core.groups.classic.state`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.core.errors import ApiException
from mockbroker.core.groups.classic.group import ClassicGroup, Member
from mockbroker.core.groups.classic.records import group_metadata_record
from mockbroker.core.groups.classic.state import Event, GroupState, can_rebalance
from mockbroker.core.groups.classic_api import UNKNOWN_MEMBER_ID, JoinResult, SyncResult
from mockbroker.core.groups.records import append
from mockbroker.core.groups.timers import TimerKey, TimerKind
from wire import errors

if TYPE_CHECKING:
    from mockbroker.core.groups.coordinator import GroupCoordinator

#: Kafka's group.classic.new.member.join.timeout.ms: how long a new member may take to rejoin
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000
HEARTBEAT, JOIN, SYNC = TimerKind.HEARTBEAT, TimerKind.JOIN, TimerKind.SYNC
E, PR, CR, ST, DEAD = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE,
                       GroupState.COMPLETING_REBALANCE, GroupState.STABLE, GroupState.DEAD)


class Rebalancer:
    def __init__(self, coordinator: "GroupCoordinator"):
        self.coordinator = coordinator
        self.settings = coordinator.settings
        self.timers = coordinator.timers

    @property
    def now(self) -> int:
        return self.coordinator.now

    def loaded(self, group: ClassicGroup) -> None:
        """A group a new coordinator has just rebuilt: its members' sessions start now."""
        for member in group.members.values():
            self._schedule_heartbeat(group, member)
        if len(group.members) > self.settings["group_max_size"]:
            # The max size was lowered: rebalance, giving the members a chance to commit
            # before the extra ones are let go (Kafka does the same).
            self._prepare_rebalance(group, Event.REBALANCE_REQUESTED)

    def adopt(self, group: ClassicGroup, *, rebalance: bool) -> None:
        """A group that was a consumer group until now (online downgrade): its members'
        sessions start now, and a rebalance gives them their assignment the classic way."""
        for member in group.members.values():
            self._schedule_heartbeat(group, member)
        if rebalance:
            self._prepare_rebalance(group, Event.REBALANCE_REQUESTED)

    def _schedule_heartbeat(self, group: ClassicGroup, member: Member,
                            timeout_ms: int | None = None) -> None:
        self.timers.schedule(TimerKey(HEARTBEAT, group.group_id, member.member_id),
                             member.session_timeout_ms if timeout_ms is None else timeout_ms,
                             lambda: self._expire_heartbeat(group, member.member_id))

    def _store_group(self, group: ClassicGroup, assignments: dict[str, bytes] | None = None):
        """Write the group's metadata record (Kafka's GroupMetadataValue) to its partition."""
        partition = self.coordinator.placement.partition(group.group_id)
        append(partition, self.now, [group_metadata_record(
            group, assignments or group.assignments(), self.now)])
        self.coordinator.cluster.notify_append(partition)

    def force_rebalance(self, group: ClassicGroup) -> None:
        """Start a rebalance as if membership had changed (fault injection)."""
        if can_rebalance(group.state) and group.members:
            self._prepare_rebalance(group, Event.REBALANCE_REQUESTED)

    def expire_member(self, group: ClassicGroup, member_id: str) -> None:
        """Treat ``member_id`` as if its session had timed out now (fault injection)."""
        member = group.members.get(member_id)
        if member is None:
            raise ApiException(errors.UNKNOWN_MEMBER_ID)
        self.timers.cancel(TimerKey(HEARTBEAT, group.group_id, member_id))
        self._remove_member_and_update_group(group, member)

    # -- rebalancing ---------------------------------------------------------------------------

    def _maybe_prepare_rebalance_or_complete_join(self, group: ClassicGroup,
                                                  event: Event) -> None:
        if can_rebalance(group.state):
            self._prepare_rebalance(group, event)
        else:
            self._maybe_complete_join_phase(group)

    def _maybe_complete_join_phase(self, group: ClassicGroup) -> None:
        if not group.is_(PR) or group.previous_state is E:
            return  # an initial rebalance waits for its delay, whoever has joined
        if group.has_all_members_joined():
            self._complete_join(group)

    def _prepare_rebalance(self, group: ClassicGroup, event: Event) -> None:
        if group.is_(CR):
            self._reset_and_propagate_assignment(group, errors.REBALANCE_IN_PROGRESS)
        group.pending_sync.clear()
        self.timers.cancel(TimerKey(SYNC, group.group_id))
        initial = group.is_(E)
        if initial:
            delay = self.settings["group_initial_rebalance_delay_ms"]
            remaining = max(group.rebalance_timeout_ms - delay, 0)
            self.timers.schedule(TimerKey(JOIN, group.group_id), delay,
                           lambda: self._initial_rebalance_tick(group, delay, remaining))
        group.fire(event, self.now)
        if not initial:
            if group.has_all_members_joined():
                self._complete_join(group)
            else:
                self.timers.schedule(TimerKey(JOIN, group.group_id), group.rebalance_timeout_ms,
                               lambda: self._complete_join(group))

    def _initial_rebalance_tick(self, group: ClassicGroup, delay: int, remaining: int) -> None:
        """Kafka's InitialDelayedJoin: while new members keep arriving, wait another delay."""
        if not self.coordinator.is_live(group):
            return
        if group.new_member_added and remaining != 0:
            group.new_member_added = False
            new_delay = min(self.settings["group_initial_rebalance_delay_ms"], remaining)
            new_remaining = max(remaining - delay, 0)
            self.timers.schedule(TimerKey(JOIN, group.group_id), new_delay,
                           lambda: self._initial_rebalance_tick(group, new_delay, new_remaining))
        else:
            self._complete_join(group)

    def _complete_join(self, group: ClassicGroup) -> None:
        self.timers.cancel(TimerKey(JOIN, group.group_id))
        if not self.coordinator.is_live(group):
            return
        for member in [m for m in group.not_yet_rejoined() if m.group_instance_id is None]:
            group.remove(member.member_id)
            self.timers.cancel(TimerKey(HEARTBEAT, group.group_id, member.member_id))
        if group.is_(DEAD):
            return
        if not group.maybe_elect_new_joined_leader() and group.members:
            # Nobody rejoined (only static members that stayed away): try again later.
            self.timers.schedule(TimerKey(JOIN, group.group_id), group.rebalance_timeout_ms,
                           lambda: self._complete_join(group))
            return
        group.init_next_generation(self.now)
        if group.is_(E):
            self._store_group(group)
            return
        for member in group.members.values():
            is_leader = group.leader_id == member.member_id
            result = JoinResult(errors.NONE, member.member_id, group.generation_id,
                                group.protocol_type, group.protocol_name, group.leader_id or "",
                                members=group.leader_member_list() if is_leader else [])
            self._complete_join_waiter(member, result)
            self._schedule_heartbeat(group, member)
            member.is_new = False
            group.pending_sync.add(member.member_id)
        generation = group.generation_id
        self.timers.schedule(TimerKey(SYNC, group.group_id), group.rebalance_timeout_ms,
                       lambda: self._expire_pending_sync(group, generation))

    @staticmethod
    def _complete_join_waiter(member: Member, result: JoinResult) -> None:
        if member.join_waiter is not None:
            waiter, member.join_waiter = member.join_waiter, None
            waiter.resolve(result)

    def _expire_pending_sync(self, group: ClassicGroup, generation: int) -> None:
        if not self.coordinator.is_live(group) or generation != group.generation_id:
            return
        if group.is_(CR, ST) and group.pending_sync:
            for member_id in list(group.pending_sync):
                group.remove(member_id)
                self.timers.cancel(TimerKey(HEARTBEAT, group.group_id, member_id))
            self._prepare_rebalance(group, Event.SYNC_TIMES_OUT)

    def _reset_and_propagate_assignment(self, group: ClassicGroup, error_code: int) -> None:
        for member in group.members.values():
            member.assignment = b""
        self._propagate_assignment(group, error_code)

    def _propagate_assignment(self, group: ClassicGroup, error_code: int) -> None:
        ok = error_code == errors.NONE
        for member in group.members.values():
            if member.sync_waiter is not None:
                waiter, member.sync_waiter = member.sync_waiter, None
                waiter.resolve(SyncResult(error_code, member.assignment if ok else b"",
                                          group.protocol_type if ok else None,
                                          group.protocol_name if ok else None))
                self._schedule_heartbeat(group, member)

    def _expire_heartbeat(self, group: ClassicGroup, member_id: str) -> None:
        if not self.coordinator.is_live(group) or group.is_(DEAD):
            return
        if member_id in group.pending_members:
            group.remove(member_id)
            if group.is_(PR) and group.has_all_members_joined():
                self._complete_join(group)
            return
        member = group.members.get(member_id)
        if member is None or member.has_satisfied_heartbeat():
            return
        self._remove_member_and_update_group(group, member)

    def _remove_member_and_update_group(self, group: ClassicGroup, member: Member) -> None:
        self._complete_join_waiter(member, JoinResult(errors.UNKNOWN_MEMBER_ID, UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        self.timers.cancel(TimerKey(HEARTBEAT, group.group_id, member.member_id))
        if group.is_(ST, CR):
            self._maybe_prepare_rebalance_or_complete_join(group, Event.MEMBER_LEAVES)
        elif group.is_(PR) and group.has_all_members_joined():
            self._complete_join(group)
