"""Kafka record batches, magic v2 (the only format Kafka 4.x accepts from clients).

Batch layout (big-endian)::

    offset  size  field
         0     8  baseOffset
         8     4  batchLength            bytes after this field
        12     4  partitionLeaderEpoch
        16     1  magic                  = 2
        17     4  crc                    CRC-32C of bytes [21, end)
        21     2  attributes             bits 0-2 codec, 3 timestamp type, 4 transactional,
                                         5 control, 6 delete horizon
        23     4  lastOffsetDelta
        27     8  baseTimestamp
        35     8  maxTimestamp
        43     8  producerId
        51     2  producerEpoch
        53     4  baseSequence
        57     4  recordsCount
        61     -  records (one compressed block when the codec is not none)

baseOffset, batchLength and partitionLeaderEpoch lie outside the CRC, so a broker can assign
offsets and leader epochs by patching the first 16 bytes without recomputing it.

Record layout (inside the records section)::

    length varint, attributes int8, timestampDelta varlong, offsetDelta varint,
    keyLength varint (<0 = null), key, valueLength varint (<0 = null), value,
    headerCount varint, headers: [keyLength varint, key utf-8, valueLength varint (<0 = null), value]

Varints are zigzag encoded; a varint has at most 5 bytes and a varlong at most 10 bytes.

The hot-path functions (:func:`read_batch_header`, :func:`split_batches`, :func:`crc_ok`,
:func:`patch`) only look at headers and never copy or parse the records section;
:func:`decode_records` and :func:`encode_batch` are for inspection, tests and the rare cases
where the broker writes batches itself.
"""

from __future__ import annotations

import struct
import time
from typing import Iterable, Sequence

from msgspec import Struct, field

from . import compression as _compression
from .compression import GZIP, LZ4, NONE, SNAPPY, ZSTD  # re-exported for convenience
from .exceptions import CorruptRecordBatchError, DecodeError, EncodeError
from .types import read_varint, read_varlong, write_varint, write_varlong

try:  # the same walk, and the CRC, in C (wire/_walk.c), built by the package's set-up
    from ._walk import check_records as _native_check, crc32c as _crc32c
except ImportError:  # not built (no C compiler): the pure-Python walk does it all
    _native_check = None
    from crc32c import crc32c as _crc32c

__all__ = [
    "BATCH_HEADER_SIZE", "LOG_OVERHEAD", "MAGIC", "RECORD_BATCH_OVERHEAD",
    "BatchHeader", "Record", "ControlRecord",
    "read_batch_header", "split_batches", "iter_batches", "crc_ok", "compute_crc", "check_batch",
    "patch", "patch_into", "patch_base_offset", "patch_leader_epoch",
    "decode_records", "decode_control_record", "encode_batch", "encode_end_txn_marker",
    "CONTROL_ABORT", "CONTROL_COMMIT",
    "CREATE_TIME", "LOG_APPEND_TIME", "NO_PRODUCER_ID", "NO_PRODUCER_EPOCH", "NO_SEQUENCE",
    "NO_PARTITION_LEADER_EPOCH", "NONE", "GZIP", "SNAPPY", "LZ4", "ZSTD",
]

BATCH_HEADER_SIZE = 61
RECORD_BATCH_OVERHEAD = BATCH_HEADER_SIZE
LOG_OVERHEAD = 12                    # baseOffset + batchLength
MIN_BATCH_LENGTH = BATCH_HEADER_SIZE - LOG_OVERHEAD  # 49
MAGIC = 2

BASE_OFFSET_OFFSET = 0
LENGTH_OFFSET = 8
PARTITION_LEADER_EPOCH_OFFSET = 12
MAGIC_OFFSET = 16
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21
RECORDS_COUNT_OFFSET = 57

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
DELETE_HORIZON_MASK = 0x40

CREATE_TIME = 0
LOG_APPEND_TIME = 1
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1

CONTROL_ABORT = 0
CONTROL_COMMIT = 1

