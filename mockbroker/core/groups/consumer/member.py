"""A consumer group member (Kafka's ``ConsumerGroupMember``) and its reconciliation (Kafka's
``CurrentAssignmentBuilder``): how a member moves from the partitions it owns to the ones the
group's target assignment gives it.

A member never owns a partition another member still owns: first it revokes what it must give
up (UNREVOKED_PARTITIONS, at its old epoch), then it takes the new epoch with the partitions that
are free, and waits (UNRELEASED_PARTITIONS) for those still held elsewhere, which it gets on a
later heartbeat once they are released.  Partitions are kept by topic id, each with the epoch at
which it was handed to the member.
"""

from __future__ import annotations

import uuid
from enum import IntEnum
from typing import Callable

from msgspec import Struct, field
from msgspec.structs import replace

from mockbroker.core.groups.modern.member import ModernMember

#: topic id -> {partition: the epoch at which the member got it}
Partitions = dict[uuid.UUID, dict[int, int]]


class ClassicMetadata(Struct, frozen=True):
    """What a member of the classic protocol (JoinGroup, SyncGroup) inside a consumer group
    sent when it joined: its session timeout and its protocols (assignor name, Subscription)."""

    session_timeout_ms: int
    protocols: tuple[tuple[str, bytes], ...]

    @property
    def protocol_name(self) -> str:
        """The protocol its JoinGroup and SyncGroup answers name: the first it listed."""
        return self.protocols[0][0]


class MemberState(IntEnum):
    """A member's reconciliation state; the value is the byte Kafka's records store."""

    STABLE = 0
    UNREVOKED_PARTITIONS = 1
    UNRELEASED_PARTITIONS = 2
    UNKNOWN = 127


class ConsumerMember(ModernMember):
    instance_id: str | None = None
    subscribed_topic_regex: str | None = None
    rebalance_timeout_ms: int = -1
    server_assignor: str | None = None
    state: MemberState = MemberState.STABLE
    pending_revocation: Partitions = field(default_factory=dict)
    #: set for a member that uses the classic protocol (JoinGroup and SyncGroup)
    classic: ClassicMetadata | None = None

    @property
    def uses_classic(self) -> bool:
        return self.classic is not None

    def copy(self, **changes) -> "ConsumerMember":
        fresh = replace(self, **changes)
        if "assigned" not in changes:
            fresh.assigned = {t: dict(ps) for t, ps in self.assigned.items()}
        if "pending_revocation" not in changes:
            fresh.pending_revocation = {t: dict(ps) for t, ps in self.pending_revocation.items()}
        if "subscribed_topic_names" not in changes:
            fresh.subscribed_topic_names = list(self.subscribed_topic_names)
        return fresh

    def is_reconciled_to(self, epoch: int) -> bool:
        return self.state is MemberState.STABLE and self.member_epoch == epoch

    def owned(self) -> Partitions:
        """Everything it holds: assigned and pending revocation."""
        out = {t: dict(ps) for t, ps in self.assigned.items()}
        for topic, ps in self.pending_revocation.items():
            out.setdefault(topic, {}).update(ps)
        return out


class Fenced(Exception):
    """The member's state cannot be reconciled: it must rejoin (FENCED_MEMBER_EPOCH)."""


def _owns_any(owned: dict[uuid.UUID, set[int]] | None, partitions: Partitions) -> bool:
    """Whether the client still reports owning any of ``partitions`` (None: it did not say)."""
    if owned is None:
        return True
    return any(p in owned.get(topic, ()) for topic, ps in partitions.items() for p in ps)


def reconcile(member: ConsumerMember, target_epoch: int, target: dict[uuid.UUID, set[int]],
              subscribed: set[uuid.UUID], subscription_changed: bool,
              owned: dict[uuid.UUID, set[int]] | None,
              owner_epoch: Callable[[uuid.UUID, int], int]) -> ConsumerMember:
    """The member after one step towards ``target`` at ``target_epoch``.  ``owned`` is what
    the client says it owns (None: not said); ``owner_epoch`` gives the epoch of the member
    that owns a partition now, or -1 when it is free."""
    state = member.state
    if state is MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return _next(member, target_epoch, target, subscribed, owned, owner_epoch)
        if subscription_changed:
            return _shrink_to_subscription(member, subscribed, owned)
        return member
    if state is MemberState.UNREVOKED_PARTITIONS:
        if _owns_any(owned, member.pending_revocation):
            return _shrink_to_subscription(member, subscribed, owned) \
                if subscription_changed else member
        return _next(member, target_epoch, target, subscribed, owned, owner_epoch)
    if state is MemberState.UNRELEASED_PARTITIONS:
        return _next(member, target_epoch, target, subscribed, owned, owner_epoch)
    if owned is None or any(owned.values()):
        raise Fenced("The consumer group member is in a unknown state. The member must abandon "
                     "all its partitions and rejoin.")
    return _next(member, target_epoch, target, subscribed, owned, owner_epoch)


def _next(member: ConsumerMember, target_epoch: int, target: dict[uuid.UUID, set[int]],
          subscribed: set[uuid.UUID], owned, owner_epoch) -> ConsumerMember:
    keep: Partitions = {}
    revoke: Partitions = {}
    add: dict[uuid.UUID, set[int]] = {}
    unreleased = False
    for topic in set(target) | set(member.assigned):
        wanted = target.get(topic, set()) if topic in subscribed else set()
        current = member.assigned.get(topic, {})
        kept = {p: e for p, e in current.items() if p in wanted}
        if kept:
            keep[topic] = kept
        gone = {p: e for p, e in current.items() if p not in wanted}
        if gone:
            revoke[topic] = gone
        mine_pending = member.pending_revocation.get(topic, {})
        for p in wanted - set(kept):
            if owner_epoch(topic, p) != -1 and p not in mine_pending:
                unreleased = True
            else:
                add.setdefault(topic, set()).add(p)
    if revoke and _owns_any(owned, revoke):
        return member.copy(state=MemberState.UNREVOKED_PARTITIONS,
                           previous_member_epoch=member.member_epoch, assigned=keep,
                           pending_revocation=revoke)
    if add:
        for topic, ps in add.items():
            keep.setdefault(topic, {}).update({p: target_epoch for p in ps})
    state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
    return member.copy(state=state, previous_member_epoch=member.member_epoch,
                       member_epoch=target_epoch, assigned=keep, pending_revocation={})


def _shrink_to_subscription(member: ConsumerMember, subscribed: set[uuid.UUID],
                            owned) -> ConsumerMember:
    """The subscription changed before a new target exists: partitions of topics no longer
    subscribed are to be revoked now."""
    assigned = {t: dict(ps) for t, ps in member.assigned.items() if t in subscribed}
    removed = {t: dict(ps) for t, ps in member.assigned.items() if t not in subscribed}
    if not removed:
        return member
    pending = {t: dict(ps) for t, ps in member.pending_revocation.items()}
    for topic, ps in removed.items():
        pending.setdefault(topic, {}).update(ps)
    if _owns_any(owned, pending):
        return member.copy(state=MemberState.UNREVOKED_PARTITIONS, assigned=assigned,
                           pending_revocation=pending)
    return member.copy(assigned=assigned)
