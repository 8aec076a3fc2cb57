"""The transaction coordinator, faithful to Kafka 4.x's (``TransactionCoordinator``,
``TransactionStateManager``, ``TransactionMetadata``; KIP-98, KIP-447, KIP-664, KIP-890).

Transactional ids live in shards, one per ``__transaction_state`` partition, held by the
partition's leader; every state a transaction enters is written to that partition in Kafka's
own format (:mod:`~mockbroker.core.transactions.records`), and a broker that takes the
partition over rebuilds its transactions from those records and finishes any commit or abort
that was under way (the machinery of shards is the coordinators' base,
:mod:`~mockbroker.core.coordinators.sharded`).  States move only through the table of
:mod:`~mockbroker.core.transactions.state`.

Ending a transaction writes a commit or abort marker to each of its partitions
(:mod:`~mockbroker.core.transactions.markers`); a partition with no leader keeps its marker
waiting until it has one, and the transaction stays in PrepareCommit or PrepareAbort meanwhile
(its producer gets CONCURRENT_TRANSACTIONS).  Transaction version 2 (KIP-890, EndTxn v5 and
Produce v12) bumps the producer epoch at every commit or abort and writes the markers with the
new epoch; older clients keep one epoch per InitProducerId.  Time comes only from the cluster's
clock: the timeout of an ongoing transaction fences its producer and aborts it.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable

from msgspec import field

from mockbroker.core.cluster import Cluster, Partition
from mockbroker.core.coordinators.placement import TRANSACTION_TOPIC
from mockbroker.core.coordinators.sharded import CoordinatorShard, ShardedCoordinator
from mockbroker.core.datapath.producers import ProducerIds
from mockbroker.core.errors import ApiException
from mockbroker.core.transactions import markers, records
from mockbroker.core.transactions.metadata import (EPOCH_EXHAUSTED, MAX_EPOCH,
                                                   NO_PRODUCER_EPOCH, NO_PRODUCER_ID,
                                                   TxnMetadata)
from mockbroker.core.transactions.state import Event, TxnState
from wire import errors

#: how long a marker waits before it is tried again when its partition has no leader
MARKER_RETRY_MS = 100
#: transaction versions (KIP-890): what a client's request versions say it speaks; 2 ends
#: every transaction with an epoch bump and adds partitions as they are written to
TV_0, TV_2 = 0, 2


_UNREACHABLE = (errors.NOT_COORDINATOR, errors.COORDINATOR_NOT_AVAILABLE,
                errors.COORDINATOR_LOAD_IN_PROGRESS)


def write_check_error(code: int, *, unreachable: int, abortable_known: bool,
                      concurrent_retried: bool = True) -> int:
    """What a writer is told when the coordinator refuses the first transactional write of a
    transaction to a partition (Kafka's ``AddPartitionsToTxnManager`` and the callers' own
    mappings): a coordinator it cannot reach is ``unreachable`` (a code its client retries), as
    is a coordinator still completing the last transaction unless ``concurrent_retried``; a
    fenced producer INVALID_PRODUCER_EPOCH; a partition never added TRANSACTION_ABORTABLE when
    the request's version knows that error (``abortable_known``), else INVALID_TXN_STATE."""
    if code in _UNREACHABLE or (code == errors.CONCURRENT_TRANSACTIONS and
                                not concurrent_retried):
        return unreachable
    if code == errors.PRODUCER_FENCED:
        return errors.INVALID_PRODUCER_EPOCH
    if code == errors.TRANSACTION_ABORTABLE and not abortable_known:
        return errors.INVALID_TXN_STATE
    return code


class TxnShard(CoordinatorShard):
    """The transactional ids of one ``__transaction_state`` partition, as loaded by its
    current leader; the coordinator epoch is the partition's leader epoch."""

    txns: dict[str, TxnMetadata] = field(default_factory=dict)


