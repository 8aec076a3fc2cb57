"""The heartbeat machinery every new-style group type shares (Kafka's ``GroupMetadataManager``
around its ``ModernGroup``): subscriptions by topic name or regular expression, the hash of
the subscribed topics that asks for a new target assignment, a new target at most once per
assignment interval, members leaving or fenced, and the session timers.

A type's protocol subclasses :class:`ModernProtocol` and gives it the rest: ``records`` (its
records module: ``group_epoch``, ``target_member``, ``target_epoch``, ``member_tombstones``),
``settings_prefix`` (its broker settings, ``group.consumer.*`` or ``group.share.*``), and
:meth:`ModernProtocol.compute_target` (its assignor).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Iterable

from mockbroker.core.errors import ApiException
from mockbroker.core.groups.modern.group import ModernGroup
from mockbroker.core.groups.modern.member import ModernMember, Units
from mockbroker.core.groups.modern.regex import compile_topic_regex
from mockbroker.core.groups.records import append as append_records
from mockbroker.core.groups.timers import TimerKey, TimerKind
from wire import errors

if TYPE_CHECKING:
    from mockbroker.core.groups.coordinator import GroupCoordinator


class ModernProtocol(ABC):
    #: the type's records module (see the module's docstring)
    records = None
    #: the type's broker settings: "group_consumer_" for ``group.consumer.*``
    settings_prefix = ""
    #: the timers a member of the type may have (its session, and the type's own)
    member_timers: tuple[TimerKind, ...] = (TimerKind.HEARTBEAT,)

    def __init__(self, coordinator: "GroupCoordinator"):
        self.coordinator = coordinator

    @property
    def now(self) -> int:
        return self.coordinator.now

    @property
    def settings(self) -> dict:
        return self.coordinator.settings

    @property
    def timers(self):
        return self.coordinator.timers

    def setting(self, name: str):
        """The type's broker setting ``name`` (``session_timeout_ms``: its session timeout)."""
        return self.settings[self.settings_prefix + name]

    # -- subscriptions ----------------------------------------------------------------------------

    def subscribed_names(self, member: ModernMember) -> set[str]:
        """The topics the member subscribes to, by name and by its regex (if its type has one)
        matched against the topics there are now."""
        names = set(member.subscribed_topic_names)
        regex = getattr(member, "subscribed_topic_regex", None)
        if regex:
            pattern = compile_topic_regex(regex)
            names |= {t for t, topic in self.coordinator.cluster.topics.items()
                      if not topic.internal and pattern.fullmatch(t)}
        return names

    def subscribed_ids(self, member: ModernMember) -> set:
        topics = self.coordinator.cluster.topics
        return {topics[n].topic_id for n in self.subscribed_names(member) if n in topics}

    def metadata_hash(self, group: ModernGroup) -> int:
        """What the group's subscribed topics look like now: a change (a topic created or
        deleted, partitions added) asks for a new target assignment, as Kafka's metadata hash
        does."""
        topics = self.coordinator.cluster.topics
        names = set().union(*(self.subscribed_names(m) for m in group.members.values()))
        seen = tuple(sorted((n, topics[n].topic_id.int, len(topics[n].partitions))
                            for n in names if n in topics))
        return hash(seen) & ((1 << 63) - 1) if seen else 0

    def bump_if_changed(self, group: ModernGroup, subscription_changed: bool,
                        writes: list) -> None:
        """A new group epoch when a subscription or the subscribed topics changed."""
        metadata_hash = self.metadata_hash(group)
        if subscription_changed or metadata_hash != group.metadata_hash:
            group.group_epoch += 1
            group.metadata_hash = metadata_hash
            writes.append(self.records.group_epoch(group))

    # -- the target assignment --------------------------------------------------------------------

    @abstractmethod
    def compute_target(self, group: ModernGroup) -> dict[str, Units]:
        """The type's assignor: member id -> {key: units} for the group as it is now."""

    def maybe_new_target(self, group: ModernGroup, writes: list) -> bool:
        """A new target assignment at the group epoch, if one is due and the assignment
        interval allows (Kafka computes at most one per ``group.*.assignment.interval.ms``; a
        later heartbeat does).  True when one was computed."""
        if not group.assigning:
            return False
        interval = self.setting("assignment_interval_ms")
        if group.assignment_timestamp and interval and \
                self.now < group.assignment_timestamp + interval:
            return False
        target = self.compute_target(group)
        for member_id, parts in target.items():
            parts = {t: ps for t, ps in parts.items() if ps}
            if parts != group.target.get(member_id) or member_id not in group.target:
                writes.append(self.records.target_member(group.group_id, member_id, parts))
            target[member_id] = parts
        group.target = target
        group.assignment_epoch = group.group_epoch
        group.assignment_timestamp = self.now
        writes.append(self.records.target_epoch(group))
        return True

    # -- leaving, timeouts --------------------------------------------------------------------------

    def fence(self, group: ModernGroup, member_ids: Iterable[str]) -> None:
        """Members leave or are fenced: their records get tombstones and the group a new
        epoch; the next heartbeat of another member computes the new target.  What serves
        another protocol's members in the group may put a group of another type in its place
        instead (``coordinator.members_leaving``)."""
        member_ids = {m for m in member_ids if m in group.members}
        if not member_ids:
            return
        if self.coordinator.members_leaving(group, member_ids):
            return  # the group became a group of another type instead
        writes: list = []
        for member_id in member_ids:
            self.removed(group, group.members.pop(member_id))
            group.target.pop(member_id, None)
            self.cancel_timers(group, member_id)
            writes += self.records.member_tombstones(group.group_id, member_id)
        group.group_epoch += 1
        group.metadata_hash = self.metadata_hash(group)
        self.write(group, writes + [self.records.group_epoch(group)])

    def removed(self, group: ModernGroup, member: ModernMember) -> None:
        """A member left or was fenced (a type that holds more of it lets that go)."""

    def cancel_timers(self, group: ModernGroup, member_id: str) -> None:
        for kind in self.member_timers:
            self.timers.cancel(TimerKey(kind, group.group_id, member_id))

    def session_timeout_ms(self, group: ModernGroup, member: ModernMember) -> int:
        return self.setting("session_timeout_ms")

    def arm_session(self, group: ModernGroup, member: ModernMember) -> None:
        self.arm_fence(group, member.member_id, TimerKind.HEARTBEAT,
                       self.session_timeout_ms(group, member))

    def arm_fence(self, group: ModernGroup, member_id: str, kind: TimerKind, delay_ms: int, *,
                  if_absent: bool = False) -> None:
        """The member is fenced in ``delay_ms`` unless the timer is cancelled or replaced."""
        key = TimerKey(kind, group.group_id, member_id)
        if if_absent and key in self.timers:
            return

        def expire() -> None:
            if self.coordinator.is_live(group):
                self.fence(group, {member_id})

        self.timers.schedule(key, delay_ms, expire)

    def expire_member(self, group: ModernGroup, member_id: str) -> None:
        """As if the member's session had timed out (admin)."""
        self.fence(group, {member_id})

    @staticmethod
    def force_rebalance(group: ModernGroup) -> None:
        """Refused (admin): the coordinator computes the assignment, and nothing makes the
        members rebalance but a change of membership or of their topics."""
        raise ApiException(errors.INVALID_REQUEST,
                           f"group {group.group_id!r} is a {group.type} group: its members "
                           f"rebalance by themselves (expire one instead)")

    @staticmethod
    def known_member(group: ModernGroup, member_id: str, instance_id: str | None):
        """The member a heartbeat after joining (or a leave) names: by member id, or for a
        static member by instance id, which must still be held by that member id; refused in
        Kafka's words otherwise."""
        if instance_id is None:
            member = group.members.get(member_id)
            if member is None:
                raise ApiException(errors.UNKNOWN_MEMBER_ID, (
                    f"Member {member_id} is not a member of group {group.group_id}."))
            return member
        member = group.static_member(instance_id)
        if member is None:
            raise ApiException(errors.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
        if member.member_id != member_id:
            raise ApiException(errors.FENCED_INSTANCE_ID, (
                f"Static member {member_id} with instance id {instance_id} was fenced by member "
                f"{member.member_id}."))
        return member

    def validate_offset_fetch(self, group: ModernGroup, member_id: str | None,
                              member_epoch: int) -> None:
        """OffsetFetch v9+ from a member (a member id, or an epoch of 0 or more): it must be
        one, at its current epoch (Kafka's ``validateOffsetFetch``)."""
        if member_id is None and member_epoch < 0:
            return
        member = group.members.get(member_id or "")
        if member is None:
            raise ApiException(errors.UNKNOWN_MEMBER_ID, (
                f"Member {member_id} is not a member of group {group.group_id}."))
        if member_epoch != member.member_epoch:
            code, what = self.stale_fetch(member)
            raise ApiException(code, (
                f"The received {what} {member_epoch} does not match the expected member "
                f"epoch {member.member_epoch}."))

    @staticmethod
    def stale_fetch(member) -> tuple[int, str]:
        """The error and the word for an OffsetFetch at another epoch than the member's."""
        return errors.STALE_MEMBER_EPOCH, "member epoch"

    def loaded(self, group: ModernGroup) -> None:
        """A new coordinator gives every member a fresh session."""
        for member in group.members.values():
            self.arm_session(group, member)

    def write(self, group: ModernGroup, entries: list) -> None:
        partition = self.coordinator.placement.partition(group.group_id)
        append_records(partition, self.now, entries)
        self.coordinator.cluster.notify_append(partition)
