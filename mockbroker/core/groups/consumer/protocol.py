"""ConsumerGroupHeartbeat as Kafka 4.x's group coordinator answers it (``GroupMetadataManager``):
joining (epoch 0), heartbeating, leaving (-1, or -2 for a static member that will come back),
the target assignment computed by the server-side assignor, each member's reconciliation, the
session and rebalance timeouts, and the records every change writes.

A join that reaches a group of another type is routed by the table of group types
(``coordinator.route``), as is a consumer group whose members are leaving (``members_leaving``):
what joins this type to another (KIP-848's mixed groups and online migration) is
:mod:`~mockbroker.core.groups.mixed`'s, which uses this protocol's public methods to move its
classic members like any other.
"""

from __future__ import annotations

import copy
import uuid

from msgspec import Struct

from mockbroker.core.errors import ApiException
from mockbroker.core.groups.consumer import records
from mockbroker.core.groups.consumer.assignors import ASSIGNORS, AssignorError, MemberSpec
from mockbroker.core.groups.consumer.group import ConsumerGroup
from mockbroker.core.groups.consumer.member import ConsumerMember, Fenced, MemberState, reconcile
from mockbroker.core.groups.modern.member import new_member_id
from mockbroker.core.groups.modern.protocol import ModernProtocol
from mockbroker.core.groups.modern.regex import TopicRegexError, compile_topic_regex
from mockbroker.core.groups.timers import TimerKey, TimerKind
from wire import errors

LEAVE, STATIC_LEAVE = -1, -2
#: the name of the protocol whose requests this module serves, as the table routes them
CONSUMER = ConsumerGroup.type
#: the timers a member may have: its session, its revocation, and a classic member's rejoin
#: and SyncGroup deadlines
MEMBER_TIMERS = (TimerKind.HEARTBEAT, TimerKind.REVOCATION, TimerKind.JOIN, TimerKind.SYNC)


class Heartbeat(Struct):
    """A ConsumerGroupHeartbeat as the coordinator reads it (None: unchanged)."""

    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: list[str] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    #: topic id -> partitions the member says it owns
    owned: dict[uuid.UUID, set[int]] | None = None
    client_id: str = ""
    client_host: str = ""
    version: int = 1


class HeartbeatResult(Struct):
    error_code: int = errors.NONE
    error_message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    #: topic id -> partitions, when the member is told its assignment
    assignment: dict[uuid.UUID, list[int]] | None = None


def _invalid(message: str) -> ApiException:
    return ApiException(errors.INVALID_REQUEST, message)


