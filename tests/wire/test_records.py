"""Tests for wire.records: v2 record batches.

kafka-python 3.x carries an independent implementation of the v2 format
(kafka.record.default_records); batches are built with each implementation and read with the
other.  Golden bytes were written out by hand from the format description and checked against
kafka-python's builder and its pure-Python CRC-32C.
"""

from __future__ import annotations

import struct
import time
import tracemalloc

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st
from kafka.record._crc32c import crc as kp_pure_crc32c
from kafka.record.default_records import (
    ControlRecord as KPControlRecord, DefaultRecordBatch, DefaultRecordBatchBuilder,
)
from kafka.record.memory_records import MemoryRecords, MemoryRecordsBuilder

from wire import compression as comp
from wire import records as r
from wire.exceptions import CorruptRecordBatchError, DecodeError
from wire.records import BatchHeader, Record

CODECS = [comp.NONE, comp.GZIP, comp.SNAPPY, comp.LZ4, comp.ZSTD]
COMPRESSED = CODECS[1:]
codec_id = lambda k: comp.CODEC_NAMES[k]  # noqa: E731

TS = 1_700_000_000_000


# ============================================================================================
# helpers
# ============================================================================================

def kp_build(records, codec=comp.NONE, *, producer_id=-1, producer_epoch=-1, base_sequence=-1,
             transactional=False) -> bytes:
    """Build a batch with kafka-python: records are (offset_delta, ts, key, value, headers)."""
    builder = DefaultRecordBatchBuilder(2, codec, transactional, producer_id, producer_epoch,
                                        base_sequence, 1 << 24)
    for offset, ts, key, value, headers in records:
        assert builder.append(offset, ts, key, value, headers) is not None
    return bytes(builder.build())


def kp_read(batch: bytes):
    kb = DefaultRecordBatch(batch)
    assert kb.validate_crc()
    return kb, [(x.offset, x.timestamp, x.key, x.value, list(x.headers)) for x in kb]


def as_tuples(records):
    return [(x.offset, x.timestamp, x.key, x.value, list(x.headers)) for x in records]


def sample_records(n: int = 6):
    """Records exercising null keys/values, empty values, headers and timestamps going back."""
    out = []
    for i in range(n):
        key = None if i % 3 == 0 else b"key-%d" % i
        value = None if i % 4 == 1 else (b"" if i % 4 == 2 else b"value-%d-" % i * 40)
        headers = [] if i % 2 else [("h%d" % i, b"v" * i), ("null", None), ("ünïcödé", b"\x00")]
        ts = TS + (i * 7 if i != 3 else -5_000)           # one record earlier than the first
        out.append((i, ts, key, value, headers))
    return out


def small_allocations(fn, limit=2 << 20, seconds=1.0):
    """Run fn, which must raise CorruptRecordBatchError, quickly and without big allocations."""
    tracemalloc.start()
    try:
        started = time.perf_counter()
        with pytest.raises(CorruptRecordBatchError) as info:
            fn()
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert elapsed < seconds, elapsed
    assert peak < limit, peak
    return info.value


def recrc(batch: bytearray) -> bytes:
    """Fix up the CRC after tampering with bytes inside the CRC-covered region."""
    struct.pack_into(">I", batch, 17, kp_pure_crc32c(bytes(batch[21:])))
    return bytes(batch)


def raw_batch(records_blob: bytes, *, count: int, last_offset_delta: int, attributes: int = 0,
              base_offset: int = 0) -> bytes:
    """Assemble a batch around an arbitrary records section, with a correct CRC."""
    buf = bytearray(61) + records_blob
    struct.pack_into(">qiibIhiqqqhii", buf, 0, base_offset, len(buf) - 12, 0, 2, 0, attributes,
                     last_offset_delta, TS, TS, -1, -1, -1, count)
    return recrc(buf)


def uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def zz(n: int) -> bytes:
    return uvarint((n << 1) ^ (n >> 63) if n < 0 else n << 1)


def record_blob(body: bytes) -> bytes:
    return zz(len(body)) + body


# ============================================================================================
# golden bytes
# ============================================================================================

# One record, key b"k", value b"v", timestamp 1000, baseOffset 0, partitionLeaderEpoch 0,
# no producer (-1/-1/-1).  Written out field by field:
GOLDEN_ONE = bytes.fromhex(
    "0000000000000000"      # baseOffset 0
    "0000003a"              # batchLength 58 = 49 header bytes after this field + 9 record bytes
    "00000000"              # partitionLeaderEpoch 0
    "02"                    # magic 2
    "716a6189"              # CRC-32C of everything from attributes on
    "0000"                  # attributes: no compression, CreateTime
    "00000000"              # lastOffsetDelta 0
    "00000000000003e8"      # baseTimestamp 1000
    "00000000000003e8"      # maxTimestamp 1000
    "ffffffffffffffff"      # producerId -1
    "ffff"                  # producerEpoch -1
    "ffffffff"              # baseSequence -1
    "00000001"              # recordsCount 1
    "10"                    # record length 8 (zigzag 16)
    "00"                    # attributes
    "00"                    # timestampDelta 0
    "00"                    # offsetDelta 0
    "02" "6b"               # key length 1, b"k"
    "02" "76"               # value length 1, b"v"
    "00"                    # no headers
)

