"""The write path: one partition's records of a Produce request, checked and appended.

Checks run in Kafka's order: the request's shape (exactly one record batch, in the v2 format:
``ProduceRequest.validateRecords``), the acks, the topic (clients may not write internal topics),
the leader, then the batch itself as the log validates it (base offset 0, size against
``max.message.bytes``, CRC and record framing, no control batches from clients, sequence
numbers for idempotent producers), then its records as Kafka's LogValidator checks them
(timestamps within ``message.timestamp.before.max.ms`` / ``after.max.ms`` on a CreateTime
topic: :mod:`mockbroker.core.log.validator`).  The batch bytes are split once; what is stored is
the bytes the producer sent, or the batch rebuilt with the topic's ``compression.type`` when that
names another codec, with the base offset and leader epoch patched in by the log.
"""

from __future__ import annotations

from typing import Callable, Sequence

from msgspec import Struct

from mockbroker.core.cluster import Cluster, Partition
from mockbroker.core.config.topic import topic_value_from_broker
from mockbroker.core.errors import ApiException
from mockbroker.core.log import validator
from mockbroker.core.datapath.replica import replica_error
from wire import CorruptRecordBatchError, errors, records
from wire.records import BatchHeader

#: The smallest message a v0 message set can hold (``LegacyRecord.RECORD_OVERHEAD_V0``).
LEGACY_MIN_SIZE = 14
#: The only client Kafka lets write to internal topics.
ADMIN_CLIENT_ID = "__admin_client"


class PartitionAppend(Struct):
    """What a Produce answers for one partition."""

    error_code: int = errors.NONE
    base_offset: int = -1
    log_append_time: int = -1
    log_start_offset: int = -1
    #: why the records were refused, for a reader of the core; not sent: Kafka answers every
    #: refusal this broker makes with the error code alone (it writes an error message only for
    #: per-record validation failures, which carry record errors)
    reason: str | None = None
    #: per-record validation failures: the message Kafka sends, and (record index, message)
    error_message: str | None = None
    record_errors: Sequence[tuple[int, str]] = ()


def _split_one(data: bytes | None):
    """The request-level check: (header, batch view) of the one v2 batch, or a refusal."""
    if data is None:
        return PartitionAppend(errors.CORRUPT_MESSAGE, reason="records are null")
    try:
        header = records.read_batch_header(data)
    except CorruptRecordBatchError:
        pass  # the walk below says what is wrong, as it words it
    else:
        if header.size == len(data):  # what every producer sends: one whole batch
            return header, memoryview(data), 0
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


def topic_config(cluster: Cluster, partition: Partition, broker_id: int) -> "_TopicConfig":
    """The topic's config values on ``broker_id``, each resolved once until a config changes."""
    return cluster.broker_configs.kept(
        ("topic", partition.topic.topic_id, broker_id),
        lambda: _TopicConfig(cluster, partition, broker_id))


class _TopicConfig:
    """A topic's config values as the data path reads them: the override, else the broker's
    (the settings' values for the configs that are settings of the mock).  What every append
    reads is worked out when this is made."""

    __slots__ = ("_cluster", "_overrides", "_broker_id", "_broker", "_values",
                 "max_message_bytes", "log_append_time", "timestamps", "codec")

    def __init__(self, cluster: Cluster, partition: Partition, broker_id: int):
        self._cluster = cluster
        self._overrides = partition.topic.configs
        self._broker_id = broker_id
        self._broker: dict[str, str] | None = None
        self._values: dict[str, str] = {}
        self.max_message_bytes = int(self._overrides.get(
            "max.message.bytes", cluster.settings["message_max_bytes"]))
        self.log_append_time = self["message.timestamp.type"] == "LogAppendTime"
        self.timestamps = validator.TimestampPolicy(
            self.log_append_time, int(self["message.timestamp.before.max.ms"]),
            int(self["message.timestamp.after.max.ms"]))
        #: the codec batches are stored with; None keeps the producer's
        self.codec = validator.TOPIC_CODECS.get(self["compression.type"])

    def __getitem__(self, name: str) -> str:
        found = self._values.get(name)
        if found is None:
            found = self._values[name] = self._resolve(name)
        return found

    def _resolve(self, name: str) -> str:
        if name in self._overrides:
            return self._overrides[name]
        if name == "message.timestamp.type":
            return self._cluster.settings["log_message_timestamp_type"]
        if self._broker is None:
            # the configs read here are no settings of the mock: only the dynamic layers can
            # hold them, above Kafka's defaults
            state = self._cluster.broker_configs
            self._broker = dict(state.dynamic_default)
            self._broker.update(state.per_broker(self._broker_id))
        return topic_value_from_broker(name, self._broker)


