"""State tables: (state, event) -> next state, the one thing a group or a transaction changes
state by.  Each machine declares its table (its states and events are enums whose values are
Kafka's names and the events' wording); this module steps through one and draws it."""

from __future__ import annotations

from enum import Enum
from typing import Mapping, TypeVar

S = TypeVar("S", bound=Enum)


class IllegalTransition(RuntimeError):
    """A (state, event) pair the table does not have: a bug, which fails loudly rather than
    corrupting the machine."""


def step(table: Mapping[tuple[S, Enum], S], current: S, event: Enum, what: str) -> S:
    """The state ``event`` takes ``current`` to; ``what`` names the machine in the error."""
    try:
        return table[(current, event)]
    except KeyError:
        raise IllegalTransition(f"{what} in {current.value} cannot take the event "
                                f"{event.name} ({event.value})") from None


def mermaid(table: Mapping[tuple[Enum, Enum], Enum], initial: Enum) -> str:
    """The table as a Mermaid state diagram."""
    lines = ["stateDiagram-v2", f"    [*] --> {initial.value}"]
    for (source, event), target in table.items():
        lines.append(f"    {source.value} --> {target.value}: {event.value}")
    return "\n".join(lines) + "\n"
