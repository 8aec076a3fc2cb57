"""The transaction coordinator, driven by requests as clients frame them, on a manual clock.

Kafka 4.4 is the reference (its ``TransactionCoordinator`` and ``TransactionMetadata``); the
state table is held against Kafka's own ``TransactionState`` class, run from its jar.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import wire
from mockbroker.core.clock import ManualClock
from mockbroker.core.transactions import records as txn_records
from mockbroker.core.transactions.state import (TRANSITIONS, Event, TxnState, mermaid,
                                                previous_states)
from tests.core.harness import START_MS, make_core, send
from wire import errors, records
from wire.definitions import KAFKA_VERSION

ROOT = Path(__file__).resolve().parents[2]
JARS = ROOT / ".cache" / "jars"
TID = "txn-1"
READ_COMMITTED, READ_UNCOMMITTED = 1, 0


class Txn:
    """A cluster on a manual clock, and one transactional producer's requests."""

    def __init__(self, brokers: int = 1, **settings):
        self.clock = ManualClock(START_MS)
        self.core = make_core(brokers, clock=self.clock, **settings)
        self.core.cluster.create_topic("t", 3, 1)
        self.sequences: dict[tuple[int, str, int], int] = {}

    @property
    def tc(self):
        return self.core.transactions

    def coordinator(self, tid: str = TID) -> int:
        return self.core.transactions.placement.coordinator_for(tid)

    def meta(self, tid: str = TID):
        return self.tc.find(tid)

    def state(self, tid: str = TID) -> str:
        return self.meta(tid).state.value

    # requests --------------------------------------------------------------------------------

    def init(self, tid: str = TID, *, timeout: int = 60_000, version: int = 5,
             pid: int = -1, epoch: int = -1, broker: int | None = None):
        return send(self.core, 22, version, broker=self.coordinator(tid) if broker is None
                    else broker, transactional_id=tid, transaction_timeout_ms=timeout,
                    producer_id=pid, producer_epoch=epoch)

    def start(self, tid: str = TID, **kw) -> tuple[int, int]:
        answer = self.init(tid, **kw)
        assert answer.error_code == errors.NONE, answer
        return answer.producer_id, answer.producer_epoch

    def add(self, pid: int, epoch: int, *partitions: tuple[str, int], tid: str = TID,
            version: int = 3) -> dict[tuple[str, int], int]:
        cls = wire.request_class(24)
        by_topic: dict[str, list[int]] = {}
        for topic, index in partitions:
            by_topic.setdefault(topic, []).append(index)
        answer = send(self.core, 24, version, broker=self.coordinator(tid),
                      v3_and_below_transactional_id=tid, v3_and_below_producer_id=pid,
                      v3_and_below_producer_epoch=epoch, v3_and_below_topics=[
                          cls.AddPartitionsToTxnTopic(name=t, partitions=ps)
                          for t, ps in by_topic.items()])
        return {(t.name, r.partition_index): r.partition_error_code
                for t in answer.results_by_topic_v3_and_below for r in t.results_by_partition}

    def end(self, pid: int, epoch: int, commit: bool, *, tid: str = TID, version: int = 4):
        return send(self.core, 26, version, broker=self.coordinator(tid), transactional_id=tid,
                    producer_id=pid, producer_epoch=epoch, committed=commit)

    def produce(self, pid: int, epoch: int, partition: int, *values: bytes, tid: str | None = TID,
                version: int = 11, transactional: bool = True, topic: str = "t") -> int:
        """Produce ``values`` as one batch; the partition's error code (offsets: :meth:`log`)."""
        key = (pid, topic, partition)
        seq = self.sequences.get(key, 0)
        now = self.clock.now_ms()
        batch = records.encode_batch([(None, v, [], now) for v in values], producer_id=pid,
                                     producer_epoch=epoch, base_sequence=seq,
                                     is_transactional=transactional)
        cls = wire.request_class(0)
        leader = self.core.cluster.partition(topic, partition).leader
        answer = send(self.core, 0, version, broker=leader, transactional_id=tid, acks=-1,
                      timeout_ms=1000, topic_data=[cls.TopicProduceData(
                          name=topic, partition_data=[cls.PartitionProduceData(
                              index=partition, records=batch)])])
        (part,) = answer.responses[0].partition_responses
        if part.error_code == errors.NONE:
            self.sequences[key] = seq + len(values)
        return part.error_code

    def fetch(self, partition: int, offset: int = 0, *, isolation: int = READ_COMMITTED,
              topic: str = "t"):
        cls = wire.request_class(1)
        body = cls(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20,
                   isolation_level=isolation, session_id=0, session_epoch=-1,
                   topics=[cls.FetchTopic(topic=topic,
                                          topic_id=self.core.cluster.topics[topic].topic_id,
                                          partitions=[cls.FetchPartition(
                                              partition=partition, current_leader_epoch=-1,
                                              fetch_offset=offset, last_fetched_epoch=-1,
                                              partition_max_bytes=1 << 20)])])
        leader = self.core.cluster.partition(topic, partition).leader
        (part,) = send(self.core, 1, 16, body, broker=leader).responses[0].partitions
        return part

    def read(self, partition: int, *, isolation: int = READ_COMMITTED,
             topic: str = "t") -> list[bytes]:
        """What a consumer with ``isolation`` sees: data records below the fetch's limit,
        without control batches and without records of the aborted transactions it is told
        of (as clients filter them)."""
        part = self.fetch(partition, isolation=isolation, topic=topic)
        aborted = sorted((a.first_offset, a.producer_id)
                         for a in part.aborted_transactions or [])
        seen = []
        skipping: set[int] = set()
        for header, batch in records.split_batches(part.records or b""):
            for first, pid in list(aborted):
                if first <= header.base_offset:
                    skipping.add(pid)
                    aborted.remove((first, pid))
            if header.is_control:
                skipping.discard(header.producer_id)
                continue
            if isolation == READ_COMMITTED and header.producer_id in skipping:
                continue
            seen.extend(r.value for r in records.decode_records(batch))
        return seen

    def log(self, partition: int, topic: str = "t"):
        return self.core.cluster.partition(topic, partition).log

    def markers(self, partition: int, topic: str = "t") -> list[tuple[int, int, bool]]:
        """(producer id, epoch, commit) of every marker in the partition, in order."""
        found = []
        for stored in self.log(partition, topic).batches:
            header = records.read_batch_header(stored.data)
            if header.is_control:
                (record,) = records.decode_records(stored.data)
                found.append((header.producer_id, header.producer_epoch,
                              records.decode_control_record(record).is_commit))
        return found


