"""The share coordinator (Kafka's ``ShareCoordinatorShard``): the durable state of every share
partition, in shards over ``__share_group_state``.

A share partition's state is keyed ``group:topicId:partition`` (the topic id as Kafka prints
it), placed on a partition of ``__share_group_state`` as every coordinator key is.  The group
coordinator initializes a state when a share group first subscribes to a partition (its start
offset -1: not yet known, the share partition's leader resolves it by
``share.auto.offset.reset``); the leader reads it when it first serves the share partition,
and writes what changes: the start offset, and the ranges whose delivery state or count moved.

Each write is a record in Kafka's own format: a ``ShareSnapshot`` (the whole state) when the
state is initialized or after ``share.coordinator.snapshot.update.records.per.snapshot``
updates, a ``ShareUpdate`` (the start offset and the changed ranges) otherwise.  A coordinator
that loads a partition of the topic rebuilds its states from those records, so a move of the
coordinator or of a share partition's leader keeps every acknowledged state.
"""

from __future__ import annotations

import base64
import struct
import uuid

from msgspec import Struct, field

from mockbroker.core.cluster import Partition
from mockbroker.core.coordinators.placement import SHARE_STATE_TOPIC
from mockbroker.core.coordinators.sharded import CoordinatorShard, ShardedCoordinator
from mockbroker.core.errors import ApiException
from mockbroker.core.share.partition import StateBatch
from wire import decode_embedded, embedded_codec, errors, records

TOPIC = SHARE_STATE_TOPIC
SNAPSHOT, UPDATE = 0, 1
_NAMES = {SNAPSHOT: "ShareSnapshot", UPDATE: "ShareUpdate"}
_SHORT = struct.Struct(">h")
#: the start offset of a state nobody has resolved yet
UNINITIALIZED = -1


def topic_id_text(topic_id: uuid.UUID) -> str:
    """A topic id as Kafka prints it (``Uuid.toString``: URL-safe base64, unpadded)."""
    return base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip("=")


def state_key(group_id: str, topic_id: uuid.UUID, partition: int) -> str:
    """The coordinator key of a share partition (``SharePartitionKey.asCoordinatorKey``)."""
    return f"{group_id}:{topic_id_text(topic_id)}:{partition}"


class ShareState(Struct):
    """One share partition's durable state."""

    state_epoch: int
    leader_epoch: int = -1
    start_offset: int = UNINITIALIZED
    delivery_complete_count: int = -1
    batches: list[StateBatch] = field(default_factory=list)
    snapshot_epoch: int = 0
    create_timestamp: int = 0
    write_timestamp: int = 0
    #: updates written since the last snapshot
    updates: int = 0

    def apply(self, start_offset: int, batches: list[StateBatch]) -> None:
        """An update: the new start offset, and ranges whose state replaces what was kept for
        them; nothing below the start offset is kept."""
        if start_offset >= 0:
            self.start_offset = start_offset
        kept: list[StateBatch] = []
        for old in self.batches:
            pieces = [(old.first_offset, old.last_offset)]
            for new in batches:
                pieces = [p for lo, hi in pieces for p in
                          ((lo, min(hi, new.first_offset - 1)), (max(lo, new.last_offset + 1), hi))
                          if p[0] <= p[1]]
            kept += [StateBatch(lo, hi, old.delivery_state, old.delivery_count)
                     for lo, hi in pieces]
        merged = sorted(kept + list(batches), key=lambda b: b.first_offset)
        self.batches = [StateBatch(max(b.first_offset, self.start_offset), b.last_offset,
                                   b.delivery_state, b.delivery_count)
                        for b in merged if b.last_offset >= self.start_offset]


class Shard(CoordinatorShard):
    """The share-partition states of one ``__share_group_state`` partition."""

    states: dict[tuple[str, uuid.UUID, int], ShareState] = field(default_factory=dict)


