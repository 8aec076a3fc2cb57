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
(:mod:`~mockbroker.core.groups.admin`).  This coordinator tells no two types apart itself: it
asks the table of group types (:mod:`~mockbroker.core.groups.types`) what a group's type
declares, and routes each request that reaches a group by the group's type, once
(:meth:`route`); ``classic`` and ``consumer`` only name the protocols their APIs' handlers
call.  Time comes only from the cluster's clock.

A broker that has no group yet has loaded none of this but placement and timers: the table,
the group types, their protocols, the offsets and the records load with the first group
request (or the first shard with records to replay), which keeps them out of a broker's
start-up.
"""

from __future__ import annotations

from functools import cached_property

from msgspec import field

from mockbroker.core.cluster import Cluster, Partition
from mockbroker.core.errors import ApiException
from mockbroker.core.coordinators.placement import OFFSETS_TOPIC
from mockbroker.core.coordinators.sharded import CoordinatorShard, ShardedCoordinator
from mockbroker.core.groups.timers import GroupTimers, TimerKey, TimerKind
from wire import errors

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
        #: () -> the share coordinator, and () -> the brokers' share partitions (None before
        #: the first ShareFetch): given by the core, as share groups need them
        self.share_states_of = None
        self.share_partitions_of = None
        super().__init__(cluster, settings, load_delay_ms=load_delay_ms)
        self._schedule_retention_check()

    # -- the parts, built on first use -----------------------------------------------------------

    @cached_property
    def offsets(self):
        """Committed offsets, plain and transactional: stored, fetched and expired."""
        from mockbroker.core.groups.offsets import Offsets

        return Offsets(self)

    @cached_property
    def types(self):
        """The table of group types as this coordinator uses it (:mod:`.types`)."""
        from mockbroker.core.groups.types import GroupTypes

        return GroupTypes(self)

    def protocol(self, name: str):
        """The protocol of the group type ``name``, built on first use."""
        return self.types.protocol(name)

    @cached_property
    def classic(self):
        """JoinGroup, SyncGroup, Heartbeat and LeaveGroup: the classic protocol."""
        return self.protocol("classic")

    @cached_property
    def consumer(self):
        """ConsumerGroupHeartbeat and ConsumerGroupDescribe: KIP-848's protocol."""
        return self.protocol("consumer")

    @cached_property
    def admin(self):
        """Listing, describing and deleting groups, and the admin API's knobs."""
        from mockbroker.core.groups.admin import GroupAdmin

        return GroupAdmin(self)

    @property
    def share_states(self):
        """The share coordinator, where a share group's partitions get their state."""
        return self.share_states_of()

    @property
    def share_partitions(self):
        """The share partitions the brokers serve (None before any ShareFetch)."""
        return self.share_partitions_of() if self.share_partitions_of else None

    @cached_property
    def share(self):
        """ShareGroupHeartbeat and ShareGroupDescribe: KIP-932's protocol."""
        return self.protocol("share")

    @cached_property
    def streams(self):
        """StreamsGroupHeartbeat and StreamsGroupDescribe: KIP-1071's protocol."""
        return self.protocol("streams")

    def offset_partition_check(self, group, member_id: str, member_epoch: int):
        """None, or what checks each partition of an OffsetCommit (or TxnOffsetCommit) that
        ``validate_offset_commit`` let through: (topic, partition) -> error code (a streams
        member's older epoch is checked task by task)."""
        check = getattr(self.protocol(group.type), "validate_offset_partition", None)
        if check is None:
            return None

        def code(topic: str, partition: int) -> int:
            try:
                check(group, member_id, member_epoch, topic, partition)
            except ApiException as exc:
                return exc.error_code
            return errors.NONE

        return code

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

    # -- routing by type -------------------------------------------------------------------------

    def route(self, protocol: str, group):
        """What serves a request of ``protocol``'s API (the name of the type whose API it is)
        that reaches ``group`` (or None): that type's protocol for no group or one of its own
        type, else what the table registers for the pair; ApiException GROUP_ID_NOT_FOUND when
        nothing serves it."""
        return self.types.route(protocol, group)

    def members_leaving(self, group, member_ids: set[str]) -> bool:
        """Members are about to leave ``group``: what serves other protocols' members in a
        group of its type may put a group of another type in its place instead (a consumer
        group left with classic members only).  True when one did."""
        return any(server.leaving(group, member_ids)
                   for server in self.types.between(group.type) if hasattr(server, "leaving"))

    def describe_as(self, type_name: str, broker_id: int, group_id: str):
        """The group a describe request of type ``type_name``'s API (DescribeGroups for
        "classic", ConsumerGroupDescribe for "consumer") answers for: ApiException when this
        broker cannot answer for the group; GROUP_ID_NOT_FOUND with Kafka's message when there
        is no such group, or it is of another type."""
        group = self.shard_for(group_id, broker_id).groups.get(group_id)
        if group is None or group.is_dead:
            raise ApiException(errors.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        if group.type != type_name:
            raise ApiException(errors.GROUP_ID_NOT_FOUND,
                               f"Group {group_id} is not a {type_name} group.")
        return group

    def validate_offset_commit(self, broker_id: int, group_id: str, member_id: str,
                               instance_id: str | None, generation: int, api_version: int, *,
                               transactional: bool = False):
        """The group an OffsetCommit (or a TxnOffsetCommit: ``transactional``) writes to, as
        its type checks the commit (``generation`` is a consumer group's member epoch), or
        ApiException with the code every partition gets.  A commit to no group is checked by
        the type that holds groups of offsets alone, which may create one."""
        from mockbroker.core.groups.types import BARE

        shard = self.shard_for(group_id, broker_id)
        group = shard.groups.get(group_id)
        protocol = self.protocol(BARE if group is None else group.type)
        return protocol.validate_offset_commit(shard, group_id, group, member_id, instance_id,
                                               generation, api_version,
                                               transactional=transactional)

    def validate_offset_fetch(self, group, member_id: str | None, member_epoch: int) -> None:
        """ApiException when an OffsetFetch's member (v9+) may not read ``group``'s offsets."""
        if group is not None:
            self.protocol(group.type).validate_offset_fetch(group, member_id, member_epoch)

    # -- what a group looks like, by its type ----------------------------------------------------

    def snapshot(self, group):
        """What the group watch compares (:class:`~mockbroker.core.groups.GroupSnapshot`)."""
        return self.types.of(group).snapshot(group)

    def assignments(self, group) -> dict[str, dict[str, list[int]]]:
        """{member id: {topic name: partitions}} of ``group``'s members."""
        return self.types.of(group).assignments(self, group)

    def view(self, group, shared: dict):
        """The admin API's view of ``group`` (``GET /groups/{id}``), with the fields every
        type fills alike in ``shared``."""
        return self.types.of(group).view(self, group, shared)

    def summary(self, group, coordinator_id: int):
        """The group's line in the admin API's ``GET /groups``."""
        return self.types.of(group).summary(group, coordinator_id)

    def type_names(self) -> tuple[str, ...]:
        """Every group type's name, in the table's order."""
        from mockbroker.core.groups.types import names

        return names()

    def delete_group(self, shard: Shard, group) -> None:
        """Tombstones for the group's offsets and metadata; the group is Dead and gone."""
        from mockbroker.core.groups import records

        deleting = getattr(self.protocol(group.type), "deleting", None)
        if deleting is not None:
            deleting(group)  # what the group keeps elsewhere goes first (share state)
        partition = self.placement.partition(group.group_id)
        records.append(partition, self.now, [
            records.offset_tombstone(group.group_id, topic, index)
            for topic, index in group.offsets] + self.types.of(group).tombstones(group))
        self.timers.cancel_group(group.group_id)
        group.deleted(self.now)
        del shard.groups[group.group_id]
        self.cluster.notify_append(partition)

    def replace_group(self, shard: Shard, old, new, entries: list | None = None) -> None:
        """A group becomes a group of another type under the same id: an empty one when a
        member of another protocol joins, or one with members by online migration, which
        passes the records saying so (``entries``).  By default the old type's records get
        tombstones.  The committed offsets, which belong to the group id, carry over."""
        from mockbroker.core.groups import records

        partition = self.placement.partition(old.group_id)
        records.append(partition, self.now,
                       self.types.of(old).tombstones(old) if entries is None else entries)
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
            self.protocol(group.type).loaded(group)

    def replay(self, shard: Shard, partition: Partition) -> None:
        from mockbroker.core.groups import records
        from mockbroker.core.groups.types import BARE, declared, names

        now = self.now
        folds = [declared(name).replayer(now) for name in names()]
        # record type -> the fold of the group type whose records it names
        by_kind = {kind: fold for name, fold in zip(names(), folds)
                   for kind in declared(name).record_types}
        replayed = records.replay(partition.log, by_kind)
        groups: dict = {}
        for fold in folds:
            groups.update(fold.groups())
        # a group with offsets but no record of its own is held as a group of the BARE type,
        # as in Kafka; the committed offsets belong to the group id, whatever its type
        bare = declared(BARE)
        for group_id, entries in replayed.offsets.items():
            group = groups.get(group_id)
            if group is None and not entries:
                continue  # every offset it had was deleted: no group is left
            if group is None:
                group = groups[group_id] = bare.new_group(group_id, now)
            group.offsets = entries
        for group_id, by_producer in replayed.pending.items():
            group = groups.get(group_id)
            if group is None:
                group = groups[group_id] = bare.new_group(group_id, now)
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
