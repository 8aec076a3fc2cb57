"""The state of a record in a share partition, and the table that moves it (Kafka's
``RecordState`` and ``InFlightState``).

A record the share group has fetched is in flight until it reaches a terminal state:

| state | value | means |
|---|---|---|
| Available | 0 | may be delivered (again) |
| Acquired | 1 | delivered to a member, locked until it acknowledges or the lock expires |
| Acknowledged | 2 | accepted: done |
| Archiving | 3 | on its way to the group's dead-letter queue |
| Archived | 4 | rejected, a gap, past its delivery limit, or of an aborted transaction: done |

The events are what a member does (acquire, and the acknowledgement types), what the broker
does for it (its lock expires, its session goes, it wrote the record to the dead-letter
queue), and what the log says (an aborted transaction).  Three rules sit beside the table, as
in Kafka: a record that would become Available once its delivery count has reached the group's
limit is Archived instead; in a group with a dead-letter queue (KIP-1191, ``share.version`` 2)
such a record, and a rejected one, is Archiving rather than Archived, until the broker has
written it to the queue; and only acquiring counts a delivery.
"""

from __future__ import annotations

from enum import Enum, IntEnum

from mockbroker.core import statetable


class RecordState(IntEnum):
    """A record's state; the value is what Kafka's share records store."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVING = 3
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
    DEAD_LETTERED = "written to the dead-letter queue"


A, Q, K, D, X = (RecordState.AVAILABLE, RecordState.ACQUIRED, RecordState.ACKNOWLEDGED,
                 RecordState.ARCHIVING, RecordState.ARCHIVED)

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
    (D, Event.DEAD_LETTERED): X,
}

#: the event each acknowledgement type is
ACK_EVENTS = {AckType.GAP: Event.GAP, AckType.ACCEPT: Event.ACCEPT,
              AckType.RELEASE: Event.RELEASE, AckType.REJECT: Event.REJECT,
              AckType.RENEW: Event.RENEW}


class DeadLetter(Enum):
    """Why a record goes to the dead-letter queue: the message its record there carries (the
    ``__dlq.errors.message`` header), Kafka's words."""

    REJECTED = "Offset rejected by client."
    DELIVERY_LIMIT = "Offset delivery count exceeded the threshold."


def next_state(state: RecordState, event: Event, delivery_count: int,
               delivery_limit: int, dead_letter: bool = False) -> RecordState:
    """The state ``event`` takes a record to: the table's, except that a record whose
    delivery count has reached ``delivery_limit`` is Archived rather than made Available, and
    that with a dead-letter queue (``dead_letter``) a rejected record and one at its limit are
    Archiving (the queue gets them first)."""
    target = statetable.step(TABLE, state, event, "a share-partition record")
    if target is RecordState.AVAILABLE and delivery_count >= delivery_limit:
        return RecordState.ARCHIVING if dead_letter else RecordState.ARCHIVED
    if dead_letter and event is Event.REJECT:
        return RecordState.ARCHIVING
    return target


def dead_letter_reason(event: Event) -> DeadLetter:
    """Why a record ``event`` made Archiving goes to the dead-letter queue."""
    return DeadLetter.REJECTED if event is Event.REJECT else DeadLetter.DELIVERY_LIMIT


def diagram() -> str:
    """The table as a Mermaid state diagram (the package's README shows it)."""
    lines = ["stateDiagram-v2", f"    [*] --> {A.label}"]
    lines += [f"    {source.label} --> {target.label}: {event.value}"
              for (source, event), target in TABLE.items()]
    lines.append(f"    {Q.label} --> {X.label}: made available at the delivery limit")
    lines.append(f"    {Q.label} --> {D.label}: rejected, or at the delivery limit, with a "
                 "dead-letter queue")
    return "\n".join(lines) + "\n"
