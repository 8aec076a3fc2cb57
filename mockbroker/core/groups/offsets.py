"""Committed offsets, shared by every group type: storing, reading, deleting and expiring them.

Each group keeps its committed offsets (``group.offsets``: (topic, partition) -> entry); every
change is written first to the group's ``__consumer_offsets`` partition as Kafka's own records
(:mod:`mockbroker.core.groups.records`), so a coordinator that moves rebuilds them.  What may
expire, and by which clock, is the group type's to say (``offset_expiry_base`` and
``may_expire_offset_of``), as Kafka's ``OffsetExpirationCondition`` is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.core.errors import ApiException
from mockbroker.core.groups import records
from mockbroker.core.groups.records import OffsetEntry
from wire import errors

if TYPE_CHECKING:
    from mockbroker.core.groups.coordinator import GroupCoordinator


__all__ = ["OffsetEntry", "Offsets"]


class Offsets:
    def __init__(self, coordinator: "GroupCoordinator"):
        self._coordinator = coordinator

    def _write(self, group_id: str, entries) -> None:
        coordinator = self._coordinator
        partition = coordinator.placement.partition(group_id)
        records.append(partition, coordinator.now, entries)
        coordinator.cluster.notify_append(partition)

    def store(self, group, entries: dict[tuple[str, int], OffsetEntry]) -> None:
        self._write(group.group_id, [
            records.offset_commit_record(group.group_id, topic, index, entry)
            for (topic, index), entry in entries.items()])
        self._committed(group, entries, transactional=False)
        group.offsets.update(entries)

    def _committed(self, group, entries: dict[tuple[str, int], OffsetEntry], *,
                   transactional: bool) -> None:
        """Tell the event log of the offsets that change (a commit of the same offsets again,
        as an auto-commit of an idle consumer is, changes nothing and says nothing)."""
        changed: dict[str, dict[int, int]] = {}
        for (topic, index), entry in sorted(entries.items()):
            before = group.offsets.get((topic, index))
            if before is None or before.offset != entry.offset:
                changed.setdefault(topic, {})[index] = entry.offset
        if changed:
            self._coordinator.cluster.events.emit(
                "offsets_committed", group=group.group_id, offsets=changed,
                transactional=transactional)

    def store_pending(self, group, producer_id: int, producer_epoch: int,
                      entries: dict[tuple[str, int], OffsetEntry]) -> None:
        """Offsets committed in the producer's transaction (TxnOffsetCommit): written as a
        transactional batch, and the group's only when the transaction commits."""
        coordinator = self._coordinator
        partition = coordinator.placement.partition(group.group_id)
        records.append(partition, coordinator.now, [
            records.offset_commit_record(group.group_id, topic, index, entry)
            for (topic, index), entry in entries.items()],
            producer_id=producer_id, producer_epoch=producer_epoch)
        coordinator.cluster.notify_append(partition)
        group.pending_offsets.setdefault(producer_id, {}).update(entries)

    def end_transaction(self, group, producer_id: int, commit: bool) -> None:
        pending = group.pending_offsets.pop(producer_id, None)
        if pending and commit and not group.is_dead:
            self._committed(group, pending, transactional=True)
            group.offsets.update(pending)

    @staticmethod
    def unstable(group, partition: tuple[str, int]) -> bool:
        """Whether an open transaction has committed an offset of ``partition`` (what an
        OffsetFetch with ``require_stable`` is refused for)."""
        return group is not None and any(partition in entries
                                          for entries in group.pending_offsets.values())

    def delete(self, group, keys: list[tuple[str, int]]) -> None:
        self._write(group.group_id, [records.offset_tombstone(group.group_id, topic, index)
                                     for topic, index in keys])
        for key in keys:
            group.offsets.pop(key, None)

    def fetch(self, broker_id: int, group_id: str, partitions: list[tuple[str, int]] | None,
              *, require_stable: bool = False, member_id: str | None = None,
              member_epoch: int = -1
              ) -> dict[tuple[str, int], OffsetEntry | None | ApiException]:
        """OffsetFetch on ``broker_id``: ApiException unless it coordinates the group (and,
        from a member of a consumer group, its epoch is current).  With ``require_stable``, a
        partition an open transaction committed an offset for is given an
        UNSTABLE_OFFSET_COMMIT exception instead of its entry."""
        group = self._coordinator.shard_for(group_id, broker_id).groups.get(group_id)
        self._coordinator.validate_offset_fetch(group, member_id, member_epoch)
        found: dict = self.committed(group, partitions)
        if require_stable and group is not None and group.pending_offsets:
            for key in found:
                if self.unstable(group, key):
                    found[key] = ApiException(errors.UNSTABLE_OFFSET_COMMIT)
        return found

    @staticmethod
    def committed(group, partitions: list[tuple[str, int]] | None
                  ) -> dict[tuple[str, int], OffsetEntry | None]:
        """Committed offsets of ``partitions`` (all of them when None); missing ones are None."""
        offsets = group.offsets if group is not None and not group.is_dead else {}
        if partitions is None:
            return dict(sorted(offsets.items()))
        return {key: offsets.get(key) for key in partitions}

    def expire(self, now: int, retention_ms: int) -> int:
        """Drop committed offsets older than the retention, as Kafka's periodic clean-up does,
        and delete empty groups left with no offsets; returns how many expired."""
        expired = 0
        for shard, group in self._coordinator.all_groups():
            may_expire, base = group.offset_expiry_base()
            if not may_expire:
                continue
            doomed = []
            for (topic, index), entry in group.offsets.items():
                if not group.may_expire_offset_of(topic):
                    continue
                start = entry.commit_timestamp if base is None else base
                if now - start >= retention_ms or 0 <= entry.expire_timestamp <= now:
                    doomed.append((topic, index))
            if doomed:
                self.delete(group, doomed)
                expired += len(doomed)
            if group.deletable_when_offsets_expire and not group.offsets:
                self._coordinator.delete_group(shard, group)
        return expired
