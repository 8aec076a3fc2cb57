"""Members of the classic protocol inside a consumer group (KIP-848's mixed groups), as Kafka
4.x's ``GroupMetadataManager`` serves them: a consumer that still sends JoinGroup, SyncGroup,
Heartbeat and LeaveGroup is a member like any other, but speaks through the classic APIs.

- **JoinGroup** updates the member from its Subscription (topics, rack, the partitions it
  still owns), bumps the group epoch when its topics change, computes the target and moves the
  member one step towards it, as a heartbeat would.  The answer names the member's epoch as the
  generation, its first protocol, and no leader: the server assigns, nobody else does.
- **SyncGroup** answers with the partitions the member holds now, in a ConsumerProtocol
  Assignment of its own Subscription's version.
- **Heartbeat** says REBALANCE_IN_PROGRESS when the member has something to do: a newer target
  to catch up with, partitions to revoke, or partitions now free to take.  Revocation happens
  by the member rejoining without them.
- **LeaveGroup** fences the members named.

Instead of the rebalance timeout of a consumer-protocol member, a classic member has a join
deadline (armed when it is told to rejoin), a sync deadline (after its JoinGroup) and its own
session timeout.

A JoinGroup to an empty consumer group makes it a classic group (any policy), and the classic
protocol takes the join from there.  When members leave a consumer group and only classic
members would be left, the group becomes a classic group instead, if the policy allows
(:func:`~mockbroker.core.groups.mixed.migration.downgrade`).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from mockbroker.core.deferred import Deferred
from mockbroker.core.errors import ApiException
from mockbroker.core.groups.classic.group import ClassicGroup
from mockbroker.core.groups.classic_api import CONSUMER_PROTOCOL_TYPE, UNKNOWN_MEMBER_ID, \
    JoinRequest, JoinResult, LeaveResult, SyncResult
from mockbroker.core.groups.consumer import records
from mockbroker.core.groups.consumer.group import ConsumerGroup
from mockbroker.core.groups.consumer.member import ClassicMetadata, ConsumerMember, MemberState
from mockbroker.core.groups.mixed import migration
from mockbroker.core.groups.modern.member import new_member_id
from mockbroker.core.groups.timers import TimerKey, TimerKind
from wire import WireError, decode_embedded, errors

if TYPE_CHECKING:
    from mockbroker.core.groups.consumer.protocol import ConsumerProtocol
    from mockbroker.core.groups.coordinator import GroupCoordinator


class ClassicMembers:
    """The classic protocol's requests to a consumer group (the table routes them here), and
    what becomes of a consumer group whose last members of the consumer protocol leave."""

    def __init__(self, coordinator: "GroupCoordinator"):
        self.coordinator = coordinator

    @property
    def protocol(self) -> "ConsumerProtocol":
        """The consumer protocol, which moves a classic member like any other."""
        return self.coordinator.consumer

    @property
    def settings(self) -> dict:
        return self.coordinator.settings

    # -- JoinGroup ------------------------------------------------------------------------------

    def on_join(self, shard, group: ConsumerGroup, req: JoinRequest) -> JoinResult | Deferred:
        if group.is_empty:
            # an empty one becomes classic, keeping its committed offsets
            fresh = ClassicGroup(req.group_id, self.coordinator.now)
            self.coordinator.replace_group(shard, group, fresh)
            return self.coordinator.classic.on_join(shard, fresh, req)
        try:
            return self._join(group, req)
        except ApiException as exc:
            return JoinResult(exc.error_code, req.member_id)

    def _join(self, group: ConsumerGroup, req: JoinRequest) -> JoinResult:
        unknown = req.member_id == UNKNOWN_MEMBER_ID
        member_id = new_member_id() if unknown else req.member_id
        limit = self.settings["group_consumer_max_size"]
        if len(group.members) >= limit and member_id not in group.members:
            raise ApiException(errors.GROUP_MAX_SIZE_REACHED, (
                f"The consumer group has reached its maximum capacity of {limit} members."))
        if not group.supports_classic_protocols(req.protocol_type,
                                                {name for name, _ in req.protocols}):
            raise ApiException(errors.INCONSISTENT_GROUP_PROTOCOL,
                               f"Member {member_id}'s protocols are not supported.")
        if unknown and req.group_instance_id is None and req.api_version >= 4:
            # KIP-394: the member gets an id and must come back with it
            return JoinResult(errors.MEMBER_ID_REQUIRED, member_id)
        try:
            subscription = decode_embedded("ConsumerProtocolSubscription",
                                           bytes(req.protocols[0][1]))[1]
        except (WireError, KeyError):
            raise ApiException(errors.UNKNOWN_SERVER_ERROR, (
                "Malformed embedded consumer protocol in subscription deserialization."
            )) from None
        writes: list = []
        replaced = None
        if req.group_instance_id is None:
            member = group.members.get(member_id) or ConsumerMember(member_id)
        else:
            holder = group.static_member(req.group_instance_id)
            if not unknown:
                member = self._static(group, holder, member_id, req.group_instance_id)
            elif holder is None:
                member = ConsumerMember(member_id)
            elif migration.may_downgrade_replacing(
                    group, holder, self.settings["group_consumer_migration_policy"],
                    self.settings["group_max_size"]):
                replaced = holder  # the group becomes classic below
                member = holder.copy(member_id=member_id, member_epoch=0,
                                     previous_member_epoch=0)
            else:
                member = self.protocol.replace(group, holder, member_id, writes)
        new_member = member.member_id not in group.members
        updated = member.copy(
            client_id=req.client_id, client_host=req.client_host,
            subscribed_topic_names=list(subscription.topics), subscribed_topic_regex=None,
            classic=ClassicMetadata(req.session_timeout_ms, tuple(req.protocols)))
        if req.group_instance_id is not None:
            updated.instance_id = req.group_instance_id
        if subscription.rack_id is not None:
            updated.rack_id = subscription.rack_id
        if req.rebalance_timeout_ms != -1:
            updated.rebalance_timeout_ms = req.rebalance_timeout_ms
        owned = self._owned(subscription)
        if replaced is not None:
            return self._join_downgrading(group, replaced, member, updated, owned, writes)
        updated = self.protocol.update(group, member, updated, new_member, owned, writes)
        self.protocol.write(group, writes)
        timers = self.protocol.timers
        timers.cancel(TimerKey(TimerKind.JOIN, group.group_id, updated.member_id))
        self.protocol.arm_session(group, updated)
        self.protocol.arm_fence(group, updated.member_id, TimerKind.SYNC,
                                req.rebalance_timeout_ms)
        return self._joined(updated)

    @staticmethod
    def _joined(member: ConsumerMember) -> JoinResult:
        return JoinResult(errors.NONE, member.member_id, member.member_epoch,
                          CONSUMER_PROTOCOL_TYPE, member.classic.protocol_name, leader="")

    def _join_downgrading(self, group: ConsumerGroup, replaced: ConsumerMember,
                          member: ConsumerMember, updated: ConsumerMember, owned,
                          writes: list) -> JoinResult:
        """A classic static member takes the place of the last consumer-protocol member: the
        group becomes classic.  Unless its subscription changed (then a rebalance sorts it
        out), it first takes the replaced member's place in the current assignment."""
        rebalance = set(updated.subscribed_topic_names) != \
            set(member.subscribed_topic_names) or group.assignment_epoch < group.group_epoch
        writes.append(records.member(group.group_id, updated))
        if not rebalance:
            group.target[updated.member_id] = group.target.get(replaced.member_id, {})
            updated = self.protocol.reconcile(group, updated, False, owned, writes)
            del group.members[updated.member_id]
        self.protocol.write(group, writes)
        migration.downgrade(self.coordinator, group, set(), updated, replaced,
                            rebalance=rebalance)
        return self._joined(updated)

    @staticmethod
    def _static(group: ConsumerGroup, holder: ConsumerMember | None, member_id: str,
                instance_id: str) -> ConsumerMember:
        if holder is None:
            raise ApiException(errors.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
        if holder.member_id != member_id:
            raise ApiException(errors.FENCED_INSTANCE_ID, (
                f"Static member {member_id} with instance id {instance_id} was fenced by "
                f"member {holder.member_id}."))
        return holder

    def _owned(self, subscription) -> dict[uuid.UUID, set[int]]:
        """The partitions the member's Subscription says it still owns, by topic id."""
        topics = self.coordinator.cluster.topics
        owned: dict[uuid.UUID, set[int]] = {}
        for entry in subscription.owned_partitions or ():
            if entry.topic in topics:
                owned.setdefault(topics[entry.topic].topic_id, set()).update(entry.partitions)
        return owned

    # -- SyncGroup, Heartbeat, LeaveGroup --------------------------------------------------------

    def _classic_member(self, group: ConsumerGroup, member_id: str, instance_id: str | None,
                        generation_id: int) -> ConsumerMember:
        member = _validate(group, member_id, instance_id)
        if not member.uses_classic:
            raise ApiException(errors.UNKNOWN_MEMBER_ID,
                               f"Member {member.member_id} does not use the classic protocol.")
        if generation_id != member.member_epoch:
            raise ApiException(errors.ILLEGAL_GENERATION, (
                f"The request generation id {generation_id} is not equal to the member epoch "
                f"{member.member_epoch} of member {member.member_id}."))
        return member

    def _rejoin(self, group: ConsumerGroup, member: ConsumerMember) -> ApiException:
        """The member must rejoin: it has until its rebalance timeout to do so."""
        self.protocol.arm_fence(group, member.member_id, TimerKind.JOIN,
                                member.rebalance_timeout_ms, if_absent=True)
        return ApiException(errors.REBALANCE_IN_PROGRESS, (
            f"A new rebalance is triggered in group {group.group_id} and member "
            f"{member.member_id} should rejoin to catch up."))

    def on_sync(self, group: ConsumerGroup, member_id: str, instance_id: str | None,
                generation_id: int, protocol_type: str | None, protocol_name: str | None,
                assignments: dict[str, bytes]) -> SyncResult:
        """A classic member's SyncGroup: the partitions it holds now (the server assigns, so
        what a member sends as assignments is not read)."""
        if group.is_empty:
            return SyncResult(errors.UNKNOWN_MEMBER_ID)
        try:
            member = self._classic_member(group, member_id, instance_id, generation_id)
            if protocol_type is not None and protocol_type != group.protocol_type:
                raise ApiException(errors.INCONSISTENT_GROUP_PROTOCOL)
            if protocol_name is not None and protocol_name != member.classic.protocol_name:
                raise ApiException(errors.INCONSISTENT_GROUP_PROTOCOL)
            if group.assignment_epoch > member.member_epoch and \
                    member.state is not MemberState.UNREVOKED_PARTITIONS:
                raise self._rejoin(group, member)
        except ApiException as exc:
            return SyncResult(exc.error_code)
        self.protocol.timers.cancel(TimerKey(TimerKind.SYNC, group.group_id, member.member_id))
        self.protocol.arm_session(group, member)
        names = {t.topic_id: name for name, t in self.coordinator.cluster.topics.items()}
        data = migration.assignment_bytes(member.assigned, names, member.classic.protocols[0][1])
        return SyncResult(errors.NONE, data, protocol_type, protocol_name)

    def on_heartbeat(self, group: ConsumerGroup, member_id: str, instance_id: str | None,
                     generation_id: int) -> int:
        """The error code of a classic Heartbeat (REBALANCE_IN_PROGRESS: rejoin)."""
        try:
            member = self._classic_member(group, member_id, instance_id, generation_id)
        except ApiException as exc:
            return exc.error_code
        self.protocol.arm_session(group, member)
        if member.member_epoch < group.assignment_epoch or \
                member.state is MemberState.UNREVOKED_PARTITIONS or \
                (member.state is MemberState.UNRELEASED_PARTITIONS and
                 not group.waiting_on_unreleased(member)):
            return self._rejoin(group, member).error_code
        return errors.NONE

    def on_leave(self, group: ConsumerGroup,
                 members: list[tuple[str, str | None]]) -> LeaveResult:
        """Each named member leaves (static members may be named by instance id alone)."""
        results: list[int] = []
        leaving: set[str] = set()
        for member_id, instance_id in members:
            try:
                member = _validate(group, member_id, instance_id,
                                   by_instance_only=member_id == UNKNOWN_MEMBER_ID)
            except ApiException as exc:
                results.append(exc.error_code)
                continue
            leaving.add(member.member_id)
            results.append(errors.NONE)
        self.protocol.fence(group, leaving)
        return LeaveResult(errors.NONE, results)

    # -- members leaving -------------------------------------------------------------------------

    def leaving(self, group: ConsumerGroup, member_ids: set[str]) -> bool:
        """Members of ``group`` are about to leave or be fenced: when only classic members
        would be left, the group becomes a classic group of them instead, if
        ``group.consumer.migration.policy`` allows (online downgrade).  True if it did."""
        if not migration.may_downgrade(group, member_ids,
                                       self.settings["group_consumer_migration_policy"],
                                       self.settings["group_max_size"]):
            return False
        migration.downgrade(self.coordinator, group, member_ids, None, None, rebalance=True)
        return True


def _validate(group: ConsumerGroup, member_id: str, instance_id: str | None, *,
              by_instance_only: bool = False) -> ConsumerMember:
    """The member a classic request names: by member id, or by instance id, which must be
    held by that member id (unless only the instance id is given)."""
    if instance_id is None:
        member = group.members.get(member_id)
        if member is None:
            raise ApiException(errors.UNKNOWN_MEMBER_ID, (
                f"Member {member_id} is not a member of group {group.group_id}."))
        return member
    member = group.static_member(instance_id)
    if member is None:
        raise ApiException(errors.UNKNOWN_MEMBER_ID, (
            f"Member with instance id {instance_id} is not a member of group "
            f"{group.group_id}."))
    if not by_instance_only and member.member_id != member_id:
        raise ApiException(errors.FENCED_INSTANCE_ID, (
            f"Static member {member_id} with instance id {instance_id} was fenced by member "
            f"{member.member_id}."))
    return member