# -- the state table -----------------------------------------------------------------------------

def _kafka_state_table() -> list[str]:
    classpath = [JARS / f"kafka-transaction-coordinator-{KAFKA_VERSION}.jar",
                 JARS / f"kafka-clients-{KAFKA_VERSION}.jar", JARS / "slf4j-api-1.7.36.jar"]
    missing = [str(p) for p in classpath if not p.exists()]
    assert not missing and shutil.which("java"), \
        f"this test runs Kafka's own state table: it needs java and {missing} " \
        f"(bash ci/dev.sh setup fetches them)"
    out = subprocess.run(["java", "-cp", ":".join(map(str, classpath)),
                          str(Path(__file__).with_name("java") / "TransactionStates.java")],
                         capture_output=True, text=True, timeout=120, check=True)
    return out.stdout.split("\n")[:-1]


def test_the_state_table_is_kafkas():
    previous = previous_states()
    ours = [f"{s.log_id} {s.value} {str(s.complete).lower()} "
            f"{','.join(sorted(p.value for p in previous[s]))}"
            for s in sorted(TxnState, key=lambda s: s.log_id)]
    assert ours == _kafka_state_table()


def test_the_diagram_in_the_package_documentation_is_the_table():
    readme = (ROOT / "mockbroker" / "core" / "transactions" / "README.md").read_text()
    assert "```mermaid\n" + mermaid() + "```" in readme


def _stuck_partition(h: Txn) -> tuple[str, int]:
    """A partition whose leader is stopped, so a marker for it waits (three brokers)."""
    h.core.cluster.create_topic("stuck", 1, 1)
    partition = h.core.cluster.partition("stuck", 0)
    coordinator = h.coordinator()
    if partition.leader == coordinator:
        other = next(b for b in h.core.cluster.brokers if b != coordinator)
        h.core.cluster.delete_topic("stuck")
        h.core.cluster.create_topic("stuck", -1, -1, None, [(0, [other])])
        partition = h.core.cluster.partition("stuck", 0)
    h.core.stop_broker(partition.leader)
    return ("stuck", 0)


def _to(h: Txn, state: TxnState) -> tuple[int, int]:
    """Bring TID to ``state`` through requests; its producer id and epoch."""
    pid, epoch = h.start()
    if state is TxnState.EMPTY:
        return pid, epoch
    if state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
        assert h.add(pid, epoch, _stuck_partition(h)) == {("stuck", 0): errors.NONE}
        assert h.end(pid, epoch, state is TxnState.PREPARE_COMMIT).error_code == errors.NONE
        return pid, epoch
    assert h.add(pid, epoch, ("t", 0)) == {("t", 0): errors.NONE}
    if state in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
        assert h.end(pid, epoch, state is TxnState.COMPLETE_COMMIT).error_code == errors.NONE
    return pid, epoch


def _fire(h: Txn, event: Event, pid: int, epoch: int) -> None:
    """Make ``event`` happen to TID as Kafka's clients and timers make it happen."""
    if event is Event.PRODUCER_INITIALIZED:
        assert h.init().error_code == errors.NONE
    elif event is Event.PARTITIONS_ADDED:
        assert h.add(pid, epoch, ("t", 1)) == {("t", 1): errors.NONE}
    elif event in (Event.COMMIT_REQUESTED, Event.ABORT_REQUESTED):
        assert h.end(pid, epoch, event is Event.COMMIT_REQUESTED, version=4).error_code == 0
    elif event is Event.EMPTY_ABORT_REQUESTED:
        assert h.end(pid, epoch, False, version=5).error_code == errors.NONE
    elif event in (Event.FENCED, Event.FENCED_ABORT):
        assert h.init().error_code == errors.CONCURRENT_TRANSACTIONS
    elif event is Event.MARKERS_WRITTEN:
        stopped = next(b for b, broker in h.core.cluster.brokers.items() if not broker.alive)
        h.core.start_broker(stopped)
    elif event is Event.EXPIRED:
        h.clock.advance(h.core.settings["transactional_id_expiration_ms"]
                        + h.core.settings[
                            "transaction_remove_expired_transaction_cleanup_interval_ms"])
    else:  # pragma: no cover - a new event needs a way to fire it here
        raise AssertionError(event)


