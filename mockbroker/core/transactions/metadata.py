"""What the coordinator knows of one transactional id (Kafka's ``TransactionMetadata``)."""

from __future__ import annotations

from msgspec import Struct, field

from mockbroker.core.transactions.state import Event, TxnState, next_state

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
#: an epoch at or past this is exhausted: the id gets a new producer id instead of a bump
#: (``Short.MAX_VALUE - 1``: one epoch is kept back for the fence of a timed-out transaction)
EPOCH_EXHAUSTED = 32766
#: the largest epoch (``Short.MAX_VALUE``)
MAX_EPOCH = 32767


class TxnMetadata(Struct):
    """The coordinator's state of one transactional id."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TxnState = TxnState.EMPTY
    #: (topic, partition) of every partition the transaction wrote or will write to
    partitions: set = field(default_factory=set)
    start_ms: int = -1
    last_update_ms: int = -1
    previous_producer_id: int = NO_PRODUCER_ID
    next_producer_id: int = NO_PRODUCER_ID
    #: the epoch before the last bump, so a retried request that caused it can be recognised
    last_producer_epoch: int = NO_PRODUCER_EPOCH
    #: the transaction version the client spoke when it last ended or added (KIP-890)
    client_version: int = 0
    #: partitions whose marker is still to be written (while PrepareCommit or PrepareAbort)
    pending_markers: set = field(default_factory=set)

    def fire(self, event: Event, now_ms: int) -> TxnState:
        self.state = next_state(self.state, event)
        self.last_update_ms = now_ms
        return self.state

    @property
    def epoch_exhausted(self) -> bool:
        return self.producer_epoch >= EPOCH_EXHAUSTED

    @property
    def tv2(self) -> bool:
        return self.client_version >= 2

    def describe(self, now_ms: int) -> dict:
        """What DescribeTransactions and the HTTP view say of it."""
        return {
            "transactional_id": self.transactional_id, "state": self.state.value,
            "producer_id": self.producer_id, "producer_epoch": self.producer_epoch,
            "timeout_ms": self.timeout_ms, "start_ms": self.start_ms,
            "age_ms": now_ms - self.start_ms if self.start_ms >= 0 else None,
            "last_update_ms": self.last_update_ms,
            "partitions": sorted(self.partitions), "client_transaction_version":
                self.client_version}
