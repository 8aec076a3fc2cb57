"""A KIP-848 consumer group (Kafka's ``ConsumerGroup``): its members, the group epoch, and the
target assignment the members reconcile towards.

The group's state is derived, as Kafka derives it: Empty with no members, Assigning while the
group epoch is ahead of the target assignment's, Reconciling while a member has not reached
the target, else Stable.  A new group starts at epoch 1; every change of a subscription, of the
subscribed topics' partitions, or of the membership bumps it, and the next heartbeat computes
a new target assignment at that epoch.
"""

from __future__ import annotations

import uuid
from enum import Enum

from mockbroker.core.groups.classic_api import CONSUMER_PROTOCOL_TYPE
from mockbroker.core.groups.consumer.member import ConsumerMember, MemberState


class ConsumerGroupState(str, Enum):
    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


class ConsumerGroup:
    type = "consumer"
    protocol_type = CONSUMER_PROTOCOL_TYPE

    def __init__(self, group_id: str, now_ms: int):
        self.group_id = group_id
        self.group_epoch = 1
        self.assignment_epoch = 0
        self.assignment_timestamp = 0
        #: the subscribed topics as last seen (id, name, partitions), to notice changes
        self.metadata_hash = 0
        self.members: dict[str, ConsumerMember] = {}
        #: member id -> {topic id: partitions}: what each member should end up with
        self.target: dict[str, dict[uuid.UUID, set[int]]] = {}
        self.offsets: dict = {}
        self.pending_offsets: dict = {}
        self.dead = False
        self.created_ms = now_ms

    # -- what the shared parts ask of a group (groups.Group) ------------------------------------

    @property
    def state(self) -> ConsumerGroupState:
        if self.dead:
            return ConsumerGroupState.DEAD
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

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

    # -- ownership ----------------------------------------------------------------------------

    def owner_epochs(self) -> dict[tuple[uuid.UUID, int], int]:
        """(topic id, partition) -> the epoch of the member owning it (assigned or pending
        revocation)."""
        owners: dict[tuple[uuid.UUID, int], int] = {}
        for member in self.members.values():
            for parts in (member.assigned, member.pending_revocation):
                for topic, ps in parts.items():
                    for p in ps:
                        owners[(topic, p)] = member.member_epoch
        return owners

    def static_member(self, instance_id: str) -> ConsumerMember | None:
        for member in self.members.values():
            if member.instance_id == instance_id:
                return member
        return None

    def preferred_assignor(self, default: str) -> str:
        """The server assignor most members name, else the default (Kafka's choice)."""
        counts: dict[str, int] = {}
        for member in self.members.values():
            if member.server_assignor:
                counts[member.server_assignor] = counts.get(member.server_assignor, 0) + 1
        return max(counts, key=lambda name: counts[name]) if counts else default

    # -- members of the classic protocol --------------------------------------------------------

    def classic_members(self) -> list[ConsumerMember]:
        return [m for m in self.members.values() if m.uses_classic]

    def supports_classic_protocols(self, protocol_type: str, names: set[str]) -> bool:
        """Whether a classic member with these protocols may join: of the consumer protocol
        type, and sharing a protocol with every classic member already in."""
        if protocol_type != self.protocol_type or not names:
            return False
        classic = self.classic_members()
        if not self.members or not classic:
            return True
        return any(all(name in {n for n, _ in m.classic.protocols} for m in classic)
                   for name in names)

    def waiting_on_unreleased(self, member: ConsumerMember) -> bool:
        """Whether a partition of the member's target is still owned by another member."""
        if member.state is not MemberState.UNRELEASED_PARTITIONS:
            return False
        owners = self.owner_epochs()
        return any(p not in member.assigned.get(topic, {}) and (topic, p) in owners
                   for topic, ps in self.target.get(member.member_id, {}).items() for p in ps)

    def unrevoked(self) -> list[ConsumerMember]:
        return [m for m in self.members.values()
                if m.state is MemberState.UNREVOKED_PARTITIONS]
