"""The requests of the classic group protocol: JoinGroup (new, known and static members,
KIP-394's MEMBER_ID_REQUIRED), SyncGroup, Heartbeat and LeaveGroup, and the classic checks of an
offset commit.  Each answers with a result object; the rebalancing they set off is
:mod:`~mockbroker.core.groups.classic.rebalance`'s.

Each request is routed once, by the type of the group it reaches (``coordinator.route``): a
classic group, or none yet, is served here (the ``on_*`` methods); a group of another type by
what the table of group types registers for it (a consumer group's classic members:
:mod:`~mockbroker.core.groups.mixed`), which serves the same ``on_*`` methods.
"""

from __future__ import annotations

from mockbroker.core.deferred import Deferred
from mockbroker.core.errors import ApiException
from mockbroker.core.groups.classic.group import ClassicGroup, Member
from mockbroker.core.groups.classic.rebalance import CR, DEAD, E, HEARTBEAT, \
    NEW_MEMBER_JOIN_TIMEOUT_MS, PR, ST, SYNC, Rebalancer
from mockbroker.core.groups.classic.state import Event
from mockbroker.core.groups.classic_api import UNKNOWN_MEMBER_ID, HeartbeatResult, \
    JoinRequest, JoinResult, LeaveResult, SyncResult
from mockbroker.core.groups.timers import TimerKey
from wire import errors

#: the longest string (in UTF-8 bytes) a non-flexible version, or a group record, can carry
MAX_STRING_BYTES = 0x7FFF
#: the name of the protocol whose requests this module serves, as the table routes them
CLASSIC = ClassicGroup.type


