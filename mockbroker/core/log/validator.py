"""What Kafka's LogValidator does to a client's batch once its framing is known to be sound:
each record's timestamp checked against the topic's bounds, and the batch rebuilt with the
topic's compression codec.

Timestamps (``message.timestamp.before.max.ms`` / ``after.max.ms``) are checked only on a
CreateTime topic, and only for records with a timestamp (-1 means none); on a LogAppendTime
topic the broker's clock replaces them.  A batch that claims LogAppendTime is refused when the
topic is LogAppendTime, or when a record has no timestamp.  Every failing record is reported
(its index in the batch and Kafka's sentence), and one failing record refuses the batch.

Recompression: when the topic's ``compression.type`` names another codec than the batch's
(``producer`` keeps the producer's, ``uncompressed`` stores none), the records are written
into a new batch with that codec, keeping their timestamps, keys, values and headers and the
batch's producer id, epoch, base sequence and transactional flag; the offsets become
consecutive and the CRC is computed afresh, as Kafka's MemoryRecordsBuilder writes it.
"""

from __future__ import annotations

from msgspec import Struct

from wire import records
from wire.compression import CODEC_IDS

_INT64 = 1 << 64
_LONG_MAX = (1 << 63) - 1
#: a record's timestamp when it has none
NO_TIMESTAMP = -1

#: compression.type -> codec id (``producer`` is None: keep the batch's)
TOPIC_CODECS: dict[str, int | None] = {
    "producer": None, "uncompressed": records.NONE, "gzip": CODEC_IDS["gzip"],
    "snappy": CODEC_IDS["snappy"], "lz4": CODEC_IDS["lz4"], "zstd": CODEC_IDS["zstd"]}
#: the topic config holding each codec's level
LEVEL_CONFIGS = {CODEC_IDS["gzip"]: "compression.gzip.level",
                 CODEC_IDS["lz4"]: "compression.lz4.level",
                 CODEC_IDS["zstd"]: "compression.zstd.level"}

#: Kafka's error message of a batch refused for its records' timestamps
INVALID_TIMESTAMP_MESSAGE = "One or more records have been rejected due to invalid timestamp"


class TimestampPolicy(Struct, frozen=True):
    """A topic's timestamp configs."""

    log_append_time: bool
    before_max_ms: int
    after_max_ms: int


def _long(value: int) -> int:
    """Java's wrapping long arithmetic."""
    return ((value + (1 << 63)) % _INT64) - (1 << 63)


def _describe(record: records.Record) -> str:
    """Java's ``DefaultRecord.toString``."""
    key = "null" if record.key is None else f"{len(record.key)} bytes"
    value = "null" if record.value is None else f"{len(record.value)} bytes"
    return (f"DefaultRecord(offset={record.offset}, timestamp={record.timestamp}, "
            f"key={key}, value={value})")


def may_refuse(header: records.BatchHeader, policy: TimestampPolicy, now_ms: int) -> bool:
    """Whether :func:`timestamp_errors` can find anything in a batch with this header: its
    records are never later than its max timestamp, and with no lower bound configured (Kafka's
    default) nothing can be too old."""
    if header.timestamp_type == records.LOG_APPEND_TIME:
        return True
    if policy.log_append_time:
        return False
    return policy.before_max_ms < _LONG_MAX or \
        header.max_timestamp > _long(now_ms + policy.after_max_ms)


def timestamp_errors(header: records.BatchHeader, batch_records: list[records.Record],
                     policy: TimestampPolicy, now_ms: int) -> list[tuple[int, str]]:
    """(record index, message) for each record whose timestamp Kafka refuses."""
    found = []
    low = _long(now_ms - policy.before_max_ms)
    high = _long(now_ms + policy.after_max_ms)
    for index, record in enumerate(batch_records):
        if not policy.log_append_time and record.timestamp != NO_TIMESTAMP:
            diff = _long(now_ms - record.timestamp)
            if diff > policy.before_max_ms or _long(-diff) > policy.after_max_ms:
                found.append((index, f"Timestamp {record.timestamp} of message with offset "
                                     f"{record.offset} is out of range. The timestamp should "
                                     f"be within [{low}, {high}]"))
        elif header.timestamp_type == records.LOG_APPEND_TIME:
            found.append((index, f"Invalid timestamp type in message {_describe(record)}. "
                                 "Producer should not set timestamp type to LogAppendTime."))
    return found


def recompress(header: records.BatchHeader, batch_records: list[records.Record], codec: int,
               level: int | None) -> bytes:
    """The batch rebuilt with ``codec`` (at ``level``; None for the codec's default)."""
    return records.encode_batch(
        [(r.key, r.value, r.headers, r.timestamp) for r in batch_records],
        compression=codec, compression_level=level, producer_id=header.producer_id,
        producer_epoch=header.producer_epoch, base_sequence=header.base_sequence,
        partition_leader_epoch=header.partition_leader_epoch,
        is_transactional=header.is_transactional)


def codec_level(codec: int, level: int) -> int | None:
    """The level to compress with: gzip's -1 is zlib's default."""
    if codec == CODEC_IDS["gzip"] and level == -1:
        return None
    return level

