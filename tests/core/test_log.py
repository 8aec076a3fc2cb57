"""A partition's log and the data path in front of it, with no sockets: offsets, idempotent
producers (duplicates, gaps, fenced epochs), batch validation, reads, timestamps and the
leader-epoch cache, each as Apache Kafka answers it."""

from __future__ import annotations

import gc
import sys

import pytest

from mockbroker.core.datapath import fetch, produce
from mockbroker.core.clock import ManualClock
from mockbroker.core.log import INT32_MAX, PartitionLog
from mockbroker.core.errors import ApiException
from tests.core.harness import make_core, send
import wire
from wire import errors, records

TS = 1_600_000_000_000


def batch(n: int = 2, *, ts: int = TS, tag: str = "r", **kwargs) -> bytes:
    return records.encode_batch([(f"{tag}{i}".encode(), f"{tag}-value-{i}".encode(),
                                  [("h", b"%d" % i)], ts + i) for i in range(n)], **kwargs)


def idempotent(n: int, seq: int, *, pid: int = 7, epoch: int = 0, **kwargs) -> bytes:
    return batch(n, producer_id=pid, producer_epoch=epoch, base_sequence=seq, **kwargs)


def append(log: PartitionLog, data_: bytes, *, leader_epoch: int = 0, now_ms: int = TS * 2,
           **kwargs):
    return log.append(data_, records.read_batch_header(data_), leader_epoch, now_ms, **kwargs)


def rejected(log: PartitionLog, data_: bytes, **kwargs) -> int:
    with pytest.raises(ApiException) as info:
        append(log, data_, **kwargs)
    return info.value.error_code


def produce_to(core, partition, data_: bytes, now_ms: int):
    """A client's records for ``partition``, sent to its leader with acks=all."""
    return produce.append_records(core.cluster, partition, data_, acks=-1,
                                  broker_id=partition.leader, client_id="c", now_ms=now_ms)


def stored(log: PartitionLog) -> list[records.Record]:
    return [r for b in log.batches for r in records.decode_records(b.data)]


@pytest.fixture
def core():
    core = make_core(clock=ManualClock(TS * 2))
    core.cluster.create_topic("t", 1)
    return core


@pytest.fixture
def partition(core):
    return core.cluster.topics["t"].partitions[0]


# -- offsets -------------------------------------------------------------------------------------

def test_appends_take_the_next_offsets_and_the_leader_epoch_without_breaking_the_crc():
    log = PartitionLog()
    assert append(log, batch(3)).base_offset == 0
    assert append(log, batch(2, tag="s"), leader_epoch=4).base_offset == 3
    assert (log.log_end_offset, log.high_watermark) == (5, 5)
    headers = [records.check_batch(b.data) for b in log.batches]  # CRCs still hold
    assert [(h.base_offset, h.partition_leader_epoch) for h in headers] == [(0, 0), (3, 4)]
    assert [(r.offset, r.key) for r in stored(log)] == [
        (0, b"r0"), (1, b"r1"), (2, b"r2"), (3, b"s0"), (4, b"s1")]


# -- idempotent producers ------------------------------------------------------------------------

def test_each_of_the_last_five_batches_is_a_duplicate_with_its_original_offset():
    log = PartitionLog()
    sent = [idempotent(2, 2 * i, ts=TS + 100 * i) for i in range(6)]
    offsets = [append(log, b).base_offset for b in sent]
    assert offsets == [0, 2, 4, 6, 8, 10]
    for b, offset, i in list(zip(sent, offsets, range(6)))[1:]:
        result = append(log, b)
        # Kafka reports the original batch's max timestamp as a duplicate's append time
        assert (result.duplicate, result.base_offset, result.log_append_time) == \
            (True, offset, TS + 100 * i + 1)
    assert log.log_end_offset == 12
    # the sixth-newest batch is forgotten: its sequence is now simply out of order
    assert rejected(log, sent[0]) == errors.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_a_sequence_gap_is_out_of_order_and_leaves_the_producer_as_it_was():
    log = PartitionLog()
    append(log, idempotent(3, 0))
    assert rejected(log, idempotent(1, 4)) == errors.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert rejected(log, idempotent(1, 2)) == errors.OUT_OF_ORDER_SEQUENCE_NUMBER  # overlaps
    assert append(log, idempotent(1, 3)).base_offset == 3
    assert log.log_end_offset == 4