_HEADER = struct.Struct(">qiibIhiqqqhii")
assert _HEADER.size == BATCH_HEADER_SIZE
_LENGTH_MAGIC = struct.Struct(">i4xb")   # batchLength, (leader epoch), magic -- at offset 8
_CRC = struct.Struct(">I")
_INT64 = struct.Struct(">q")
_INT32 = struct.Struct(">i")
_CONTROL_KEY = struct.Struct(">hh")
_END_TXN_VALUE = struct.Struct(">hi")

_INT32_MAX = (1 << 31) - 1
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


# ============================================================================================
# batch header
# ============================================================================================

class BatchHeader(Struct, frozen=True):
    """The fixed 61-byte header of a v2 record batch."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def timestamp_type(self) -> int:
        return 1 if self.attributes & TIMESTAMP_TYPE_MASK else 0

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & DELETE_HORIZON_MASK)

    @property
    def delete_horizon_ms(self) -> int | None:
        """With the delete-horizon bit set, baseTimestamp carries the delete horizon."""
        return self.base_timestamp if self.attributes & DELETE_HORIZON_MASK else None

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id > NO_PRODUCER_ID

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def size(self) -> int:
        """Total size of the batch in bytes, including baseOffset and batchLength."""
        return LOG_OVERHEAD + self.batch_length

    @property
    def last_sequence(self) -> int:
        """Sequence number of the last record (wrapping like Kafka), or -1 without sequences."""
        if self.base_sequence < 0:
            return NO_SEQUENCE
        seq = self.base_sequence + self.last_offset_delta
        return seq - (1 << 31) if seq > _INT32_MAX else seq


def _wrap64(value: int) -> int:
    return ((value + (1 << 63)) & 0xFFFFFFFFFFFFFFFF) - (1 << 63)


def _truncated(what: str, need: int, have: int) -> CorruptRecordBatchError:
    return CorruptRecordBatchError(f"{what}: need {need} bytes, have {have}")


def read_batch_header(buf, pos: int = 0) -> BatchHeader:
    """Parse the v2 batch header starting at ``buf[pos]``.

    Validates the magic byte, that batchLength covers at least the header, and that the whole
    batch lies inside ``buf``.  The records section is not read.
    """
    avail = len(buf) - pos
    if pos < 0 or avail < BATCH_HEADER_SIZE:
        raise _truncated("truncated record batch header", BATCH_HEADER_SIZE, max(avail, 0))
    fields = _HEADER.unpack_from(buf, pos)
    if fields[3] != MAGIC:
        raise CorruptRecordBatchError(f"unsupported record batch magic {fields[3]} (expected 2)")
    batch_length = fields[1]
    if batch_length < MIN_BATCH_LENGTH:
        raise CorruptRecordBatchError(
            f"record batch length {batch_length} is smaller than the header ({MIN_BATCH_LENGTH})")
    if LOG_OVERHEAD + batch_length > avail:
        raise _truncated("record batch runs past the end of the buffer",
                         LOG_OVERHEAD + batch_length, avail)
    return BatchHeader(*fields)


def _split(buf, allow_partial_tail: bool):
    """Yield (header, start, end) for each complete batch in buf."""
    n = len(buf)
    pos = 0
    unpack_header = _HEADER.unpack_from
    unpack_len_magic = _LENGTH_MAGIC.unpack_from
    while pos < n:
        avail = n - pos
        if avail < LOG_OVERHEAD:
            if allow_partial_tail:
                return
            raise _truncated(f"truncated record batch at byte {pos}", LOG_OVERHEAD, avail)
        if avail >= MAGIC_OFFSET + 1:
            batch_length, magic = unpack_len_magic(buf, pos + LENGTH_OFFSET)
            if magic != MAGIC:
                raise CorruptRecordBatchError(
                    f"unsupported record batch magic {magic} at byte {pos} (expected 2)")
        else:
            (batch_length,) = _INT32.unpack_from(buf, pos + LENGTH_OFFSET)
        if batch_length < MIN_BATCH_LENGTH:
            raise CorruptRecordBatchError(
                f"record batch length {batch_length} at byte {pos} is smaller than the header")
        end = pos + LOG_OVERHEAD + batch_length
        if end > n:
            if allow_partial_tail:
                return
            raise _truncated(f"record batch at byte {pos} runs past the end of the buffer",
                             LOG_OVERHEAD + batch_length, avail)
        yield BatchHeader(*unpack_header(buf, pos)), pos, end
        pos = end


def split_batches(buf, allow_partial_tail: bool = False) -> list[tuple[BatchHeader, memoryview]]:
    """Split a records field (concatenated v2 batches) into ``(header, batch_view)`` pairs.

    Each batch's framing (length, magic) is validated; CRCs are not (see :func:`crc_ok`).  A
    trailing partial batch raises :class:`CorruptRecordBatchError` unless
    ``allow_partial_tail`` is true (Fetch responses may end with one), in which case it is
    dropped.  The views share memory with ``buf``.
    """
    mv = memoryview(buf)
    return [(header, mv[start:end]) for header, start, end in _split(mv, allow_partial_tail)]


def iter_batches(buf, allow_partial_tail: bool = False):
    """Like :func:`split_batches` but yields ``(header, start, end)`` offsets into ``buf``."""
    return _split(memoryview(buf), allow_partial_tail)


# ============================================================================================
# CRC and validation
# ============================================================================================

def compute_crc(batch) -> int:
    """CRC-32C of a batch from the attributes field to the end of the batch."""
    mv = memoryview(batch)
    if len(mv) < BATCH_HEADER_SIZE:
        raise _truncated("truncated record batch header", BATCH_HEADER_SIZE, len(mv))
    end = LOG_OVERHEAD + _INT32.unpack_from(mv, LENGTH_OFFSET)[0]
    if end < BATCH_HEADER_SIZE or end > len(mv):
        raise CorruptRecordBatchError(f"invalid record batch length {end - LOG_OVERHEAD}")
    return _crc32c(mv[ATTRIBUTES_OFFSET:end])


def crc_ok(batch) -> bool:
    """Whether the stored CRC matches the batch contents (False for an unreadable frame)."""
    try:
        mv = memoryview(batch)
        header = read_batch_header(mv)
    except CorruptRecordBatchError:
        return False
    return header.crc == _crc32c(mv[ATTRIBUTES_OFFSET:header.size])


def check_batch(batch, *, strict_offsets: bool = True, decompress: bool = False,
                max_size: int | None = None, header: BatchHeader | None = None) -> BatchHeader:
    """Validate one complete batch and return its header.

    Checks the framing (``batch`` must be exactly one batch), the CRC, the codec id, the record
    count and lastOffsetDelta.  Uncompressed records are always walked (their count must equal
    recordsCount and no bytes may remain); compressed ones only when ``decompress`` is true
    (bounded by ``max_size``).

    With ``strict_offsets`` (what Kafka demands of a client's Produce): recordsCount > 0,
    lastOffsetDelta == recordsCount - 1 and the records' offset deltas are 0, 1, 2, ...
    Without it (batches read back from a compacted log): offset deltas only need to increase
    and stay within lastOffsetDelta.

    ``header``: the batch's header as :func:`read_batch_header` or :func:`split_batches` read
    it, when the caller has it already.
    """
    mv = memoryview(batch)
    if header is None:
        header = read_batch_header(mv)
    if header.size != len(mv):
        raise CorruptRecordBatchError(
            f"{len(mv) - header.size} bytes follow the record batch")
    if header.crc != _crc32c(mv[ATTRIBUTES_OFFSET:]):
        raise CorruptRecordBatchError(
            f"record batch CRC mismatch (stored {header.crc:#010x}, "
            f"computed {_crc32c(mv[ATTRIBUTES_OFFSET:]):#010x})")
    codec = header.compression
    if codec not in _compression.CODEC_NAMES:
        raise CorruptRecordBatchError(f"unknown compression codec {codec}")
    count = header.records_count
    if count < 0:
        raise CorruptRecordBatchError(f"negative record count {count}")
    last_delta = header.last_offset_delta
    if strict_offsets:
        if count == 0:
            raise CorruptRecordBatchError("record batch has no records")
        if last_delta != count - 1:
            raise CorruptRecordBatchError(
                f"lastOffsetDelta {last_delta} does not match record count {count}")
    elif last_delta < count - 1:
        raise CorruptRecordBatchError(
            f"lastOffsetDelta {last_delta} is too small for {count} records")
    if codec == NONE or decompress:
        data = mv[BATCH_HEADER_SIZE:]
        if codec != NONE:
            data = _compression.decompress(codec, data, max_size)
        if _native_check is not None and _native_check(data, count, strict_offsets,
                                                       last_delta):
            return header
        # the reference walk: it accepts what the native one does, and says why it refuses
        deltas = _walk_records(data, count)
        expected = 0
        previous = -1
        for delta in deltas:
            if strict_offsets:
                if delta != expected:
                    raise CorruptRecordBatchError(
                        f"record offset delta {delta} where {expected} was expected")
                expected += 1
            else:
                if delta <= previous or delta > last_delta:
                    raise CorruptRecordBatchError(
                        f"record offset delta {delta} out of order or past lastOffsetDelta "
                        f"{last_delta}")
                previous = delta
    return header


# ============================================================================================
# patching (fields outside the CRC)
# ============================================================================================

def _check_patchable(mv, pos: int = 0) -> None:
    if pos < 0 or len(mv) - pos < BATCH_HEADER_SIZE:
        raise _truncated("truncated record batch header", BATCH_HEADER_SIZE, max(len(mv) - pos, 0))
    if mv[pos + MAGIC_OFFSET] != MAGIC:
        raise CorruptRecordBatchError(
            f"unsupported record batch magic {mv[pos + MAGIC_OFFSET]} (expected 2)")


def _pack_base_offset(value: int) -> bytes:
    try:
        return _INT64.pack(value)
    except struct.error:
        raise EncodeError(f"base offset {value!r} does not fit in int64") from None


def _pack_epoch(value: int) -> bytes:
    try:
        return _INT32.pack(value)
    except struct.error:
        raise EncodeError(f"partition leader epoch {value!r} does not fit in int32") from None


def patch(batch, base_offset: int | None = None,
          partition_leader_epoch: int | None = None) -> bytes:
    """A copy of ``batch`` with baseOffset and/or partitionLeaderEpoch replaced.

    Both fields are outside the CRC, so the CRC stays valid.  Costs one copy of the batch.
    """
    mv = memoryview(batch)
    _check_patchable(mv)
    return b"".join((
        mv[0:8] if base_offset is None else _pack_base_offset(base_offset),
        mv[8:12],
        mv[12:16] if partition_leader_epoch is None else _pack_epoch(partition_leader_epoch),
        mv[16:],
    ))


def patch_into(buf, pos: int = 0, *, base_offset: int | None = None,
               partition_leader_epoch: int | None = None) -> None:
    """Patch the batch at ``buf[pos]`` in place (``buf`` must be writable, e.g. a bytearray)."""
    mv = memoryview(buf)
    _check_patchable(mv, pos)
    if base_offset is not None:
        mv[pos:pos + 8] = _pack_base_offset(base_offset)
    if partition_leader_epoch is not None:
        mv[pos + 12:pos + 16] = _pack_epoch(partition_leader_epoch)


def patch_base_offset(batch, base_offset: int) -> bytes:
    return patch(batch, base_offset=base_offset)


def patch_leader_epoch(batch, epoch: int) -> bytes:
    return patch(batch, partition_leader_epoch=epoch)


# ============================================================================================
# records
# ============================================================================================

class Record(Struct):
    """One record with absolute offset and timestamp (ms)."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)
    attributes: int = 0


class ControlRecord(Struct, frozen=True):
    """The key (and, for transaction markers, the value) of a control record."""

    version: int
    type: int
    coordinator_epoch: int | None = None

    @property
    def is_commit(self) -> bool:
        return self.type == CONTROL_COMMIT

    @property
    def is_abort(self) -> bool:
        return self.type == CONTROL_ABORT


def _bad(msg: str) -> CorruptRecordBatchError:
    return CorruptRecordBatchError(msg)


def _read_varint(buf, pos: int, end: int) -> tuple[int, int]:
    """Zigzag varint of at most 5 bytes, bounded by ``end`` (the record's end)."""
    try:
        return read_varint(buf, pos, end)
    except DecodeError as exc:
        raise _bad(f"record varint: {exc}") from None


def _read_varlong(buf, pos: int, end: int) -> tuple[int, int]:
    """Zigzag varint of at most 10 bytes, bounded by ``end``."""
    try:
        return read_varlong(buf, pos, end)
    except DecodeError as exc:
        raise _bad(f"record varlong: {exc}") from None


def _parse_records(data, count: int, base_offset: int, base_timestamp: int,
                   log_append_time: int | None, build: bool):
    """Parse ``count`` records filling ``data`` exactly.

    Returns Record objects when ``build`` is true, else just the offset deltas.  Every length is
    checked against the bytes actually present before it is used, and the loop stops at the end
    of the data whatever ``count`` claims.
    """
    if count < 0:
        raise _bad(f"negative record count {count}")
    end = len(data)
    pos = 0
    out = []
    append = out.append
    read_varint = _read_varint
    for index in range(count):
        if pos >= end:
            raise _bad(f"record count is {count} but the data holds only {index} records")
        length, pos = read_varint(data, pos, end)
        if length < 0 or length > end - pos:
            raise _bad(f"record {index} length {length} invalid ({end - pos} bytes remain)")
        rec_end = pos + length
        if pos >= rec_end:
            raise _bad(f"record {index} is empty")
        attributes = data[pos]
        pos += 1
        ts_delta, pos = _read_varlong(data, pos, rec_end)
        offset_delta, pos = read_varint(data, pos, rec_end)
        key_len, pos = read_varint(data, pos, rec_end)
        if key_len >= 0:
            if key_len > rec_end - pos:
                raise _bad(f"record {index} key length {key_len} runs past the record")
            key = data[pos:pos + key_len] if build else None
            pos += key_len
        else:
            key = None
        value_len, pos = read_varint(data, pos, rec_end)
        if value_len >= 0:
            if value_len > rec_end - pos:
                raise _bad(f"record {index} value length {value_len} runs past the record")
            value = data[pos:pos + value_len] if build else None
            pos += value_len
        else:
            value = None
        header_count, pos = read_varint(data, pos, rec_end)
        if header_count < 0 or header_count > rec_end - pos:
            raise _bad(f"record {index} has invalid header count {header_count}")
        headers = []
        for _ in range(header_count):
            hk_len, pos = read_varint(data, pos, rec_end)
            if hk_len < 0 or hk_len > rec_end - pos:
                raise _bad(f"record {index} header key length {hk_len} invalid")
            if build:
                hkey = data[pos:pos + hk_len].decode("utf-8", "surrogateescape")
            pos += hk_len
            hv_len, pos = read_varint(data, pos, rec_end)
            if hv_len >= 0:
                if hv_len > rec_end - pos:
                    raise _bad(f"record {index} header value length {hv_len} runs past the record")
                hvalue = data[pos:pos + hv_len] if build else None
                pos += hv_len
            else:
                hvalue = None
            if build:
                headers.append((hkey, hvalue))
        if pos != rec_end:
            raise _bad(f"record {index} declares {length} bytes but its fields use "
                       f"{length - (rec_end - pos)}")
        if build:
            if log_append_time is not None:
                timestamp = log_append_time
            else:
                timestamp = _wrap64(base_timestamp + ts_delta)
            append(Record(base_offset + offset_delta, timestamp, key, value, headers,
                          attributes - 256 if attributes > 127 else attributes))
        else:
            append(offset_delta)
    if pos != end:
        raise _bad(f"{end - pos} bytes remain after the {count} declared records")
    return out


def _walk_records(data, count: int) -> list[int]:
    return _parse_records(bytes(data), count, 0, 0, None, False)


def decode_records(batch, *, verify_crc: bool = True, max_size: int | None = None) -> list[Record]:
    """Decode every record of one batch (decompressing if needed).

    ``batch`` may be longer than the batch (trailing bytes are ignored); ``max_size`` bounds
    the decompressed size.  Any malformation raises :class:`CorruptRecordBatchError`.
    """
    mv = memoryview(batch)
    header = read_batch_header(mv)
    end = header.size
    if verify_crc and header.crc != _crc32c(mv[ATTRIBUTES_OFFSET:end]):
        raise CorruptRecordBatchError("record batch CRC mismatch")
    payload = mv[BATCH_HEADER_SIZE:end]
    codec = header.compression
    if codec == NONE:
        data = bytes(payload)
    elif codec in _compression.CODEC_NAMES:
        data = _compression.decompress(codec, payload, max_size)
    else:
        raise CorruptRecordBatchError(f"unknown compression codec {codec}")
    log_append_time = header.max_timestamp if header.attributes & TIMESTAMP_TYPE_MASK else None
    return _parse_records(data, header.records_count, header.base_offset,
                          header.base_timestamp, log_append_time, True)


def decode_control_record(record: Record) -> ControlRecord:
    """Parse a control record's key (version, type) and, for ABORT/COMMIT, the marker value."""
    key = record.key
    if key is None or len(key) < _CONTROL_KEY.size:
        raise CorruptRecordBatchError("control record key shorter than 4 bytes")
    version, ctype = _CONTROL_KEY.unpack_from(key)
    if version < 0:
        raise CorruptRecordBatchError(f"invalid control record key version {version}")
    coordinator_epoch = None
    if ctype in (CONTROL_ABORT, CONTROL_COMMIT):
        value = record.value
        if value is None or len(value) < _END_TXN_VALUE.size:
            raise CorruptRecordBatchError("end transaction marker value shorter than 6 bytes")
        marker_version, coordinator_epoch = _END_TXN_VALUE.unpack_from(value)
        if marker_version < 0:
            raise CorruptRecordBatchError(
                f"invalid end transaction marker version {marker_version}")
    return ControlRecord(version, ctype, coordinator_epoch)


# ============================================================================================
# encoding
# ============================================================================================

def _write_varint(value: int, out: bytearray) -> None:
    out += write_varint(value)


def _write_varlong(value: int, out: bytearray) -> None:
    out += write_varlong(value)


def _write_bytes(value, out: bytearray, what: str) -> None:
    if value is None:
        out.append(0x01)  # zigzag(-1)
        return
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise EncodeError(f"{what} must be bytes or None, not {type(value).__name__}")
    _write_varint(len(value), out)
    out += value


def _normalise(records, base_offset: int):
    """Yield (offset_delta, timestamp, key, value, headers, attributes) tuples."""
    now = None
    next_delta = 0
    for item in records:
        if isinstance(item, Record):
            delta = item.offset - base_offset
            ts, key, value, headers, attrs = (item.timestamp, item.key, item.value,
                                              item.headers, item.attributes)
        else:
            if not isinstance(item, (tuple, list)) or not 2 <= len(item) <= 4:
                raise EncodeError(
                    "records must be Record objects or (key, value[, headers[, timestamp]]) "
                    f"tuples, not {item!r}")
            key, value = item[0], item[1]
            headers = item[2] if len(item) > 2 else None
            ts = item[3] if len(item) > 3 else None
            delta = next_delta
            attrs = 0
        if ts is None:
            if now is None:
                now = int(time.time() * 1000)
            ts = now
        if delta < next_delta:
            raise EncodeError(
                f"record offsets must increase (offset delta {delta} after {next_delta - 1})")
        next_delta = delta + 1
        yield delta, ts, key, value, headers or (), attrs


def encode_batch(records: Iterable[Record | Sequence], *, base_offset: int = 0,
                 compression: int = NONE, timestamp_type: int = CREATE_TIME,
                 producer_id: int = NO_PRODUCER_ID, producer_epoch: int = NO_PRODUCER_EPOCH,
                 base_sequence: int = NO_SEQUENCE,
                 partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
                 is_transactional: bool = False, is_control: bool = False,
                 base_timestamp: int | None = None, max_timestamp: int | None = None,
                 last_offset_delta: int | None = None,
                 compression_level: int | None = None) -> bytes:
    """Build one v2 record batch with a correct CRC.

    ``records`` are :class:`Record` objects (their absolute ``offset`` gives the offset delta
    relative to ``base_offset``; offsets must increase) or ``(key, value, headers, timestamp)``
    tuples (headers and timestamp optional; offsets are consecutive).  A timestamp of None
    means "now".  ``base_timestamp`` defaults to the first record's timestamp, ``max_timestamp``
    to the largest record timestamp (for LogAppendTime pass the append time here), and
    ``last_offset_delta`` to the last record's offset delta (0 for an empty batch).
    """
    if compression not in _compression.CODEC_NAMES:
        raise EncodeError(f"unknown compression codec {compression!r}")
    if timestamp_type not in (CREATE_TIME, LOG_APPEND_TIME):
        raise EncodeError(f"invalid timestamp type {timestamp_type!r}")
    items = list(_normalise(records, base_offset))
    if base_timestamp is None:
        base_timestamp = items[0][1] if items else 0
    body = bytearray()
    rec = bytearray()
    max_ts = None
    for delta, ts, key, value, headers, attrs in items:
        rec.clear()
        rec.append(attrs & 0xFF)
        if not _INT64_MIN <= ts <= _INT64_MAX:
            raise EncodeError(f"timestamp {ts} does not fit in int64")
        # Java computes the delta in (wrapping) long arithmetic; so do we.
        _write_varlong(_wrap64(ts - base_timestamp), rec)
        _write_varint(delta, rec)
        _write_bytes(key, rec, "key")
        _write_bytes(value, rec, "value")
        _write_varint(len(headers), rec)
        for hkey, hvalue in headers:
            if not isinstance(hkey, str):
                raise EncodeError(f"header key must be str, not {type(hkey).__name__}")
            hk = hkey.encode("utf-8", "surrogateescape")
            _write_varint(len(hk), rec)
            rec += hk
            _write_bytes(hvalue, rec, "header value")
        _write_varint(len(rec), body)
        body += rec
        if max_ts is None or ts > max_ts:
            max_ts = ts
    if max_timestamp is None:
        max_timestamp = max_ts if max_ts is not None else base_timestamp
    if last_offset_delta is None:
        last_offset_delta = items[-1][0] if items else 0
    if compression != NONE:
        body = _compression.compress(compression, body, compression_level)
    attributes = compression
    if timestamp_type == LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_MASK
    if is_transactional:
        attributes |= TRANSACTIONAL_MASK
    if is_control:
        attributes |= CONTROL_MASK
    buf = bytearray(BATCH_HEADER_SIZE)
    buf += body
    try:
        _HEADER.pack_into(buf, 0, base_offset, len(buf) - LOG_OVERHEAD, partition_leader_epoch,
                          MAGIC, 0, attributes, last_offset_delta, base_timestamp, max_timestamp,
                          producer_id, producer_epoch, base_sequence, len(items))
    except struct.error as exc:
        raise EncodeError(f"record batch header field out of range: {exc}") from None
    _CRC.pack_into(buf, CRC_OFFSET, _crc32c(memoryview(buf)[ATTRIBUTES_OFFSET:]))
    return bytes(buf)


def encode_end_txn_marker(commit: bool, *, producer_id: int, producer_epoch: int,
                          base_offset: int = 0, coordinator_epoch: int = 0,
                          partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
                          timestamp: int | None = None) -> bytes:
    """A transactional control batch holding one COMMIT or ABORT marker, as brokers write."""
    key = _CONTROL_KEY.pack(0, CONTROL_COMMIT if commit else CONTROL_ABORT)
    value = _END_TXN_VALUE.pack(0, coordinator_epoch)
    return encode_batch([(key, value, (), timestamp)], base_offset=base_offset,
                        producer_id=producer_id, producer_epoch=producer_epoch,
                        partition_leader_epoch=partition_leader_epoch,
                        is_transactional=True, is_control=True)


def set_log_append_time(batch, timestamp_ms: int) -> bytes:
    """A copy of ``batch`` stamped with LogAppendTime: the timestamp-type bit set, maxTimestamp
    set to ``timestamp_ms`` and the CRC recomputed (both lie inside it), as a broker does for a
    topic with ``message.timestamp.type=LogAppendTime``."""
    out = bytearray(batch)
    _check_patchable(memoryview(out))
    (attributes,) = struct.unpack_from(">h", out, ATTRIBUTES_OFFSET)
    struct.pack_into(">h", out, ATTRIBUTES_OFFSET, attributes | 0x08)
    _INT64.pack_into(out, 35, timestamp_ms)
    _CRC.pack_into(out, 17, _crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]))
    return bytes(out)