# Two records: (null key, empty value, header ("a", null)) at ts 1000 and
# (key b"k", null value, header ("h", b"xy")) at ts 999 -- a negative timestamp delta.
GOLDEN_TWO = bytes.fromhex(
    "0000000000000000" "00000048" "00000000" "02" "4e4d63bc" "0000" "00000001"
    "00000000000003e8" "00000000000003e8" "ffffffffffffffff" "ffff" "ffffffff" "00000002"
    # record 0: length 9
    "12" "00" "00" "00" "01" "00" "02" "02" "61" "01"
    # record 1: length 12; timestampDelta -1 -> zigzag 1; offsetDelta 1 -> 2
    "18" "00" "01" "02" "02" "6b" "01" "02" "02" "68" "04" "7879"
)


def test_golden_one_record_matches_kafka_python_and_pure_crc():
    assert kp_build([(0, 1000, b"k", b"v", [])]) == GOLDEN_ONE
    assert kp_pure_crc32c(GOLDEN_ONE[21:]) == 0x716A6189
    ours = r.encode_batch([(b"k", b"v", [], 1000)], partition_leader_epoch=0)
    assert ours == GOLDEN_ONE
    assert r.decode_records(GOLDEN_ONE) == [Record(0, 1000, b"k", b"v", [])]
    h = r.read_batch_header(GOLDEN_ONE)
    assert h == BatchHeader(0, 58, 0, 2, 0x716A6189, 0, 0, 1000, 1000, -1, -1, -1, 1)


def test_golden_two_records():
    assert kp_build([(0, 1000, None, b"", [("a", None)]),
                     (1, 999, b"k", None, [("h", b"xy")])]) == GOLDEN_TWO
    assert kp_pure_crc32c(GOLDEN_TWO[21:]) == 0x4E4D63BC
    ours = r.encode_batch([(None, b"", [("a", None)], 1000), (b"k", None, [("h", b"xy")], 999)],
                          partition_leader_epoch=0)
    assert ours == GOLDEN_TWO
    assert r.decode_records(GOLDEN_TWO) == [
        Record(0, 1000, None, b"", [("a", None)]),
        Record(1, 999, b"k", None, [("h", b"xy")]),
    ]
    assert r.check_batch(GOLDEN_TWO).records_count == 2


def test_crc_is_castagnoli_over_attributes_to_end():
    import crc32c
    import zlib

    assert crc32c.crc32c(GOLDEN_ONE[21:]) == r.read_batch_header(GOLDEN_ONE).crc
    assert zlib.crc32(GOLDEN_ONE[21:]) != r.read_batch_header(GOLDEN_ONE).crc
    assert r.compute_crc(GOLDEN_ONE) == 0x716A6189


# ============================================================================================
# header
# ============================================================================================

def test_header_fields_and_properties():
    batch = r.encode_batch(
        [(b"a", b"1", [], TS), (b"b", b"2", [], TS + 50), (b"c", b"3", [], TS + 20)],
        base_offset=1000, compression=comp.LZ4, producer_id=77, producer_epoch=3,
        base_sequence=2_147_483_646, partition_leader_epoch=9, is_transactional=True)
    h = r.read_batch_header(batch)
    assert (h.base_offset, h.partition_leader_epoch, h.magic) == (1000, 9, 2)
    assert h.batch_length == len(batch) - 12 and h.size == len(batch)
    assert h.compression == comp.LZ4 and h.timestamp_type == 0
    assert h.is_transactional and not h.is_control and not h.has_delete_horizon
    assert h.delete_horizon_ms is None
    assert (h.last_offset_delta, h.last_offset, h.next_offset, h.records_count) == (2, 1002, 1003, 3)
    assert (h.base_timestamp, h.max_timestamp) == (TS, TS + 50)
    assert (h.producer_id, h.producer_epoch, h.base_sequence) == (77, 3, 2_147_483_646)
    assert h.has_producer_id and h.last_sequence == 0          # sequence wraps past int32 max
    assert h.attributes == comp.LZ4 | 0x10
    with pytest.raises(AttributeError):
        h.base_offset = 5                                       # frozen
    assert not hasattr(h, "__dict__")                            # slots


def test_header_attribute_bits():
    la = r.read_batch_header(r.encode_batch([(b"k", b"v", [], TS)], timestamp_type=1))
    assert la.timestamp_type == 1 and la.attributes == 0x08
    ctl = r.read_batch_header(r.encode_end_txn_marker(True, producer_id=1, producer_epoch=0))
    assert ctl.is_control and ctl.is_transactional and ctl.attributes == 0x30
    raw = bytearray(GOLDEN_ONE)
    raw[22] |= 0x40
    dh = r.read_batch_header(recrc(raw))
    assert dh.has_delete_horizon and dh.delete_horizon_ms == 1000


