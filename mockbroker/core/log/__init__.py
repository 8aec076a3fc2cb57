"""Partition logs: batches as bytes, their offsets, producer state and aborted transactions;
and their retention (:mod:`.retention`: old segments deleted by time and size)."""

from mockbroker.core.log.partition import (UNDEFINED_EPOCH, AbortedTransaction, AppendResult,
                                           PartitionLog, Segment, StoredBatch)
from mockbroker.core.log.producer_state import INT32_MAX, ProducerState

__all__ = ["UNDEFINED_EPOCH", "AbortedTransaction", "AppendResult", "PartitionLog", "Segment",
           "StoredBatch", "INT32_MAX", "ProducerState"]