def test_an_older_epoch_is_fenced_and_a_newer_one_starts_at_sequence_zero():
    log = PartitionLog()
    append(log, idempotent(2, 0, epoch=3))
    assert rejected(log, idempotent(1, 2, epoch=2)) == errors.INVALID_PRODUCER_EPOCH
    assert rejected(log, idempotent(1, 2, epoch=4)) == errors.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert append(log, idempotent(1, 0, epoch=4)).base_offset == 2
    assert rejected(log, idempotent(1, 2, epoch=3)) == errors.INVALID_PRODUCER_EPOCH
    # a duplicate is only a duplicate within its own epoch
    assert rejected(log, idempotent(2, 0, epoch=3)) == errors.INVALID_PRODUCER_EPOCH


def test_a_producer_new_to_the_partition_may_start_at_any_sequence():
    log = PartitionLog()
    assert append(log, idempotent(2, 40, pid=1)).base_offset == 0
    assert append(log, idempotent(2, 0, pid=2)).base_offset == 2
    assert append(log, idempotent(1, 42, pid=1)).base_offset == 4


def test_sequences_wrap_after_int32_max():
    log = PartitionLog()
    append(log, idempotent(3, INT32_MAX - 1))  # INT32_MAX - 1, INT32_MAX, 0
    assert rejected(log, idempotent(1, INT32_MAX + 1 - (1 << 31) + 5)) == \
        errors.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert append(log, idempotent(1, 1)).base_offset == 3
    assert append(log, idempotent(3, INT32_MAX - 1)).duplicate


def test_batches_without_a_producer_id_are_never_deduplicated():
    log = PartitionLog()
    plain = batch(2)
    assert [append(log, plain).base_offset for _ in range(3)] == [0, 2, 4]


# -- validation in front of the log ----------------------------------------------------------

def test_a_bad_crc_is_corrupt_message_and_nothing_is_written(core, partition):
    data_ = bytearray(batch(3))
    data_[-1] ^= 0x01
    result = produce_to(core, partition, bytes(data_), TS)
    assert (result.error_code, result.base_offset) == (errors.CORRUPT_MESSAGE, -1)
    assert partition.log.log_end_offset == 0


@pytest.mark.parametrize("where", ["broker", "topic"])
def test_a_batch_past_max_message_bytes_is_message_too_large(where):
    settings = {"message_max_bytes": 500} if where == "broker" else {}
    core = make_core(clock=ManualClock(TS), **settings)
    configs = {"max.message.bytes": "500"} if where == "topic" else {}
    partition = core.cluster.create_topic("t", 1, configs=configs).partitions[0]
    large, small = batch(20), batch(2)
    assert len(small) <= 500 < len(large)
    assert produce_to(core, partition, large, TS).error_code == errors.MESSAGE_TOO_LARGE
    assert produce_to(core, partition, small, TS).error_code == errors.NONE
    assert partition.log.log_end_offset == 2


@pytest.mark.parametrize("bad", [
    pytest.param(batch(2, base_offset=3), id="base offset not zero"),
    pytest.param(batch(2, last_offset_delta=5), id="last offset delta beyond the records"),
    pytest.param(batch(1, is_control=True), id="control batch"),
    pytest.param(batch(1, producer_id=5, producer_epoch=0), id="producer id without sequence"),
])
def test_batches_a_client_may_not_write_are_invalid_record(core, partition, bad):
    result = produce_to(core, partition, bad, TS)
    assert (result.error_code, result.base_offset) == (errors.INVALID_RECORD, -1)
    assert partition.log.log_end_offset == 0