@pytest.mark.parametrize("form", [bytes, bytearray, memoryview])
def test_read_batch_header_accepts_buffers_and_positions(form):
    buf = b"\xee" * 5 + GOLDEN_ONE + b"tail"
    h = r.read_batch_header(form(buf), 5)
    assert h == r.read_batch_header(GOLDEN_ONE)


def test_read_batch_header_does_not_touch_records():
    # The records section is garbage and the CRC is wrong: the header still reads.
    buf = bytearray(GOLDEN_ONE)
    buf[61:] = b"\xff" * (len(buf) - 61)
    assert r.read_batch_header(bytes(buf)).records_count == 1


# ============================================================================================
# cross-implementation: kafka-python -> ours
# ============================================================================================

@pytest.mark.parametrize("codec", CODECS, ids=codec_id)
def test_decode_kafka_python_batches(codec):
    recs = sample_records(8)
    batch = kp_build(recs, codec)
    h = r.check_batch(batch)
    assert h.compression == codec, "kafka-python fell back to no compression"
    assert r.crc_ok(batch)
    assert h.records_count == 8 and h.last_offset_delta == 7
    assert h.base_timestamp == TS and h.max_timestamp == TS + 7 * 7
    assert as_tuples(r.decode_records(batch)) == [
        (o, ts, k, v, list(hs)) for o, ts, k, v, hs in recs]
    assert as_tuples(r.decode_records(batch)) == kp_read(batch)[1]


@pytest.mark.parametrize("codec", CODECS, ids=codec_id)
def test_decode_kafka_python_memory_records_with_producer_state(codec):
    # (kafka-python's builder always writes baseOffset 0, as a producer does; a broker then
    # assigns the real base offset by patching.)
    builder = MemoryRecordsBuilder(2, codec, 1 << 20)
    builder.set_producer_state(producer_id=4242, producer_epoch=7, base_sequence=99,
                               is_transactional=True)
    for i in range(20):
        builder.append(TS + i, b"k%d" % (i % 3) if i % 5 else None, b"payload" * 30,
                       [("i", str(i).encode())])
    builder.close()
    data = r.patch(bytes(builder.buffer()), base_offset=500)
    batches = r.split_batches(data)
    assert len(batches) == 1
    h, view = batches[0]
    assert (h.base_offset, h.producer_id, h.producer_epoch, h.base_sequence) == (500, 4242, 7, 99)
    assert h.is_transactional and h.compression == codec
    assert r.check_batch(view) == h
    ours = r.decode_records(view)
    theirs = [x for batch in MemoryRecords(data) for x in batch]   # noqa: C416
    assert len(ours) == len(theirs) == 20
    assert as_tuples(ours) == [(x.offset, x.timestamp, x.key, x.value, list(x.headers))
                               for x in theirs]
    assert ours[0].offset == 500 and ours[-1].offset == 519


# ============================================================================================
# cross-implementation: ours -> kafka-python
# ============================================================================================

@pytest.mark.parametrize("codec", CODECS, ids=codec_id)
def test_kafka_python_reads_our_batches(codec):
    recs = sample_records(9)
    batch = r.encode_batch([(k, v, hs, ts) for _, ts, k, v, hs in recs], base_offset=12345,
                           compression=codec, producer_id=5, producer_epoch=1, base_sequence=10,
                           partition_leader_epoch=3)
    kb, theirs = kp_read(batch)
    assert kb.compression_type == codec
    assert (kb.base_offset, kb.leader_epoch, kb.producer_id, kb.producer_epoch,
            kb.base_sequence, kb.records_count, kb.last_offset_delta) == \
        (12345, 3, 5, 1, 10, 9, 8)
    assert kb.first_timestamp == TS and kb.max_timestamp == max(x[1] for x in recs)
    assert theirs == [(12345 + o, ts, k, v, hs) for o, ts, k, v, hs in recs]
    assert as_tuples(r.decode_records(batch)) == theirs


@pytest.mark.parametrize("codec", CODECS, ids=codec_id)
def test_kafka_python_reads_concatenated_batches(codec):
    parts = [r.encode_batch([(b"k", b"v%d" % i, [], TS + i)] * 3, base_offset=3 * i,
                            compression=codec) for i in range(4)]
    data = b"".join(parts)
    values = [x.value for batch in MemoryRecords(data) for x in batch]
    assert values == [b"v%d" % i for i in range(4) for _ in range(3)]
    offsets = [x.offset for batch in MemoryRecords(data) for x in batch]
    assert offsets == list(range(12))


def test_log_append_time_both_ways():
    batch = r.encode_batch([(b"a", b"1", [], TS), (b"b", b"2", [], TS + 10)], timestamp_type=1,
                           max_timestamp=TS + 99_999)
    kb, theirs = kp_read(batch)
    assert kb.timestamp_type == 1
    assert [t for _, t, *_ in theirs] == [TS + 99_999] * 2
    assert [x.timestamp for x in r.decode_records(batch)] == [TS + 99_999] * 2


