"""The state of a record in a share partition, and the table that moves it (Kafka's
``RecordState`` and ``InFlightState``).

A record the share group has fetched is in flight until it reaches a terminal state:

| state | value | means |
|---|---|---|
| Available | 0 | may be delivered (again) |
| Acquired | 1 | delivered to a member, locked until it acknowledges or the lock expires |
| Acknowledged | 2 | accepted: done |
| Archived | 4 | rejected, a gap, past its delivery limit, or of an aborted transaction: done |

The events are what a member does (acquire, and the acknowledgement types), what the broker
does for it (its lock expires, its session goes), and what the log says (an aborted
transaction).  Two rules sit beside the table, as in Kafka: a record that would become
Available once its delivery count has reached the group's limit is Archived instead, and only
acquiring counts a delivery.
"""

from __future__ import annotations

from enum import Enum, IntEnum

from mockbroker.core import statetable


class RecordState(IntEnum):
    """A record's state; the value is what Kafka's share records store."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4

    @property
    def terminal(self) -> bool:
        return self in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED)

    @property
    def label(self) -> str:
        return self.name.capitalize()


class AckType(IntEnum):
    """The acknowledgement types of ShareFetch and ShareAcknowledge."""

    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4


class Event(Enum):
    ACQUIRE = "acquired by a member"
    ACCEPT = "accepted"
    RELEASE = "released"
    REJECT = "rejected"
    GAP = "acknowledged as a gap"
    RENEW = "lock renewed"
    LOCK_EXPIRED = "acquisition lock expired"
    MEMBER_GONE = "its member's session closed"
    ABORTED = "of an aborted transaction"


A, Q, K, X = (RecordState.AVAILABLE, RecordState.ACQUIRED, RecordState.ACKNOWLEDGED,
              RecordState.ARCHIVED)

#: (state, event) -> next state, before the delivery limit (:func:`next_state`)
TABLE: dict[tuple[RecordState, Event], RecordState] = {
    (A, Event.ACQUIRE): Q,
    (Q, Event.ACCEPT): K,
    (Q, Event.RELEASE): A,
    (Q, Event.REJECT): X,
    (Q, Event.GAP): X,
    (Q, Event.RENEW): Q,
    (Q, Event.LOCK_EXPIRED): A,
    (Q, Event.MEMBER_GONE): A,
    (Q, Event.ABORTED): X,
}

#: the event each acknowledgement type is
ACK_EVENTS = {AckType.GAP: Event.GAP, AckType.ACCEPT: Event.ACCEPT,
              AckType.RELEASE: Event.RELEASE, AckType.REJECT: Event.REJECT,
              AckType.RENEW: Event.RENEW}


def next_state(state: RecordState, event: Event, delivery_count: int,
               delivery_limit: int) -> RecordState:
    """The state ``event`` takes a record to: the table's, except that a record whose
    delivery count has reached ``delivery_limit`` is Archived rather than made Available."""
    target = statetable.step(TABLE, state, event, "a share-partition record")
    if target is RecordState.AVAILABLE and delivery_count >= delivery_limit:
        return RecordState.ARCHIVED
    return target


def diagram() -> str:
    """The table as a Mermaid state diagram (the package's README shows it)."""
    lines = ["stateDiagram-v2", f"    [*] --> {A.label}"]
    lines += [f"    {source.label} --> {target.label}: {event.value}"
              for (source, event), target in TABLE.items()]
    lines.append(f"    {Q.label} --> {X.label}: made available at the delivery limit")
    return "\n".join(lines) + "\n"