def _written(h: Txn, since: int = 0) -> list[str | None]:
    """The states TID's records in ``__transaction_state`` say, from the ``since``-th record
    on (None for a tombstone)."""
    partition = h.core.transactions.placement.partition(TID)
    said = []
    for stored in partition.log.batches:
        for record in records.decode_records(stored.data):
            if record.value is None:
                said.append(None)
                continue
            _, value = wire.decode_embedded("TransactionLogValue", bytes(record.value))
            said.append(TxnState.from_log_id(value.transaction_status).value)
    return said[since:]


@pytest.mark.parametrize("row", sorted(TRANSITIONS, key=lambda r: (r[0].log_id, r[1].name)),
                         ids=lambda r: f"{r[0].value}-{r[1].name}")
def test_every_row_of_the_state_table_is_reached_through_requests(row):
    """Each (state, event) of the table, made to happen as clients and timers make it happen:
    the next state is the first the coordinator writes.  PrepareEpochFence is never written
    (Kafka holds it only while the fence is under way): a fence writes the abort it leads to."""
    state, event = row
    h = Txn(brokers=3)
    reach = TxnState.ONGOING if state is TxnState.PREPARE_EPOCH_FENCE else state
    pid, epoch = _to(h, reach)
    assert h.meta().state is reach
    before = len(_written(h))
    _fire(h, event, pid, epoch)
    expected = TRANSITIONS[row]
    if expected is TxnState.PREPARE_EPOCH_FENCE:
        expected = TRANSITIONS[(expected, Event.FENCED_ABORT)]
    if expected is TxnState.DEAD:
        assert _written(h, before) == [None] and h.meta() is None  # a tombstone, and gone
    else:
        assert _written(h, before)[0] == expected.value


# -- InitProducerId ------------------------------------------------------------------------------

def test_init_bumps_the_epoch_of_a_transactional_id_and_keeps_its_producer_id():
    h = Txn()
    pid, epoch = h.start()
    assert epoch == 0
    assert h.start() == (pid, 1)
    assert h.state() == "Empty"


def test_init_refuses_a_timeout_over_the_maximum_and_an_empty_id():
    h = Txn(transaction_max_timeout_ms=60_000)
    assert h.init(timeout=60_001).error_code == errors.INVALID_TRANSACTION_TIMEOUT
    assert h.init(timeout=0).error_code == errors.INVALID_TRANSACTION_TIMEOUT
    assert h.init("", broker=0).error_code == errors.INVALID_REQUEST
    assert h.init(timeout=60_000).error_code == errors.NONE


def test_init_on_a_broker_that_is_not_the_coordinator():
    h = Txn(brokers=3)
    other = next(b for b in range(3) if b != h.coordinator())
    assert h.init(broker=other).error_code == errors.NOT_COORDINATOR


def test_kip_360_retry_of_a_bump_is_answered_with_the_same_epoch():
    h = Txn()
    pid, epoch = h.start()
    bumped = h.start(pid=pid, epoch=epoch)
    assert bumped == (pid, epoch + 1)
    assert h.start(pid=pid, epoch=epoch) == bumped  # the same request again: no second bump
    stale = h.init(pid=pid, epoch=epoch + 7)
    assert stale.error_code == errors.PRODUCER_FENCED
    assert h.init(pid=pid, epoch=epoch + 7, version=3).error_code == \
        errors.INVALID_PRODUCER_EPOCH


def test_an_exhausted_epoch_gives_a_new_producer_id():
    h = Txn()
    pid, _ = h.start()
    h.meta().producer_epoch = 32766
    new_pid, epoch = h.start()
    assert (new_pid != pid, epoch) == (True, 0)
    assert h.meta().previous_producer_id == pid


# -- fencing -------------------------------------------------------------------------------------

def test_a_new_instance_fences_the_open_transaction_which_is_aborted():
    h = Txn()
    pid, epoch = h.start()
    assert h.add(pid, epoch, ("t", 0)) == {("t", 0): errors.NONE}
    assert h.produce(pid, epoch, 0, b"zombie") == errors.NONE
    assert h.init().error_code == errors.CONCURRENT_TRANSACTIONS  # the abort comes first
    assert h.state() == "CompleteAbort"
    assert h.markers(0) == [(pid, epoch + 1, False)]  # written with the fencing epoch
    new_pid, new_epoch = h.start()
    assert (new_pid, new_epoch) == (pid, epoch + 2)
    # the zombie, at its old epoch, is refused everywhere, as Kafka refuses it
    assert h.produce(pid, epoch, 0, b"late") == errors.INVALID_PRODUCER_EPOCH
    assert h.add(pid, epoch, ("t", 1)) == {("t", 1): errors.PRODUCER_FENCED}
    assert h.add(pid, epoch, ("t", 1), version=1) == {("t", 1): errors.INVALID_PRODUCER_EPOCH}
    assert h.end(pid, epoch, True, version=4).error_code == errors.PRODUCER_FENCED
    assert h.end(pid, epoch, True, version=1).error_code == errors.INVALID_PRODUCER_EPOCH
    assert h.read(0) == []
    assert h.read(0, isolation=READ_UNCOMMITTED) == [b"zombie"]


