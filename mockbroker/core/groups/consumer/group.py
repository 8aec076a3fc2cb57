"""A KIP-848 consumer group (Kafka's ``ConsumerGroup``): its members, the group epoch, and the
target assignment the members reconcile towards.

The group's state is derived, as Kafka derives it: Empty with no members, Assigning while the
group epoch is ahead of the target assignment's, Reconciling while a member has not reached
the target, else Stable.  Its epochs, members and target are those of every new-style group
(:class:`~mockbroker.core.groups.modern.group.ModernGroup`).
"""

from __future__ import annotations

import uuid
from enum import Enum

from mockbroker.core.groups.classic_api import CONSUMER_PROTOCOL_TYPE
from mockbroker.core.groups.consumer.member import ConsumerMember, MemberState
from mockbroker.core.groups.modern.group import ModernGroup


class ConsumerGroupState(str, Enum):
    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


class ConsumerGroup(ModernGroup[ConsumerMember]):
    type = "consumer"
    protocol_type = CONSUMER_PROTOCOL_TYPE

    @property
    def state(self) -> ConsumerGroupState:
        if self.dead:
            return ConsumerGroupState.DEAD
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.assigning:
            return ConsumerGroupState.ASSIGNING
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

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
