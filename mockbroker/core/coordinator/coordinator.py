"""The group coordinator: classic-protocol membership, rebalancing and offset storage.

Faithful to Kafka's classic group coordinator (``GroupMetadataManager`` in Kafka 4.x, the
Scala ``GroupCoordinator`` before it).  Groups live in shards, one per ``__consumer_offsets``
partition; a group's coordinator is the leader of partition
``abs(java_string_hashcode(group_id)) % offsets.topic.num.partitions``.  Every group-metadata
change and every offset commit is written to that partition as a record in Kafka's own format,
and a shard that moves to another broker is rebuilt from those records, as Kafka does.

Time comes only from the cluster's clock; delays (initial rebalance delay, rebalance timeout,
session timeouts, the SyncGroup deadline) are timers on the cluster's :class:`Timers`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from mockbroker.core.cluster import Cluster, Partition
from mockbroker.core.coordinator import records as offsets_records
from mockbroker.core.coordinator.group import Group, JoinResult, Member, OffsetEntry, SyncResult
from mockbroker.core.errors import ApiException
from mockbroker.core.coordinator.state import GroupState, can_rebalance
from mockbroker.core.deferred import Deferred
from wire import errors

OFFSETS_TOPIC = "__consumer_offsets"
TRANSACTION_TOPIC = "__transaction_state"
TRANSACTION_TOPIC_PARTITIONS = 50
#: Kafka's group.classic.new.member.join.timeout.ms: how long a new member may take to rejoin
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000
UNKNOWN_MEMBER_ID = ""

E, PR, CR, ST, DEAD = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE,
                       GroupState.COMPLETING_REBALANCE, GroupState.STABLE, GroupState.DEAD)


def java_string_hashcode(text: str) -> int:
    """``String.hashCode()`` over UTF-16 code units, as a signed 32-bit int."""
    h = 0
    for unit in _utf16_units(text):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h >= (1 << 31) else h


def _utf16_units(text: str):
    for ch in text:
        code = ord(ch)
        if code >= 0x10000:
            code -= 0x10000
            yield 0xD800 + (code >> 10)
            yield 0xDC00 + (code & 0x3FF)
        else:
            yield code


def partition_for(key: str, partitions: int) -> int:
    """Kafka's ``Utils.abs(key.hashCode()) % partitions`` (abs of MIN_VALUE is 0)."""
    h = java_string_hashcode(key)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


@dataclass(slots=True)
class Shard:
    """The groups of one ``__consumer_offsets`` partition, as loaded by its current leader."""

    index: int
    leader: int
    leader_epoch: int
    loading: bool = True
    groups: dict[str, Group] = field(default_factory=dict)


@dataclass(slots=True)
class JoinRequest:
    group_id: str
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    api_version: int


