"""ShareGroupHeartbeat and ShareGroupDescribe as Kafka 4.x's group coordinator answers them
(``GroupMetadataManager``): joining at epoch 0, heartbeating, leaving at -1, the ``simple``
assignor over the partitions whose share state is initialized, and the records every change
writes.

A share partition gets its state from the share coordinator before it may be assigned: a
heartbeat that finds subscribed partitions without one records them as initializing and asks
the share coordinator (``coordinator.share_states``) to initialize them once it has answered,
as Kafka does after its heartbeat's write; the next heartbeat finds them initialized, bumps the
group epoch and assigns them.  So a new member learns its partitions on its second heartbeat,
as on Kafka.
"""

from __future__ import annotations

import uuid

from msgspec import Struct

from mockbroker.core.errors import ApiException
from mockbroker.core.groups.modern.protocol import ModernProtocol
from mockbroker.core.groups.share import records
from mockbroker.core.groups.share.assignor import NAME as ASSIGNOR, AssignorError, MemberSpec, \
    assign
from mockbroker.core.groups.share.group import ShareGroup, ShareMember
from wire import errors

LEAVE = -1
#: the name of the protocol whose requests this module serves, as the table routes them
SHARE = ShareGroup.type


class Heartbeat(Struct):
    """A ShareGroupHeartbeat as the coordinator reads it (None: unchanged)."""

    group_id: str
    member_id: str
    member_epoch: int
    rack_id: str | None = None
    subscribed_topic_names: list[str] | None = None
    client_id: str = ""
    client_host: str = ""


class ShareOffsets(Struct):
    """A partition of DescribeShareGroupOffsets' answer (-1: not known)."""

    topic: str
    topic_id: uuid.UUID | None
    partition: int
    start_offset: int = -1
    leader_epoch: int = -1
    lag: int = -1


class HeartbeatResult(Struct):
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    #: topic id -> partitions, when the member is told its assignment
    assignment: dict[uuid.UUID, list[int]] | None = None


def _invalid(message: str) -> ApiException:
    return ApiException(errors.INVALID_REQUEST, message)