def test_a_timed_out_transaction_is_aborted_and_its_producer_fenced():
    h = Txn(transaction_abort_timed_out_transaction_cleanup_interval_ms=1000)
    pid, epoch = h.start(timeout=5000)
    assert h.add(pid, epoch, ("t", 2)) == {("t", 2): errors.NONE}
    assert h.produce(pid, epoch, 2, b"slow") == errors.NONE
    h.clock.advance(5000)
    assert h.state() == "Ongoing"  # not past its timeout yet
    h.clock.advance(1001)
    assert h.state() == "CompleteAbort"
    assert h.meta().producer_epoch == epoch + 1
    assert h.markers(2) == [(pid, epoch + 1, False)]
    assert h.end(pid, epoch, True, version=4).error_code == errors.PRODUCER_FENCED
    # a transaction version 2 producer's own abort is taken as a retry of the one done for it,
    # and it carries on with the new epoch
    retried = h.end(pid, epoch, False, version=5)
    assert (retried.error_code, retried.producer_id, retried.producer_epoch) == \
        (errors.NONE, pid, epoch + 1)
    assert h.read(2) == []


# -- ending ---------------------------------------------------------------------------------------

def test_end_txn_answers_as_kafka_for_each_state_before_version_5():
    h = Txn()
    pid, epoch = h.start()
    assert h.end(pid, epoch, True).error_code == errors.INVALID_TXN_STATE  # Empty
    assert h.add(pid, epoch, ("t", 0)) == {("t", 0): errors.NONE}
    assert h.end(pid, epoch, True).error_code == errors.NONE
    assert h.end(pid, epoch, True).error_code == errors.NONE  # a retry of the commit
    assert h.end(pid, epoch, False).error_code == errors.INVALID_TXN_STATE
    assert h.end(pid + 1, epoch, True).error_code == errors.INVALID_PRODUCER_ID_MAPPING
    assert h.end(pid, epoch, True, tid="unknown").error_code == \
        errors.INVALID_PRODUCER_ID_MAPPING


def test_end_txn_v5_bumps_the_epoch_and_recognises_its_retry():
    h = Txn()
    pid, epoch = h.start()
    assert h.add(pid, epoch, ("t", 0)) == {("t", 0): errors.NONE}
    first = h.end(pid, epoch, True, version=5)
    assert (first.error_code, first.producer_id, first.producer_epoch) == (0, pid, epoch + 1)
    assert h.markers(0) == [(pid, epoch + 1, True)]
    again = h.end(pid, epoch, True, version=5)  # the answer was lost: the same request again
    assert (again.error_code, again.producer_epoch) == (errors.NONE, epoch + 1)
    assert h.end(pid, epoch, False, version=5).error_code == errors.INVALID_TXN_STATE
    # an abort with nothing added still bumps; a commit with nothing added is refused
    empty = h.end(pid, epoch + 1, False, version=5)
    assert (empty.error_code, empty.producer_epoch) == (errors.NONE, epoch + 2)
    assert h.end(pid, epoch + 2, True, version=5).error_code == errors.INVALID_TXN_STATE
    assert h.end(pid, epoch + 7, False, version=5).error_code == errors.PRODUCER_FENCED


def test_end_txn_v5_with_an_exhausted_epoch_hands_over_a_new_producer_id():
    h = Txn()
    pid, _ = h.start()
    h.meta().producer_epoch = 32766
    assert h.add(pid, 32766, ("t", 0)) == {("t", 0): errors.NONE}
    ended = h.end(pid, 32766, True, version=5)
    assert ended.error_code == errors.NONE and ended.producer_id != pid
    assert ended.producer_epoch == 0
    assert h.markers(0) == [(pid, 32767, True)]  # the old id's last epoch
    assert (h.meta().producer_id, h.meta().producer_epoch) == (ended.producer_id, 0)
    again = h.end(pid, 32766, True, version=5)
    assert (again.error_code, again.producer_id) == (errors.NONE, ended.producer_id)


def test_add_partitions_checks_every_partition_before_adding_any():
    h = Txn()
    pid, epoch = h.start()
    assert h.add(pid, epoch, ("t", 0), ("t", 9), ("nope", 0)) == {
        ("t", 0): errors.OPERATION_NOT_ATTEMPTED, ("t", 9): errors.UNKNOWN_TOPIC_OR_PARTITION,
        ("nope", 0): errors.UNKNOWN_TOPIC_OR_PARTITION}
    assert h.state() == "Empty"
    assert h.add(pid + 1, epoch, ("t", 0)) == {("t", 0): errors.INVALID_PRODUCER_ID_MAPPING}


# -- the data path -------------------------------------------------------------------------------

