"""The group coordinator (:mod:`~mockbroker.core.groups.coordinator`) and its group types.

A group type ("classic" today; KIP-848's "consumer" and "share" later) is a package beside
:mod:`~mockbroker.core.groups.classic`, with its own state table and protocol.  Everything else
is shared, and asks only this of a group:
"""

from __future__ import annotations

from typing import Protocol


class Group(Protocol):
    """What the shared parts (placement, offsets, records, admin, inspection) ask of a group."""

    group_id: str
    #: the group type's name: "classic", ...
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
        """A group of the other type took its place under the same id: be Dead."""

    def offset_expiry_base(self) -> tuple[bool, int | None]:
        """(whether offsets may expire now, the time they age from or None for commit time)."""

    def may_expire_offset_of(self, topic: str) -> bool: ...

    def subscribed_topics(self) -> set[str] | None:
        """The topics the members consume, or None when the coordinator cannot know."""

    def consumes(self, topic: str, subscribed: set[str] | None = None) -> bool: ...
