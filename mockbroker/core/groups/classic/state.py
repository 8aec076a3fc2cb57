"""The classic group state machine: one table, and the table drives the code.

Kafka's names for the states (``ClassicGroupState``), the events that move a group, and
:data:`TRANSITIONS`, which maps (state, event) to the next state.  A group changes state only by
firing an event (:meth:`ClassicGroup.fire`); a (state, event) pair that is not in the table is
a bug that fails loudly instead of corrupting a group.  Empty → PreparingRebalance →
CompletingRebalance → Stable, with Dead reachable from every state.  Kafka also allows
Dead → Dead; here a Dead group has already left its shard, so nothing can take that step.

The diagram in this package's documentation is :func:`mermaid` of this table; a test keeps the
two equal.
"""

from __future__ import annotations

from enum import Enum

from mockbroker.core import statetable


class GroupState(str, Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


class Event(Enum):
    """What happens to a classic group; the value is how the diagram says it."""

    MEMBER_JOINS = "a member joins, or rejoins with new metadata"
    MEMBER_LEAVES = "a member leaves, or its session times out"
    SYNC_TIMES_OUT = "a member misses the SyncGroup after the join phase"
    REBALANCE_REQUESTED = "a rebalance is forced, or the group is over its max size"
    JOIN_COMPLETES = "the join phase completes with members"
    JOIN_COMPLETES_EMPTY = "the join phase completes with no members left"
    ASSIGNMENT_STORED = "the leader's SyncGroup assignment is stored"
    GROUP_DELETED = "the group is deleted, or its last offsets expire"
    COORDINATOR_UNLOADS = "the coordinator moves away"
    CONVERTED = "a consumer-protocol member joins: it becomes a consumer group"


E, PR, CR, ST, DEAD = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE,
                       GroupState.COMPLETING_REBALANCE, GroupState.STABLE, GroupState.DEAD)

#: (state, event) -> the next state, for every transition of a classic group.
TRANSITIONS: dict[tuple[GroupState, Event], GroupState] = {
    (E, Event.MEMBER_JOINS): PR,
    (E, Event.GROUP_DELETED): DEAD,
    (E, Event.COORDINATOR_UNLOADS): DEAD,
    (E, Event.CONVERTED): DEAD,
    (PR, Event.JOIN_COMPLETES): CR,
    (PR, Event.JOIN_COMPLETES_EMPTY): E,
    (PR, Event.COORDINATOR_UNLOADS): DEAD,
    (PR, Event.CONVERTED): DEAD,
    (CR, Event.ASSIGNMENT_STORED): ST,
    (CR, Event.MEMBER_JOINS): PR,
    (CR, Event.MEMBER_LEAVES): PR,
    (CR, Event.SYNC_TIMES_OUT): PR,
    (CR, Event.REBALANCE_REQUESTED): PR,
    (CR, Event.COORDINATOR_UNLOADS): DEAD,
    (CR, Event.CONVERTED): DEAD,
    (ST, Event.MEMBER_JOINS): PR,
    (ST, Event.MEMBER_LEAVES): PR,
    (ST, Event.SYNC_TIMES_OUT): PR,
    (ST, Event.REBALANCE_REQUESTED): PR,
    (ST, Event.COORDINATOR_UNLOADS): DEAD,
    (ST, Event.CONVERTED): DEAD,
}


def next_state(current: GroupState, event: Event) -> GroupState:
    return statetable.step(TRANSITIONS, current, event, "a group")


def can_rebalance(current: GroupState) -> bool:
    """Whether a join or a leave may start a rebalance from ``current``."""
    return (current, Event.MEMBER_JOINS) in TRANSITIONS


def mermaid() -> str:
    """The table as a Mermaid state diagram."""
    return statetable.mermaid(TRANSITIONS, E)