def test_read_committed_stops_at_the_first_open_transaction_and_skips_aborted_ones():
    h = Txn()
    a_pid, a_epoch = h.start("a")
    b_pid, b_epoch = h.start("b")
    assert h.add(a_pid, a_epoch, ("t", 0), tid="a") == {("t", 0): errors.NONE}
    assert h.add(b_pid, b_epoch, ("t", 0), tid="b") == {("t", 0): errors.NONE}
    assert h.produce(-1, -1, 0, b"plain-1", tid=None, transactional=False) == errors.NONE
    assert h.produce(a_pid, a_epoch, 0, b"a-1", tid="a") == errors.NONE  # offset 1
    assert h.produce(b_pid, b_epoch, 0, b"b-1", tid="b") == errors.NONE
    assert h.produce(-1, -1, 0, b"plain-2", tid=None, transactional=False) == errors.NONE
    assert h.log(0).last_stable_offset == 1
    assert h.read(0) == [b"plain-1"]
    assert h.fetch(0).last_stable_offset == 1
    assert h.end(b_pid, b_epoch, True, tid="b").error_code == errors.NONE
    assert h.read(0) == [b"plain-1"]  # still held back by a's open transaction
    assert h.end(a_pid, a_epoch, False, tid="a").error_code == errors.NONE
    assert h.log(0).last_stable_offset == h.log(0).high_watermark
    assert h.read(0) == [b"plain-1", b"b-1", b"plain-2"]
    part = h.fetch(0)
    assert [(a.producer_id, a.first_offset) for a in part.aborted_transactions] == [(a_pid, 1)]
    assert h.read(0, isolation=READ_UNCOMMITTED) == [b"plain-1", b"a-1", b"b-1", b"plain-2"]


def test_read_committed_at_or_past_the_last_stable_offset_reads_nothing_and_no_aborts():
    # a position past the last stable offset (committed by a read_uncommitted consumer) inside
    # an aborted transaction that began before the open one: Kafka reads nothing there, and
    # names no aborted transaction either
    h = Txn()
    a_pid, a_epoch = h.start("a")
    b_pid, b_epoch = h.start("b")
    assert h.add(b_pid, b_epoch, ("t", 0), tid="b") == {("t", 0): errors.NONE}
    assert h.produce(b_pid, b_epoch, 0, b"b-1", tid="b") == errors.NONE  # offset 0
    assert h.add(a_pid, a_epoch, ("t", 0), tid="a") == {("t", 0): errors.NONE}
    assert h.produce(a_pid, a_epoch, 0, b"a-1", tid="a") == errors.NONE  # offset 1
    assert h.produce(b_pid, b_epoch, 0, b"b-2", tid="b") == errors.NONE  # offset 2
    assert h.end(b_pid, b_epoch, False, tid="b").error_code == errors.NONE  # marker at 3
    assert h.log(0).last_stable_offset == 1  # a's transaction is open from offset 1
    for offset in (1, 2):
        part = h.fetch(0, offset)
        assert (part.error_code, part.last_stable_offset, part.high_watermark) == \
            (errors.NONE, 1, 4)
        assert (bytes(part.records or b""), part.aborted_transactions) == (b"", [])
    # read from the start it gets b's first record with b named as aborted
    part = h.fetch(0, 0)
    assert [(a.producer_id, a.first_offset) for a in part.aborted_transactions] == [(b_pid, 0)]


def test_list_offsets_latest_for_read_committed_is_the_last_stable_offset():
    h = Txn()
    pid, epoch = h.start()
    assert h.produce(-1, -1, 1, b"x", tid=None, transactional=False) == errors.NONE
    assert h.add(pid, epoch, ("t", 1)) == {("t", 1): errors.NONE}
    assert h.produce(pid, epoch, 1, b"open") == errors.NONE

    def latest(isolation: int) -> int:
        cls = wire.request_class(2)
        answer = send(h.core, 2, 9, replica_id=-1, isolation_level=isolation, topics=[
            cls.ListOffsetsTopic(name="t", partitions=[cls.ListOffsetsPartition(
                partition_index=1, timestamp=-1, current_leader_epoch=-1)])])
        return answer.topics[0].partitions[0].offset

    assert (latest(READ_COMMITTED), latest(READ_UNCOMMITTED)) == (1, 2)


def test_a_transactional_write_must_be_in_the_transaction_or_added_by_produce_v12():
    h = Txn()
    pid, epoch = h.start()
    assert h.produce(pid, epoch, 0, b"x", tid=None) == \
        errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    assert h.produce(pid, epoch, 0, b"x", version=10) == errors.INVALID_TXN_STATE
    assert h.produce(pid, epoch, 0, b"x", version=11) == errors.TRANSACTION_ABORTABLE
    assert h.state() == "Empty"
    assert h.produce(pid, epoch, 0, b"x", version=12) == errors.NONE  # added implicitly
    assert (h.state(), h.meta().partitions) == ("Ongoing", {("t", 0)})
    assert h.produce(pid, epoch, 0, b"plain", transactional=False) == errors.INVALID_TXN_STATE


def test_the_coordinator_unreachable_is_a_retriable_error_for_a_producer():
    h = Txn(brokers=3)
    pid, epoch = h.start()
    h.core.transactions.load_delay_ms = 10_000
    for partition in h.core.cluster.topics["__transaction_state"].partitions:
        if partition.leader == h.coordinator():
            h.core.cluster.set_leader(partition, partition.leader)  # reloading
    assert h.produce(pid, epoch, 0, b"x", version=12) == errors.NOT_ENOUGH_REPLICAS


# -- offsets in transactions ------------------------------------------------------------------------

