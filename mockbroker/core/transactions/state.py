"""The transaction state machine: one table, and the table drives the code.

Kafka's names and log ids for the states of a transactional id (``TransactionState``), the
events that move one, and :data:`TRANSITIONS`, which maps (state, event) to the next state.  A
transaction changes state only through :func:`next_state`; a pair missing from the table is a
bug that fails loudly.  :func:`previous_states` derives, for each state, the states it can be
entered from; a test holds that against the ``validPreviousStates`` of Kafka's own class.

The life of a transaction: an InitProducerId leaves the id Empty with a new epoch; the first
partition added makes it Ongoing; EndTxn prepares the commit or the abort, and once every
partition has its marker it is complete, ready for the next one.  An InitProducerId (or a
timeout) while a transaction is Ongoing fences it first (PrepareEpochFence), then aborts it.
An id unused for ``transactional.id.expiration.ms`` is Dead and removed.
"""

from __future__ import annotations

from enum import Enum

from mockbroker.core import statetable


class TxnState(str, Enum):
    """A transactional id's state; the value is Kafka's name for it."""

    EMPTY = "Empty"
    ONGOING = "Ongoing"
    PREPARE_COMMIT = "PrepareCommit"
    PREPARE_ABORT = "PrepareAbort"
    COMPLETE_COMMIT = "CompleteCommit"
    COMPLETE_ABORT = "CompleteAbort"
    DEAD = "Dead"
    PREPARE_EPOCH_FENCE = "PrepareEpochFence"

    @property
    def log_id(self) -> int:
        """The byte ``__transaction_state`` records store for the state."""
        return _LOG_IDS[self]

    @classmethod
    def from_log_id(cls, value: int) -> "TxnState":
        for state, log_id in _LOG_IDS.items():
            if log_id == value:
                return state
        raise ValueError(f"no transaction state has the log id {value}")

    @property
    def complete(self) -> bool:
        """Whether no transaction is in progress (a new one may start, the id may expire)."""
        return self in (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)


_LOG_IDS = {TxnState.EMPTY: 0, TxnState.ONGOING: 1, TxnState.PREPARE_COMMIT: 2,
            TxnState.PREPARE_ABORT: 3, TxnState.COMPLETE_COMMIT: 4, TxnState.COMPLETE_ABORT: 5,
            TxnState.DEAD: 6, TxnState.PREPARE_EPOCH_FENCE: 7}


class Event(Enum):
    """What happens to a transactional id; the value is how the diagram says it."""

    PRODUCER_INITIALIZED = "InitProducerId bumps the epoch (or gives a new producer id)"
    PARTITIONS_ADDED = "partitions (or a group's offsets) join the transaction"
    COMMIT_REQUESTED = "EndTxn commits"
    ABORT_REQUESTED = "EndTxn aborts"
    EMPTY_ABORT_REQUESTED = "EndTxn aborts with nothing added (transaction version 2)"
    FENCED = "InitProducerId or the transaction timeout fences the producer"
    FENCED_ABORT = "the fenced transaction is aborted"
    MARKERS_WRITTEN = "every partition has its marker"
    EXPIRED = "the id is unused for transactional.id.expiration.ms"


E, O, PC, PA, CC, CA, DEAD, PF = (TxnState.EMPTY, TxnState.ONGOING, TxnState.PREPARE_COMMIT,
                                  TxnState.PREPARE_ABORT, TxnState.COMPLETE_COMMIT,
                                  TxnState.COMPLETE_ABORT, TxnState.DEAD,
                                  TxnState.PREPARE_EPOCH_FENCE)

#: (state, event) -> the next state, for every transition of a transactional id.
TRANSITIONS: dict[tuple[TxnState, Event], TxnState] = {
    (E, Event.PRODUCER_INITIALIZED): E,
    (CC, Event.PRODUCER_INITIALIZED): E,
    (CA, Event.PRODUCER_INITIALIZED): E,
    (E, Event.PARTITIONS_ADDED): O,
    (O, Event.PARTITIONS_ADDED): O,
    (CC, Event.PARTITIONS_ADDED): O,
    (CA, Event.PARTITIONS_ADDED): O,
    (O, Event.COMMIT_REQUESTED): PC,
    (O, Event.ABORT_REQUESTED): PA,
    (E, Event.EMPTY_ABORT_REQUESTED): PA,
    (CC, Event.EMPTY_ABORT_REQUESTED): PA,
    (CA, Event.EMPTY_ABORT_REQUESTED): PA,
    (O, Event.FENCED): PF,
    (PF, Event.FENCED_ABORT): PA,
    (PC, Event.MARKERS_WRITTEN): CC,
    (PA, Event.MARKERS_WRITTEN): CA,
    (E, Event.EXPIRED): DEAD,
    (CC, Event.EXPIRED): DEAD,
    (CA, Event.EXPIRED): DEAD,
}


def next_state(current: TxnState, event: Event) -> TxnState:
    return statetable.step(TRANSITIONS, current, event, "a transaction")


def previous_states() -> dict[TxnState, frozenset[TxnState]]:
    """For each state, the states the table enters it from (Kafka's validPreviousStates)."""
    found: dict[TxnState, set[TxnState]] = {state: set() for state in TxnState}
    for (source, _), target in TRANSITIONS.items():
        found[target].add(source)
    return {state: frozenset(sources) for state, sources in found.items()}


def mermaid() -> str:
    """The table as a Mermaid state diagram."""
    return statetable.mermaid(TRANSITIONS, E)