def test_control_batches_both_ways():
    for commit in (True, False):
        batch = r.encode_end_txn_marker(commit, producer_id=31, producer_epoch=2, base_offset=70,
                                        coordinator_epoch=5, timestamp=TS)
        kb = DefaultRecordBatch(batch)
        assert kb.validate_crc() and kb.is_control_batch and kb.is_transactional
        (rec,) = list(kb)
        assert isinstance(rec, KPControlRecord)
        assert rec.commit is commit and rec.abort is not commit and rec.offset == 70
        (ours,) = r.decode_records(batch)
        ctl = r.decode_control_record(ours)
        assert ctl == r.ControlRecord(0, 1 if commit else 0, 5)
        assert ctl.is_commit is commit and ctl.is_abort is not commit
        assert r.check_batch(batch).producer_id == 31


def test_decode_control_record_errors():
    with pytest.raises(CorruptRecordBatchError):
        r.decode_control_record(Record(0, 0, b"\x00", None))
    with pytest.raises(CorruptRecordBatchError):
        r.decode_control_record(Record(0, 0, b"\xff\xff\x00\x01", b"\x00\x00\x00\x00\x00\x01"))
    with pytest.raises(CorruptRecordBatchError):
        r.decode_control_record(Record(0, 0, b"\x00\x00\x00\x01", b"\x00"))
    other = r.decode_control_record(Record(0, 0, b"\x00\x00\x00\x02", b"whatever"))
    assert other == r.ControlRecord(0, 2, None)        # LEADER_CHANGE: value not interpreted


# ============================================================================================
# encode details
# ============================================================================================

def test_encode_from_record_objects_keeps_offsets_and_attributes():
    recs = [Record(100, TS, b"a", b"1", []), Record(101, TS + 1, None, None, [("x", None)]),
            Record(105, TS - 3, b"c", b"3", [], attributes=0)]
    batch = r.encode_batch(recs, base_offset=100)
    h = r.read_batch_header(batch)
    assert h.last_offset_delta == 5 and h.records_count == 3
    assert r.decode_records(batch) == recs
    r.check_batch(batch, strict_offsets=False)
    with pytest.raises(CorruptRecordBatchError):
        r.check_batch(batch)                          # gaps are not what a producer sends
    assert [x.offset for x in DefaultRecordBatch(batch)] == [100, 101, 105]


def test_encode_tuple_forms_and_defaults():
    before = int(time.time() * 1000)
    batch = r.encode_batch([(b"k", b"v"), (b"k", b"v", [("h", b"1")]), (None, None, None, 5)])
    after = int(time.time() * 1000)
    recs = r.decode_records(batch)
    assert [x.offset for x in recs] == [0, 1, 2]
    assert before <= recs[0].timestamp <= after and recs[2].timestamp == 5
    assert recs[1].headers == [("h", b"1")] and recs[2].headers == []
    h = r.read_batch_header(batch)
    assert h.partition_leader_epoch == -1 and h.producer_id == -1 and h.base_sequence == -1


def test_encode_explicit_base_timestamp_and_empty_batch():
    batch = r.encode_batch([(b"k", b"v", [], TS)], base_timestamp=TS - 1000)
    h = r.read_batch_header(batch)
    assert h.base_timestamp == TS - 1000 and h.max_timestamp == TS
    assert r.decode_records(batch)[0].timestamp == TS
    empty = r.encode_batch([], base_offset=10, last_offset_delta=4)
    h = r.read_batch_header(empty)
    assert h.records_count == 0 and h.size == 61 and h.next_offset == 15
    assert r.decode_records(empty) == []
    r.check_batch(empty, strict_offsets=False)
    with pytest.raises(CorruptRecordBatchError):
        r.check_batch(empty)


@pytest.mark.parametrize("bad", [
    dict(records=[("k", b"v")]),                                       # str key
    dict(records=[(b"k", b"v", [(b"bytes-key", b"v")])]),             # non-str header key
    dict(records=[Record(5, TS, b"k", b"v"), Record(5, TS, b"k", b"v")]),  # offsets not rising
    dict(records=[Record(-1, TS, b"k", b"v")]),                        # before base offset
    dict(records=[Record(1 << 31, TS, b"k", b"v")]),                   # delta beyond int32
    dict(records=[(b"k", b"v", [], 1 << 63)]),                         # timestamp beyond int64
    dict(records=[b"not a tuple"]),
    dict(records=[(b"k", b"v")], compression=9),
    dict(records=[(b"k", b"v")], timestamp_type=2),
    dict(records=[(b"k", b"v")], producer_epoch=1 << 15),
])
def test_encode_rejects_bad_input(bad):
    from wire.exceptions import EncodeError

    records = bad.pop("records")
    with pytest.raises(EncodeError):
        r.encode_batch(records, **bad)


def test_timestamp_deltas_wrap_like_java():
    recs = [(b"a", b"", [], -(1 << 63)), (b"b", b"", [], (1 << 63) - 1)]
    batch = r.encode_batch(recs)
    assert [x.timestamp for x in r.decode_records(batch)] == [-(1 << 63), (1 << 63) - 1]
    assert [x.timestamp for x in DefaultRecordBatch(batch)][0] == -(1 << 63)