class ShareProtocol(ModernProtocol):
    records = records
    settings_prefix = "group_share_"

    # -- the heartbeat --------------------------------------------------------------------------

    @staticmethod
    def validate(req: Heartbeat) -> None:
        """Kafka's checks of a heartbeat before it looks at the group."""
        if not req.member_id.strip():
            raise _invalid("MemberId can't be empty.")
        if not req.group_id.strip():
            raise _invalid("GroupId can't be empty.")
        if req.rack_id is not None and not req.rack_id.strip():
            raise _invalid("RackId can't be empty.")
        if req.member_epoch == 0:
            if not req.subscribed_topic_names:
                raise _invalid("SubscribedTopicNames must be set in first request.")
        elif req.member_epoch < LEAVE:
            raise _invalid("MemberEpoch is invalid.")

    def heartbeat(self, broker_id: int, req: Heartbeat) -> HeartbeatResult:
        """One ShareGroupHeartbeat on ``broker_id``; ApiException for a refusal."""
        self.validate(req)
        shard = self.coordinator.shard_for(req.group_id, broker_id)
        if req.member_epoch == LEAVE:
            group = self._group(shard, req.group_id, create=False)
            member = self._member(group, req.member_id, create=False)
            self.fence(group, {member.member_id})
            return HeartbeatResult(member_id=req.member_id, member_epoch=LEAVE)
        group = self._group(shard, req.group_id, create=req.member_epoch == 0)
        limit = self.setting("max_size")
        if len(group.members) >= limit and req.member_id not in group.members:
            raise ApiException(errors.GROUP_MAX_SIZE_REACHED, (
                f"The share group has reached its maximum capacity of {limit} members."))
        member = self._member(group, req.member_id, create=req.member_epoch == 0)
        self._check_epoch(member, req.member_epoch)
        new_member = member.member_id not in group.members
        updated = _copy(member)
        if req.rack_id is not None:
            updated.rack_id = req.rack_id
        if req.subscribed_topic_names is not None:
            updated.subscribed_topic_names = sorted(set(req.subscribed_topic_names))
        updated.client_id, updated.client_host = req.client_id, req.client_host
        writes: list = []
        subscription_changed = new_member or \
            set(updated.subscribed_topic_names) != set(member.subscribed_topic_names)
        if new_member or _metadata(updated) != _metadata(member):
            writes.append(records.member(group.group_id, updated))
        group.members[updated.member_id] = updated
        if not subscription_changed and not group.assigning and \
                self._initialized_unassigned(group):
            subscription_changed = True  # newly initialized partitions to hand out
        self.bump_if_changed(group, subscription_changed, writes)
        self.maybe_new_target(group, writes)
        updated = self._reconcile(group, updated, subscription_changed or new_member, writes)
        to_initialize = self._to_initialize(group, writes)
        self.write(group, writes)
        self.arm_session(group, updated)
        if to_initialize:
            self._initialize_later(group, to_initialize)
        full = req.subscribed_topic_names is not None
        changed = updated.assigned != member.assigned
        return HeartbeatResult(
            member_id=updated.member_id, member_epoch=updated.member_epoch,
            heartbeat_interval_ms=self.setting("heartbeat_interval_ms"),
            assignment={t: sorted(ps) for t, ps in updated.assigned.items()}
            if req.member_epoch == 0 or full or changed else None)

    def _group(self, shard, group_id: str, *, create: bool) -> ShareGroup:
        group = shard.groups.get(group_id)
        if group is not None and not group.is_dead and group.type != SHARE:
            raise ApiException(errors.GROUP_ID_NOT_FOUND,
                               f"Group {group_id} is not a share group.")
        if group is None or group.is_dead:
            if not create:
                raise ApiException(errors.GROUP_ID_NOT_FOUND,
                                   f"Share group {group_id} not found.")
            group = shard.groups[group_id] = ShareGroup(group_id, self.now)
        return group

    @staticmethod
    def _member(group: ShareGroup, member_id: str, *, create: bool) -> ShareMember:
        member = group.members.get(member_id)
        if member is None:
            if not create:
                raise ApiException(errors.UNKNOWN_MEMBER_ID, (
                    f"Member {member_id} is not a member of group {group.group_id}."))
            member = ShareMember(member_id, previous_member_epoch=-1)
        return member

    @staticmethod
    def _check_epoch(member: ShareMember, epoch: int) -> None:
        if epoch == 0:
            return
        if epoch > member.member_epoch:
            raise ApiException(errors.FENCED_MEMBER_EPOCH, (
                f"The share group member has a greater member epoch ({epoch}) than the one "
                f"known by the group coordinator ({member.member_epoch}). The member must "
                f"abandon all its partitions and rejoin."))
        if epoch < member.member_epoch and epoch != member.previous_member_epoch:
            raise ApiException(errors.FENCED_MEMBER_EPOCH, (
                f"The share group member has a smaller member epoch ({epoch}) than the one "
                f"known by the group coordinator ({member.member_epoch}), and it does not "
                f"match the previous member epoch ({member.previous_member_epoch}). The "
                f"member must abandon all its partitions and rejoin."))

    def _reconcile(self, group: ShareGroup, member: ShareMember, subscription_changed: bool,
                   writes: list) -> ShareMember:
        """A share member takes its target at once (nothing to revoke: partitions are
        shared), limited to the topics it subscribes to now."""
        epoch = group.assignment_epoch
        if member.member_epoch == epoch and not subscription_changed:
            return member
        subscribed = self.subscribed_ids(member)
        target = group.target.get(member.member_id, {})
        assigned = {t: {p: epoch for p in ps} for t, ps in target.items() if t in subscribed}
        updated = _copy(member)
        if member.member_epoch != epoch:
            updated.previous_member_epoch = member.member_epoch
            updated.member_epoch = epoch
        updated.assigned = assigned
        if (updated.member_epoch, updated.previous_member_epoch, _parts(updated.assigned)) != \
                (member.member_epoch, member.previous_member_epoch, _parts(member.assigned)) \
                or member.member_id not in group.members or subscription_changed:
            writes.append(records.current_assignment(group.group_id, updated))
        group.members[updated.member_id] = updated
        return updated

    # -- the target assignment ------------------------------------------------------------------

    def compute_target(self, group: ShareGroup) -> dict:
        topics = self.coordinator.cluster.topics
        specs = [MemberSpec(m.member_id, frozenset(self.subscribed_ids(m)))
                 for m in group.members.values()]
        partitions = {topics[n].topic_id: len(topics[n].partitions)
                      for m in group.members.values() for n in self.subscribed_names(m)
                      if n in topics}
        try:
            return assign(specs, partitions,
                          lambda t, p: p in group.initialized.get(t, ()), group.target)
        except AssignorError as exc:
            raise ApiException(errors.UNKNOWN_SERVER_ERROR, (
                f"Failed to compute a new target assignment for epoch {group.group_epoch}: "
                f"{exc}")) from None

    @staticmethod
    def _initialized_unassigned(group: ShareGroup) -> bool:
        """Kafka's ``initializedAssignmentPending``: an initialized partition of a subscribed
        topic that the target does not hand out yet."""
        if not group.members or not group.initialized:
            return False
        subscribed = group.subscribed_topics()
        assigned: dict[uuid.UUID, set[int]] = {}
        for parts in group.target.values():
            for t, ps in parts.items():
                assigned.setdefault(t, set()).update(ps)
        return any(group.topic_names.get(t) in subscribed and assigned.get(t) != ps
                   for t, ps in group.initialized.items())

    # -- share state of the subscribed partitions -----------------------------------------------

    def _to_initialize(self, group: ShareGroup, writes: list) -> dict[uuid.UUID, set[int]]:
        """Subscribed partitions with no share state yet (nor one on its way): recorded as
        initializing, returned to be initialized."""
        topics = self.coordinator.cluster.topics
        wanted: dict[uuid.UUID, set[int]] = {}
        for name in sorted(group.subscribed_topics()):
            topic = topics.get(name)
            if topic is None or topic.internal:
                continue
            have = group.initialized.get(topic.topic_id, set()) | \
                group.initializing.get(topic.topic_id, set())
            missing = set(range(len(topic.partitions))) - have
            if missing:
                wanted[topic.topic_id] = missing
                group.topic_names[topic.topic_id] = name
        if wanted:
            for t, ps in wanted.items():
                group.initializing.setdefault(t, set()).update(ps)
            group.deleting -= set(wanted)
            writes.append(records.partitions(group))
        return wanted

    def _initialize_later(self, group: ShareGroup, wanted: dict[uuid.UUID, set[int]]) -> None:
        """The share coordinator initializes the partitions after the heartbeat's answer (a
        timer of no delay, as Kafka schedules it), then the group records them
        initialized."""
        epoch = group.group_epoch

        def run() -> None:
            if not self.coordinator.is_live(group):
                return
            done: dict[uuid.UUID, set[int]] = {}
            for topic_id, partitions in wanted.items():
                for p in sorted(partitions):
                    try:
                        self.coordinator.share_states.initialize(group.group_id, topic_id, p,
                                                                 epoch)
                    except ApiException:
                        continue  # left initializing: a later heartbeat asks again
                    done.setdefault(topic_id, set()).add(p)
            self.initialized(group, done)

        self.coordinator.cluster.timers.call_later(0, run)

    def initialized(self, group: ShareGroup, done: dict[uuid.UUID, set[int]]) -> None:
        """Partitions whose share state now exists move from initializing to initialized."""
        if not done:
            return
        for topic_id, partitions in done.items():
            group.initialized.setdefault(topic_id, set()).update(partitions)
            left = group.initializing.get(topic_id, set()) - partitions
            if left:
                group.initializing[topic_id] = left
            else:
                group.initializing.pop(topic_id, None)
        self.write(group, [records.partitions(group)])

    # -- the admin APIs of share group offsets ---------------------------------------------------

    def offsets(self, broker_id: int, group_id: str,
                topics: list[tuple[str, list[int]]] | None) -> list[ShareOffsets]:
        """DescribeShareGroupOffsets for one group: each partition's start offset, leader
        epoch and lag as the share coordinator's summary gives them (-1 where the share
        partition has no start yet).  ``topics`` None: every partition with a share state.
        ApiException when this broker is not the group's coordinator."""
        shard = self.coordinator.shard_for(group_id, broker_id)
        cluster = self.coordinator.cluster
        if topics is None:
            group = shard.groups.get(group_id)
            if group is None or group.is_dead or group.type != SHARE:
                return []
            by_id = cluster.topics_by_id
            topics = [(by_id[t].name, sorted(ps)) for t, ps in sorted(
                group.initialized.items(), key=lambda kv: group.topic_names.get(kv[0], ""))
                if t in by_id]
        out = []
        for name, partitions in topics:
            topic = cluster.topics.get(name)
            for p in partitions:
                if topic is None:
                    out.append(ShareOffsets(name, None, p))
                    continue
                summary = self.coordinator.share_states.peek(group_id, topic.topic_id, p)
                entry = ShareOffsets(name, topic.topic_id, p)
                if summary is not None:
                    entry.start_offset, entry.leader_epoch = summary.start_offset, \
                        max(summary.leader_epoch, 0)
                    if summary.start_offset >= 0 and summary.delivery_complete_count >= 0 \
                            and p < len(topic.partitions):
                        entry.lag = topic.partitions[p].log.high_watermark - \
                            summary.start_offset - summary.delivery_complete_count
                out.append(entry)
        return out

    def alter_offsets(self, broker_id: int, group_id: str,
                      offsets: dict[uuid.UUID, dict[int, int]]
                      ) -> dict[tuple[uuid.UUID, int], int]:
        """AlterShareGroupOffsets: an empty share group (made if there is none) starts each
        partition's share state again at the offset given.  Returns the error of each
        partition that failed; ApiException for the whole request."""
        shard = self.coordinator.shard_for(group_id, broker_id)
        group = self._group(shard, group_id, create=True)
        if group.members:
            raise ApiException(errors.NON_EMPTY_GROUP, "The group is not empty.")
        failed: dict[tuple[uuid.UUID, int], int] = {}
        done: dict[uuid.UUID, set[int]] = {}
        by_id = self.coordinator.cluster.topics_by_id
        for topic_id, partitions in offsets.items():
            group.topic_names[topic_id] = by_id[topic_id].name
            for p, offset in partitions.items():
                if p >= len(by_id[topic_id].partitions):
                    failed[(topic_id, p)] = errors.UNKNOWN_TOPIC_OR_PARTITION
                    continue
                try:
                    self.coordinator.share_states.initialize(group_id, topic_id, p,
                                                             group.group_epoch, offset)
                except ApiException as exc:
                    failed[(topic_id, p)] = exc.error_code
                    continue
                self._forget_served(group_id, topic_id, p)
                done.setdefault(topic_id, set()).add(p)
        self.initialized(group, done)
        return failed

    def delete_offsets(self, broker_id: int, group_id: str, names: list[str]
                       ) -> dict[str, tuple[int, str | None]]:
        """DeleteShareGroupOffsets: the named topics' share state goes (an empty share group
        only).  Returns each topic's (error, message); ApiException for the whole request."""
        shard = self.coordinator.shard_for(group_id, broker_id)
        group = self._group(shard, group_id, create=False)
        if group.members:
            raise ApiException(errors.NON_EMPTY_GROUP, "The group is not empty.")
        topics = self.coordinator.cluster.topics
        out: dict[str, tuple[int, str | None]] = {}
        gone: set[uuid.UUID] = set()
        for name in names:
            topic = topics.get(name)
            if topic is None:
                out[name] = (errors.UNKNOWN_TOPIC_OR_PARTITION,
                             "This server does not host this topic-partition.")
            elif topic.topic_id not in group.initialized and \
                    topic.topic_id not in group.initializing:
                out[name] = (errors.UNKNOWN_TOPIC_OR_PARTITION,
                             "There is no offset information to delete.")
            else:
                gone.add(topic.topic_id)
                out[name] = (errors.NONE, None)
        if gone:
            self.forget_topics(group, gone)
        return out

    def deleting(self, group: ShareGroup) -> None:
        """DeleteGroups of an empty share group: every share state it has goes with it."""
        self.forget_topics(group, set(group.initialized) | set(group.initializing),
                           write=False)

    def forget_topics(self, group: ShareGroup, topic_ids: set[uuid.UUID], *,
                      write: bool = True) -> None:
        """The topics' share state goes, at the share coordinator and on the leaders."""
        for topic_id in topic_ids:
            for p in group.initialized.pop(topic_id, set()) | \
                    group.initializing.pop(topic_id, set()):
                try:
                    self.coordinator.share_states.delete(group.group_id, topic_id, p)
                except ApiException:
                    pass
                self._forget_served(group.group_id, topic_id, p)
        if write:
            self.write(group, [records.partitions(group)])

    def _forget_served(self, group_id: str, topic_id: uuid.UUID, partition: int) -> None:
        """A leader serving the share partition lets it go: the next fetch reads the state
        the share coordinator has now."""
        served = self.coordinator.share_partitions
        if served is not None:
            served.forget(group_id, topic_id, partition)

    # -- what the shared parts ask ----------------------------------------------------------------

    def validate_offset_commit(self, shard, group_id: str, group, member_id: str,
                               instance_id, generation: int, api_version: int, *,
                               transactional: bool = False):
        raise ApiException(errors.GROUP_ID_NOT_FOUND,
                           f"Group {group_id} is not a consumer group.")

    def validate_offset_fetch(self, group, member_id, member_epoch: int) -> None:
        """Kafka refuses the group and answers every partition with no offset: a share
        group has none to give."""


def _copy(member: ShareMember) -> ShareMember:
    return ShareMember(member.member_id, rack_id=member.rack_id, client_id=member.client_id,
                       client_host=member.client_host,
                       subscribed_topic_names=list(member.subscribed_topic_names),
                       member_epoch=member.member_epoch,
                       previous_member_epoch=member.previous_member_epoch,
                       assigned={t: dict(ps) for t, ps in member.assigned.items()},
                       state=member.state)


def _parts(assigned) -> dict:
    return {t: set(ps) for t, ps in assigned.items() if ps}


def _metadata(member: ShareMember) -> tuple:
    return (member.rack_id, member.client_id, member.client_host,
            tuple(member.subscribed_topic_names))


__all__ = ["ASSIGNOR", "Heartbeat", "HeartbeatResult", "ShareProtocol"]
