"""A KIP-932 share group (Kafka's ``ShareGroup``) and its members (``ShareGroupMember``).

A share group is a new-style group (:class:`~mockbroker.core.groups.modern.group.ModernGroup`)
without revocation: several members may hold one partition, so a member takes its target at
once, at the target's epoch, and the group is only ever Empty or Stable (or Dead).  Beside its
members it keeps which partitions have a share state yet (Kafka's
``ShareGroupStatePartitionMetadata``): the assignor hands out only initialized partitions.
"""

from __future__ import annotations

import uuid
from enum import Enum

from mockbroker.core.groups.modern.group import ModernGroup
from mockbroker.core.groups.modern.member import ModernMember

#: a share member's state byte in its records (Kafka's MemberState.STABLE): it never waits
STABLE = 0


class ShareGroupState(str, Enum):
    EMPTY = "Empty"
    STABLE = "Stable"
    DEAD = "Dead"


class ShareMember(ModernMember):
    """A member: its epochs, client, subscribed topic names and assigned partitions (each at
    the epoch it got it)."""

    state: int = STABLE


class ShareGroup(ModernGroup[ShareMember]):
    type = "share"
    protocol_type = "share"

    def __init__(self, group_id: str, now_ms: int):
        super().__init__(group_id, now_ms)
        self.assignment_epoch = 1  # Kafka's initial target assignment of a share group
        #: topic id -> the partitions whose share state is initialized / being initialized
        self.initialized: dict[uuid.UUID, set[int]] = {}
        self.initializing: dict[uuid.UUID, set[int]] = {}
        #: topic ids whose share state is being deleted
        self.deleting: set[uuid.UUID] = set()
        #: topic id -> name, for the partition metadata record
        self.topic_names: dict[uuid.UUID, str] = {}

    @property
    def state(self) -> ShareGroupState:
        if self.dead:
            return ShareGroupState.DEAD
        return ShareGroupState.STABLE if self.members else ShareGroupState.EMPTY

    def owners(self) -> dict[tuple[uuid.UUID, int], set[str]]:
        """(topic id, partition) -> the members it is assigned to."""
        out: dict[tuple[uuid.UUID, int], set[str]] = {}
        for member in self.members.values():
            for topic, ps in member.assigned.items():
                for p in ps:
                    out.setdefault((topic, p), set()).add(member.member_id)
        return out