class TransactionCoordinator(ShardedCoordinator[TxnShard]):
    """The transactions of every broker, in shards over ``__transaction_state``.

    As in Kafka, a partition is not loaded while the topic's partition count is not the
    configured one (a topic created by hand): its shard stays loading, and its ids are answered
    COORDINATOR_LOAD_IN_PROGRESS until the topic is deleted."""

    topic_name = TRANSACTION_TOPIC
    partitions_config = "transaction.state.log.num.partitions"
    replication_config = "transaction.state.log.replication.factor"
    shard_type = TxnShard
    strict_partition_count = True

    def __init__(self, cluster: Cluster, settings: dict, producer_ids: ProducerIds, *,
                 load_delay_ms: int = 0):
        self.producer_ids = producer_ids
        #: called with (``__consumer_offsets`` partition, producer id, commit) when a marker
        #: lands there: the group coordinator settles the transaction's offsets
        self.offsets_marker_listeners: list[Callable[[Partition, int, bool], None]] = []
        #: transactions with markers still to write
        self._awaiting_markers: dict[str, TxnMetadata] = {}
        #: transactional ids whose open transaction was fenced (timed out or aborted by an
        #: admin) and is being aborted: the abort's event says so
        self._fenced: set[str] = set()
        self._marker_retry = None
        self._periodic_started = False
        super().__init__(cluster, settings, load_delay_ms=load_delay_ms)
        # markers waiting for a partition's leader are tried again when it has one
        cluster.leadership_listeners.append(self._on_data_leader)

    def _schedule(self, interval_ms: int, job: Callable[[], object]) -> None:
        def run() -> None:
            try:
                job()
            finally:
                self.cluster.timers.call_later(interval_ms, run)

        self.cluster.timers.call_later(interval_ms, run)

    # -- where transactional ids live ------------------------------------------------------------

    def find(self, transactional_id: str) -> TxnMetadata | None:
        """The transaction, wherever it is loaded (admin and inspection), or None."""
        shard = self.shard_of(transactional_id)
        return None if shard is None or shard.loading else shard.txns.get(transactional_id)

    def loaded(self, broker_id: int | None = None) -> Iterable[tuple[TxnShard, TxnMetadata]]:
        """Every loaded transaction (those ``broker_id`` coordinates, when given)."""
        for shard in self.loaded_shards(broker_id):
            for meta in list(shard.txns.values()):
                yield shard, meta

    def _write(self, meta: TxnMetadata) -> None:
        partition = self.placement.partition(meta.transactional_id)
        records.append(partition, self.now, [records.metadata_record(meta)])
        self.cluster.notify_append(partition)

    # -- loading and unloading shards ------------------------------------------------------------

    def _on_data_leader(self, partition: Partition) -> None:
        if partition.leader != -1 and self._awaiting_markers and \
                partition.topic.name != TRANSACTION_TOPIC:
            self._retry_markers()

    def on_unloaded(self, shard: TxnShard) -> None:
        """Markers of the shard's transactions are no longer this coordinator's to write."""
        for meta in shard.txns.values():
            self._awaiting_markers.pop(meta.transactional_id, None)

    def _start_periodic(self) -> None:
        """The timeout and expiry checks run from when ``__transaction_state`` exists."""
        if self._periodic_started:
            return
        self._periodic_started = True
        self._schedule(
            self.settings["transaction_abort_timed_out_transaction_cleanup_interval_ms"],
            self.abort_timed_out)
        self._schedule(
            self.settings["transaction_remove_expired_transaction_cleanup_interval_ms"],
            self.remove_expired)

    def load(self, partition: Partition) -> None:
        """Load a partition of ``__transaction_state``; the first load starts the checks."""
        self._start_periodic()
        super().load(partition)

    def replay(self, shard: TxnShard, partition: Partition) -> None:
        shard.txns = records.replay(partition.log)

    def on_loaded(self, shard: TxnShard) -> None:
        """A commit or abort the last coordinator did not finish: this one finishes it."""
        for meta in shard.txns.values():
            if meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
                meta.pending_markers = set(meta.partitions)
                self._send_markers(shard, meta)

    # -- InitProducerId --------------------------------------------------------------------------

    def init_producer_id(self, broker_id: int, transactional_id: str, timeout_ms: int,
                         expected_producer_id: int = NO_PRODUCER_ID,
                         expected_epoch: int = NO_PRODUCER_EPOCH) -> tuple[int, int]:
        """(producer id, epoch) for a transactional producer starting up; ApiException
        otherwise.  A transaction still open from the last epoch is fenced and aborted, and the
        producer is told CONCURRENT_TRANSACTIONS to retry once the abort is done.  An expected
        (producer id, epoch) is KIP-360's: a producer bumping its own epoch."""
        if not transactional_id:
            raise ApiException(errors.INVALID_REQUEST, "the transactional id is empty")
        if not 0 < timeout_ms <= self.settings["transaction_max_timeout_ms"]:
            raise ApiException(errors.INVALID_TRANSACTION_TIMEOUT, (
                f"transaction timeout {timeout_ms} ms is not in (0, "
                f"transaction.max.timeout.ms={self.settings['transaction_max_timeout_ms']}]"))
        shard = self.shard_for(transactional_id, broker_id)
        meta = shard.txns.get(transactional_id)
        now = self.now
        if meta is None:
            meta = shard.txns[transactional_id] = TxnMetadata(
                transactional_id, self.producer_ids.next_id(), NO_PRODUCER_EPOCH, timeout_ms,
                last_update_ms=now)
        expected = expected_producer_id != NO_PRODUCER_ID
        if expected and not (
                meta.producer_epoch == NO_PRODUCER_EPOCH
                or expected_producer_id == meta.producer_id
                or (expected_producer_id == meta.previous_producer_id
                    and expected_epoch >= EPOCH_EXHAUSTED)):
            raise ApiException(errors.PRODUCER_FENCED, (
                f"producer {expected_producer_id} epoch {expected_epoch} is not the current "
                f"producer of {transactional_id!r}"))
        state = meta.state
        if state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            raise ApiException(errors.CONCURRENT_TRANSACTIONS,
                               f"the last transaction of {transactional_id!r} is completing")
        if state is TxnState.ONGOING:
            self._fence_and_abort(shard, meta)
            raise ApiException(errors.CONCURRENT_TRANSACTIONS, (
                f"the open transaction of {transactional_id!r} is being aborted"))
        if meta.epoch_exhausted and (not expected or expected_epoch == meta.producer_epoch):
            last = meta.producer_epoch if expected else NO_PRODUCER_EPOCH
            meta.previous_producer_id = meta.producer_id
            meta.producer_id = self.producer_ids.next_id()
            meta.producer_epoch, meta.last_producer_epoch = 0, last
        elif not expected:
            meta.producer_epoch += 1
            meta.last_producer_epoch = NO_PRODUCER_EPOCH
        elif meta.producer_epoch == NO_PRODUCER_EPOCH or expected_epoch == meta.producer_epoch:
            meta.last_producer_epoch = meta.producer_epoch
            meta.producer_epoch += 1
        elif expected_epoch != meta.last_producer_epoch:
            raise ApiException(errors.PRODUCER_FENCED, (
                f"epoch {expected_epoch} of producer {expected_producer_id} is neither the "
                f"current {meta.producer_epoch} nor the last"))
        # else a retry of a bump that succeeded: the current epoch, as it was answered
        meta.timeout_ms = timeout_ms
        meta.partitions = set()
        meta.start_ms = -1
        self._fire(meta, Event.PRODUCER_INITIALIZED, now)
        self._write(meta)
        return meta.producer_id, meta.producer_epoch

    # -- adding partitions -----------------------------------------------------------------------

    def _current(self, broker_id: int, transactional_id: str, producer_id: int,
                 epoch: int) -> tuple[TxnShard, TxnMetadata]:
        """The transaction a request of the producer (``producer_id``, ``epoch``) acts on."""
        if not transactional_id:
            raise ApiException(errors.INVALID_REQUEST, "the transactional id is empty")
        shard = self.shard_for(transactional_id, broker_id)
        meta = shard.txns.get(transactional_id)
        if meta is None or meta.producer_id != producer_id:
            raise ApiException(errors.INVALID_PRODUCER_ID_MAPPING, (
                f"producer {producer_id} is not the producer of {transactional_id!r}"))
        if meta.producer_epoch != epoch:
            raise ApiException(errors.PRODUCER_FENCED, (
                f"epoch {epoch} of producer {producer_id} is not the current "
                f"{meta.producer_epoch}"))
        return shard, meta

    def add_partitions(self, broker_id: int, transactional_id: str, producer_id: int,
                       epoch: int, partitions: Iterable[tuple[str, int]], *,
                       client_version: int = TV_0) -> None:
        """Partitions join the producer's transaction (starting it); ApiException otherwise."""
        shard, meta = self._current(broker_id, transactional_id, producer_id, epoch)
        wanted = set(partitions)
        if meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            raise ApiException(errors.CONCURRENT_TRANSACTIONS, (
                f"the last transaction of {transactional_id!r} is completing"))
        if meta.state is TxnState.ONGOING and wanted <= meta.partitions:
            return
        now = self.now
        if meta.state is not TxnState.ONGOING:
            meta.partitions = set()
            meta.start_ms = now
        meta.partitions |= wanted
        meta.client_version = client_version
        self._fire(meta, Event.PARTITIONS_ADDED, now)
        self._write(meta)

    def verify(self, broker_id: int, transactional_id: str, producer_id: int, epoch: int,
               partition: tuple[str, int]) -> None:
        """Whether ``partition`` is in the producer's ongoing transaction (a broker's check of
        a transactional write, KIP-890); ApiException with the coordinator's word otherwise:
        TRANSACTION_ABORTABLE when the partition was not added."""
        _, meta = self._current(broker_id, transactional_id, producer_id, epoch)
        if meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            raise ApiException(errors.CONCURRENT_TRANSACTIONS)
        if partition not in meta.partitions:
            raise ApiException(errors.TRANSACTION_ABORTABLE, (
                f"{partition[0]}-{partition[1]} was not added to the transaction of "
                f"{transactional_id!r}"))

    def check_write(self, transactional_id: str, producer_id: int, epoch: int,
                    partition: tuple[str, int], *, add: bool) -> None:
        """A partition leader's check before the first transactional write of a producer's
        transaction (KIP-890): with ``add`` (Produce v12+ and TxnOffsetCommit v5+, transaction
        version 2) the partition joins the transaction, else it must be in it already.  Raises
        ApiException with the coordinator's code (the caller says it in its own API's terms)."""
        coordinator = self.placement.coordinator_for(transactional_id)
        if add:
            self.add_partitions(coordinator, transactional_id, producer_id, epoch,
                                [partition], client_version=TV_2)
        else:
            self.verify(coordinator, transactional_id, producer_id, epoch, partition)

    # -- ending a transaction --------------------------------------------------------------------

    def end_txn(self, broker_id: int, transactional_id: str, producer_id: int, epoch: int,
                commit: bool, *, client_version: int = TV_0) -> tuple[int, int]:
        """Commit or abort; (producer id, epoch) the producer holds afterwards (a new epoch with
        transaction version 2).  ApiException when the transaction cannot end so."""
        if client_version >= TV_2:
            return self._end_txn_v2(broker_id, transactional_id, producer_id, epoch, commit)
        shard, meta = self._current(broker_id, transactional_id, producer_id, epoch)
        state = meta.state
        if state is TxnState.ONGOING:
            meta.client_version = client_version
            self._prepare_end(shard, meta, Event.COMMIT_REQUESTED if commit
                              else Event.ABORT_REQUESTED)
            return meta.producer_id, meta.producer_epoch
        done = TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT
        preparing = TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT
        if state is done:
            return meta.producer_id, meta.producer_epoch  # a retry of what happened
        if state is preparing:
            raise ApiException(errors.CONCURRENT_TRANSACTIONS)
        raise ApiException(errors.INVALID_TXN_STATE, (
            f"cannot {'commit' if commit else 'abort'} a transaction in {state.value}"))

    def _end_txn_v2(self, broker_id: int, transactional_id: str, producer_id: int, epoch: int,
                    commit: bool) -> tuple[int, int]:
        """EndTxn v5: every end bumps the epoch, and a retry of the end that made the last bump
        is recognised by its epoch (one behind) and answered as before."""
        if not transactional_id:
            raise ApiException(errors.INVALID_REQUEST, "the transactional id is empty")
        shard = self.shard_for(transactional_id, broker_id)
        meta = shard.txns.get(transactional_id)
        if meta is None:
            raise ApiException(errors.INVALID_PRODUCER_ID_MAPPING, (
                f"{transactional_id!r} has no producer"))
        state = meta.state
        retry_on_bump = meta.producer_epoch == epoch + 1
        retry_on_overflow = producer_id == meta.previous_producer_id \
            and epoch == EPOCH_EXHAUSTED and meta.producer_epoch == 0
        is_retry = retry_on_bump or retry_on_overflow
        if producer_id != meta.producer_id and not retry_on_overflow:
            raise ApiException(errors.INVALID_PRODUCER_ID_MAPPING, (
                f"producer {producer_id} is not the producer of {transactional_id!r}"))
        if state in (TxnState.ONGOING, TxnState.EMPTY):
            valid = epoch == meta.producer_epoch
        elif state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            valid = retry_on_bump
        else:
            valid = is_retry or epoch == meta.producer_epoch
        if not valid:
            raise ApiException(errors.PRODUCER_FENCED, (
                f"epoch {epoch} of producer {producer_id} is not the current "
                f"{meta.producer_epoch}"))
        done = TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT
        preparing = TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT
        if state is TxnState.ONGOING:
            event = Event.COMMIT_REQUESTED if commit else Event.ABORT_REQUESTED
        elif state is preparing:
            raise ApiException(errors.CONCURRENT_TRANSACTIONS)
        elif state is done and is_retry:
            return meta.producer_id, meta.producer_epoch
        elif state.complete and not commit and not is_retry:
            event = Event.EMPTY_ABORT_REQUESTED  # nothing was added: an abort still bumps
        else:
            raise ApiException(errors.INVALID_TXN_STATE, (
                f"cannot {'commit' if commit else 'abort'} a transaction in {state.value}"))
        meta.client_version = TV_2
        self._bump_for_end(meta)
        if event is Event.EMPTY_ABORT_REQUESTED:
            meta.partitions = set()
            meta.start_ms = self.now
        self._prepare_end(shard, meta, event)
        if meta.next_producer_id != NO_PRODUCER_ID:
            return meta.next_producer_id, 0
        return meta.producer_id, meta.producer_epoch

    def _bump_for_end(self, meta: TxnMetadata) -> None:
        """Transaction version 2 ends each transaction with a new epoch; an exhausted one takes
        the last epoch for the markers and hands the producer a new id."""
        meta.last_producer_epoch = meta.producer_epoch
        if meta.epoch_exhausted:
            meta.next_producer_id = self.producer_ids.next_id()
        if meta.producer_epoch < MAX_EPOCH:
            meta.producer_epoch += 1

    def _fire(self, meta: TxnMetadata, event: Event, now: int) -> None:
        """Step ``meta`` by ``event``, and tell the event log what changed."""
        before = meta.state
        after = meta.fire(event, now)
        if after is before:
            return
        emit, txn_id = self.cluster.events.emit, meta.transactional_id
        emit("transaction_state", transactional_id=txn_id, producer_id=meta.producer_id,
             producer_epoch=meta.producer_epoch, **{"from": before.value, "to": after.value})
        partitions = [f"{topic}-{index}" for topic, index in sorted(meta.partitions)]
        if after is TxnState.ONGOING:
            emit("transaction_begun", transactional_id=txn_id, producer_id=meta.producer_id,
                 producer_epoch=meta.producer_epoch)
        elif after is TxnState.PREPARE_EPOCH_FENCE:
            self._fenced.add(txn_id)
        elif after is TxnState.COMPLETE_COMMIT:
            emit("transaction_committed", transactional_id=txn_id, partitions=partitions)
        elif after is TxnState.COMPLETE_ABORT:
            emit("transaction_aborted", transactional_id=txn_id, partitions=partitions,
                 fenced=txn_id in self._fenced)
            self._fenced.discard(txn_id)

    def _prepare_end(self, shard: TxnShard, meta: TxnMetadata, event: Event) -> None:
        self._fire(meta, event, self.now)
        self._write(meta)
        meta.pending_markers = set(meta.partitions)
        self._send_markers(shard, meta)

    def _fence_and_abort(self, shard: TxnShard, meta: TxnMetadata) -> None:
        """Fence the producer of an ongoing transaction (a new epoch it does not know) and
        abort the transaction, as Kafka does for an InitProducerId from a new instance or a
        timeout.  The coordinator ends it at the cluster's transaction version (2): the epoch
        before the fence is kept as the last, so the fenced producer's own abort (EndTxn v5)
        is answered as a retry and it carries on with the new epoch."""
        self._fire(meta, Event.FENCED, self.now)
        meta.client_version = TV_2
        self._bump_for_end(meta)
        self._prepare_end(shard, meta, Event.FENCED_ABORT)

    # -- describing and listing (kafka-transactions.sh) ------------------------------------------

    def describe(self, broker_id: int, transactional_id: str) -> TxnMetadata:
        """DescribeTransactions of one id on ``broker_id``: ApiException unless it coordinates
        the id and knows it."""
        if not transactional_id:
            raise ApiException(errors.INVALID_REQUEST, "the transactional id is empty")
        meta = self.shard_for(transactional_id, broker_id).txns.get(transactional_id)
        if meta is None or meta.state is TxnState.DEAD:
            raise ApiException(errors.TRANSACTIONAL_ID_NOT_FOUND)
        return meta

    def list(self, broker_id: int, *, states: Iterable[str] = (),
             producer_ids: Iterable[int] = (), min_duration_ms: int = -1,
             pattern: str | None = None) -> tuple[list[TxnMetadata], list[str]]:
        """ListTransactions on ``broker_id``: the transactions it coordinates that pass every
        filter given, and the state names no state has.  Kafka's rules: a duration keeps those
        started longer ago than it (an idle id, never started, always passes), a pattern must
        match the whole id."""
        self.led_shards(broker_id)  # raises while one of them still loads
        names = {state.value for state in TxnState}
        states, producer_ids = set(states), set(producer_ids)
        unknown = sorted(states - names)
        try:
            regex = re.compile(pattern) if pattern else None
        except re.error as exc:
            raise ApiException(errors.INVALID_REGULAR_EXPRESSION, str(exc)) from None
        now = self.now
        found = []
        for _, meta in self.loaded(broker_id):
            if meta.state is TxnState.DEAD or (states and meta.state.value not in states) or \
                    (producer_ids and meta.producer_id not in producer_ids) or \
                    (min_duration_ms >= 0 and now - meta.start_ms <= min_duration_ms) or \
                    (regex is not None and not regex.fullmatch(meta.transactional_id)):
                continue
            found.append(meta)
        return found, unknown

    # -- markers ---------------------------------------------------------------------------------

    def write_marker(self, broker_id: int, topic: str, index: int, producer_id: int,
                     epoch: int, commit: bool, coordinator_epoch: int) -> None:
        """WriteTxnMarkers on ``broker_id``, the partition leader: a marker a coordinator (or an
        admin aborting a hanging transaction) asks for.  ApiException when the partition is
        unknown, led elsewhere, or the producer has a newer epoch there."""
        partition = self.cluster.partition(topic, index)
        if partition is None:
            raise ApiException(errors.UNKNOWN_TOPIC_OR_PARTITION)
        if partition.leader != broker_id:
            raise ApiException(errors.NOT_LEADER_OR_FOLLOWER)
        markers.write(partition, producer_id, epoch, commit, coordinator_epoch, self.now)
        self.cluster.notify_append(partition)
        self._marker_written(partition, producer_id, commit)

    def _marker_written(self, partition: Partition, producer_id: int, commit: bool) -> None:
        if partition.topic.internal and partition.topic.name != TRANSACTION_TOPIC:
            for listener in self.offsets_marker_listeners:
                listener(partition, producer_id, commit)

    def _send_markers(self, shard: TxnShard, meta: TxnMetadata) -> None:
        commit = meta.state is TxnState.PREPARE_COMMIT
        for topic, index in sorted(meta.pending_markers):
            partition = self.cluster.partition(topic, index)
            if partition is not None and partition.leader == -1:
                continue  # no leader to write it: it waits
            if partition is not None:
                markers.write(partition, meta.producer_id, meta.producer_epoch, commit,
                              shard.leader_epoch, self.now)
                self.cluster.notify_append(partition)
                self._marker_written(partition, meta.producer_id, commit)
            meta.pending_markers.discard((topic, index))
        if meta.pending_markers:
            self._awaiting_markers[meta.transactional_id] = meta
            if self._marker_retry is None:
                self._marker_retry = self.cluster.timers.call_later(MARKER_RETRY_MS,
                                                                    self._retry_markers)
            return
        self._awaiting_markers.pop(meta.transactional_id, None)
        self._fire(meta, Event.MARKERS_WRITTEN, self.now)
        meta.partitions = set()
        if meta.next_producer_id != NO_PRODUCER_ID:
            meta.previous_producer_id = meta.producer_id
            meta.producer_id, meta.producer_epoch = meta.next_producer_id, 0
            meta.next_producer_id = NO_PRODUCER_ID
            meta.last_producer_epoch = NO_PRODUCER_EPOCH
        self._write(meta)

    def _retry_markers(self) -> None:
        if self._marker_retry is not None:
            self._marker_retry.cancel()
            self._marker_retry = None
        for meta in list(self._awaiting_markers.values()):
            shard = self.shard_of(meta.transactional_id)
            if shard is None or shard.loading or shard.txns.get(meta.transactional_id) is not meta:
                self._awaiting_markers.pop(meta.transactional_id, None)
                continue
            self._send_markers(shard, meta)

    # -- timeouts and expiry ---------------------------------------------------------------------

    def abort_timed_out(self) -> list[str]:
        """Abort every ongoing transaction past its timeout, fencing its producer; returns the
        transactional ids aborted."""
        now = self.now
        aborted = []
        for shard, meta in self.loaded():
            if meta.state is TxnState.ONGOING and meta.start_ms + meta.timeout_ms < now:
                self._fence_and_abort(shard, meta)
                aborted.append(meta.transactional_id)
        return aborted

    def abort_now(self, transactional_id: str) -> TxnMetadata:
        """Time the transaction out now (an admin's fault injection); KeyError when the id is
        not loaded, ApiException when it has no open transaction."""
        meta = self.find(transactional_id)
        if meta is None:
            raise KeyError(transactional_id)
        if meta.state is not TxnState.ONGOING:
            raise ApiException(errors.INVALID_TXN_STATE,
                               f"{transactional_id!r} has no open transaction ({meta.state.value})")
        shard = self.shard_of(transactional_id)
        self._fence_and_abort(shard, meta)
        return meta

    def remove_expired(self) -> list[str]:
        """Forget transactional ids unused for ``transactional.id.expiration.ms``."""
        now = self.now
        expiry = self.settings["transactional_id_expiration_ms"]
        removed = []
        for shard, meta in self.loaded():
            if meta.state.complete and meta.last_update_ms + expiry <= now:
                self._fire(meta, Event.EXPIRED, now)
                partition = self.placement.partition(meta.transactional_id)
                records.append(partition, now, [records.tombstone(meta.transactional_id)])
                self.cluster.notify_append(partition)
                del shard.txns[meta.transactional_id]
                removed.append(meta.transactional_id)
        return removed