class ConsumerProtocol(ModernProtocol):
    records = records
    settings_prefix = "group_consumer_"
    member_timers = MEMBER_TIMERS

    def assignors(self) -> list[str]:
        """``group.consumer.assignors``: the first is the default."""
        value = self.settings["group_consumer_assignors"]
        names = value.split(",") if isinstance(value, str) else list(value)
        return [name.strip() for name in names if name.strip()]

    # -- validation ---------------------------------------------------------------------------

    def validate(self, req: Heartbeat) -> None:
        """Kafka's checks of a heartbeat before it looks at the group."""
        if (req.version >= 1 or req.member_epoch > 0 or req.member_epoch == LEAVE) and \
                not req.member_id.strip():
            raise _invalid("MemberId can't be empty.")
        if not req.group_id.strip():
            raise _invalid("GroupId can't be empty.")
        if req.instance_id is not None and not req.instance_id.strip():
            raise _invalid("InstanceId can't be empty.")
        if req.rack_id is not None and not req.rack_id.strip():
            raise _invalid("RackId can't be empty.")
        if req.member_epoch == 0:
            if req.rebalance_timeout_ms == -1:
                raise _invalid("RebalanceTimeoutMs must be provided in first request.")
            if req.owned is None or any(req.owned.values()):
                raise _invalid("TopicPartitions must be empty when (re-)joining.")
            if req.subscribed_topic_names is None and req.subscribed_topic_regex is None:
                raise _invalid("Either SubscribedTopicNames or SubscribedTopicRegex must be "
                               "non-null when (re-)joining.")
        elif req.member_epoch == STATIC_LEAVE:
            if req.instance_id is None:
                raise _invalid("InstanceId can't be null.")
        elif req.member_epoch < STATIC_LEAVE:
            raise _invalid("MemberEpoch is invalid.")
        assignors = self.assignors()
        if req.server_assignor is not None and req.server_assignor not in assignors:
            raise ApiException(errors.UNSUPPORTED_ASSIGNOR, (
                f"ServerAssignor {req.server_assignor} is not supported. Supported assignors: "
                f"{', '.join(assignors)}."))
        if req.subscribed_topic_regex:
            try:
                compile_topic_regex(req.subscribed_topic_regex)
            except TopicRegexError as exc:
                raise ApiException(errors.INVALID_REGULAR_EXPRESSION, (
                    f"SubscribedTopicRegex `{req.subscribed_topic_regex}` is not a valid "
                    f"regular expression: {exc}.")) from None

    # -- the heartbeat --------------------------------------------------------------------------

    def heartbeat(self, broker_id: int, req: Heartbeat) -> HeartbeatResult:
        """One ConsumerGroupHeartbeat on ``broker_id``; ApiException for a refusal."""
        self.validate(req)
        shard = self.coordinator.shard_for(req.group_id, broker_id)
        if req.member_epoch in (LEAVE, STATIC_LEAVE):
            return self._leave(shard, req)
        group = self._group(shard, req)
        limit = self.setting("max_size")
        if len(group.members) >= limit and req.member_id not in group.members:
            raise ApiException(errors.GROUP_MAX_SIZE_REACHED, (
                f"The consumer group has reached its maximum capacity of {limit} members."))
        if not req.member_id:
            req.member_id = new_member_id()
        writes: list = []
        member = self._member(group, req, writes)
        updated = member.copy()
        for name in ("instance_id", "rack_id", "server_assignor", "subscribed_topic_regex"):
            if getattr(req, name) is not None:
                setattr(updated, name, getattr(req, name))
        if req.rebalance_timeout_ms != -1:
            updated.rebalance_timeout_ms = req.rebalance_timeout_ms
        if req.subscribed_topic_names is not None:
            updated.subscribed_topic_names = list(req.subscribed_topic_names)
        updated.client_id, updated.client_host = req.client_id, req.client_host
        updated.classic = None
        new_member = req.member_id not in group.members
        updated = self.update(group, member, updated, new_member, req.owned, writes)
        self.write(group, writes)
        self.arm_session(group, updated)
        full = req.rebalance_timeout_ms != -1 and req.owned is not None and \
            (req.subscribed_topic_names is not None or req.subscribed_topic_regex is not None)
        changed = updated.assigned != member.assigned or new_member
        return HeartbeatResult(
            member_id=updated.member_id, member_epoch=updated.member_epoch,
            heartbeat_interval_ms=self.setting("heartbeat_interval_ms"),
            assignment={t: sorted(ps) for t, ps in updated.assigned.items()}
            if req.member_epoch == 0 or full or changed else None)

    def update(self, group: ConsumerGroup, member: ConsumerMember, updated: ConsumerMember,
               new_member: bool, owned: dict[uuid.UUID, set[int]] | None,
               writes: list) -> ConsumerMember:
        """A member's new subscription and metadata are in ``updated``: record them, bump the
        group epoch if the subscribed topics changed, compute a new target if due, and move
        the member one step towards its target.  Returns the member as it now is."""
        # a change of topic names bumps the group epoch; a regex does through the topics it
        # matches (the subscribed topics' hash below), as Kafka bumps once it is resolved
        subscription_changed = set(updated.subscribed_topic_names) != \
            set(() if new_member else member.subscribed_topic_names)
        if new_member or _metadata(updated) != _metadata(member):
            writes.append(records.member(group.group_id, updated))
        group.members[updated.member_id] = updated
        self.bump_if_changed(group, subscription_changed, writes)
        self.maybe_new_target(group, writes)
        return self.reconcile(group, updated, subscription_changed, owned, writes,
                              always_record=new_member)

    def reconcile(self, group: ConsumerGroup, member: ConsumerMember, subscription_changed: bool,
                  owned: dict[uuid.UUID, set[int]] | None, writes: list, *,
                  always_record: bool = False) -> ConsumerMember:
        """One step of the member towards its target (CurrentAssignmentBuilder); a member of
        the consumer protocol that must revoke gets the rebalance timeout to do it in."""
        updated = member
        if subscription_changed or not member.is_reconciled_to(group.assignment_epoch):
            owners = group.owner_epochs()
            try:
                updated = reconcile(
                    member, group.assignment_epoch, group.target.get(member.member_id, {}),
                    self.subscribed_ids(member), subscription_changed, owned,
                    lambda t, p: owners.get((t, p), -1))
            except Fenced as exc:
                raise ApiException(errors.FENCED_MEMBER_EPOCH, str(exc)) from None
        group.members[updated.member_id] = updated
        if updated != member or always_record:
            writes.append(records.current_assignment(group.group_id, updated))
            if not updated.uses_classic:  # classic members have join and sync timers instead
                self._arm_revocation(group, updated)
        return updated

    def _group(self, shard, req: Heartbeat) -> ConsumerGroup:
        group = shard.groups.get(req.group_id)
        if group is not None and not isinstance(group, ConsumerGroup) and req.member_epoch == 0:
            # a member joins a group of another type: whether the group may become a consumer
            # group, and how, is what the table registers for the pair (refused if nothing)
            return self.coordinator.route(CONSUMER, group).on_join(shard, group, req)
        if group is None or group.is_dead:
            if req.member_epoch != 0:
                raise ApiException(errors.GROUP_ID_NOT_FOUND,
                                   f"Consumer group {req.group_id} not found.")
            group = shard.groups[req.group_id] = ConsumerGroup(req.group_id, self.now)
            self.write(group, [records.group_epoch(group)])
        elif not isinstance(group, ConsumerGroup):
            raise ApiException(errors.GROUP_ID_NOT_FOUND,
                               f"Group {req.group_id} is not a consumer group.")
        return group

    def _member(self, group: ConsumerGroup, req: Heartbeat, writes: list) -> ConsumerMember:
        if req.member_epoch == 0:  # joining (or rejoining): a known member is not reset
            if req.instance_id is None:
                return group.members.get(req.member_id) or ConsumerMember(req.member_id)
            holder = group.static_member(req.instance_id)
            if holder is None or holder.member_id == req.member_id:
                return holder or ConsumerMember(req.member_id)
            if holder.member_epoch != STATIC_LEAVE and not holder.uses_classic:
                raise ApiException(errors.UNRELEASED_INSTANCE_ID, (
                    f"Static member {req.member_id} with instance id {req.instance_id} "
                    f"cannot join the group because the instance id is owned by "
                    f"{holder.member_id} member."))
            return self.replace(group, holder, req.member_id, writes)
        member = self.known_member(group, req.member_id, req.instance_id)
        if req.member_epoch > member.member_epoch:
            raise ApiException(errors.FENCED_MEMBER_EPOCH, (
                f"The consumer group member has a greater member epoch ({req.member_epoch}) "
                f"than the one known by the group coordinator ({member.member_epoch}). The "
                f"member must abandon all its partitions and rejoin."))
        if req.member_epoch < member.member_epoch and not (
                req.member_epoch == member.previous_member_epoch and req.owned is not None
                and all(set(ps) <= set(member.assigned.get(t, {}))
                        for t, ps in req.owned.items())):
            raise ApiException(errors.FENCED_MEMBER_EPOCH, (
                f"The consumer group member has a smaller member epoch ({req.member_epoch}) "
                f"than the one known by the group coordinator ({member.member_epoch}). The "
                f"member must abandon all its partitions and rejoin."))
        return member

    def replace(self, group: ConsumerGroup, old: ConsumerMember, member_id: str,
                 writes: list) -> ConsumerMember:
        """A static member back under a new member id takes the slot of the one that left."""
        writes.extend(records.member_tombstones(group.group_id, old.member_id))
        del group.members[old.member_id]
        self.cancel_timers(group, old.member_id)
        target = group.target.pop(old.member_id, {})
        group.target[member_id] = target
        replacement = old.copy(member_id=member_id, member_epoch=0, previous_member_epoch=0)
        group.members[member_id] = replacement  # not a new member: the group epoch stays
        writes.append(records.member(group.group_id, replacement))
        writes.append(records.target_member(group.group_id, member_id, target))
        return replacement

    # -- the target assignment --------------------------------------------------------------------

    def compute_target(self, group: ConsumerGroup) -> dict:
        """The assignor most members name (else the default) over the members' topics."""
        topics = self.coordinator.cluster.topics
        specs = [MemberSpec(m.member_id, m.instance_id, frozenset(self.subscribed_ids(m)))
                 for m in group.members.values()]
        partitions = {topics[n].topic_id: len(topics[n].partitions)
                      for m in group.members.values() for n in self.subscribed_names(m)
                      if n in topics}
        assignor = group.preferred_assignor(self.assignors()[0])
        try:
            return ASSIGNORS[assignor](specs, partitions, group.target)
        except AssignorError as exc:
            raise ApiException(errors.UNKNOWN_SERVER_ERROR, (
                f"Failed to compute a new target assignment for epoch {group.group_epoch}: "
                f"{exc}")) from None

    # -- leaving, timeouts ------------------------------------------------------------------------

    def _leave(self, shard, req: Heartbeat) -> HeartbeatResult:
        group = shard.groups.get(req.group_id)
        if not isinstance(group, ConsumerGroup) or group.is_dead:
            raise ApiException(errors.GROUP_ID_NOT_FOUND, f"Group {req.group_id} not found.")
        member = self.known_member(group, req.member_id, req.instance_id)
        if req.member_epoch == STATIC_LEAVE and req.instance_id is not None:
            # it will be back: it keeps its slot and partitions until its session expires
            kept = member.copy(member_epoch=STATIC_LEAVE, pending_revocation={}, assigned={
                t: {p: 0 for p in ps} for t, ps in member.assigned.items()})
            group.members[member.member_id] = kept
            self.write(group, [records.current_assignment(group.group_id, kept)])
        else:
            self.fence(group, {member.member_id})
        return HeartbeatResult(member_id=req.member_id, member_epoch=req.member_epoch)

    def session_timeout_ms(self, group: ConsumerGroup, member: ConsumerMember) -> int:
        """A classic member's own session timeout, else the group's."""
        return member.classic.session_timeout_ms if member.uses_classic \
            else self.setting("session_timeout_ms")

    def _arm_revocation(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        key = TimerKey(TimerKind.REVOCATION, group.group_id, member.member_id)
        if member.state is not MemberState.UNREVOKED_PARTITIONS:
            self.timers.cancel(key)
            return
        epoch = member.member_epoch

        def fence() -> None:
            current = group.members.get(member.member_id)
            if self.coordinator.is_live(group) and current is not None and \
                    current.member_epoch == epoch:
                self.fence(group, {member.member_id})

        self.timers.schedule(key, max(member.rebalance_timeout_ms, 0), fence)

    def validate_offset_commit(self, shard, group_id: str, group: ConsumerGroup,
                               member_id: str, instance_id: str | None, member_epoch: int,
                               api_version: int, *, transactional: bool = False
                               ) -> ConsumerGroup:
        """An OffsetCommit (or TxnOffsetCommit) to a consumer group, checked as Kafka's
        ``ConsumerGroup.validateOffsetCommit`` does: the member's epoch must be its current one
        (an older one only for partitions it still holds from then)."""
        if group.is_dead:
            raise ApiException(errors.COORDINATOR_NOT_AVAILABLE)
        if member_epoch < 0 and not group.members:
            return group
        if transactional and member_epoch < 0 and not member_id and instance_id is None:
            return group
        member = group.members.get(member_id)
        if member is None:
            raise ApiException(errors.UNKNOWN_MEMBER_ID, (
                f"Member {member_id} is not a member of group {group.group_id}."))
        if not transactional and not member.uses_classic and api_version < 9:
            raise ApiException(errors.UNSUPPORTED_VERSION, (
                "OffsetCommit version 9 or above must be used by members using the consumer "
                "group protocol"))
        # a classic member's epoch is its generation: a mismatch is ILLEGAL_GENERATION
        stale, what = (errors.ILLEGAL_GENERATION, "generation id") if member.uses_classic \
            else (errors.STALE_MEMBER_EPOCH, "member epoch")
        if member_epoch > member.member_epoch:
            raise ApiException(stale, (
                f"Received {what} {member_epoch} is newer than current member epoch "
                f"{member.member_epoch}."))
        if member_epoch < member.member_epoch and member_epoch != member.previous_member_epoch:
            raise ApiException(stale, (
                f"Received {what} {member_epoch} is older than current member epoch "
                f"{member.member_epoch}."))
        self.arm_session(group, member)  # a commit counts as a sign of life
        return group

    @staticmethod
    def stale_fetch(member: ConsumerMember) -> tuple[int, str]:
        """A classic member's epoch is its generation: a mismatch is ILLEGAL_GENERATION."""
        return (errors.ILLEGAL_GENERATION, "generation id") if member.uses_classic \
            else (errors.STALE_MEMBER_EPOCH, "member epoch")

    def holding_revocation(self, request):
        """A ConsumerGroupHeartbeat request as a member slow to revoke would send it: the
        partitions it is revoking are still reported as owned (fault injection)."""
        group = self.coordinator.find_group(request.group_id)
        member = group.members.get(request.member_id) \
            if isinstance(group, ConsumerGroup) else None
        if member is None or not member.pending_revocation or request.topic_partitions is None:
            return request  # nothing to hold, or it reports nothing (it still owns them)
        owned: dict[uuid.UUID, set[int]] = {}
        for entry in request.topic_partitions:
            owned.setdefault(entry.topic_id, set()).update(entry.partitions)
        for topic, ps in member.pending_revocation.items():
            owned.setdefault(topic, set()).update(ps)
        held = copy.copy(request)
        held.topic_partitions = [type(request).TopicPartitions(topic_id=t, partitions=sorted(ps))
                                 for t, ps in owned.items()]
        return held

    def loaded(self, group: ConsumerGroup) -> None:
        """A new coordinator gives every member a fresh session, and a member that was
        revoking its rebalance timeout."""
        for member in group.members.values():
            self.arm_session(group, member)
            if not member.uses_classic:
                self._arm_revocation(group, member)


def _metadata(member: ConsumerMember) -> tuple:
    return (member.instance_id, member.rack_id, member.client_id, member.client_host,
            tuple(member.subscribed_topic_names), member.subscribed_topic_regex,
            member.rebalance_timeout_ms, member.server_assignor, member.classic)