def _check_batch(config: _TopicConfig, header: BatchHeader, view, tail: int
                 ) -> PartitionAppend | None:
    """The log's validation of a client's batch (``LogValidator``); ``tail`` counts the bytes
    of a partial batch after it."""
    if tail:
        return PartitionAppend(errors.CORRUPT_MESSAGE, reason=(
            f"{tail} bytes of a partial record batch after the batch"))
    max_bytes = config.max_message_bytes
    if header.base_offset != 0:
        return PartitionAppend(errors.INVALID_RECORD, reason=(
            f"a client's record batch must have base offset 0, not {header.base_offset}"))
    if header.size > max_bytes:
        return PartitionAppend(errors.MESSAGE_TOO_LARGE, reason=(
            f"batch of {header.size} bytes is larger than max.message.bytes {max_bytes}"))
    try:
        records.check_batch(view, header=header)
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


#: asked before a transactional batch that opens its producer's transaction in a partition is
#: appended: raises ApiException (with the code the producer gets) unless the partition is in
#: the producer's ongoing transaction (or has just been added to it)
TransactionCheck = Callable[[Partition, BatchHeader], None]


def _in_open_transaction(log, header: BatchHeader) -> bool:
    """Whether the batch continues its producer's open transaction in this partition (Kafka
    checks with the coordinator only for the first batch of a transaction)."""
    entry = log.producer_state.producers.get(header.producer_id)
    return header.producer_id in log.producer_state.ongoing and entry is not None and \
        entry.epoch == header.producer_epoch


def append_records(cluster: Cluster, partition: Partition, data: bytes | None, *, acks: int,
                   broker_id: int, client_id: str | None, now_ms: int,
                   check_transaction: TransactionCheck | None = None) -> PartitionAppend:
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
    if acks == -1 and len(partition.isr) < len(partition.replicas) and \
            len(partition.isr) < cluster.replication.min_isr(partition):
        # the leader refuses before it writes (the ISR is below min.insync.replicas)
        return PartitionAppend(errors.NOT_ENOUGH_REPLICAS,
                               log_start_offset=partition.log.log_start_offset, reason=(
                                   f"the ISR {partition.isr} is below min.insync.replicas"))
    header, view, tail = split
    config = topic_config(cluster, partition, broker_id)
    refused = _check_batch(config, header, view, tail)
    if refused is not None:
        return refused
    log = partition.log
    if header.is_transactional and not _in_open_transaction(log, header):
        if check_transaction is None:
            return PartitionAppend(errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, reason=(
                "a transactional batch in a produce request with no transactional id"))
        try:
            check_transaction(partition, header)
        except ApiException as exc:
            return PartitionAppend(exc.error_code, reason=str(exc),
                                   log_start_offset=log.log_start_offset)
    policy = config.timestamps
    compression = header.compression
    codec = compression if config.codec is None else config.codec
    # The records are decoded only when a timestamp may be out of bounds or the batch must be
    # rebuilt: the hot path of a stock producer stays on the batch header.
    batch_records = None
    if codec != compression or validator.may_refuse(header, policy, now_ms):
        batch_records = records.decode_records(view, verify_crc=False)
        invalid = validator.timestamp_errors(header, batch_records, policy, now_ms)
        if invalid:
            return PartitionAppend(errors.INVALID_TIMESTAMP,
                                   log_start_offset=log.log_start_offset, reason=invalid[0][1],
                                   error_message=validator.INVALID_TIMESTAMP_MESSAGE,
                                   record_errors=invalid)
    data = view  # the log stores its own copy
    if codec != compression:
        level = config[validator.LEVEL_CONFIGS[codec]] if codec in validator.LEVEL_CONFIGS \
            else None
        data = validator.recompress(header, batch_records, codec,
                                    None if level is None else
                                    validator.codec_level(codec, int(level)))
        header = records.read_batch_header(data)
        if header.size > config.max_message_bytes:
            return PartitionAppend(errors.MESSAGE_TOO_LARGE, reason=(
                f"batch of {header.size} bytes recompressed is larger than max.message.bytes "
                f"{config.max_message_bytes}"))
    try:
        result = log.append(data, header, partition.leader_epoch, now_ms,
                            log_append_time=config.log_append_time)
    except ApiException as exc:
        return PartitionAppend(exc.error_code, reason=str(exc),
                               log_start_offset=log.log_start_offset)
    cluster.notify_append(partition)
    return PartitionAppend(errors.NONE, result.base_offset, result.log_append_time,
                           log.log_start_offset)
