"""The data path: appending a Produce's batches, reading for a Fetch, finding offsets.

Batches are validated the way Kafka validates a client's batch (magic 2, CRC, framing, record
count and offsets, size against ``max.message.bytes``) and stored as sent.  Reads return whole
stored batches.
"""

from __future__ import annotations

from dataclasses import dataclass

from mockbroker.core.cluster import Cluster, Partition
from mockbroker.core.errors import ApiException
from wire import CorruptRecordBatchError, errors, records

DEFAULT_MAX_MESSAGE_BYTES = 1048588
#: The smallest message a v0 message set can hold (``LegacyRecord.RECORD_OVERHEAD_V0``).
LEGACY_MIN_SIZE = 14


@dataclass(slots=True)
class PartitionAppend:
    error_code: int = errors.NONE
    base_offset: int = -1
    log_append_time: int = -1
    log_start_offset: int = -1
    #: why the records were refused, for a reader of the core; not sent: Kafka answers every
    #: refusal this broker makes with the error code alone (it writes an error message only for
    #: per-record validation failures, which carry record errors)
    reason: str | None = None


def check_produce_records(data: bytes | None) -> PartitionAppend | None:
    """What Kafka checks of a partition's records before it looks for the partition's leader
    (``ProduceRequest.validateRecords``): exactly one batch, in the v2 format.  Returns the
    refusal, or None."""
    if data is None:
        return PartitionAppend(errors.CORRUPT_MESSAGE, reason="records are null")
    try:
        batches = records.split_batches(data, allow_partial_tail=True)
    except CorruptRecordBatchError as exc:
        # Kafka can read the old message formats (magic 0 and 1) but takes only v2 from a client
        if len(data) > records.MAGIC_OFFSET and data[records.MAGIC_OFFSET] in (0, 1) and \
                int.from_bytes(data[8:12], "big", signed=True) >= LEGACY_MIN_SIZE:
            return PartitionAppend(errors.INVALID_RECORD, reason=(
                f"record batches must have magic 2, not {data[records.MAGIC_OFFSET]}"))
        return PartitionAppend(errors.CORRUPT_MESSAGE, reason=str(exc))
    if len(batches) != 1:
        return PartitionAppend(errors.INVALID_RECORD, reason=(
            f"a produce request must carry exactly one record batch per partition, "
            f"not {len(batches)}"))
    return None


def produce(cluster: Cluster, partition: Partition, data: bytes | None, now_ms: int
            ) -> PartitionAppend:
    """Validate every batch of one partition's records (any invalid batch refuses them all),
    then append them."""
    topic = partition.topic
    if data is None:
        return PartitionAppend(errors.CORRUPT_MESSAGE, reason="records are null")
    try:
        batches = records.split_batches(data)
    except CorruptRecordBatchError as exc:
        return PartitionAppend(errors.CORRUPT_MESSAGE, reason=str(exc))
    if not batches:
        return PartitionAppend(errors.INVALID_RECORD, reason="no record batches")
    max_bytes = int(topic.configs.get("max.message.bytes",
                                      cluster.settings["message_max_bytes"]))
    checked = []
    for header, view in batches:
        if header.base_offset != 0:
            return PartitionAppend(errors.INVALID_RECORD, reason=(
                f"a client's record batch must have base offset 0, not {header.base_offset}"))
        if header.size > max_bytes:
            return PartitionAppend(errors.MESSAGE_TOO_LARGE, reason=(
                f"batch of {header.size} bytes is larger than max.message.bytes {max_bytes}"))
        try:
            records.check_batch(view)
        except CorruptRecordBatchError as exc:
            code = errors.CORRUPT_MESSAGE if "CRC" in str(exc) else errors.INVALID_RECORD
            return PartitionAppend(code, reason=str(exc))
        if header.is_control:
            return PartitionAppend(errors.INVALID_RECORD,
                                   reason="clients may not write control batches")
        if header.producer_id >= 0 and header.base_sequence < 0:
            return PartitionAppend(errors.INVALID_RECORD,
                                   reason="idempotent batch without a base sequence")
        checked.append((header, bytes(view)))
    log = partition.log
    log_append_time = topic.configs.get(
        "message.timestamp.type", cluster.settings["log_message_timestamp_type"]) == "LogAppendTime"
    first = None
    try:
        for header, batch in checked:
            result = log.append(batch, header, partition.leader_epoch, now_ms,
                                log_append_time=log_append_time)
            if first is None:
                first = result
    except ApiException as exc:
        if first is None:
            return PartitionAppend(exc.error_code, reason=str(exc),
                                   log_start_offset=log.log_start_offset)
    cluster.notify_append(partition)
    return PartitionAppend(errors.NONE, first.base_offset, first.log_append_time,
                           log.log_start_offset)


def list_offset(partition: Partition, timestamp: int) -> tuple[int, int, int]:
    """ListOffsets for one partition: (offset, timestamp, leader epoch), or (-1, -1, -1) when
    there is none."""
    log = partition.log
    if timestamp == -2 or timestamp == -4:  # EARLIEST, EARLIEST_LOCAL
        return log.log_start_offset, -1, log.epoch_at_start(partition.leader_epoch)
    if timestamp == -1:  # LATEST
        return log.high_watermark, -1, partition.leader_epoch
    if timestamp == -3:  # MAX_TIMESTAMP
        return log.max_timestamp() or (-1, -1, -1)
    if timestamp in (-5, -6):  # LATEST_TIERED, EARLIEST_PENDING_UPLOAD: nothing is tiered
        return -1, -1, -1
    return log.offset_for_timestamp(timestamp) or (-1, -1, -1)