def _key(kind: int, group_id: str, topic_id: uuid.UUID, partition: int) -> bytes:
    codec = embedded_codec(_NAMES[kind] + "Key", 0)
    return _SHORT.pack(kind) + bytes(codec.encode(codec.cls(
        group_id=group_id, topic_id=topic_id, partition=partition)))


def _value(kind: int, **fields) -> bytes:
    codec = embedded_codec(_NAMES[kind] + "Value", 0)
    cls = codec.cls
    fields["state_batches"] = [cls.StateBatch(
        first_offset=b.first_offset, last_offset=b.last_offset,
        delivery_state=b.delivery_state, delivery_count=b.delivery_count)
        for b in fields["state_batches"]]
    return _SHORT.pack(0) + bytes(codec.encode(cls(**fields)))


def _batches(value) -> list[StateBatch]:
    return [StateBatch(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
            for b in value.state_batches]


class ShareCoordinator(ShardedCoordinator[Shard]):
    """Every share partition's state, in shards over ``__share_group_state``."""

    topic_name = TOPIC
    partitions_config = "share.coordinator.state.topic.num.partitions"
    replication_config = "share.coordinator.state.topic.replication.factor"
    shard_type = Shard

    # -- the persister's operations (Kafka's Initialize/Read/Write/DeleteShareGroupState) --------

    def _shard(self, key: tuple[str, uuid.UUID, int]) -> Shard:
        """The loaded shard holding ``key``, wherever its leader is (the persister finds it),
        or ApiException as a persister call would fail."""
        partition = self.placement.partition(state_key(*key))
        if partition.leader == -1:
            raise ApiException(errors.COORDINATOR_NOT_AVAILABLE)
        shard = self.shards.get(partition.index)
        if shard is None or shard.leader != partition.leader:
            raise ApiException(errors.COORDINATOR_NOT_AVAILABLE)
        if shard.loading:
            raise ApiException(errors.COORDINATOR_LOAD_IN_PROGRESS)
        return shard

    def initialize(self, group_id: str, topic_id: uuid.UUID, partition: int, state_epoch: int,
                   start_offset: int = UNINITIALIZED) -> None:
        """A share partition's state starts (again) at ``state_epoch``: a snapshot with the
        given start offset and nothing in flight."""
        key = (group_id, topic_id, partition)
        shard = self._shard(key)
        old = shard.states.get(key)
        if old is not None and old.state_epoch > state_epoch:
            raise ApiException(errors.FENCED_STATE_EPOCH, "Initialize operation has a stale "
                               "state epoch.")
        now = self.now
        state = ShareState(state_epoch, 0, start_offset,
                           -1 if start_offset == UNINITIALIZED else 0, create_timestamp=now,
                           write_timestamp=now,
                           snapshot_epoch=0 if old is None else old.snapshot_epoch + 1)
        shard.states[key] = state
        self._append(key, SNAPSHOT, state)

    def read(self, group_id: str, topic_id: uuid.UUID, partition: int,
             leader_epoch: int = -1) -> ShareState:
        """A share partition's state for its leader, which starts to serve it; ApiException
        INVALID_REQUEST for a state never initialized, in Kafka's words."""
        key = (group_id, topic_id, partition)
        state = self._shard(key).states.get(key)
        if state is None:
            raise ApiException(errors.INVALID_REQUEST, "Read operation on uninitialized share "
                               "partition not allowed.")
        if leader_epoch > state.leader_epoch:
            state.leader_epoch = leader_epoch
        return state

    def peek(self, group_id: str, topic_id: uuid.UUID, partition: int) -> ShareState | None:
        """A share partition's state if there is one (the admin APIs' summary)."""
        key = (group_id, topic_id, partition)
        try:
            return self._shard(key).states.get(key)
        except ApiException:
            return None

    def write(self, group_id: str, topic_id: uuid.UUID, partition: int, state_epoch: int,
              leader_epoch: int, start_offset: int, batches: list[StateBatch],
              delivery_complete_count: int = -1) -> None:
        """What changed of a share partition's state; a snapshot every so many updates."""
        key = (group_id, topic_id, partition)
        shard = self._shard(key)
        state = shard.states.get(key)
        if state is None:
            raise ApiException(errors.INVALID_REQUEST, "Write operation on uninitialized "
                               "share partition not allowed.")
        if state_epoch < state.state_epoch:
            raise ApiException(errors.FENCED_STATE_EPOCH, "Write operation has a stale state "
                               "epoch.")
        if leader_epoch < state.leader_epoch:
            raise ApiException(errors.FENCED_LEADER_EPOCH, "Write operation has a stale "
                               "leader epoch.")
        state.leader_epoch = leader_epoch
        state.delivery_complete_count = delivery_complete_count
        state.apply(start_offset, batches)
        state.write_timestamp = self.now
        if state.updates >= self.settings["share_coordinator_snapshot_update_records_per_snapshot"]:
            state.snapshot_epoch += 1
            state.updates = 0
            self._append(key, SNAPSHOT, state)
        else:
            state.updates += 1
            self._append(key, UPDATE, state, start_offset, batches)

    def delete(self, group_id: str, topic_id: uuid.UUID, partition: int) -> None:
        """The share partition's state goes (a tombstone)."""
        key = (group_id, topic_id, partition)
        shard = self._shard(key)
        if shard.states.pop(key, None) is not None:
            self._append(key, SNAPSHOT, None)

    # -- records --------------------------------------------------------------------------------

    def _append(self, key, kind: int, state: ShareState | None, start_offset: int = -1,
                batches: list[StateBatch] | None = None) -> None:
        if state is None:
            entries = [(_key(SNAPSHOT, *key), None)]
        elif kind == SNAPSHOT:
            entries = [(_key(SNAPSHOT, *key), _value(
                SNAPSHOT, snapshot_epoch=state.snapshot_epoch, state_epoch=state.state_epoch,
                leader_epoch=state.leader_epoch, start_offset=state.start_offset,
                delivery_complete_count=state.delivery_complete_count,
                create_timestamp=state.create_timestamp, write_timestamp=state.write_timestamp,
                state_batches=state.batches))]
        else:
            entries = [(_key(UPDATE, *key), _value(
                UPDATE, snapshot_epoch=state.snapshot_epoch, leader_epoch=state.leader_epoch,
                start_offset=start_offset,
                delivery_complete_count=state.delivery_complete_count,
                state_batches=batches or []))]
        partition = self.placement.partition(state_key(*key))
        now = self.now
        batch = records.encode_batch([(k, v, [], now) for k, v in entries])
        partition.log.append(batch, records.read_batch_header(batch), partition.leader_epoch,
                             now, trusted=True)
        self.cluster.notify_append(partition)

    def replay(self, shard: Shard, partition: Partition) -> None:
        states: dict[tuple[str, uuid.UUID, int], ShareState] = {}
        for batch in partition.log.batches:
            if batch.last_offset < partition.log.log_start_offset:
                continue
            for record in records.decode_records(batch.data):
                if record.key is None or len(record.key) < 2:
                    continue
                (kind,) = _SHORT.unpack_from(record.key)
                if kind not in _NAMES:
                    continue
                k = embedded_codec(_NAMES[kind] + "Key", 0).decode(bytes(record.key), 2)[0]
                key = (k.group_id, k.topic_id, k.partition)
                if record.value is None:
                    states.pop(key, None)
                    continue
                v = decode_embedded(_NAMES[kind] + "Value", bytes(record.value))[1]
                if kind == SNAPSHOT:
                    states[key] = ShareState(
                        v.state_epoch, v.leader_epoch, v.start_offset,
                        v.delivery_complete_count, _batches(v), v.snapshot_epoch,
                        v.create_timestamp, v.write_timestamp)
                elif key in states:
                    state = states[key]
                    state.leader_epoch = v.leader_epoch
                    state.delivery_complete_count = v.delivery_complete_count
                    state.apply(v.start_offset, _batches(v))
                    state.updates += 1
        shard.states = states