def _txn_offset_commit(h: Txn, pid: int, epoch: int, group: str, offset: int, *,
                       version: int = 3) -> int:
    cls = wire.request_class(28)
    answer = send(h.core, 28, version, broker=h.core.groups.placement.coordinator_for(group),
                  transactional_id=TID, group_id=group, producer_id=pid, producer_epoch=epoch,
                  generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
                  topics=[cls.TxnOffsetCommitRequestTopic(name="t", partitions=[
                      cls.TxnOffsetCommitRequestPartition(
                          partition_index=0, committed_offset=offset,
                          committed_leader_epoch=-1, committed_metadata="")])])
    return answer.topics[0].partitions[0].error_code


def _offset_fetch(h: Txn, group: str, *, require_stable: bool) -> tuple[int, int]:
    cls = wire.request_class(9)
    answer = send(h.core, 9, 8, broker=h.core.groups.placement.coordinator_for(group),
                  require_stable=require_stable, groups=[cls.OffsetFetchRequestGroup(
                      group_id=group, topics=[cls.OffsetFetchRequestTopics(
                          name="t", partition_indexes=[0])])])
    part = answer.groups[0].topics[0].partitions[0]
    return part.error_code, part.committed_offset


def _add_offsets(h: Txn, pid: int, epoch: int, group: str) -> int:
    return send(h.core, 25, 3, broker=h.coordinator(), transactional_id=TID, producer_id=pid,
                producer_epoch=epoch, group_id=group).error_code


def test_offsets_committed_in_a_transaction_count_only_once_it_commits():
    h = Txn()
    pid, epoch = h.start()
    assert _txn_offset_commit(h, pid, epoch, "g", 5) == errors.INVALID_TXN_STATE  # not added
    assert _add_offsets(h, pid, epoch, "g") == errors.NONE
    assert _txn_offset_commit(h, pid, epoch, "g", 5) == errors.NONE
    assert _offset_fetch(h, "g", require_stable=False) == (errors.NONE, -1)
    assert _offset_fetch(h, "g", require_stable=True) == (errors.UNSTABLE_OFFSET_COMMIT, -1)
    assert h.end(pid, epoch, True).error_code == errors.NONE
    assert _offset_fetch(h, "g", require_stable=True) == (errors.NONE, 5)
    # the next transaction aborts: its offset is dropped
    assert _add_offsets(h, pid, epoch, "g") == errors.NONE
    assert _txn_offset_commit(h, pid, epoch, "g", 9) == errors.NONE
    assert h.end(pid, epoch, False).error_code == errors.NONE
    assert _offset_fetch(h, "g", require_stable=True) == (errors.NONE, 5)


def test_txn_offset_commit_v5_adds_the_group_to_the_transaction():
    h = Txn()
    pid, epoch = h.start()
    assert _txn_offset_commit(h, pid, epoch, "g", 3, version=5) == errors.NONE
    offsets_partition = h.core.groups.placement.partition("g").index
    assert h.meta().partitions == {("__consumer_offsets", offsets_partition)}
    assert _txn_offset_commit(h, pid, epoch + 1, "g", 3, version=5) == \
        errors.INVALID_PRODUCER_EPOCH
    ended = h.end(pid, epoch, True, version=5)
    assert ended.error_code == errors.NONE
    assert _offset_fetch(h, "g", require_stable=True) == (errors.NONE, 3)


def test_a_new_group_coordinator_rebuilds_transactional_offsets_from_the_log():
    h = Txn(brokers=3)
    pid, epoch = h.start()
    for group, commit in (("committed", True), ("aborted", False)):
        assert _add_offsets(h, pid, epoch, group) == errors.NONE
        assert _txn_offset_commit(h, pid, epoch, group, 7) == errors.NONE
        assert h.end(pid, epoch, commit).error_code == errors.NONE
    assert _add_offsets(h, pid, epoch, "open") == errors.NONE
    assert _txn_offset_commit(h, pid, epoch, "open", 8) == errors.NONE
    for group in ("committed", "aborted", "open"):
        partition = h.core.groups.placement.partition(group)
        other = next(b for b in partition.replicas if b != partition.leader)
        h.core.cluster.move_leader(partition, other)
    assert _offset_fetch(h, "committed", require_stable=True) == (errors.NONE, 7)
    assert _offset_fetch(h, "aborted", require_stable=True) == (errors.NONE, -1)
    assert _offset_fetch(h, "open", require_stable=True) == (errors.UNSTABLE_OFFSET_COMMIT, -1)
    assert h.end(pid, epoch, True).error_code == errors.NONE
    assert _offset_fetch(h, "open", require_stable=True) == (errors.NONE, 8)


# -- the coordinator's log and failover ----------------------------------------------------------

def test_every_state_is_written_to_transaction_state_in_kafkas_format():
    h = Txn()
    pid, epoch = h.start()
    assert h.add(pid, epoch, ("t", 0), ("t", 2)) == {("t", 0): 0, ("t", 2): 0}
    assert h.end(pid, epoch, True).error_code == errors.NONE
    partition = h.core.transactions.placement.partition(TID)
    written = []
    for stored in partition.log.batches:
        for record in records.decode_records(stored.data):
            _, key = wire.decode_embedded("TransactionLogKey", bytes(record.key))
            version, value = wire.decode_embedded("TransactionLogValue", bytes(record.value))
            written.append((key.transactional_id, version, value.producer_id,
                            value.producer_epoch, TxnState.from_log_id(value.transaction_status).value,
                            sorted((p.topic, i) for p in value.transaction_partitions or ()
                                   for i in p.partition_ids)))
    assert written == [
        (TID, 1, pid, 0, "Empty", []),
        (TID, 1, pid, 0, "Ongoing", [("t", 0), ("t", 2)]),
        (TID, 1, pid, 0, "PrepareCommit", [("t", 0), ("t", 2)]),
        (TID, 1, pid, 0, "CompleteCommit", []),
    ]
    assert txn_records.replay(partition.log)[TID].state is TxnState.COMPLETE_COMMIT