# ============================================================================================
# split_batches
# ============================================================================================

def test_split_batches_and_partial_tail():
    parts = [r.encode_batch([(b"k", b"v" * i, [], TS)] * (i + 1), base_offset=10 * i,
                            compression=CODECS[i % 5]) for i in range(5)]
    data = b"".join(parts)
    got = r.split_batches(data)
    assert [bytes(v) for _, v in got] == parts
    assert [h.base_offset for h, _ in got] == [0, 10, 20, 30, 40]
    assert all(isinstance(v, memoryview) for _, v in got)
    assert r.split_batches(b"") == []
    assert [(h, s, e) for h, s, e in r.iter_batches(data)][1][1:] == (len(parts[0]),
                                                                      len(parts[0]) + len(parts[1]))
    for cut in (1, 5, 12, 16, 17, 60, 61, len(parts[-1]) - 1):
        truncated = data[:-cut]
        with pytest.raises(CorruptRecordBatchError):
            r.split_batches(truncated)
        kept = r.split_batches(truncated, allow_partial_tail=True)
        assert [bytes(v) for _, v in kept] == parts[:-1]
    # a lone fragment
    assert r.split_batches(parts[0][:30], allow_partial_tail=True) == []
    with pytest.raises(CorruptRecordBatchError):
        r.split_batches(parts[0][:30])


def test_split_batches_validates_every_frame_even_with_partial_tail():
    good = r.encode_batch([(b"k", b"v")])
    bad_magic = bytearray(good)
    bad_magic[16] = 1
    for data in (good + bytes(bad_magic), good + bytes(bad_magic)[:20]):
        for allow in (False, True):
            with pytest.raises(CorruptRecordBatchError, match="magic"):
                r.split_batches(data, allow_partial_tail=allow)
    short = bytearray(good)
    struct.pack_into(">i", short, 8, 48)
    for allow in (False, True):
        with pytest.raises(CorruptRecordBatchError):
            r.split_batches(good + bytes(short), allow_partial_tail=allow)
        with pytest.raises(CorruptRecordBatchError):
            r.split_batches(good + bytes(short)[:14], allow_partial_tail=allow)


# ============================================================================================
# patching
# ============================================================================================

@pytest.mark.parametrize("codec", CODECS, ids=codec_id)
def test_patch_base_offset_and_leader_epoch(codec):
    batch = r.encode_batch([(b"k", b"v" * 50, [("h", b"x")], TS)] * 4, compression=codec)
    for patched, expect_offset, expect_epoch in (
        (r.patch_base_offset(batch, 987_654_321_000), 987_654_321_000, -1),
        (r.patch_leader_epoch(batch, 17), 0, 17),
        (r.patch(batch, base_offset=5, partition_leader_epoch=2), 5, 2),
        (r.patch(batch), 0, -1),
    ):
        assert isinstance(patched, bytes) and len(patched) == len(batch)
        diff = [i for i in range(len(batch)) if batch[i] != patched[i]]
        assert all(i < 8 or 12 <= i < 16 for i in diff)
        h = r.check_batch(patched)
        assert (h.base_offset, h.partition_leader_epoch) == (expect_offset, expect_epoch)
        assert r.crc_ok(patched) and DefaultRecordBatch(patched).validate_crc()
        assert [x.offset for x in r.decode_records(patched)] == \
            [expect_offset + i for i in range(4)]
        assert [x.offset for x in DefaultRecordBatch(patched)] == \
            [expect_offset + i for i in range(4)]


def test_patch_into_in_place_within_a_records_field():
    parts = [r.encode_batch([(b"k", b"v")] * 2) for _ in range(3)]
    buf = bytearray(b"".join(parts))
    next_offset = 40
    for h, start, _end in list(r.iter_batches(buf)):
        r.patch_into(buf, start, base_offset=next_offset, partition_leader_epoch=6)
        next_offset += h.records_count
    got = r.split_batches(buf)
    assert [h.base_offset for h, _ in got] == [40, 42, 44]
    assert all(h.partition_leader_epoch == 6 and r.crc_ok(v) for h, v in got)


def test_patch_rejects_non_batches():
    with pytest.raises(CorruptRecordBatchError):
        r.patch(b"\x00" * 20, base_offset=1)
    bad = bytearray(GOLDEN_ONE)
    bad[16] = 1
    with pytest.raises(CorruptRecordBatchError):
        r.patch(bytes(bad), base_offset=1)
    from wire.exceptions import EncodeError

    with pytest.raises(EncodeError):
        r.patch(GOLDEN_ONE, base_offset=1 << 63)
    with pytest.raises(EncodeError):
        r.patch(GOLDEN_ONE, partition_leader_epoch=1 << 31)


# ============================================================================================
# malformed input
# ============================================================================================

def test_errors_are_decode_errors():
    assert issubclass(CorruptRecordBatchError, DecodeError)


