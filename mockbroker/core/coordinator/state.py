"""The classic group state machine, all of it in one table.

Kafka's names for the states, and every transition the coordinator makes, as rows of
(from, event, to).  The coordinator calls :func:`check` before each transition, so a transition
that is not in this table is a bug that fails loudly instead of corrupting a group.  Compare with
Kafka's ``ClassicGroupState`` (and the seeds' diagram): Empty → PreparingRebalance →
CompletingRebalance → Stable, with Dead reachable from every state.  Kafka also allows
Dead → Dead; here a Dead group has already left its shard, so nothing can take that step.
"""

from __future__ import annotations

from enum import Enum


class GroupState(str, Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


E, PR, CR, ST, DEAD = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE,
                       GroupState.COMPLETING_REBALANCE, GroupState.STABLE, GroupState.DEAD)

#: (from, event, to) for every transition of a classic group.
TRANSITIONS: tuple[tuple[GroupState, str, GroupState], ...] = (
    (E, "a member joins", PR),
    (E, "the group is deleted, or its last offsets expire", DEAD),
    (E, "the coordinator moves away", DEAD),
    (PR, "the join phase completes with members", CR),
    (PR, "the join phase completes with no members left", E),
    (PR, "the coordinator moves away", DEAD),
    (CR, "the leader's SyncGroup assignment is stored", ST),
    (CR, "a member joins, or rejoins with new metadata", PR),
    (CR, "a member leaves, or its session or sync times out", PR),
    (CR, "the coordinator moves away", DEAD),
    (ST, "a new member joins, the leader rejoins, or a follower rejoins with new metadata", PR),
    (ST, "a member leaves, or its session times out", PR),
    (ST, "a member misses the SyncGroup after a rebalance", PR),
    (ST, "the coordinator moves away", DEAD),
)

#: For each state, the states a group may come from (what Kafka calls valid previous states).
VALID_PREVIOUS: dict[GroupState, frozenset[GroupState]] = {
    state: frozenset(src for src, _, dst in TRANSITIONS if dst is state) for state in GroupState
}


class IllegalTransition(RuntimeError):
    pass


def check(current: GroupState, target: GroupState) -> None:
    if current not in VALID_PREVIOUS[target]:
        raise IllegalTransition(f"a group cannot go from {current.value} to {target.value}")


def can_rebalance(current: GroupState) -> bool:
    """Whether a join or a leave may start a rebalance from ``current``."""
    return current in VALID_PREVIOUS[GroupState.PREPARING_REBALANCE]