def test_a_commit_under_way_when_the_coordinator_dies_completes_on_the_new_one():
    h = Txn(brokers=3)
    h.core.cluster.create_topic("replicated", 1, 3)
    pid, epoch = h.start()
    stuck = _stuck_partition(h)
    assert h.add(pid, epoch, ("replicated", 0), stuck) == {("replicated", 0): 0, stuck: 0}
    assert h.produce(pid, epoch, 0, b"in-flight", topic="replicated") == errors.NONE
    assert h.end(pid, epoch, True).error_code == errors.NONE
    assert h.state() == "PrepareCommit"  # one marker cannot be written yet
    # the reachable partition has its marker already
    assert h.read(0, topic="replicated") == [b"in-flight"]
    old = h.coordinator()
    h.core.stop_broker(old)
    new = h.coordinator()
    assert new != old
    assert h.state() == "PrepareCommit"
    assert h.end(pid, epoch, True).error_code == errors.CONCURRENT_TRANSACTIONS
    assert h.init().error_code == errors.CONCURRENT_TRANSACTIONS
    stopped = next(b for b, broker in h.core.cluster.brokers.items()
                   if not broker.alive and b != old)
    h.core.start_broker(stopped)
    assert h.state() == "CompleteCommit"
    assert h.markers(*[stuck[1]], topic=stuck[0]) == [(pid, epoch, True)]
    assert h.end(pid, epoch, True).error_code == errors.NONE


# -- describing and listing ------------------------------------------------------------------------

def _list(h: Txn, version: int = 2, **filters):
    body = dict(state_filters=[], producer_id_filters=[], duration_filter=-1,
                transactional_id_pattern=None)
    body.update(filters)
    return send(h.core, 66, version, broker=h.coordinator(), **body)


def test_list_transactions_filters_as_kafka_does():
    h = Txn()
    a_pid, a_epoch = h.start()
    assert h.add(a_pid, a_epoch, ("t", 0)) == {("t", 0): errors.NONE}
    h.clock.advance(5000)
    b_pid, _ = h.start("txn-2")  # idle: never started, so older than any duration

    def listed(**filters) -> list[tuple[str, int, str]]:
        answer = _list(h, **filters)
        assert answer.error_code == errors.NONE
        return sorted((t.transactional_id, t.producer_id, t.transaction_state)
                      for t in answer.transaction_states)

    assert listed() == [(TID, a_pid, "Ongoing"), ("txn-2", b_pid, "Empty")]
    assert listed(state_filters=["Ongoing"]) == [(TID, a_pid, "Ongoing")]
    assert listed(producer_id_filters=[b_pid]) == [("txn-2", b_pid, "Empty")]
    assert listed(duration_filter=10_000) == [("txn-2", b_pid, "Empty")]
    assert listed(duration_filter=1000) == [(TID, a_pid, "Ongoing"), ("txn-2", b_pid, "Empty")]
    assert listed(transactional_id_pattern="txn-[0-9]") == \
        [(TID, a_pid, "Ongoing"), ("txn-2", b_pid, "Empty")]
    assert listed(transactional_id_pattern="txn") == []  # the whole id must match
    unknown = _list(h, state_filters=["Ongoing", "Sleeping"])
    assert list(unknown.unknown_state_filters) == ["Sleeping"]
    assert _list(h, transactional_id_pattern="(").error_code == errors.INVALID_REGULAR_EXPRESSION


def test_describe_transactions_and_producers():
    h = Txn(brokers=3)
    pid, epoch = h.start(timeout=30_000)
    assert h.add(pid, epoch, ("t", 0), ("t", 2)) == {("t", 0): 0, ("t", 2): 0}
    assert h.produce(-1, -1, 0, b"plain", tid=None, transactional=False) == errors.NONE
    assert h.produce(pid, epoch, 0, b"in-txn") == errors.NONE
    other = next(b for b in range(3) if b != h.coordinator())
    nobody = next(f"nobody-{i}" for i in range(100)
                  if h.coordinator(f"nobody-{i}") == h.coordinator())
    answer = send(h.core, 65, 0, broker=h.coordinator(), transactional_ids=[TID, nobody, ""])
    described, nobody, empty = answer.transaction_states
    assert (described.error_code, described.transaction_state, described.producer_id,
            described.producer_epoch, described.transaction_timeout_ms,
            described.transaction_start_time_ms) == (0, "Ongoing", pid, epoch, 30_000, START_MS)
    assert [(t.topic, list(t.partitions)) for t in described.topics] == [("t", [0, 2])]
    assert (nobody.error_code, empty.error_code) == (errors.TRANSACTIONAL_ID_NOT_FOUND,
                                                     errors.INVALID_REQUEST)
    wrong = send(h.core, 65, 0, broker=other, transactional_ids=[TID])
    assert wrong.transaction_states[0].error_code == errors.NOT_COORDINATOR

    cls = wire.request_class(61)
    leader = h.core.cluster.partition("t", 0).leader
    producers = send(h.core, 61, 0, broker=leader, topics=[
        cls.TopicRequest(name="t", partition_indexes=[0])]).topics[0].partitions[0]
    assert producers.error_code == errors.NONE
    assert [(p.producer_id, p.producer_epoch, p.last_sequence, p.current_txn_start_offset,
             p.coordinator_epoch) for p in producers.active_producers] == [(pid, 0, 0, 1, -1)]
    assert h.end(pid, epoch, True).error_code == errors.NONE
    after = send(h.core, 61, 0, broker=leader, topics=[
        cls.TopicRequest(name="t", partition_indexes=[0, 9])]).topics[0].partitions
    (entry,) = after[0].active_producers
    assert (entry.current_txn_start_offset, entry.coordinator_epoch) == \
        (-1, h.core.transactions.placement.partition(TID).leader_epoch)
    assert after[1].error_code == errors.UNKNOWN_TOPIC_OR_PARTITION


