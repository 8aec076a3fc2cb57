"""A new-style group (Kafka's ``ModernGroup``): members, the group epoch, and the target
assignment the members move towards.

A new group starts at epoch 1.  Every change of a subscription, of the subscribed topics'
partitions, or of the membership bumps the group epoch; a heartbeat then computes a new target
assignment at that epoch (:attr:`assignment_epoch`), and each member reaches it at an epoch of
its own.  Its state is derived from those, as Kafka derives it; a type adds the states of its
own between Empty and Stable (a consumer group's Assigning and Reconciling).
"""

from __future__ import annotations

from typing import Generic, TypeVar

from mockbroker.core.groups.modern.member import ModernMember, Units

M = TypeVar("M", bound=ModernMember)


class ModernGroup(Generic[M]):
    """What every new-style group holds and what the shared parts (offsets, records, admin)
    ask of it (:class:`mockbroker.core.groups.Group`).  Subclasses set ``type`` and
    ``protocol_type`` and say what their :attr:`state` is."""

    type = ""
    protocol_type = ""

    def __init__(self, group_id: str, now_ms: int):
        self.group_id = group_id
        self.group_epoch = 1
        self.assignment_epoch = 0
        self.assignment_timestamp = 0
        #: the subscribed topics as last seen (id, name, partitions), to notice changes
        self.metadata_hash = 0
        self.members: dict[str, M] = {}
        #: member id -> {key: units}: what each member should end up with
        self.target: dict[str, Units] = {}
        self.offsets: dict = {}
        self.pending_offsets: dict = {}
        self.dead = False
        self.created_ms = now_ms

    # -- what the shared parts ask of a group (groups.Group) ------------------------------------

    @property
    def is_dead(self) -> bool:
        return self.dead

    @property
    def is_empty(self) -> bool:
        return not self.members

    @property
    def deletable_when_offsets_expire(self) -> bool:
        return not self.members

    def deleted(self, now_ms: int) -> None:
        self.dead = True

    def unloaded(self, now_ms: int) -> None:
        self.dead = True

    def converted(self, now_ms: int) -> None:
        self.dead = True

    def offset_expiry_base(self) -> tuple[bool, int | None]:
        return True, None

    def subscribed_topics(self) -> set[str] | None:
        return {t for m in self.members.values() for t in m.subscribed_topic_names}

    def may_expire_offset_of(self, topic: str) -> bool:
        return topic not in self.subscribed_topics()

    def consumes(self, topic: str, subscribed: set[str] | None = None) -> bool:
        return topic in (self.subscribed_topics() if subscribed is None else subscribed)

    # -- epochs ---------------------------------------------------------------------------------

    @property
    def assigning(self) -> bool:
        """The group epoch is ahead of the target's: a new target is due."""
        return self.group_epoch > self.assignment_epoch


def assignment_by_name(coordinator, parts) -> dict[str, list[int]]:
    """{topic name: sorted partitions} of an assignment kept by topic id (for the observers);
    a topic deleted since is left out."""
    by_id = coordinator.cluster.topics_by_id
    return {by_id[t].name: sorted(ps) for t, ps in sorted(
        parts.items(), key=lambda kv: by_id[kv[0]].name if kv[0] in by_id else "")
        if t in by_id and ps}