@pytest.mark.parametrize("cut", [0, 1, 11, 12, 16, 17, 60])
def test_truncated_header(cut):
    data = GOLDEN_ONE[:cut]
    for fn in (r.read_batch_header, r.check_batch, r.decode_records, r.compute_crc):
        small_allocations(lambda: fn(data))
    if cut:
        small_allocations(lambda: r.split_batches(data))
    assert r.split_batches(data, allow_partial_tail=True) == []
    assert not r.crc_ok(data)


def test_batch_length_past_end_and_truncated_records():
    for cut in (1, 9):
        data = GOLDEN_ONE[:-cut]
        for fn in (r.read_batch_header, r.check_batch, r.decode_records, r.split_batches):
            small_allocations(lambda: fn(data))


@pytest.mark.parametrize("length", [-1, -(1 << 31), 0, 48, (1 << 31) - 1, 59])
def test_bad_batch_lengths(length):
    buf = bytearray(GOLDEN_ONE)
    struct.pack_into(">i", buf, 8, length)
    data = bytes(buf)
    for fn in (r.read_batch_header, r.check_batch, r.decode_records, r.split_batches,
               lambda d: r.split_batches(d, allow_partial_tail=length < 49)):
        small_allocations(lambda: fn(data))
    assert not r.crc_ok(data)


@pytest.mark.parametrize("magic", [0, 1, 3, -1])
def test_bad_magic(magic):
    buf = bytearray(GOLDEN_ONE)
    struct.pack_into(">b", buf, 16, magic)
    for fn in (r.read_batch_header, r.check_batch, r.decode_records, r.split_batches):
        with pytest.raises(CorruptRecordBatchError, match="magic"):
            fn(bytes(buf))


@pytest.mark.parametrize("position", [17, 21, 30, 60, 61, 65, 69])
def test_crc_mismatch(position):
    buf = bytearray(GOLDEN_ONE)
    buf[position] ^= 0x01
    data = bytes(buf)
    assert not r.crc_ok(data)
    with pytest.raises(CorruptRecordBatchError, match="CRC"):
        r.check_batch(data)
    with pytest.raises(CorruptRecordBatchError):
        r.decode_records(data)
    assert not DefaultRecordBatch(data).validate_crc()        # kafka-python agrees


def test_bytes_outside_crc_do_not_affect_it():
    buf = bytearray(GOLDEN_ONE)
    buf[0:8] = b"\x01" * 8
    buf[12:16] = b"\x7f" * 4
    assert r.crc_ok(bytes(buf))


def test_trailing_bytes_after_batch():
    with pytest.raises(CorruptRecordBatchError):
        r.check_batch(GOLDEN_ONE + b"\x00")
    assert r.decode_records(GOLDEN_ONE + b"junk")[0].key == b"k"     # frame-delimited
    assert r.crc_ok(GOLDEN_ONE + b"junk")


REC_OK = bytes.fromhex("00" "00" "00" "026b" "0276" "00")   # body of GOLDEN_ONE's record


@pytest.mark.parametrize("blob, why, reason", [
    (b"\xff\xff\xff\xff\xff\x01" + REC_OK, "record length varint of 6 bytes", "longer than 5"),
    (record_blob(b"\x00" + b"\xff" * 10 + b"\x01" + REC_OK[2:]), "timestamp varlong of 11 bytes", "longer than 10"),
    (record_blob(b"\x00\x00" + b"\x80" * 5 + b"\x00" + REC_OK[3:]), "offset delta varint of 6", "longer than 5"),
    (record_blob(b"\x00\x00\x00" + b"\xff" * 6), "key length varint runs on", "longer than 5"),
    (b"\x80", "record length varint cut short", "past the end"),
    (zz(1000) + REC_OK, "record length past end", "length 1000 invalid"),
    (zz(-2) + REC_OK, "negative record length", "length -2 invalid"),
    (zz(0), "empty record", "empty"),
    (record_blob(REC_OK[:3] + zz(1 << 30) + b"k" + REC_OK[5:]), "huge key length", "key length"),
    (record_blob(REC_OK[:5] + zz(50) + b"v" + REC_OK[7:]), "value length past record", "value length"),
    (record_blob(REC_OK[:7] + zz(-1)), "negative header count", "header count"),
    (record_blob(REC_OK[:7] + zz((1 << 31) - 1)), "huge header count", "header count"),
    (record_blob(REC_OK[:7] + zz(1) + zz(-1) + zz(-1)), "negative header key length", "header key length"),
    (record_blob(REC_OK[:7] + zz(1) + zz(90) + b"k" + zz(-1)), "header key past record", "header key length"),
    (record_blob(REC_OK[:7] + zz(1) + zz(1) + b"k" + zz(9) + b"v"), "header value past record", "header value length"),
    (record_blob(REC_OK + b"\x00"), "record longer than its fields", "declares"),
    (zz(len(REC_OK) - 1) + REC_OK, "record shorter than its fields", "past the end"),
    (record_blob(REC_OK) + b"\x00", "bytes after the last record", "remain after"),
])
def test_malformed_records(blob, why, reason):
    batch = raw_batch(blob, count=1, last_offset_delta=0)
    assert r.crc_ok(batch)
    assert reason in str(small_allocations(lambda: r.decode_records(batch))), why
    assert reason in str(small_allocations(lambda: r.check_batch(batch))), why


