"""Online migration between the two group types (KIP-848's upgrade and downgrade), as Kafka
4.x's ``GroupMetadataManager`` does it under ``group.consumer.migration.policy``.

**Upgrade.** The first ConsumerGroupHeartbeat to a classic group with members turns it into a
consumer group: every classic member becomes a member of the consumer group that keeps using
the classic protocol, Stable at the classic generation with the partitions its last
SyncGroup gave it, and that generation becomes the group epoch and the target assignment's
epoch.  The joining member then bumps the epoch like any new member, and the classic members
learn of the new target through REBALANCE_IN_PROGRESS on their next Heartbeat.

**Downgrade.** When the last member of the consumer protocol leaves (or is fenced, or a classic
static member takes its place) and only classic members remain, the group becomes a classic
group again: Stable at the group epoch, each member holding its target assignment, and a
classic rebalance starts right away.

Both write what Kafka writes: tombstones for the old type's records and the new type's records.

**Empty groups.** A member of either protocol joining an empty group of the other type replaces
it with an empty group of its own type, under any policy; the committed offsets stay.  The
table routes a ConsumerGroupHeartbeat joining a classic group to :class:`Upgrade`; a JoinGroup
to an empty consumer group is :class:`~.classic_members.ClassicMembers`'.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Mapping

from mockbroker.core.errors import ApiException
from mockbroker.core.groups.classic import records as classic_records
from mockbroker.core.groups.classic.group import ClassicGroup, Member
from mockbroker.core.groups.classic.state import GroupState
from mockbroker.core.groups.classic_api import CONSUMER_PROTOCOL_TYPE
from mockbroker.core.groups.consumer import records
from mockbroker.core.groups.consumer.group import ConsumerGroup
from mockbroker.core.groups.consumer.member import ClassicMetadata, ConsumerMember, MemberState
from wire import WireError, decode_embedded, embedded_codec, encode_embedded, errors

if TYPE_CHECKING:
    from mockbroker.core.groups.consumer.protocol import Heartbeat
    from mockbroker.core.groups.coordinator import GroupCoordinator

#: the newest ConsumerProtocolAssignment version we write
ASSIGNMENT_VERSION = 3


def upgrade_enabled(policy: str) -> bool:
    return policy.lower() in ("upgrade", "bidirectional")


def downgrade_enabled(policy: str) -> bool:
    return policy.lower() in ("downgrade", "bidirectional")


def assignment_bytes(partitions: Mapping[uuid.UUID, object], names: Mapping[uuid.UUID, str],
                     metadata: bytes) -> bytes:
    """``partitions`` (topic id -> partitions) as a ConsumerProtocolAssignment in the version
    of the member's own Subscription, as Kafka answers a classic member."""
    version = min(max(int.from_bytes(bytes(metadata)[:2], "big", signed=True), 0),
                  ASSIGNMENT_VERSION)
    cls = embedded_codec("ConsumerProtocolAssignment", version).cls
    value = cls(assigned_partitions=[
        cls.TopicPartition(topic=names[t], partitions=sorted(ps))
        for t, ps in sorted(partitions.items(), key=lambda kv: names.get(kv[0], ""))
        if t in names], user_data=None)
    return encode_embedded("ConsumerProtocolAssignment", version, value)


# -- upgrade ----------------------------------------------------------------------------------


class Upgrade:
    """A ConsumerGroupHeartbeat joining a classic group (the table routes it here): an empty
    group is replaced by a consumer group, one with members is upgraded online."""

    def __init__(self, coordinator: "GroupCoordinator"):
        self.coordinator = coordinator

    def on_join(self, shard, group: ClassicGroup, req: "Heartbeat") -> ConsumerGroup:
        """The consumer group the joining member joins, in ``group``'s place."""
        coordinator = self.coordinator
        protocol = coordinator.consumer
        if group.is_empty:  # becomes a consumer group, keeping its committed offsets
            fresh = ConsumerGroup(group.group_id, coordinator.now)
            coordinator.replace_group(shard, group, fresh)
            protocol.write(fresh, [records.group_epoch(fresh)])
            return fresh
        # members waiting in its rebalance are told to rejoin, and every member keeps its
        # partitions and carries on under the classic protocol
        check_upgrade(group, coordinator.settings["group_consumer_migration_policy"],
                      coordinator.settings["group_consumer_max_size"])
        topic_ids = {name: t.topic_id for name, t in coordinator.cluster.topics.items()}
        fresh, entries = to_consumer(group, topic_ids, coordinator.now)
        fresh.metadata_hash = protocol.metadata_hash(fresh)
        group.answer_waiting(errors.REBALANCE_IN_PROGRESS)
        coordinator.replace_group(shard, group, fresh, entries)
        for member in fresh.members.values():
            protocol.arm_session(fresh, member)
        return fresh



