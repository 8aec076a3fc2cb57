"""The group coordinator: where groups live, and the parts every group type shares.

Faithful to Kafka 4.x's group coordinator (``GroupMetadataManager`` and
``OffsetMetadataManager``).  Groups live in shards, one per ``__consumer_offsets`` partition,
held by the partition's leader; every change to a group and every offset commit is written to
that partition as a record in Kafka's own format (:mod:`~mockbroker.core.groups.records`), and
a shard that moves to another broker is rebuilt from those records, as Kafka does.  The
machinery of shards is the coordinators' base
(:mod:`~mockbroker.core.coordinators.sharded`); this coordinator replays groups from the
records, and tells the groups of a shard loaded or let go.

Group types plug in beside each other: "classic" (:mod:`~mockbroker.core.groups.classic`)
and KIP-848's "consumer" (:mod:`~mockbroker.core.groups.consumer`), each with its own state
and protocol, all sharing placement, timers (:mod:`~mockbroker.core.groups.timers`), offsets
(:mod:`~mockbroker.core.groups.offsets`), records, and group administration
(:mod:`~mockbroker.core.groups.admin`).  Time comes only from the cluster's clock.

A broker that has no group yet has loaded none of this but placement and timers: the group
types, their protocols, the offsets and the records load with the first group request (or the
first shard with records to replay), which keeps them out of a broker's start-up.
"""

from __future__ import annotations

from functools import cached_property

from msgspec import field

from mockbroker.core.cluster import Cluster, Partition
from mockbroker.core.coordinators.placement import OFFSETS_TOPIC
from mockbroker.core.coordinators.sharded import CoordinatorShard, ShardedCoordinator
from mockbroker.core.groups.timers import GroupTimers, TimerKey, TimerKind

RETENTION = TimerKey(TimerKind.RETENTION)


class Shard(CoordinatorShard):
    """The groups of one ``__consumer_offsets`` partition, as loaded by its current leader."""

    groups: dict = field(default_factory=dict)