def test_well_formed_raw_batch_helper():
    # Sanity check for the helpers used above: an untampered record decodes.
    batch = raw_batch(record_blob(REC_OK), count=1, last_offset_delta=0)
    assert r.decode_records(batch) == [Record(0, TS, b"k", b"v", [])]
    r.check_batch(batch)


TWO_RECORDS = record_blob(REC_OK) + record_blob(REC_OK[:2] + b"\x02" + REC_OK[3:])


@pytest.mark.parametrize("count", [0, 1, 3, 1000, (1 << 31) - 1, -1, -(1 << 31)])
def test_declared_record_count_mismatch(count):
    assert len(r.decode_records(raw_batch(TWO_RECORDS, count=2, last_offset_delta=1))) == 2
    batch = raw_batch(TWO_RECORDS, count=count, last_offset_delta=max(count - 1, 0))
    small_allocations(lambda: r.decode_records(batch))
    small_allocations(lambda: r.check_batch(batch))


def test_huge_declared_count_with_compression_is_bounded():
    blob = comp.compress(comp.ZSTD, record_blob(REC_OK))
    batch = raw_batch(blob, count=(1 << 31) - 1, last_offset_delta=(1 << 31) - 2,
                      attributes=comp.ZSTD)
    small_allocations(lambda: r.decode_records(batch))
    small_allocations(lambda: r.check_batch(batch, decompress=True))
    r.check_batch(batch)                      # header-level checks alone cannot see it


def test_last_offset_delta_inconsistent():
    two = TWO_RECORDS
    assert len(r.decode_records(raw_batch(two, count=2, last_offset_delta=1))) == 2
    for delta in (0, 2, -1, 1 << 30):
        batch = raw_batch(two, count=2, last_offset_delta=delta)
        with pytest.raises(CorruptRecordBatchError, match="lastOffsetDelta"):
            r.check_batch(batch)
    # offset deltas inside the records must be 0, 1, ... for a producer's batch
    dup = record_blob(REC_OK) * 2
    with pytest.raises(CorruptRecordBatchError, match="offset delta"):
        r.check_batch(raw_batch(dup, count=2, last_offset_delta=1))
    with pytest.raises(CorruptRecordBatchError):
        r.check_batch(raw_batch(dup, count=2, last_offset_delta=1), strict_offsets=False)
    # a compacted batch: records at deltas 0 and 1 with lastOffsetDelta 5 is fine non-strictly
    r.check_batch(raw_batch(two, count=2, last_offset_delta=5), strict_offsets=False)


@pytest.mark.parametrize("codec", COMPRESSED, ids=codec_id)
def test_garbage_compressed_payload(codec):
    batch = raw_batch(b"\x00\x01garbage-not-compressed\xff" * 3, count=1, last_offset_delta=0,
                      attributes=codec)
    assert r.crc_ok(batch)
    small_allocations(lambda: r.decode_records(batch))
    small_allocations(lambda: r.check_batch(batch, decompress=True))


@pytest.mark.parametrize("codec", COMPRESSED, ids=codec_id)
def test_compressed_payload_with_bad_records_inside(codec):
    inner = record_blob(REC_OK) + b"\x07"          # a stray byte after the last record
    batch = raw_batch(comp.compress(codec, inner), count=1, last_offset_delta=0, attributes=codec)
    with pytest.raises(CorruptRecordBatchError):
        r.decode_records(batch)
    with pytest.raises(CorruptRecordBatchError):
        r.check_batch(batch, decompress=True)


@pytest.mark.parametrize("codec", [5, 6, 7])
def test_unknown_codec(codec):
    batch = raw_batch(record_blob(REC_OK), count=1, last_offset_delta=0, attributes=codec)
    with pytest.raises(CorruptRecordBatchError, match="codec"):
        r.decode_records(batch)
    with pytest.raises(CorruptRecordBatchError, match="codec"):
        r.check_batch(batch)


def test_decompression_bomb_in_batch_respects_max_size():
    inner = record_blob(b"\x00\x00\x00\x01" + zz(8 << 20) + bytes(8 << 20) + b"\x00")
    batch = raw_batch(comp.compress(comp.ZSTD, inner), count=1, last_offset_delta=0,
                      attributes=comp.ZSTD)
    assert len(batch) < 64 << 10
    small_allocations(lambda: r.decode_records(batch, max_size=1 << 20), limit=4 << 20)
    small_allocations(lambda: r.check_batch(batch, decompress=True, max_size=1 << 20),
                      limit=4 << 20)
    assert len(r.decode_records(batch, max_size=9 << 20)[0].value) == 8 << 20