def legacy_magic() -> bytes:
    out = bytearray(batch(2))
    out[records.MAGIC_OFFSET] = 1
    return bytes(out)


@pytest.mark.parametrize("records_, code", [
    pytest.param(batch(1) + batch(1), errors.INVALID_RECORD, id="two batches"),
    pytest.param(b"", errors.INVALID_RECORD, id="no batch"),
    pytest.param(batch(2)[:-1], errors.INVALID_RECORD, id="partial batch"),
    pytest.param(legacy_magic(), errors.INVALID_RECORD, id="magic 1"),
    pytest.param(b"\x00" * 8 + b"\x00\x00\x00\x05" + b"\x00" * 10, errors.CORRUPT_MESSAGE,
                 id="length shorter than a header"),
    pytest.param(None, errors.CORRUPT_MESSAGE, id="null"),
])
def test_a_produce_carries_exactly_one_v2_batch_per_partition(records_, code):
    refused = produce.check_request_records(records_)
    assert refused is not None and refused.error_code == code
    assert produce.check_request_records(batch(3)) is None


def test_log_append_time_topic_stamps_batches_with_the_append_time():
    core = make_core(clock=ManualClock(TS))
    partition = core.cluster.create_topic(
        "t", 1, configs={"message.timestamp.type": "LogAppendTime"}).partitions[0]
    result = produce_to(core, partition, batch(3, ts=5, compression=records.GZIP),
                          TS + 77)
    assert (result.error_code, result.log_append_time) == (errors.NONE, TS + 77)
    assert [r.timestamp for r in stored(partition.log)] == [TS + 77] * 3
    assert fetch.list_offset(partition, -3) == (0, TS + 77, 0)


def test_a_refused_idempotent_batch_reports_the_log_start_offset(core, partition):
    produce_to(core, partition, idempotent(2, 0), TS)
    partition.log.delete_records_before(1)
    result = produce_to(core, partition, idempotent(1, 9), TS)
    assert (result.error_code, result.log_start_offset) == \
        (errors.OUT_OF_ORDER_SEQUENCE_NUMBER, 1)


# -- reads -----------------------------------------------------------------------------------

def test_reads_return_whole_batches_and_at_least_one():
    log = PartitionLog()
    sizes = [len(b) for b in (batch(5), batch(5, tag="s"), batch(5, tag="u"))]
    for tag in ("r", "s", "u"):
        append(log, batch(5, tag=tag))
    assert len(log.read(0, 1)) == sizes[0]  # one batch even past max_bytes
    assert log.read(0, 1, at_least_one=False) == b""
    assert len(log.read(0, sizes[0] + sizes[1] - 1)) == sizes[0]
    assert len(log.read(0, sum(sizes))) == sum(sizes)
    middle = log.read(7, 1)  # from inside a batch: that whole batch
    assert [r.offset for _, v in records.split_batches(middle)
            for r in records.decode_records(v)] == list(range(5, 10))
    assert log.read(15, 1000) == b"" and log.read(99, 1000) == b""
    log.delete_records_before(7)
    assert log.read(3, 1000) == b""
    assert records.read_batch_header(log.read(7, 1)).base_offset == 5


@pytest.mark.parametrize("version", [4, 12])  # a classic and a compact records field
def test_a_fetch_answers_with_the_stored_batches_large_or_small(core, partition, version):
    large = [records.encode_batch([(b"L%d%d" % (i, j), b"v" * 2000, [], TS + j)
                                   for j in range(3)]) for i in range(3)]
    small = [batch(1, tag=f"s{i}") for i in range(40)]
    for data_ in large + small:
        produce_to(core, partition, data_, TS * 2)
    lengths = [len(b) for b in large + small]
    assert sum(lengths[:3]) >= fetch.JOIN_BELOW_BYTES * 3  # read as a list of batches
    assert sum(lengths[3:]) < fetch.JOIN_BELOW_BYTES * 40  # read joined

    def fetched(offset: int) -> bytes:
        cls = wire.request_class(1)
        body = cls(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20, topics=[
            cls.FetchTopic(topic="t", topic_id=partition.topic.topic_id, partitions=[
                cls.FetchPartition(partition=0, fetch_offset=offset,
                                   partition_max_bytes=1 << 20)])])
        (answer,) = send(core, 1, version, body).responses[0].partitions
        assert answer.error_code == errors.NONE
        return answer.records

    for offset, count, keys in ((0, 43, [b"L00", b"L01", b"L02", b"L10"]),
                                (9, 40, [b"s00", b"s10", b"s20", b"s30"])):
        got = fetched(offset)
        assert got == partition.log.read(offset, 1 << 20)
        assert [len(v) for _, v in records.split_batches(got)] == lengths[-count:]
        assert [r.key for _, v in records.split_batches(got)
                for r in records.decode_records(v)][:4] == keys