class ClassicProtocol(Rebalancer):
    """The requests of the classic protocol, each answered with a result object."""

    # -- JoinGroup -----------------------------------------------------------------------------

    def join_group(self, broker_id: int, req: JoinRequest) -> JoinResult | Deferred:
        if not req.group_id:
            return JoinResult(errors.INVALID_GROUP_ID, req.member_id)
        if not (self.settings["group_min_session_timeout_ms"] <= req.session_timeout_ms
                <= self.settings["group_max_session_timeout_ms"]):
            return JoinResult(errors.INVALID_SESSION_TIMEOUT, req.member_id)
        try:
            shard = self.coordinator.shard_for(req.group_id, broker_id)
        except ApiException as exc:
            return JoinResult(exc.error_code, req.member_id)
        group = shard.groups.get(req.group_id)
        server = self._server(group)
        if server is None:  # a group no classic member may join (a share group), as Kafka
            return JoinResult(errors.INCONSISTENT_GROUP_PROTOCOL, UNKNOWN_MEMBER_ID)
        return server.on_join(shard, group, req)

    def _server(self, group):
        """What serves a classic request to ``group``, or None for a group of a type the
        classic protocol has nothing to do with (Kafka answers its members as unknown)."""
        if group is None or group.type == CLASSIC:
            return self  # (what the coordinator routes a classic request to a classic group to)
        try:
            return self.coordinator.route(CLASSIC, group)
        except ApiException:
            return None

    def on_join(self, shard, group: ClassicGroup | None, req: JoinRequest
                ) -> JoinResult | Deferred:
        """A JoinGroup to a classic group, or to no group: a new member creates it."""
        unknown = req.member_id == UNKNOWN_MEMBER_ID
        if group is None:
            if not unknown:
                return JoinResult(errors.UNKNOWN_MEMBER_ID, req.member_id)
            group = shard.groups[req.group_id] = ClassicGroup(req.group_id, self.now)
        if not self._accept_joining_member(group, req.member_id):
            # A member refused for size is out of the group, as in Kafka: with a lowered max
            # size, the last members to rejoin a rebalance are the ones let go.
            group.remove(req.member_id)
            return JoinResult(errors.GROUP_MAX_SIZE_REACHED, UNKNOWN_MEMBER_ID)
        waiter = Deferred()
        if unknown:
            result = self._join_new_member(group, req, waiter)
        else:
            result = self._join_existing_member(group, req, waiter)
        if result is not None:
            return result
        return waiter

    def _accept_joining_member(self, group: ClassicGroup, member_id: str) -> bool:
        max_size = self.settings["group_max_size"]
        if group.is_(E, DEAD):
            return True
        member = group.members.get(member_id)
        if group.is_(PR):
            return (member is not None and member.awaiting_join) or \
                group.num_awaiting_join() < max_size
        return member is not None or len(group.members) < max_size

    def _join_new_member(self, group: ClassicGroup, req: JoinRequest, waiter: Deferred):
        if group.is_(DEAD):
            return JoinResult(errors.COORDINATOR_NOT_AVAILABLE, UNKNOWN_MEMBER_ID)
        if not group.supports_protocols(req.protocol_type, req.protocols):
            return JoinResult(errors.INCONSISTENT_GROUP_PROTOCOL, UNKNOWN_MEMBER_ID)
        new_id = ClassicGroup.new_member_id(req.client_id, req.group_instance_id)
        if len(new_id.encode("utf-8", "surrogateescape")) > MAX_STRING_BYTES:
            # A member id made from a group instance id (or client id) near the limit of a
            # Kafka string cannot be written back: Kafka 4.4 answers UNKNOWN_SERVER_ERROR and
            # adds no member.
            return JoinResult(errors.UNKNOWN_SERVER_ERROR, UNKNOWN_MEMBER_ID)
        if req.group_instance_id is not None:
            existing = group.static_members.get(req.group_instance_id)
            if existing is not None:
                self._update_static_member(group, req, existing, new_id, waiter)
            else:
                self._add_member(group, req, new_id, waiter)
            return None
        if req.api_version >= 4:
            # KIP-394: the member gets an id, and must come back with it.
            group.pending_members.add(new_id)
            self.timers.schedule(TimerKey(HEARTBEAT, group.group_id, new_id), req.session_timeout_ms,
                           lambda: self._expire_heartbeat(group, new_id))
            return JoinResult(errors.MEMBER_ID_REQUIRED, new_id)
        self._add_member(group, req, new_id, waiter)
        return None

    def _join_existing_member(self, group: ClassicGroup, req: JoinRequest, waiter: Deferred):
        member_id = req.member_id
        if group.is_(DEAD):
            return JoinResult(errors.COORDINATOR_NOT_AVAILABLE, member_id)
        if not group.supports_protocols(req.protocol_type, req.protocols):
            return JoinResult(errors.INCONSISTENT_GROUP_PROTOCOL, member_id)
        if member_id in group.pending_members:
            self._add_member(group, req, member_id, waiter)
            return None
        try:
            group.validate_member(member_id, req.group_instance_id)
        except ApiException as exc:
            return JoinResult(exc.error_code, member_id)
        member = group.members[member_id]
        if group.is_(PR):
            self._update_member(group, member, req, waiter)
            return None
        if group.is_(CR):
            if member.matches(req.protocols):
                return self._current_join_result(group, member_id)
            self._update_member(group, member, req, waiter)
            return None
        if group.is_(ST):
            if group.leader_id == member_id or not member.matches(req.protocols):
                self._update_member(group, member, req, waiter)
                return None
            return self._current_join_result(group, member_id, leader_members=False)
        return JoinResult(errors.UNKNOWN_MEMBER_ID, member_id)

    def _current_join_result(self, group: ClassicGroup, member_id: str, *,
                             leader_members: bool = True) -> JoinResult:
        is_leader = group.leader_id == member_id
        return JoinResult(errors.NONE, member_id, group.generation_id, group.protocol_type,
                          group.protocol_name, group.leader_id or "",
                          members=group.leader_member_list() if is_leader and leader_members
                          else [])

    def _add_member(self, group: ClassicGroup, req: JoinRequest, member_id: str,
                    waiter: Deferred) -> None:
        member = Member(member_id, req.group_instance_id, req.client_id, req.client_host,
                        req.rebalance_timeout_ms, req.session_timeout_ms, req.protocol_type,
                        list(req.protocols), is_new=True)
        if group.is_(PR) and group.previous_state is E:
            group.new_member_added = True
        group.add(member, waiter)
        self._schedule_heartbeat(group, member, NEW_MEMBER_JOIN_TIMEOUT_MS)
        self._maybe_prepare_rebalance_or_complete_join(group, Event.MEMBER_JOINS)

    def _update_member(self, group: ClassicGroup, member: Member, req: JoinRequest,
                       waiter: Deferred) -> None:
        member.protocols = list(req.protocols)
        member.rebalance_timeout_ms = req.rebalance_timeout_ms
        member.session_timeout_ms = req.session_timeout_ms
        member.await_join(waiter)
        self._maybe_prepare_rebalance_or_complete_join(group, Event.MEMBER_JOINS)

    def _update_static_member(self, group: ClassicGroup, req: JoinRequest, old_id: str, new_id: str,
                              waiter: Deferred) -> None:
        current_leader = group.leader_id
        member = group.replace_static_member(req.group_instance_id, old_id, new_id)
        self.timers.cancel(TimerKey(HEARTBEAT, group.group_id, old_id))
        self._schedule_heartbeat(group, member)
        member.protocols = list(req.protocols)
        member.rebalance_timeout_ms = req.rebalance_timeout_ms
        member.session_timeout_ms = req.session_timeout_ms
        member.join_waiter = waiter
        if group.is_(ST):
            if group.protocol_name == group.select_protocol():
                # Same protocol: no rebalance.  The new member id is persisted and the member
                # gets its place (and, when it leads, the member list) back.
                self._store_group(group)
                member.join_waiter = None
                if req.api_version >= 9:
                    is_leader = group.leader_id == new_id
                    waiter.resolve(JoinResult(
                        errors.NONE, new_id, group.generation_id, group.protocol_type,
                        group.protocol_name, group.leader_id or "", skip_assignment=is_leader,
                        members=group.leader_member_list() if is_leader else []))
                else:
                    waiter.resolve(JoinResult(
                        errors.NONE, new_id, group.generation_id, group.protocol_type,
                        group.protocol_name, current_leader or ""))
                return
            self._maybe_prepare_rebalance_or_complete_join(group, Event.MEMBER_JOINS)
        elif group.is_(CR):
            self._prepare_rebalance(group, Event.MEMBER_JOINS)
        else:
            self._maybe_complete_join_phase(group)

    # -- SyncGroup -----------------------------------------------------------------------------

    def sync_group(self, broker_id: int, group_id: str, member_id: str,
                   group_instance_id: str | None, generation_id: int, protocol_type: str | None,
                   protocol_name: str | None, assignments: dict[str, bytes]
                   ) -> SyncResult | Deferred:
        try:
            shard = self.coordinator.shard_for(group_id, broker_id)
        except ApiException as exc:
            return SyncResult(exc.error_code)
        group = shard.groups.get(group_id)
        server = self._server(group)
        if server is None:
            return SyncResult(errors.UNKNOWN_MEMBER_ID)
        return server.on_sync(group, member_id, group_instance_id, generation_id, protocol_type,
                              protocol_name, assignments)

    def on_sync(self, group: ClassicGroup | None, member_id: str,
                group_instance_id: str | None, generation_id: int, protocol_type: str | None,
                protocol_name: str | None, assignments: dict[str, bytes]
                ) -> SyncResult | Deferred:
        if group is None or group.is_(E):
            return SyncResult(errors.UNKNOWN_MEMBER_ID)
        if group.is_(DEAD):
            return SyncResult(errors.COORDINATOR_NOT_AVAILABLE)
        try:
            group.validate_member(member_id, group_instance_id)
        except ApiException as exc:
            return SyncResult(exc.error_code)
        if generation_id != group.generation_id:
            return SyncResult(errors.ILLEGAL_GENERATION)
        if (protocol_type is not None and protocol_type != group.protocol_type) or \
                (protocol_name is not None and protocol_name != group.protocol_name):
            return SyncResult(errors.INCONSISTENT_GROUP_PROTOCOL)
        if group.is_(PR):
            return SyncResult(errors.REBALANCE_IN_PROGRESS)
        member = group.members[member_id]
        self._remove_pending_sync(group, member_id)
        if group.is_(ST):
            return SyncResult(errors.NONE, member.assignment, group.protocol_type,
                              group.protocol_name)
        waiter = Deferred()
        member.await_sync(waiter)
        if group.leader_id == member_id:
            full = {m: assignments.get(m, b"") for m in group.members}
            # The assignment is written to __consumer_offsets before anyone is answered.
            self._store_group(group, full)
            for mid, m in group.members.items():
                m.assignment = full[mid]
            self._propagate_assignment(group, errors.NONE)
            group.fire(Event.ASSIGNMENT_STORED, self.now)
        return waiter

    def _remove_pending_sync(self, group: ClassicGroup, member_id: str) -> None:
        group.pending_sync.discard(member_id)
        if not group.pending_sync:
            self.timers.cancel(TimerKey(SYNC, group.group_id))

    # -- Heartbeat -----------------------------------------------------------------------------

    def heartbeat(self, broker_id: int, group_id: str, member_id: str,
                  group_instance_id: str | None, generation_id: int) -> HeartbeatResult:
        try:
            return HeartbeatResult(self._heartbeat(broker_id, group_id, member_id,
                                                   group_instance_id, generation_id))
        except ApiException as exc:
            return HeartbeatResult(exc.error_code)

    def _heartbeat(self, broker_id: int, group_id: str, member_id: str,
                   group_instance_id: str | None, generation_id: int) -> int:
        shard = self.coordinator.shard_for(group_id, broker_id)
        group = shard.groups.get(group_id)
        server = self._server(group)
        if server is None:
            return errors.UNKNOWN_MEMBER_ID
        return server.on_heartbeat(group, member_id, group_instance_id, generation_id)

    def on_heartbeat(self, group: ClassicGroup | None, member_id: str,
                     group_instance_id: str | None, generation_id: int) -> int:
        """The error code of a Heartbeat to a classic group (or to none)."""
        if group is None:
            return errors.UNKNOWN_MEMBER_ID
        if group.is_(DEAD):
            return errors.COORDINATOR_NOT_AVAILABLE
        group.validate_member(member_id, group_instance_id)
        if generation_id != group.generation_id:
            return errors.ILLEGAL_GENERATION
        if group.is_(E):
            return errors.UNKNOWN_MEMBER_ID
        self._schedule_heartbeat(group, group.members[member_id])
        if group.is_(PR):
            return errors.REBALANCE_IN_PROGRESS
        return errors.NONE

    # -- LeaveGroup ----------------------------------------------------------------------------

    def leave_group(self, broker_id: int, group_id: str,
                    members: list[tuple[str, str | None]]) -> LeaveResult:
        """Members leave: a top-level error, and one per member."""
        try:
            shard = self.coordinator.shard_for(group_id, broker_id)
        except ApiException as exc:
            return LeaveResult(exc.error_code)
        group = shard.groups.get(group_id)
        server = self._server(group)
        if server is None:
            return LeaveResult(errors.UNKNOWN_MEMBER_ID)
        return server.on_leave(group, members)

    def on_leave(self, group: ClassicGroup | None,
                 members: list[tuple[str, str | None]]) -> LeaveResult:
        if group is None:
            # Kafka's coordinator answers a group it does not know member by member (the
            # top-level error stays NONE); before v3 the one member's error is the answer
            return LeaveResult(errors.NONE, [errors.UNKNOWN_MEMBER_ID] * len(members))
        if group.is_(DEAD):
            return LeaveResult(errors.COORDINATOR_NOT_AVAILABLE)
        results = []
        for member_id, instance_id in members:
            if member_id == UNKNOWN_MEMBER_ID:
                current = group.static_members.get(instance_id) if instance_id else None
                if current is None:
                    results.append(errors.UNKNOWN_MEMBER_ID)
                    continue
                self._remove_current_member(group, current)
            elif member_id in group.pending_members:
                group.remove(member_id)
                self.timers.cancel(TimerKey(HEARTBEAT, group.group_id, member_id))
            else:
                try:
                    group.validate_member(member_id, instance_id)
                except ApiException as exc:
                    results.append(exc.error_code)
                    continue
                self._remove_current_member(group, member_id)
            results.append(errors.NONE)
        if any(code == errors.NONE for code in results):
            if group.is_(ST, CR):
                self._maybe_prepare_rebalance_or_complete_join(group, Event.MEMBER_LEAVES)
            elif group.is_(PR):
                self._maybe_complete_join_phase(group)
        return LeaveResult(errors.NONE, results)

    def _remove_current_member(self, group: ClassicGroup, member_id: str) -> None:
        member = group.members[member_id]
        self._complete_join_waiter(member, JoinResult(errors.UNKNOWN_MEMBER_ID, UNKNOWN_MEMBER_ID))
        group.remove(member_id)
        self.timers.cancel(TimerKey(HEARTBEAT, group.group_id, member_id))

    def validate_offset_commit(self, shard, group_id: str, group: ClassicGroup | None,
                               member_id: str, instance_id: str | None, generation: int,
                               api_version: int, *, transactional: bool = False
                               ) -> ClassicGroup:
        """The group an OffsetCommit (or a TxnOffsetCommit: ``transactional``) writes to, or
        ApiException with the code every partition gets.  A commit with generation -1 from
        outside the group (a simple consumer, an admin tool) is allowed while the group is
        empty, and creates it if needed; a transactional one is allowed in any state, and
        neither checks for a rebalance."""
        if group is None:
            if generation >= 0:
                raise ApiException(errors.GROUP_ID_NOT_FOUND if api_version >= 9 and
                                   not transactional else errors.ILLEGAL_GENERATION)
            group = shard.groups[group_id] = ClassicGroup(group_id, self.now)
        if group.is_(DEAD):
            raise ApiException(errors.COORDINATOR_NOT_AVAILABLE)
        if generation < 0 and group.is_(E):
            return group
        if generation >= 0 or member_id or instance_id is not None:
            group.validate_member(member_id, instance_id)
            if generation != group.generation_id:
                raise ApiException(errors.ILLEGAL_GENERATION)
        elif not group.is_(E) and not transactional:
            raise ApiException(errors.UNKNOWN_MEMBER_ID)
        if group.is_(CR) and not transactional:
            raise ApiException(errors.REBALANCE_IN_PROGRESS)
        member = group.members.get(member_id)
        if member is not None and group.is_(ST, PR):
            self._schedule_heartbeat(group, member)  # a commit counts as a sign of life
        return group

    def validate_offset_fetch(self, group: ClassicGroup, member_id: str | None,
                              member_epoch: int) -> None:
        """Nothing to check: only members of the consumer protocol name their epoch in an
        OffsetFetch, and a classic group has none."""