class GroupCoordinator(ShardedCoordinator[Shard]):
    """The groups of every broker, in shards over ``__consumer_offsets``."""

    topic_name = OFFSETS_TOPIC
    partitions_config = "offsets.topic.num.partitions"
    replication_config = "offsets.topic.replication.factor"
    shard_type = Shard

    def __init__(self, cluster: Cluster, settings: dict, *, load_delay_ms: int = 0):
        self.timers = GroupTimers(cluster.timers, cluster.events)
        super().__init__(cluster, settings, load_delay_ms=load_delay_ms)
        self._schedule_retention_check()

    # -- the parts, built on first use -----------------------------------------------------------

    @cached_property
    def offsets(self):
        """Committed offsets, plain and transactional: stored, fetched and expired."""
        from mockbroker.core.groups.offsets import Offsets

        return Offsets(self)

    @cached_property
    def classic(self):
        """JoinGroup, SyncGroup, Heartbeat and LeaveGroup: the classic protocol."""
        from mockbroker.core.groups.classic.protocol import ClassicProtocol

        return ClassicProtocol(self)

    @cached_property
    def consumer(self):
        """ConsumerGroupHeartbeat and ConsumerGroupDescribe: KIP-848's protocol."""
        from mockbroker.core.groups.consumer.protocol import ConsumerProtocol

        return ConsumerProtocol(self)

    @cached_property
    def protocols(self) -> dict:
        """Group type -> its protocol."""
        from mockbroker.core.groups.classic.group import ClassicGroup
        from mockbroker.core.groups.consumer.group import ConsumerGroup

        return {ClassicGroup.type: self.classic, ConsumerGroup.type: self.consumer}

    @cached_property
    def admin(self):
        """Listing, describing and deleting groups, and the admin API's knobs."""
        from mockbroker.core.groups.admin import GroupAdmin

        return GroupAdmin(self)

    # -- where groups live -----------------------------------------------------------------------

    def find_group(self, group_id: str):
        """The group, wherever it is loaded (admin and inspection), or None."""
        shard = self.shard_of(group_id)
        return shard.groups.get(group_id) if shard else None

    def is_live(self, group) -> bool:
        """Whether ``group`` is still the one its shard holds (not unloaded or deleted)."""
        return self.find_group(group.group_id) is group

    def all_groups(self) -> list[tuple[Shard, object]]:
        return [(shard, group) for shard in self.loaded_shards()
                for group in shard.groups.values()]

    @staticmethod
    def _metadata_tombstones(group) -> list:
        """What deletes a group's own records (not its offsets): the group metadata of a
        classic group, the epochs of a consumer group (its members' are gone already)."""
        from mockbroker.core.groups import records
        from mockbroker.core.groups.consumer import records as consumer_records
        from mockbroker.core.groups.consumer.group import ConsumerGroup

        if group.type == ConsumerGroup.type:
            return consumer_records.group_tombstones(group.group_id)
        return [records.group_tombstone(group.group_id)]

    def delete_group(self, shard: Shard, group) -> None:
        """Tombstones for the group's offsets and metadata; the group is Dead and gone."""
        from mockbroker.core.groups import records

        partition = self.placement.partition(group.group_id)
        records.append(partition, self.now, [
            records.offset_tombstone(group.group_id, topic, index)
            for topic, index in group.offsets] + self._metadata_tombstones(group))
        self.timers.cancel_group(group.group_id)
        group.deleted(self.now)
        del shard.groups[group.group_id]
        self.cluster.notify_append(partition)

    def replace_group(self, shard: Shard, old, new, entries: list | None = None) -> None:
        """A group becomes a group of the other type under the same id: an empty one when a
        member of the other protocol joins, or one with members by online migration, which
        passes the records saying so (``entries``).  By default the old type's records get
        tombstones.  The committed offsets, which belong to the group id, carry over."""
        from mockbroker.core.groups import records

        partition = self.placement.partition(old.group_id)
        records.append(partition, self.now,
                       self._metadata_tombstones(old) if entries is None else entries)
        self.timers.cancel_group(old.group_id)
        old.converted(self.now)
        new.offsets, new.pending_offsets = old.offsets, old.pending_offsets
        shard.groups[old.group_id] = new
        self.cluster.notify_append(partition)

    # -- loading and unloading shards ------------------------------------------------------------

    def on_unloaded(self, shard: Shard) -> None:
        """The old coordinator lets its groups go: waiting members learn it is not theirs."""
        for group in shard.groups.values():
            self.timers.cancel_group(group.group_id)
            group.unloaded(self.now)

    def on_loaded(self, shard: Shard) -> None:
        """Each group's protocol picks up where the last coordinator left it (its timers)."""
        for group in shard.groups.values():
            self.protocols[group.type].loaded(group)

    def replay(self, shard: Shard, partition: Partition) -> None:
        from mockbroker.core.groups import records
        from mockbroker.core.groups.classic.group import ClassicGroup
        from mockbroker.core.groups.consumer import records as consumer_records

        # record type of a group-metadata record -> the group type that loads it
        loaders = {records.GROUP_METADATA_TYPE: ClassicGroup.from_record}
        now = self.now
        replayed = records.replay(partition.log)
        groups = {group_id: loaders[kind](group_id, value, now)
                  for group_id, (kind, value) in replayed.metadata.items()}
        # a group with offsets but no metadata record is held as a classic group, as in Kafka
        for group_id, entries in replayed.offsets.items():
            group = groups.get(group_id)
            if group is None and not entries:
                continue  # every offset it had was deleted: no group is left
            if group is None:
                group = groups[group_id] = ClassicGroup(group_id, now)
            group.offsets = entries
        for group_id, found in replayed.consumer.items():
            if found.group_epoch is not None:
                group = consumer_records.rebuild(group_id, found, now)
                group.offsets = groups[group_id].offsets if group_id in groups else {}
                groups[group_id] = group
        for group_id, by_producer in replayed.pending.items():
            group = groups.get(group_id)
            if group is None:
                group = groups[group_id] = ClassicGroup(group_id, now)
            group.pending_offsets = by_producer
        shard.groups = groups

    def on_transaction_marker(self, partition: Partition, producer_id: int,
                              commit: bool) -> None:
        """A transaction's marker landed on a ``__consumer_offsets`` partition: the offsets it
        committed there become the groups' committed offsets, or are dropped."""
        shard = self.shards.get(partition.index)
        if shard is None or shard.loading:
            return
        for group in shard.groups.values():
            self.offsets.end_transaction(group, producer_id, commit)

    # -- offset retention ------------------------------------------------------------------------

    def _schedule_retention_check(self) -> None:
        self.timers.schedule(RETENTION, self.settings["offsets_retention_check_interval_ms"],
                             self._retention_check)

    def _retention_check(self) -> None:
        self.expire_offsets()
        self._schedule_retention_check()

    def expire_offsets(self) -> int:
        """Offsets older than ``offsets.retention.minutes`` expire now; returns how many."""
        return self.offsets.expire(self.now, self.settings["offsets_retention_minutes"] * 60_000)

    def retention_deadline(self) -> int | None:
        return self.timers.deadline(RETENTION)
