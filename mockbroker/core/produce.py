"""The write path: one partition's records of a Produce request, checked and appended.

Checks run in Kafka's order: the request's shape (exactly one record batch, in the v2 format:
``ProduceRequest.validateRecords``), the acks, the topic (clients may not write internal topics),
the leader, then the batch itself as the log validates it (base offset 0, size against
``max.message.bytes``, CRC and record framing, no control batches from clients, sequence
numbers for idempotent producers).  The batch bytes are split once; what is stored is the bytes
the producer sent, with the base offset and leader epoch patched in by the log.
"""

from __future__ import annotations

from dataclasses import dataclass

from mockbroker.core.cluster import Cluster, Partition
from mockbroker.core.errors import ApiException
from mockbroker.core.replica import replica_error
from wire import CorruptRecordBatchError, errors, records

#: The smallest message a v0 message set can hold (``LegacyRecord.RECORD_OVERHEAD_V0``).
LEGACY_MIN_SIZE = 14
#: The only client Kafka lets write to internal topics.
ADMIN_CLIENT_ID = "__admin_client"


@dataclass(slots=True)
class PartitionAppend:
    """What a Produce answers for one partition."""

    error_code: int = errors.NONE
    base_offset: int = -1
    log_append_time: int = -1
    log_start_offset: int = -1
    #: why the records were refused, for a reader of the core; not sent: Kafka answers every
    #: refusal this broker makes with the error code alone (it writes an error message only for
    #: per-record validation failures, which carry record errors)
    reason: str | None = None


def _split_one(data: bytes | None):
    """The request-level check: (header, batch view) of the one v2 batch, or a refusal."""
    if data is None:
        return PartitionAppend(errors.CORRUPT_MESSAGE, reason="records are null")
    try:
        found = list(records.iter_batches(data, allow_partial_tail=True))
    except CorruptRecordBatchError as exc:
        # Kafka can read the old message formats (magic 0 and 1) but takes only v2 from a client
        if len(data) > records.MAGIC_OFFSET and data[records.MAGIC_OFFSET] in (0, 1) and \
                int.from_bytes(data[8:12], "big", signed=True) >= LEGACY_MIN_SIZE:
            return PartitionAppend(errors.INVALID_RECORD, reason=(
                f"record batches must have magic 2, not {data[records.MAGIC_OFFSET]}"))
        return PartitionAppend(errors.CORRUPT_MESSAGE, reason=str(exc))
    if len(found) != 1:
        return PartitionAppend(errors.INVALID_RECORD, reason=(
            f"a produce request must carry exactly one record batch per partition, "
            f"not {len(found)}"))
    header, start, end = found[0]
    return header, memoryview(data)[start:end], len(data) - end


def check_request_records(data: bytes | None) -> PartitionAppend | None:
    """The request-level check alone (exactly one v2 batch): the refusal, or None."""
    split = _split_one(data)
    return split if isinstance(split, PartitionAppend) else None


def _check_batch(cluster: Cluster, partition: Partition, header, view, tail: int
                 ) -> PartitionAppend | None:
    """The log's validation of a client's batch (``LogValidator``); ``tail`` counts the bytes
    of a partial batch after it."""
    if tail:
        return PartitionAppend(errors.CORRUPT_MESSAGE, reason=(
            f"{tail} bytes of a partial record batch after the batch"))
    max_bytes = int(partition.topic.configs.get("max.message.bytes",
                                                cluster.settings["message_max_bytes"]))
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
    return None


def append_records(cluster: Cluster, partition: Partition, data: bytes | None, *, acks: int,
                   broker_id: int, client_id: str | None, now_ms: int) -> PartitionAppend:
    """One partition's records of a Produce sent to ``broker_id``: refused with Kafka's error
    code, or appended (every Fetch waiting on the partition is told)."""
    split = _split_one(data)
    if isinstance(split, PartitionAppend):
        return split
    if acks not in (-1, 0, 1):
        return PartitionAppend(errors.INVALID_REQUIRED_ACKS)
    if partition.topic.internal and client_id != ADMIN_CLIENT_ID:
        return PartitionAppend(errors.INVALID_TOPIC_EXCEPTION, reason=(
            f"clients may not write to the internal topic {partition.topic.name}"))
    error = replica_error(partition, broker_id)
    if error != errors.NONE:
        return PartitionAppend(error)
    header, view, tail = split
    refused = _check_batch(cluster, partition, header, view, tail)
    if refused is not None:
        return refused
    log = partition.log
    log_append_time = partition.topic.configs.get(
        "message.timestamp.type",
        cluster.settings["log_message_timestamp_type"]) == "LogAppendTime"
    try:
        result = log.append(bytes(view), header, partition.leader_epoch, now_ms,
                            log_append_time=log_append_time)
    except ApiException as exc:
        return PartitionAppend(exc.error_code, reason=str(exc),
                               log_start_offset=log.log_start_offset)
    cluster.notify_append(partition)
    return PartitionAppend(errors.NONE, result.base_offset, result.log_append_time,
                           log.log_start_offset)