def check_upgrade(group: ClassicGroup, policy: str, max_size: int) -> None:
    """Kafka's validateOnlineUpgrade: GROUP_ID_NOT_FOUND saying why the group cannot become
    a consumer group."""
    gid = group.group_id
    if not upgrade_enabled(policy):
        raise ApiException(errors.GROUP_ID_NOT_FOUND, (
            f"Cannot upgrade classic group {gid} to consumer group because online upgrade is "
            f"disabled."))
    if group.protocol_type != CONSUMER_PROTOCOL_TYPE:
        raise ApiException(errors.GROUP_ID_NOT_FOUND, (
            f"Cannot upgrade classic group {gid} to consumer group because the group does not "
            f"use the consumer embedded protocol."))
    if len(group.members) > max_size:
        raise ApiException(errors.GROUP_ID_NOT_FOUND, (
            f"Cannot upgrade classic group {gid} to consumer group because the group size "
            f"exceeds the consumer group maximum size."))


def to_consumer(group: ClassicGroup, topic_ids: Mapping[str, uuid.UUID],
                now_ms: int) -> tuple[ConsumerGroup, list]:
    """The consumer group a classic group becomes, and the records that say so (the classic
    group's tombstone first).  The classic group itself is left as it was."""
    gid = group.group_id
    fresh = ConsumerGroup(gid, now_ms)
    fresh.group_epoch = fresh.assignment_epoch = group.generation_id
    for m in group.members.values():
        try:
            assigned = _read_assignment(m.assignment, topic_ids)
            protocol = group.protocol_name or m.protocols[0][0]
            subscription = decode_embedded("ConsumerProtocolSubscription",
                                           bytes(m.metadata(protocol)))[1]
        except _CustomAssignor:
            raise ApiException(errors.GROUP_ID_NOT_FOUND, (
                f"Cannot upgrade classic group {gid} to consumer group because an unsupported "
                f"custom assignor is in use. Please refer to the documentation or switch to a "
                f"default assignor before re-attempting the upgrade.")) from None
        except (WireError, KeyError, IndexError):
            raise ApiException(errors.GROUP_ID_NOT_FOUND, (
                f"Cannot upgrade classic group {gid} to consumer group because the embedded "
                f"consumer protocol is malformed.")) from None
        epoch = group.generation_id
        fresh.members[m.member_id] = ConsumerMember(
            m.member_id, instance_id=m.group_instance_id, rack_id=subscription.rack_id,
            client_id=m.client_id, client_host=m.client_host,
            subscribed_topic_names=list(subscription.topics),
            rebalance_timeout_ms=m.rebalance_timeout_ms, member_epoch=epoch,
            previous_member_epoch=epoch, state=MemberState.STABLE,
            assigned={t: {p: epoch for p in ps} for t, ps in assigned.items()},
            classic=ClassicMetadata(m.session_timeout_ms, tuple(m.protocols)))
        fresh.target[m.member_id] = {t: set(ps) for t, ps in assigned.items()}
    entries = [classic_records.group_tombstone(gid)]
    entries += [records.member(gid, m) for m in fresh.members.values()]
    entries.append(records.group_epoch(fresh))
    entries += [records.target_member(gid, mid, parts) for mid, parts in fresh.target.items()]
    entries.append(records.target_epoch(fresh))
    entries += [records.current_assignment(gid, m) for m in fresh.members.values()]
    return fresh, entries


class _CustomAssignor(Exception):
    """An assignment carries user data, which a consumer group would lose."""


