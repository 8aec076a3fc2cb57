"""Commit and abort markers: what the coordinator writes to each partition of a transaction.

A marker is a control batch (transactional, control) holding one record whose key says COMMIT
or ABORT and whose value carries the coordinator epoch, with the producer's id and epoch; Kafka
writes it through ``WriteTxnMarkers`` to the partition's leader.  The partition's log closes
the producer's transaction with it: the last stable offset moves past it and an abort is
indexed for ``read_committed`` fetchers (:meth:`~mockbroker.core.log.PartitionLog.append_marker`).
"""

from __future__ import annotations

from wire import records


def write(partition, producer_id: int, producer_epoch: int, commit: bool,
          coordinator_epoch: int, now_ms: int) -> int:
    """Append the marker to ``partition``; returns its offset."""
    batch = records.encode_end_txn_marker(commit, producer_id=producer_id,
                                          producer_epoch=producer_epoch,
                                          coordinator_epoch=coordinator_epoch,
                                          timestamp=now_ms)
    return partition.log.append_marker(batch, records.read_batch_header(batch),
                                       partition.leader_epoch, now_ms, commit=commit,
                                       coordinator_epoch=coordinator_epoch)