def test_java_style_varints_accepted():
    # Non-minimal encodings are accepted, as Kafka's ByteUtils does: offset delta 0 as 80 00.
    body = REC_OK[:2] + b"\x80\x00" + REC_OK[3:]
    recs = r.decode_records(raw_batch(record_blob(body), count=1, last_offset_delta=0))
    assert recs == [Record(0, TS, b"k", b"v", [])]
    # 5-byte varint whose top bits overflow 32 bits wraps like Java's int arithmetic.
    body = REC_OK[:2] + b"\x80\x80\x80\x80\x70" + REC_OK[3:]
    assert r.decode_records(raw_batch(record_blob(body), count=1, last_offset_delta=0))[0] \
        .offset == 0


def test_negative_lengths_other_than_minus_one_mean_null_like_java():
    body = REC_OK[:3] + zz(-7) + REC_OK[5:]
    (rec,) = r.decode_records(raw_batch(record_blob(body), count=1, last_offset_delta=0))
    assert rec.key is None and rec.value == b"v"


# ============================================================================================
# hypothesis round trips
# ============================================================================================

header_values = st.one_of(st.none(), st.binary(max_size=20))
headers_st = st.lists(st.tuples(st.text(max_size=10), header_values), max_size=4)
records_st = st.lists(
    st.tuples(st.one_of(st.none(), st.binary(max_size=64)),
              st.one_of(st.none(), st.binary(max_size=300)),
              headers_st,
              st.integers(min_value=-(1 << 50), max_value=1 << 50)),
    min_size=1, max_size=25)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=records_st, codec=st.sampled_from(CODECS),
       base_offset=st.integers(min_value=0, max_value=(1 << 62)),
       timestamp_type=st.sampled_from([0, 1]),
       producer=st.tuples(st.integers(-1, (1 << 63) - 1), st.integers(-1, (1 << 15) - 1),
                          st.integers(-1, (1 << 31) - 1)),
       epoch=st.integers(-1, (1 << 31) - 1), transactional=st.booleans())
def test_round_trip_property(records, codec, base_offset, timestamp_type, producer, epoch,
                             transactional):
    pid, pepoch, seq = producer
    batch = r.encode_batch(records, base_offset=base_offset, compression=codec,
                           timestamp_type=timestamp_type, producer_id=pid, producer_epoch=pepoch,
                           base_sequence=seq, partition_leader_epoch=epoch,
                           is_transactional=transactional)
    h = r.check_batch(batch)
    assert r.crc_ok(batch)
    max_ts = max(ts for *_, ts in records)
    expected = [Record(base_offset + i, max_ts if timestamp_type else ts, k, v, list(hs))
                for i, (k, v, hs, ts) in enumerate(records)]
    assert r.decode_records(batch) == expected
    assert (h.base_offset, h.compression, h.timestamp_type, h.producer_id, h.producer_epoch,
            h.base_sequence, h.partition_leader_epoch, h.is_transactional) == \
        (base_offset, codec, timestamp_type, pid, pepoch, seq, epoch, transactional)
    assert (h.records_count, h.last_offset_delta, h.size) == (len(records), len(records) - 1,
                                                              len(batch))
    assert (h.base_timestamp, h.max_timestamp) == (records[0][3], max_ts)

    # kafka-python reads the same thing
    kb, theirs = kp_read(batch)
    assert theirs == as_tuples(expected)


@settings(max_examples=60, deadline=None)
@given(batches=st.lists(st.tuples(records_st, st.sampled_from(CODECS)), min_size=1, max_size=5),
       cut=st.integers(min_value=1, max_value=200))
def test_split_property(batches, cut):
    encoded, offset = [], 0
    for recs, codec in batches:
        encoded.append(r.encode_batch(recs, base_offset=offset, compression=codec))
        offset += len(recs)
    data = b"".join(encoded)
    got = r.split_batches(data)
    assert len(got) == len(encoded)
    for (h, view), raw in zip(got, encoded):
        assert bytes(view) == raw
        assert h == r.read_batch_header(raw) == r.check_batch(view)
    assert all(a.next_offset == b.base_offset for (a, _), (b, _) in zip(got, got[1:]))
    assume(cut < len(encoded[-1]))
    kept = r.split_batches(data[:-cut], allow_partial_tail=True)
    assert [bytes(v) for _, v in kept] == encoded[:-1]
    with pytest.raises(CorruptRecordBatchError):
        r.split_batches(data[:-cut])


@settings(max_examples=200, deadline=None)
@given(data=st.binary(min_size=0, max_size=200), prefix=st.sampled_from([b"", GOLDEN_ONE[:61]]))
def test_fuzz_never_raises_anything_else(data, prefix):
    blob = prefix + data
    for fn in (r.read_batch_header, r.check_batch, r.decode_records, r.split_batches,
               lambda b: r.split_batches(b, allow_partial_tail=True)):
        try:
            fn(blob)
        except CorruptRecordBatchError:
            pass
    if len(blob) >= 61:
        # with a valid frame and CRC, record parsing still fails only with typed errors
        buf = bytearray(blob)
        struct.pack_into(">i", buf, 8, len(buf) - 12)
        buf[16] = 2
        fixed = recrc(buf)
        for fn in (r.check_batch, r.decode_records):
            try:
                fn(fixed)
            except CorruptRecordBatchError:
                pass