class GroupCoordinator:
    def __init__(self, cluster: Cluster, settings: dict, *, load_delay_ms: int = 0):
        self.cluster = cluster
        self.settings = settings
        self.timers = cluster.timers
        self.load_delay_ms = load_delay_ms
        self.shards: dict[int, Shard] = {}
        self._timer_handles: dict[tuple, object] = {}
        cluster.leadership_listeners.append(self._on_leadership_change)
        self._schedule_retention_check()

    @property
    def now(self) -> int:
        return self.cluster.clock.now_ms()

    # -- where groups live -----------------------------------------------------------------------

    @property
    def num_partitions(self) -> int:
        return self.settings["offsets_topic_num_partitions"]

    def offsets_topic(self):
        topic = self.cluster.topics.get(OFFSETS_TOPIC)
        if topic is None:
            rf = min(self.settings["offsets_topic_replication_factor"],
                     len(self.cluster.live_brokers()) or 1)
            topic = self.cluster.create_topic(OFFSETS_TOPIC, self.num_partitions, rf,
                                              {"cleanup.policy": "compact"})
            for partition in topic.partitions:
                self._load(partition)
        return topic

    def coordinator_for(self, key: str, key_type: int = 0) -> tuple[int, int]:
        """(error code, node id) for FindCoordinator: key type 0 is a group, 1 a transaction."""
        if key_type == 1:
            topic = self.cluster.topics.get(TRANSACTION_TOPIC)
            if topic is None:
                rf = min(3, len(self.cluster.live_brokers()) or 1)
                topic = self.cluster.create_topic(TRANSACTION_TOPIC, TRANSACTION_TOPIC_PARTITIONS,
                                                  rf, {"cleanup.policy": "compact"})
            partition = topic.partitions[partition_for(key, len(topic.partitions))]
        else:
            partition = self.offsets_topic().partitions[partition_for(key, self.num_partitions)]
        if partition.leader == -1:
            return errors.COORDINATOR_NOT_AVAILABLE, -1
        return errors.NONE, partition.leader

    def shard_for(self, group_id: str, broker_id: int) -> Shard:
        """The shard holding ``group_id`` if ``broker_id`` is its coordinator, else ApiException."""
        partition = self.offsets_topic().partitions[partition_for(group_id, self.num_partitions)]
        if partition.leader == -1:
            raise ApiException(errors.COORDINATOR_NOT_AVAILABLE)
        if partition.leader != broker_id:
            raise ApiException(errors.NOT_COORDINATOR)
        shard = self.shards.get(partition.index)
        if shard is None or shard.leader != broker_id:
            raise ApiException(errors.NOT_COORDINATOR)
        if shard.loading:
            raise ApiException(errors.COORDINATOR_LOAD_IN_PROGRESS)
        return shard

    def _on_leadership_change(self, partition: Partition) -> None:
        if partition.topic.name == OFFSETS_TOPIC:
            self._unload(partition.index)
            if partition.leader != -1:
                self._load(partition)

    def _unload(self, index: int) -> None:
        """The old coordinator lets its groups go: waiting members learn it is not theirs."""
        shard = self.shards.pop(index, None)
        if shard is None:
            return
        for group in shard.groups.values():
            self._cancel_group_timers(group)
            group.transition_to(DEAD, self.now)  # as Kafka's onUnloaded does
            for member in group.members.values():
                if member.join_waiter is not None:
                    waiter, member.join_waiter = member.join_waiter, None
                    waiter.resolve(JoinResult(errors.NOT_COORDINATOR, member.member_id))
                if member.sync_waiter is not None:
                    waiter, member.sync_waiter = member.sync_waiter, None
                    waiter.resolve(SyncResult(errors.NOT_COORDINATOR))

    def _load(self, partition: Partition) -> None:
        shard = Shard(partition.index, partition.leader, partition.leader_epoch)
        self.shards[partition.index] = shard

        def finish() -> None:
            if self.shards.get(partition.index) is not shard:
                return  # leadership moved again before the load finished
            shard.groups = offsets_records.replay(partition.log, self.now)
            shard.loading = False
            for group in shard.groups.values():
                for member in group.members.values():
                    self._schedule_heartbeat(group, member)
                if len(group.members) > self.settings["group_max_size"]:
                    # The max size was lowered: rebalance, giving the members a chance to
                    # commit before the extra ones are let go (Kafka does the same).
                    self._prepare_rebalance(group)

        if self.load_delay_ms > 0:
            self.timers.call_later(self.load_delay_ms, finish)
        else:
            finish()

    # -- timers --------------------------------------------------------------------------------

    def _schedule(self, key: tuple, delay_ms: int, callback: Callable[[], None]) -> None:
        old = self._timer_handles.pop(key, None)
        if old is not None:
            old.cancel()
        self._timer_handles[key] = self.timers.call_later(delay_ms, callback)

    def _cancel(self, key: tuple) -> None:
        old = self._timer_handles.pop(key, None)
        if old is not None:
            old.cancel()

    def _cancel_group_timers(self, group: Group) -> None:
        for key in [k for k in self._timer_handles if len(k) > 1 and k[1] is group]:
            self._cancel(key)

    def _schedule_heartbeat(self, group: Group, member: Member, timeout_ms: int | None = None):
        self._schedule(("heartbeat", group, member.member_id),
                       member.session_timeout_ms if timeout_ms is None else timeout_ms,
                       lambda: self._expire_heartbeat(group, member.member_id))

    def _live(self, group: Group) -> bool:
        shard = self.shards.get(partition_for(group.group_id, self.num_partitions))
        return shard is not None and shard.groups.get(group.group_id) is group

    # -- JoinGroup -----------------------------------------------------------------------------

    def join_group(self, broker_id: int, req: JoinRequest) -> JoinResult | Deferred:
        if not req.group_id:
            return JoinResult(errors.INVALID_GROUP_ID, req.member_id)
        if not (self.settings["group_min_session_timeout_ms"] <= req.session_timeout_ms
                <= self.settings["group_max_session_timeout_ms"]):
            return JoinResult(errors.INVALID_SESSION_TIMEOUT, req.member_id)
        try:
            shard = self.shard_for(req.group_id, broker_id)
        except ApiException as exc:
            return JoinResult(exc.error_code, req.member_id)
        unknown = req.member_id == UNKNOWN_MEMBER_ID
        group = shard.groups.get(req.group_id)
        if group is None:
            if not unknown:
                return JoinResult(errors.UNKNOWN_MEMBER_ID, req.member_id)
            group = shard.groups[req.group_id] = Group(req.group_id, self.now)
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

    def _accept_joining_member(self, group: Group, member_id: str) -> bool:
        max_size = self.settings["group_max_size"]
        if group.is_(E, DEAD):
            return True
        member = group.members.get(member_id)
        if group.is_(PR):
            return (member is not None and member.awaiting_join) or \
                group.num_awaiting_join() < max_size
        return member is not None or len(group.members) < max_size

    def _join_new_member(self, group: Group, req: JoinRequest, waiter: Deferred):
        if group.is_(DEAD):
            return JoinResult(errors.COORDINATOR_NOT_AVAILABLE, UNKNOWN_MEMBER_ID)
        if not group.supports_protocols(req.protocol_type, req.protocols):
            return JoinResult(errors.INCONSISTENT_GROUP_PROTOCOL, UNKNOWN_MEMBER_ID)
        new_id = Group.new_member_id(req.client_id, req.group_instance_id)
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
            self._schedule(("heartbeat", group, new_id), req.session_timeout_ms,
                           lambda: self._expire_heartbeat(group, new_id))
            return JoinResult(errors.MEMBER_ID_REQUIRED, new_id)
        self._add_member(group, req, new_id, waiter)
        return None

    def _join_existing_member(self, group: Group, req: JoinRequest, waiter: Deferred):
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

    def _current_join_result(self, group: Group, member_id: str, *,
                             leader_members: bool = True) -> JoinResult:
        is_leader = group.leader_id == member_id
        return JoinResult(errors.NONE, member_id, group.generation_id, group.protocol_type,
                          group.protocol_name, group.leader_id or "",
                          members=group.leader_member_list() if is_leader and leader_members
                          else [])

    def _add_member(self, group: Group, req: JoinRequest, member_id: str,
                    waiter: Deferred) -> None:
        member = Member(member_id, req.group_instance_id, req.client_id, req.client_host,
                        req.rebalance_timeout_ms, req.session_timeout_ms, req.protocol_type,
                        list(req.protocols), is_new=True)
        if group.is_(PR) and group.previous_state is E:
            group.new_member_added = True
        group.add(member, waiter)
        self._schedule_heartbeat(group, member, NEW_MEMBER_JOIN_TIMEOUT_MS)
        self._maybe_prepare_rebalance_or_complete_join(group)

    def _update_member(self, group: Group, member: Member, req: JoinRequest,
                       waiter: Deferred | None) -> None:
        member.protocols = list(req.protocols)
        member.rebalance_timeout_ms = req.rebalance_timeout_ms
        member.session_timeout_ms = req.session_timeout_ms
        member.join_waiter = waiter
        if waiter is not None:
            self._maybe_prepare_rebalance_or_complete_join(group)

    def _update_static_member(self, group: Group, req: JoinRequest, old_id: str, new_id: str,
                              waiter: Deferred) -> None:
        current_leader = group.leader_id
        member = group.replace_static_member(req.group_instance_id, old_id, new_id)
        self._cancel(("heartbeat", group, old_id))
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
            self._maybe_prepare_rebalance_or_complete_join(group)
        elif group.is_(CR):
            self._prepare_rebalance(group)
        else:
            self._maybe_complete_join_phase(group)

    # -- rebalancing ---------------------------------------------------------------------------

    def _maybe_prepare_rebalance_or_complete_join(self, group: Group) -> None:
        if can_rebalance(group.state):
            self._prepare_rebalance(group)
        else:
            self._maybe_complete_join_phase(group)

    def _maybe_complete_join_phase(self, group: Group) -> None:
        if not group.is_(PR) or group.previous_state is E:
            return  # an initial rebalance waits for its delay, whoever has joined
        if group.has_all_members_joined():
            self._complete_join(group)

    def _prepare_rebalance(self, group: Group) -> None:
        if group.is_(CR):
            self._reset_and_propagate_assignment(group, errors.REBALANCE_IN_PROGRESS)
        group.pending_sync.clear()
        self._cancel(("sync", group))
        initial = group.is_(E)
        if initial:
            delay = self.settings["group_initial_rebalance_delay_ms"]
            remaining = max(group.rebalance_timeout_ms - delay, 0)
            self._schedule(("join", group), delay,
                           lambda: self._initial_rebalance_tick(group, delay, remaining))
        group.transition_to(PR, self.now)
        if not initial:
            if group.has_all_members_joined():
                self._complete_join(group)
            else:
                self._schedule(("join", group), group.rebalance_timeout_ms,
                               lambda: self._complete_join(group))

    def _initial_rebalance_tick(self, group: Group, delay: int, remaining: int) -> None:
        """Kafka's InitialDelayedJoin: while new members keep arriving, wait another delay."""
        if not self._live(group):
            return
        if group.new_member_added and remaining != 0:
            group.new_member_added = False
            new_delay = min(self.settings["group_initial_rebalance_delay_ms"], remaining)
            new_remaining = max(remaining - delay, 0)
            self._schedule(("join", group), new_delay,
                           lambda: self._initial_rebalance_tick(group, new_delay, new_remaining))
        else:
            self._complete_join(group)

    def _complete_join(self, group: Group) -> None:
        self._cancel(("join", group))
        if not self._live(group):
            return
        for member in [m for m in group.not_yet_rejoined() if m.group_instance_id is None]:
            group.remove(member.member_id)
            self._cancel(("heartbeat", group, member.member_id))
        if group.is_(DEAD):
            return
        if not group.maybe_elect_new_joined_leader() and group.members:
            # Nobody rejoined (only static members that stayed away): try again later.
            self._schedule(("join", group), group.rebalance_timeout_ms,
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
        self._schedule(("sync", group), group.rebalance_timeout_ms,
                       lambda: self._expire_pending_sync(group, generation))

    @staticmethod
    def _complete_join_waiter(member: Member, result: JoinResult) -> None:
        if member.join_waiter is not None:
            waiter, member.join_waiter = member.join_waiter, None
            waiter.resolve(result)

    def _expire_pending_sync(self, group: Group, generation: int) -> None:
        if not self._live(group) or generation != group.generation_id:
            return
        if group.is_(CR, ST) and group.pending_sync:
            for member_id in list(group.pending_sync):
                group.remove(member_id)
                self._cancel(("heartbeat", group, member_id))
            self._prepare_rebalance(group)

    def _reset_and_propagate_assignment(self, group: Group, error_code: int) -> None:
        for member in group.members.values():
            member.assignment = b""
        self._propagate_assignment(group, error_code)

    def _propagate_assignment(self, group: Group, error_code: int) -> None:
        ok = error_code == errors.NONE
        for member in group.members.values():
            if member.sync_waiter is not None:
                waiter, member.sync_waiter = member.sync_waiter, None
                waiter.resolve(SyncResult(error_code, member.assignment if ok else b"",
                                          group.protocol_type if ok else None,
                                          group.protocol_name if ok else None))
                self._schedule_heartbeat(group, member)

    # -- SyncGroup -----------------------------------------------------------------------------

    def sync_group(self, broker_id: int, group_id: str, member_id: str,
                   group_instance_id: str | None, generation_id: int, protocol_type: str | None,
                   protocol_name: str | None, assignments: dict[str, bytes]
                   ) -> SyncResult | Deferred:
        try:
            shard = self.shard_for(group_id, broker_id)
        except ApiException as exc:
            return SyncResult(exc.error_code)
        group = shard.groups.get(group_id)
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
        member.sync_waiter = waiter
        if group.leader_id == member_id:
            full = {m: assignments.get(m, b"") for m in group.members}
            # The assignment is written to __consumer_offsets before anyone is answered.
            self._store_group(group, full)
            for mid, m in group.members.items():
                m.assignment = full[mid]
            self._propagate_assignment(group, errors.NONE)
            group.transition_to(ST, self.now)
        return waiter

    def _remove_pending_sync(self, group: Group, member_id: str) -> None:
        group.pending_sync.discard(member_id)
        if not group.pending_sync:
            self._cancel(("sync", group))

    # -- Heartbeat -----------------------------------------------------------------------------

    def heartbeat(self, broker_id: int, group_id: str, member_id: str,
                  group_instance_id: str | None, generation_id: int) -> int:
        try:
            shard = self.shard_for(group_id, broker_id)
        except ApiException as exc:
            return exc.error_code
        group = shard.groups.get(group_id)
        if group is None:
            return errors.UNKNOWN_MEMBER_ID
        if group.is_(DEAD):
            return errors.COORDINATOR_NOT_AVAILABLE
        try:
            group.validate_member(member_id, group_instance_id)
        except ApiException as exc:
            return exc.error_code
        if generation_id != group.generation_id:
            return errors.ILLEGAL_GENERATION
        if group.is_(E):
            return errors.UNKNOWN_MEMBER_ID
        self._schedule_heartbeat(group, group.members[member_id])
        if group.is_(PR):
            return errors.REBALANCE_IN_PROGRESS
        return errors.NONE

    def _expire_heartbeat(self, group: Group, member_id: str) -> None:
        self._timer_handles.pop(("heartbeat", group, member_id), None)
        if not self._live(group) or group.is_(DEAD):
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

    def expire_member(self, group_id: str, member_id: str) -> None:
        """Treat ``member_id`` as if its session had timed out now (fault injection)."""
        group = self._find_group(group_id)
        member = group.members.get(member_id) if group else None
        if member is None:
            raise ApiException(errors.UNKNOWN_MEMBER_ID)
        self._cancel(("heartbeat", group, member_id))
        self._remove_member_and_update_group(group, member)

    def _remove_member_and_update_group(self, group: Group, member: Member) -> None:
        self._complete_join_waiter(member, JoinResult(errors.UNKNOWN_MEMBER_ID, UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        self._cancel(("heartbeat", group, member.member_id))
        if group.is_(ST, CR):
            self._maybe_prepare_rebalance_or_complete_join(group)
        elif group.is_(PR) and group.has_all_members_joined():
            self._complete_join(group)

    # -- LeaveGroup ----------------------------------------------------------------------------

    def leave_group(self, broker_id: int, group_id: str,
                    members: list[tuple[str, str | None]]) -> tuple[int, list[int]]:
        """Members leave; returns (top-level error, per-member errors)."""
        try:
            shard = self.shard_for(group_id, broker_id)
        except ApiException as exc:
            return exc.error_code, []
        group = shard.groups.get(group_id)
        if group is None:
            return errors.UNKNOWN_MEMBER_ID, []
        if group.is_(DEAD):
            return errors.COORDINATOR_NOT_AVAILABLE, []
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
                self._cancel(("heartbeat", group, member_id))
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
                self._maybe_prepare_rebalance_or_complete_join(group)
            elif group.is_(PR):
                self._maybe_complete_join_phase(group)
        return errors.NONE, results

    def _remove_current_member(self, group: Group, member_id: str) -> None:
        member = group.members[member_id]
        self._complete_join_waiter(member, JoinResult(errors.UNKNOWN_MEMBER_ID, UNKNOWN_MEMBER_ID))
        group.remove(member_id)
        self._cancel(("heartbeat", group, member_id))

    # -- offsets -------------------------------------------------------------------------------

    def validate_offset_commit(self, broker_id: int, group_id: str, member_id: str,
                               group_instance_id: str | None, generation_id: int,
                               api_version: int) -> tuple[Shard, Group]:
        """The group an OffsetCommit writes to, or ApiException with the code every partition
        gets.  A commit with generation -1 from outside the group (a simple consumer, an admin
        tool) is allowed while the group is empty, and creates it if needed."""
        shard = self.shard_for(group_id, broker_id)
        group = shard.groups.get(group_id)
        if group is None:
            if generation_id >= 0:
                raise ApiException(errors.GROUP_ID_NOT_FOUND if api_version >= 9
                                 else errors.ILLEGAL_GENERATION)
            group = shard.groups[group_id] = Group(group_id, self.now)
        if group.is_(DEAD):
            raise ApiException(errors.COORDINATOR_NOT_AVAILABLE)
        if generation_id < 0 and group.is_(E):
            return shard, group
        if generation_id >= 0 or member_id or group_instance_id is not None:
            group.validate_member(member_id, group_instance_id)
            if generation_id != group.generation_id:
                raise ApiException(errors.ILLEGAL_GENERATION)
        elif not group.is_(E):
            raise ApiException(errors.UNKNOWN_MEMBER_ID)
        if group.is_(CR):
            raise ApiException(errors.REBALANCE_IN_PROGRESS)
        member = group.members.get(member_id)
        if member is not None and group.is_(ST, PR):
            self._schedule_heartbeat(group, member)  # a commit counts as a sign of life
        return shard, group

    def fetch_offsets(self, broker_id: int, group_id: str,
                      partitions: list[tuple[str, int]] | None
                      ) -> dict[tuple[str, int], OffsetEntry | None]:
        """Committed offsets of ``partitions`` (all of them when None); missing ones are None."""
        shard = self.shard_for(group_id, broker_id)
        group = shard.groups.get(group_id)
        offsets = group.offsets if group is not None and not group.is_(DEAD) else {}
        if partitions is None:
            return dict(sorted(offsets.items()))
        return {key: offsets.get(key) for key in partitions}

    # -- admin ---------------------------------------------------------------------------------

    def force_rebalance(self, group_id: str) -> None:
        """Start a rebalance as if membership had changed (fault injection)."""
        group = self._find_group(group_id)
        if group is None:
            raise ApiException(errors.GROUP_ID_NOT_FOUND)
        if can_rebalance(group.state) and group.members:
            self._prepare_rebalance(group)

    def move_coordinator(self, group_id: str, node_id: int) -> None:
        """Move the leader of the group's ``__consumer_offsets`` partition to ``node_id``, as a
        reassignment would: the new coordinator loads the group (with every other group of that
        partition) from the partition's records."""
        if self._find_group(group_id) is None:
            raise ApiException(errors.GROUP_ID_NOT_FOUND, f"unknown group {group_id!r}")
        self.cluster.move_leader(self._partition_of_id(group_id), node_id)

    def _partition_of_id(self, group_id: str) -> Partition:
        return self.offsets_topic().partitions[partition_for(group_id, self.num_partitions)]

    def _find_group(self, group_id: str) -> Group | None:
        shard = self.shards.get(partition_for(group_id, self.num_partitions))
        return shard.groups.get(group_id) if shard else None

    def groups(self) -> list[tuple[Shard, Group]]:
        return [(shard, group) for shard in self.shards.values() if not shard.loading
                for group in shard.groups.values()]

    # -- persistence ---------------------------------------------------------------------------

    def _partition_of(self, group: Group) -> Partition:
        return self.offsets_topic().partitions[partition_for(group.group_id, self.num_partitions)]

    def _store_group(self, group: Group, assignments: dict[str, bytes] | None = None) -> None:
        """Write the group's metadata record (Kafka's GroupMetadataValue) to its partition."""
        partition = self._partition_of(group)
        offsets_records.append(
            partition, self.now,
            [offsets_records.group_metadata_record(group, assignments or group.assignments(),
                                                   self.now)])
        self.cluster.notify_append(partition)

    def store_offsets(self, group: Group, entries: dict[tuple[str, int], OffsetEntry]) -> None:
        partition = self._partition_of(group)
        offsets_records.append(partition, self.now, [
            offsets_records.offset_commit_record(group.group_id, topic, index, entry)
            for (topic, index), entry in entries.items()])
        group.offsets.update(entries)
        self.cluster.notify_append(partition)

    def delete_offsets(self, group: Group, keys: list[tuple[str, int]]) -> None:
        partition = self._partition_of(group)
        offsets_records.append(partition, self.now, [
            offsets_records.offset_tombstone(group.group_id, topic, index) for topic, index in keys])
        for key in keys:
            group.offsets.pop(key, None)
        self.cluster.notify_append(partition)

    def delete_group(self, shard: Shard, group: Group) -> None:
        partition = self._partition_of(group)
        offsets_records.append(partition, self.now, [
            offsets_records.offset_tombstone(group.group_id, topic, index)
            for topic, index in group.offsets] + [
            offsets_records.group_tombstone(group.group_id)])
        self._cancel_group_timers(group)
        group.transition_to(DEAD, self.now)
        del shard.groups[group.group_id]
        self.cluster.notify_append(partition)

    def get_or_create_group_for_commit(self, shard: Shard, group_id: str) -> Group:
        group = shard.groups.get(group_id)
        if group is None:
            group = shard.groups[group_id] = Group(group_id, self.now)
        return group

    # -- group administration: DescribeGroups, ListGroups, DeleteGroups, OffsetDelete ----------

    #: The protocol type of Kafka's consumers, whose Subscription the coordinator can read
    CONSUMER_PROTOCOL_TYPE = "consumer"

    def describe_group(self, broker_id: int, group_id: str) -> Group | None:
        """The group to describe, or None when this coordinator has no such group (Kafka then
        answers with state Dead); ApiException when this broker cannot answer for the group."""
        group = self.shard_for(group_id, broker_id).groups.get(group_id)
        return None if group is None or group.is_(DEAD) else group

    def list_groups(self, broker_id: int) -> list[Group]:
        """Every group of every shard ``broker_id`` leads, as Kafka 4 reads all its shards.

        A shard still loading fails the whole listing with COORDINATOR_LOAD_IN_PROGRESS, as
        one failed shard read fails Kafka's combined answer."""
        shards = sorted((s for s in self.shards.values() if s.leader == broker_id),
                        key=lambda s: s.index)
        if any(shard.loading for shard in shards):
            raise ApiException(errors.COORDINATOR_LOAD_IN_PROGRESS)
        return [group for shard in shards for group in shard.groups.values()
                if not group.is_(DEAD)]

    def delete_groups(self, broker_id: int, group_ids: list[str]) -> dict[str, int]:
        """Delete each group that has no members: its offsets and its metadata get tombstones.

        Per group: GROUP_ID_NOT_FOUND for a group this coordinator does not have,
        NON_EMPTY_GROUP while members are in it, the coordinator error when this broker is not
        the group's coordinator (Kafka's ClassicGroup.validateDeleteGroup)."""
        results: dict[str, int] = {}
        for group_id in group_ids:
            try:
                shard = self.shard_for(group_id, broker_id)
            except ApiException as exc:
                results[group_id] = exc.error_code
                continue
            group = shard.groups.get(group_id)
            if group is None or group.is_(DEAD):
                results[group_id] = errors.GROUP_ID_NOT_FOUND
            elif group.is_(ST, PR, CR):
                results[group_id] = errors.NON_EMPTY_GROUP
            else:
                self.delete_group(shard, group)
                results[group_id] = errors.NONE
        return results

    def delete_group_offsets(self, broker_id: int, group_id: str,
                             partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """OffsetDelete on the coordinator: an error code per partition, tombstones written for
        the deleted offsets that existed.  Group-level refusals raise ApiException.

        A group with members may lose the offsets of topics it does not consume, but only if
        it speaks the consumer protocol (whose subscriptions the coordinator can read); its
        subscribed topics answer GROUP_SUBSCRIBED_TO_TOPIC (Kafka's
        ClassicGroup.validateOffsetDelete and OffsetMetadataManager.deleteOffsets)."""
        group = self.shard_for(group_id, broker_id).groups.get(group_id)
        if group is None or group.is_(DEAD):
            raise ApiException(errors.GROUP_ID_NOT_FOUND)
        if group.is_(ST, PR, CR) and group.protocol_type != self.CONSUMER_PROTOCOL_TYPE:
            raise ApiException(errors.NON_EMPTY_GROUP)
        subscribed = self.subscribed_topics(group)
        results: dict[tuple[str, int], int] = {}
        doomed: list[tuple[str, int]] = []
        for topic, index in partitions:
            if self._consumes(group, subscribed, topic):
                results[(topic, index)] = errors.GROUP_SUBSCRIBED_TO_TOPIC
                continue
            results[(topic, index)] = errors.NONE
            if (topic, index) in group.offsets and (topic, index) not in doomed:
                doomed.append((topic, index))
        if doomed:
            self.delete_offsets(group, doomed)
        return results

    def subscribed_topics(self, group: Group) -> set[str] | None:
        """The topics the group's members subscribe to, read from their consumer-protocol
        Subscription for the group's protocol; None when the coordinator cannot know (not the
        consumer protocol, no generation yet, metadata it cannot parse).

        Kafka computes this when a generation starts (ClassicGroup.computeSubscribedTopics) and
        keeps it until the next one; computed here from the members at hand, which is the same
        set except while a rebalance is changing the membership."""
        from wire import WireError, embedded_struct

        if group.protocol_type != self.CONSUMER_PROTOCOL_TYPE:
            return None
        if not group.members:
            return set()
        if group.protocol_name is None:
            # Members are joining a group whose last generation (if any) had none.
            return set() if group.generation_id > 0 else None
        topics: set[str] = set()
        try:
            for member in group.members.values():
                # Version 0 is a prefix of every Subscription version (Kafka reads it so too).
                data = bytes(member.metadata(group.protocol_name))
                if len(data) < 2:
                    return None
                subscription, _ = embedded_struct("ConsumerProtocolSubscription", 0).decode(
                    data, 2)
                topics.update(subscription.topics)
        except (KeyError, WireError):
            return None
        return topics

    def is_subscribed_to_topic(self, group: Group, topic: str) -> bool:
        """Kafka's ClassicGroup.isSubscribedToTopic: when the subscriptions are unknown, a
        consumer-protocol group is assumed to consume every topic."""
        return self._consumes(group, self.subscribed_topics(group), topic)

    def _consumes(self, group: Group, subscribed: set[str] | None, topic: str) -> bool:
        if subscribed is None:
            return group.protocol_type == self.CONSUMER_PROTOCOL_TYPE
        return topic in subscribed

    # -- offset retention ------------------------------------------------------------------------

    def _schedule_retention_check(self) -> None:
        self._schedule(("retention",), self.settings["offsets_retention_check_interval_ms"],
                       self._retention_check)

    def _retention_check(self) -> None:
        self._timer_handles.pop(("retention",), None)
        self.expire_offsets()
        self._schedule_retention_check()

    def expire_offsets(self) -> int:
        """Drop committed offsets older than ``offsets.retention.minutes``, as Kafka's periodic
        clean-up does, and delete empty groups left with no offsets; returns how many expired.

        Which clock an offset ages by is Kafka's rule: in an Empty group, the time the group
        became empty; in a group with no protocol (a simple consumer's), the commit time; in a
        Stable consumer group, the commit time, but only for topics no member subscribes to."""
        retention_ms = self.settings["offsets_retention_minutes"] * 60_000
        now = self.now
        expired = 0
        for shard, group in self.groups():
            if group.is_(DEAD):
                continue
            if group.protocol_type is None:
                base = None  # commit time
            elif group.is_(E):
                base = group.state_timestamp
            elif group.is_(ST) and group.protocol_type == self.CONSUMER_PROTOCOL_TYPE and \
                    self.subscribed_topics(group) is not None:
                base = None
            else:
                continue
            doomed = []
            for (topic, index), entry in group.offsets.items():
                if not group.is_(E) and group.protocol_type is not None and \
                        self.is_subscribed_to_topic(group, topic):
                    continue
                start = entry.commit_timestamp if base is None else base
                if now - start >= retention_ms or 0 <= entry.expire_timestamp <= now:
                    doomed.append((topic, index))
            if doomed:
                self.delete_offsets(group, doomed)
                expired += len(doomed)
            if group.is_(E) and not group.offsets and not group.members:
                self.delete_group(shard, group)
        return expired


__all__ = ["GroupCoordinator", "JoinRequest", "partition_for", "java_string_hashcode"]