def test_api_versions_reports_the_finalized_transaction_and_group_versions():
    h = Txn()
    v4 = send(h.core, 18, 4, client_software_name="t", client_software_version="1")
    assert {(f.name, f.min_version_level, f.max_version_level) for f in v4.finalized_features} \
        == {("metadata.version", 33, 33), ("transaction.version", 2, 2),
            ("group.version", 1, 1), ("share.version", 2, 2), ("streams.version", 1, 1),
            ("eligible.leader.replicas.version", 1, 1)}
    assert {(f.name, f.min_version, f.max_version) for f in v4.supported_features} == \
        {("metadata.version", 7, 33), ("transaction.version", 0, 2), ("group.version", 0, 1),
         ("share.version", 0, 2), ("streams.version", 0, 1),
         ("eligible.leader.replicas.version", 0, 1)}
    # before v4 Kafka leaves out every feature whose supported minimum is 0
    v3 = send(h.core, 18, 3, client_software_name="t", client_software_version="1")
    assert [(f.name, f.min_version) for f in v3.supported_features] == [("metadata.version", 7)]
    assert len(v3.finalized_features) == 6 and v3.finalized_features_epoch >= 0
    served = {k.api_key: (k.min_version, k.max_version) for k in v4.api_keys}
    assert {key: served[key] for key in (22, 24, 25, 26, 27, 28, 61, 65, 66)} == {
        22: (0, 5), 24: (0, 5), 25: (0, 4), 26: (0, 5), 27: (1, 2), 28: (0, 6), 61: (0, 0),
        65: (0, 0), 66: (0, 2)}


def test_a_hanging_transaction_is_aborted_with_write_txn_markers_as_the_admin_does():
    """``kafka-transactions.sh abort``: the Admin finds the open transaction with
    DescribeProducers and has the partition leader write an abort marker for it."""
    h = Txn()
    pid, epoch = h.start()
    assert h.add(pid, epoch, ("t", 0)) == {("t", 0): errors.NONE}
    assert h.produce(pid, epoch, 0, b"hanging") == errors.NONE
    assert h.produce(-1, -1, 0, b"after", tid=None, transactional=False) == errors.NONE
    assert h.read(0) == []  # held back behind the open transaction
    cls = wire.request_class(27)

    def write(partitions, epoch_=epoch):
        answer = send(h.core, 27, 1, markers=[cls.WritableTxnMarker(
            producer_id=pid, producer_epoch=epoch_, transaction_result=False,
            coordinator_epoch=0, topics=[cls.WritableTxnMarkerTopic(
                name="t", partition_indexes=partitions)])])
        return [p.error_code for p in answer.markers[0].topics[0].partitions]

    assert write([0, 7]) == [errors.NONE, errors.UNKNOWN_TOPIC_OR_PARTITION]
    assert h.read(0) == [b"after"]
    assert h.log(0).last_stable_offset == h.log(0).high_watermark
    assert write([0], epoch_=epoch - 1) == [errors.INVALID_PRODUCER_EPOCH]


def test_producers_idle_past_producer_id_expiration_are_forgotten_unless_in_a_transaction():
    h = Txn(producer_id_expiration_ms=3_600_000, transaction_max_timeout_ms=7_200_000)
    pid, epoch = h.start(timeout=7_200_000)
    assert h.produce(9, 0, 1, b"idempotent", tid=None, transactional=False) == errors.NONE
    assert h.add(pid, epoch, ("t", 1)) == {("t", 1): errors.NONE}
    assert h.produce(pid, epoch, 1, b"open") == errors.NONE
    state = h.log(1).producer_state
    assert set(state.producers) == {9, pid}
    h.clock.advance(3_600_000 + h.core.settings["log_retention_check_interval_ms"])
    # the idle idempotent producer is gone; the one with a transaction open stays
    assert set(state.producers) == {pid}
    # a forgotten producer may start again anywhere, as on Kafka
    h.sequences[(9, "t", 1)] = 50
    assert h.produce(9, 0, 1, b"back", tid=None, transactional=False) == errors.NONE
