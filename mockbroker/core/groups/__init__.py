"""The group coordinator (:mod:`~mockbroker.core.groups.coordinator`) and its group types.

A group type ("classic", KIP-848's "consumer", KIP-932's "share" and KIP-1071's "streams") is
a package beside the others (:mod:`~mockbroker.core.groups.classic`,
:mod:`~mockbroker.core.groups.consumer`, :mod:`~mockbroker.core.groups.share`,
:mod:`~mockbroker.core.groups.streams`), with its own group, state and protocol, and with one
entry in the table of group types (:mod:`~mockbroker.core.groups.types`).  No type imports
another: what joins two of them (a consumer group with members of the classic protocol, and
online migration between the two) lives above both, in :mod:`~mockbroker.core.groups.mixed`.
Everything else is shared: placement, timers, offsets, records, administration, and the values
of the classic API (:mod:`~mockbroker.core.groups.classic_api`).

This module says what the shared parts ask of a group (:class:`Group`), what each type
declares to the table (:class:`GroupType`, :class:`GroupProtocol`, :class:`Replayer`), and the
shapes a type answers the observers in (:class:`GroupSnapshot`, :class:`Listed`).  It imports
only ``msgspec`` and the standard library, so every type may import it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from msgspec import Struct

if TYPE_CHECKING:
    from mockbroker.adminapi.views import GroupSummaryView, GroupView


class Group(Protocol):
    """What the shared parts (placement, offsets, records, admin, inspection) ask of a group."""

    group_id: str
    #: the group type's name, its key in the table: "classic", "consumer", ...
    type: str
    #: (topic, partition) -> committed offset entry, kept by :mod:`.offsets`
    offsets: dict

    @property
    def is_dead(self) -> bool: ...

    @property
    def is_empty(self) -> bool:
        """No members: the group may be deleted."""

    @property
    def deletable_when_offsets_expire(self) -> bool: ...

    def deleted(self, now_ms: int) -> None:
        """The group is deleted (its tombstones are written by the coordinator)."""

    def unloaded(self, now_ms: int) -> None:
        """Its coordinator moved away: answer whatever waits, and be Dead here."""

    def converted(self, now_ms: int) -> None:
        """A group of another type took its place under the same id: be Dead."""

    def offset_expiry_base(self) -> tuple[bool, int | None]:
        """(whether offsets may expire now, the time they age from or None for commit time)."""

    def may_expire_offset_of(self, topic: str) -> bool: ...

    def subscribed_topics(self) -> set[str] | None:
        """The topics the members consume, or None when the coordinator cannot know."""

    def consumes(self, topic: str, subscribed: set[str] | None = None) -> bool: ...


# -- what a group type declares ---------------------------------------------------------------


class MemberSnapshot(Struct, frozen=True):
    """A member as the group watch last saw it."""

    client_id: str
    client_host: str
    instance_id: str | None
    #: what the member holds, comparable (bytes of a classic assignment, or partitions)
    assignment: Any


class GroupSnapshot(Struct, frozen=True):
    """A group as the group watch last saw it: type, state, generation and members.  The watch
    compares two of them and tells the event log what differs."""

    group_type: str
    state: str
    #: the classic generation, or a consumer group's epoch: what a rebalance moves on
    generation: int
    members: dict[str, MemberSnapshot]


class Listed(Struct, frozen=True):
    """A group as ListGroups lists it."""

    group_id: str
    #: "" when the group has none (a group of offsets only)
    protocol_type: str
    #: the state's name in Kafka's words ("Stable", "Assigning", ...)
    state: str
    group_type: str


class Replayer(Protocol):
    """One group type's fold of a ``__consumer_offsets`` partition's records, as a coordinator
    loading the partition reads them (:func:`.records.replay` hands each of the type's records
    over in log order)."""

    def record(self, kind: int, key: bytes, value: bytes | None) -> None:
        """One record of the type: its record type, its key after the type, its value (None: a
        tombstone)."""

    def groups(self) -> dict[str, Group]:
        """The groups the records leave, by group id (their offsets are the coordinator's to
        add)."""


class GroupProtocol(Protocol):
    """What the coordinator and the shared parts ask of a type's protocol, the object that also
    serves the requests of the type's own API (its handlers call those by name)."""

    def loaded(self, group) -> None:
        """A new coordinator has just rebuilt ``group``: its members' sessions start now."""

    def expire_member(self, group, member_id: str) -> None:
        """As if the member's session had timed out now (admin, control rules)."""

    def force_rebalance(self, group) -> None:
        """Start a rebalance as if membership had changed, or ApiException when the type has
        no such thing (admin)."""

    def validate_offset_commit(self, shard, group_id: str, group, member_id: str,
                               instance_id: str | None, generation: int, api_version: int,
                               *, transactional: bool = False):
        """The group an OffsetCommit (or TxnOffsetCommit) writes to, or ApiException with the
        code every partition gets.  ``group`` is None only for the type that holds groups of
        offsets alone (:data:`.types.BARE`), which may create one in ``shard``."""

    def validate_offset_fetch(self, group, member_id: str | None, member_epoch: int) -> None:
        """ApiException when an OffsetFetch's member may not read the group's offsets."""

    # optional: ``deleting(group)``, called as an empty group is deleted, for what the type
    # keeps of its groups beyond their records (a share group's share state)


class GroupType(Protocol):
    """What a group type declares, once, to the table of group types (:mod:`.types`): the
    coordinator routes, replays and deletes by it, and the handlers, the admin API and the
    group watch see a group through it.  Stateless: one serves every coordinator."""

    #: Kafka's name of the type: the ``type`` of its groups, ListGroups' group type
    name: str
    #: the record types (the int16 before a key in ``__consumer_offsets``) its groups write
    record_types: tuple[int, ...]
    #: the states (by name) in which a rebalance of one of its groups is under way
    rebalancing: frozenset[str]

    def protocol(self, coordinator) -> GroupProtocol:
        """Its protocol for ``coordinator`` (the table builds it once, on first use)."""

    def new_group(self, group_id: str, now_ms: int) -> Group:
        """An empty group of the type (replay holds a group of offsets alone in one)."""

    def replayer(self, now_ms: int) -> Replayer:
        """A fresh fold of its records, for one partition's replay."""

    def tombstones(self, group) -> list[tuple[bytes, None]]:
        """The records that delete the group's own metadata (not its offsets, which have
        theirs; not its members', which are gone already)."""

    def snapshot(self, group) -> GroupSnapshot:
        """What the group watch compares after each request, timer or call."""

    def assignments(self, coordinator, group) -> dict[str, dict[str, list[int]]]:
        """{member id: {topic name: partitions}}: the watch's assignment event."""

    def listed(self, group) -> Listed:
        """The group as ListGroups lists it."""

    def view(self, coordinator, group, shared: dict) -> GroupView:
        """``GET /groups/{id}``: the admin API's view of the group, with the fields every type
        fills alike (``shared``: the coordinator's id, offsets, their metadata, lag)."""

    def summary(self, group, coordinator_id: int) -> GroupSummaryView:
        """The group's line in ``GET /groups``."""