def test_offsets_by_timestamp_and_the_max_timestamp():
    log = PartitionLog()
    append(log, records.encode_batch([(b"a", b"", (), TS + 10), (b"b", b"", (), TS + 30),
                                      (b"c", b"", (), TS + 20)]))
    append(log, records.encode_batch([(b"d", b"", (), TS + 30), (b"e", b"", (), TS + 5)]),
           leader_epoch=2)
    assert log.offset_for_timestamp(TS) == (0, TS + 10, 0)
    assert log.offset_for_timestamp(TS + 11) == (1, TS + 30, 0)
    assert log.offset_for_timestamp(TS + 31) is None
    assert log.max_timestamp() == (1, TS + 30, 0)  # the first record with the largest
    log.delete_records_before(2)
    assert log.offset_for_timestamp(TS) == (2, TS + 20, 0)
    assert log.max_timestamp() == (3, TS + 30, 2)
    assert PartitionLog().max_timestamp() is None


def test_list_offset_earliest_latest_and_special_timestamps(partition):
    log = partition.log
    assert fetch.list_offset(partition, -2) == (0, -1, 0)
    assert fetch.list_offset(partition, -1) == (0, -1, 0)
    for special in (-3, -5, -6, TS):
        assert fetch.list_offset(partition, special) == (-1, -1, -1)
    append(log, batch(3))
    partition.leader_epoch = 3
    append(log, batch(2), leader_epoch=3)
    log.delete_records_before(4)
    assert fetch.list_offset(partition, -2) == (4, -1, 3)
    assert fetch.list_offset(partition, -4) == (4, -1, 3)
    assert fetch.list_offset(partition, -1) == (5, -1, 3)
    assert fetch.list_offset(partition, TS) == (4, TS + 1, 3)


# -- the leader-epoch cache --------------------------------------------------------------------

def test_end_offsets_for_epochs_as_kafkas_epoch_cache_answers():
    log = PartitionLog()
    # a leader's epoch begins when it takes over, before anything is written
    assert log.end_offset_for_epoch(0, leader_epoch=0) == (0, 0)
    assert log.end_offset_for_epoch(0) == (-1, -1)
    append(log, batch(3), leader_epoch=1)
    append(log, batch(2), leader_epoch=3)
    append(log, batch(1), leader_epoch=3)
    assert log.epoch_entries(3) == [(1, 0), (3, 3)]
    assert log.end_offset_for_epoch(3, leader_epoch=3) == (3, 6)
    assert log.end_offset_for_epoch(2, leader_epoch=3) == (1, 3)  # epoch 2 wrote nothing
    assert log.end_offset_for_epoch(1, leader_epoch=3) == (1, 3)
    assert log.end_offset_for_epoch(0, leader_epoch=3) == (0, 0)  # older than any known
    assert log.end_offset_for_epoch(4, leader_epoch=3) == (-1, -1)  # not known yet
    assert log.end_offset_for_epoch(-1, leader_epoch=3) == (-1, -1)
    # a new leader of epoch 5 has written nothing yet: epoch 3 ends at the log end
    assert log.epoch_entries(5) == [(1, 0), (3, 3), (5, 6)]
    assert log.end_offset_for_epoch(3, leader_epoch=5) == (3, 6)
    assert log.end_offset_for_epoch(5, leader_epoch=5) == (5, 6)