def _read_assignment(data: bytes, topic_ids: Mapping[str, uuid.UUID]) -> dict[uuid.UUID, set]:
    if not data:
        return {}  # joined but never synced
    assignment = decode_embedded("ConsumerProtocolAssignment", bytes(data))[1]
    if assignment.user_data:
        raise _CustomAssignor()
    out: dict[uuid.UUID, set[int]] = {}
    for entry in assignment.assigned_partitions:
        if entry.topic in topic_ids:
            out.setdefault(topic_ids[entry.topic], set()).update(entry.partitions)
    return out


# -- downgrade --------------------------------------------------------------------------------


def downgrade(coordinator: "GroupCoordinator", group: ConsumerGroup, leaving: set[str],
              joining: ConsumerMember | None, replaced: ConsumerMember | None, *,
              rebalance: bool) -> None:
    """The group becomes a classic group of its classic members (and ``joining``, a classic
    static member taking ``replaced``'s place); a classic rebalance follows when
    ``rebalance``."""
    names = {t.topic_id: name for name, t in coordinator.cluster.topics.items()}
    classic, entries = to_classic(
        group, leaving, joining, replaced.member_id if replaced else None, names,
        coordinator.now)
    shard = coordinator.shard_of(group.group_id)
    coordinator.replace_group(shard, group, classic, entries)
    coordinator.classic.adopt(classic, rebalance=rebalance)



def may_downgrade(group: ConsumerGroup, leaving: set[str], policy: str, max_size: int) -> bool:
    """Kafka's validateOnlineDowngradeWithFencedMembers: once ``leaving`` (member ids) are
    gone, only classic members are left, at least one and no more than a classic group may
    hold, and the policy allows a downgrade."""
    remaining = [m for m in group.members.values() if m.member_id not in leaving]
    return bool(remaining) and all(m.uses_classic for m in remaining) and \
        downgrade_enabled(policy) and len(remaining) <= max_size


def may_downgrade_replacing(group: ConsumerGroup, replaced: ConsumerMember, policy: str,
                            max_size: int) -> bool:
    """Kafka's validateOnlineDowngradeWithReplacedMember: a classic static member takes the
    place of the group's last member of the consumer protocol."""
    return not replaced.uses_classic and downgrade_enabled(policy) and \
        len(group.members) <= max_size and \
        all(m.uses_classic for m in group.members.values() if m is not replaced)


def to_classic(group: ConsumerGroup, leaving: set[str], joining: ConsumerMember | None,
               replaced_id: str | None, names: Mapping[uuid.UUID, str],
               now_ms: int) -> tuple[ClassicGroup, list]:
    """The classic group a consumer group becomes once ``leaving`` are gone (and ``joining``,
    a classic static member, has taken the place of ``replaced_id``), with the records that
    say so.  It is Stable at the group epoch, each member holding its target assignment; the
    caller starts the rebalance."""
    gid = group.group_id
    entries: list = []
    for member_id in group.members:
        entries += records.member_tombstones(gid, member_id)
    if joining is not None and joining.member_id not in group.members:
        entries += records.member_tombstones(gid, joining.member_id)
    entries += records.group_tombstones(gid)
    classic = ClassicGroup(gid, now_ms)
    classic.generation_id = group.group_epoch
    staying = [m for m in group.members.values()
               if m.member_id not in leaving and m.member_id != replaced_id]
    if joining is not None:
        staying.append(joining)
    for m in staying:
        classic.add(Member(m.member_id, m.instance_id, m.client_id, m.client_host,
                           m.rebalance_timeout_ms, m.classic.session_timeout_ms,
                           CONSUMER_PROTOCOL_TYPE, list(m.classic.protocols)), None)
    classic.protocol_name = classic.select_protocol()
    for member in classic.members.values():
        source = member.member_id
        if joining is not None and replaced_id is not None and source == joining.member_id:
            source = replaced_id  # it takes over the replaced member's assignment
        member.assignment = assignment_bytes(group.target.get(source, {}), names,
                                             member.metadata(classic.protocol_name))
    classic.state = classic.previous_state = GroupState.STABLE
    entries.append(classic_records.group_metadata_record(classic, classic.assignments(), now_ms))
    return classic, entries
