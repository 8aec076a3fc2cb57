"""``__transaction_state`` records in Kafka's own format, and reading them back.

A record's key is an int16 version (0) and ``TransactionLogKey`` (the transactional id); its
value an int16 version and ``TransactionLogValue``: the producer id and epoch, the timeout, the
state's log id, the partitions of the transaction and its timestamps (version 1 adds, as tagged
fields, the previous and next producer ids and the client's transaction version).  A null value
(a tombstone) removes an expired id.  The coordinator appends one record for every state it
enters, and a coordinator that takes over a partition rebuilds its transactions from them.
"""

from __future__ import annotations

import struct

from mockbroker.core.log import PartitionLog
from mockbroker.core.transactions.metadata import TxnMetadata
from mockbroker.core.transactions.state import TxnState
from wire import decode_embedded, embedded_codec, records

KEY_VERSION = 0
VALUE_VERSION = 1
_VERSION = struct.Struct(">h")


def key_bytes(transactional_id: str) -> bytes:
    codec = embedded_codec("TransactionLogKey", KEY_VERSION)
    return _VERSION.pack(KEY_VERSION) + bytes(codec.encode(codec.cls(
        transactional_id=transactional_id)))


def value_bytes(meta: TxnMetadata) -> bytes:
    codec = embedded_codec("TransactionLogValue", VALUE_VERSION)
    cls = codec.cls
    by_topic: dict[str, list[int]] = {}
    for topic, index in sorted(meta.partitions):
        by_topic.setdefault(topic, []).append(index)
    value = cls(
        producer_id=meta.producer_id, previous_producer_id=meta.previous_producer_id,
        next_producer_id=meta.next_producer_id, producer_epoch=meta.producer_epoch,
        next_producer_epoch=-1, transaction_timeout_ms=meta.timeout_ms,
        transaction_status=meta.state.log_id,
        transaction_partitions=None if meta.state is TxnState.EMPTY else [
            cls.PartitionsSchema(topic=topic, partition_ids=ids)
            for topic, ids in by_topic.items()],
        transaction_last_update_timestamp_ms=meta.last_update_ms,
        transaction_start_timestamp_ms=meta.start_ms,
        client_transaction_version=meta.client_version)
    return _VERSION.pack(VALUE_VERSION) + bytes(codec.encode(value))


def append(partition, now_ms: int, entries: list[tuple[bytes, bytes | None]]) -> None:
    """Append key/value records to a ``__transaction_state`` partition as one batch."""
    batch = records.encode_batch([(key, value, [], now_ms) for key, value in entries])
    partition.log.append(batch, records.read_batch_header(batch), partition.leader_epoch,
                         now_ms)


def metadata_record(meta: TxnMetadata) -> tuple[bytes, bytes]:
    return key_bytes(meta.transactional_id), value_bytes(meta)


def tombstone(transactional_id: str) -> tuple[bytes, None]:
    return key_bytes(transactional_id), None


def replay(log: PartitionLog) -> dict[str, TxnMetadata]:
    """The transactions a partition's records describe: the last record of each id wins, and a
    tombstone removes the id."""
    found: dict[str, TxnMetadata] = {}
    for stored in log.batches:
        for record in records.decode_records(stored.data, verify_crc=False):
            if record.key is None or len(record.key) < 2:
                continue
            _, key = decode_embedded("TransactionLogKey", bytes(record.key))
            if record.value is None:
                found.pop(key.transactional_id, None)
                continue
            _, value = decode_embedded("TransactionLogValue", bytes(record.value))
            found[key.transactional_id] = TxnMetadata(
                transactional_id=key.transactional_id, producer_id=value.producer_id,
                producer_epoch=value.producer_epoch, timeout_ms=value.transaction_timeout_ms,
                state=TxnState.from_log_id(value.transaction_status),
                partitions={(p.topic, i) for p in value.transaction_partitions or ()
                            for i in p.partition_ids},
                start_ms=value.transaction_start_timestamp_ms,
                last_update_ms=value.transaction_last_update_timestamp_ms,
                previous_producer_id=value.previous_producer_id,
                next_producer_id=value.next_producer_id,
                client_version=value.client_transaction_version)
    return found