def test_deleting_records_moves_the_first_epoch_up_to_the_log_start():
    log = PartitionLog()
    append(log, batch(3), leader_epoch=1)
    append(log, batch(3), leader_epoch=2)
    append(log, batch(3), leader_epoch=4)
    log.delete_records_before(5)
    assert log.epoch_entries(4) == [(2, 5), (4, 6)]
    assert log.epoch_at_start(4) == 2
    assert log.end_offset_for_epoch(1, leader_epoch=4) == (1, 5)
    assert log.end_offset_for_epoch(3, leader_epoch=4) == (2, 6)
    log.delete_records_before(9)  # everything
    assert log.epoch_entries(4) == [(4, 9)]
    assert log.epoch_entries(6) == [(6, 9)]  # a new leader's epoch replaces one starting there
    assert log.epoch_at_start(6) == 6


# -- a deleted topic -----------------------------------------------------------------------------


def long_poll(core, partition, offset: int):
    cls = wire.request_class(1)
    body = cls(replica_id=-1, max_wait_ms=30000, min_bytes=1, max_bytes=1 << 20, topics=[
        cls.FetchTopic(topic="t", partitions=[
            cls.FetchPartition(partition=0, fetch_offset=offset,
                               partition_max_bytes=1 << 20)])])
    return send(core, 1, 12, body)


def test_a_fetch_waiting_on_a_deleted_topic_is_answered_at_once(core, partition):
    produce_to(core, partition, batch(3), TS * 2)
    waiting = long_poll(core, partition, 3)
    assert not waiting.done  # nothing past offset 3 yet
    core.cluster.delete_topic("t")
    assert waiting.done  # not at its max wait, 30 s on
    (answer,) = waiting.value.responses[0].partitions
    assert answer.error_code == errors.UNKNOWN_TOPIC_OR_PARTITION
    assert answer.high_watermark == -1 and answer.records in (None, b"")


def test_a_deleted_topic_lets_go_of_its_records_at_once(core, partition):
    for i in range(5):
        produce_to(core, partition, batch(2, tag=f"d{i}"), TS * 2)
    stored_before = partition.log
    assert stored_before.size_bytes > 0
    enabled = gc.isenabled()
    gc.disable()  # what the records are freed by must not be the cycle collector
    try:
        core.cluster.delete_topic("t")
        assert partition.deleted
        assert partition.log.batches == [] and partition.log.size_bytes == 0
        # the log that held them is referred to by this test alone (and getrefcount's
        # argument): nothing of the deleted topic keeps it
        assert sys.getrefcount(stored_before) == 2
    finally:
        if enabled:
            gc.enable()


def test_answers_without_records_still_say_where_the_partition_is(core, partition):
    # an idle consumer's empty answers are kept encoded; each must still carry the
    # partition's offsets as they are when it is answered
    def empty_answer(offset: int):
        cls = wire.request_class(1)
        body = cls(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20,
                   isolation_level=1, topics=[cls.FetchTopic(topic="t", partitions=[
                       cls.FetchPartition(partition=0, fetch_offset=offset,
                                          partition_max_bytes=1 << 20)])])
        (answer,) = send(core, 1, 12, body).responses[0].partitions
        assert answer.records in (None, b"")
        return (answer.error_code, answer.high_watermark, answer.last_stable_offset,
                answer.log_start_offset)

    produce_to(core, partition, batch(3), TS * 2)
    assert empty_answer(3) == empty_answer(3) == (errors.NONE, 3, 3, 0)
    produce_to(core, partition, batch(2, tag="more"), TS * 2)
    assert empty_answer(5) == (errors.NONE, 5, 5, 0)
    core.cluster.delete_records("t", 0, 4, partition.leader)
    assert empty_answer(5) == (errors.NONE, 5, 5, 4)
    assert empty_answer(9)[0] == errors.OFFSET_OUT_OF_RANGE
