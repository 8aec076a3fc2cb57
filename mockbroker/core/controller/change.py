"""One change to one partition, worked out as Kafka's controller works it out.

Every change a KRaft controller makes to a partition (a broker fenced or unfenced, a replica
joining or leaving the ISR, an election asked for, a reassignment started, completed or
cancelled) goes through one builder, in one order:

1. a reassignment whose adding replicas have all joined the ISR completes: the removed replicas
   leave the replica list and the ISR;
2. with eligible leader replicas (KIP-966) on and the ISR below the effective
   ``min.insync.replicas``, the members that left the ISR become eligible leaders (never one
   whose broker died uncleanly); an ISR back at the minimum clears them;
3. a leader is elected when the current one is no longer valid (or a preferred election asks
   for the first replica);
4. the leader epoch moves on when the leader changes or a replica leaves the replica list.

:func:`plan` is that builder over plain values (a :class:`PartitionView` of what the partition
is now and what the caller wants changed) and gives a :class:`Change`, or None when nothing
would change.  It reads nothing else and changes nothing; the replication control applies it.
"""

from __future__ import annotations

from enum import Enum
from typing import Callable, Iterable

from msgspec import Struct

NO_LEADER = -1


class Election(Enum):
    """How a new leader may be chosen (Kafka's ``PartitionChangeBuilder.Election``)."""

    #: the first replica, when it is in the ISR (ElectLeaders PREFERRED, the auto rebalance)
    PREFERRED = "preferred"
    #: a replica of the ISR (or of the eligible leaders when the ISR is empty)
    ONLINE = "online"
    #: as ONLINE, then any live replica: data past its log end is lost
    UNCLEAN = "unclean"


class PartitionView(Struct):
    """What one partition is now, as the controller holds it."""

    replicas: list[int]
    isr: list[int]
    leader: int
    elr: list[int] = []
    last_known_elr: list[int] = []
    adding: list[int] = []
    removing: list[int] = []


class Change(Struct):
    """What the partition becomes."""

    replicas: list[int]
    isr: list[int]
    leader: int
    elr: list[int]
    last_known_elr: list[int]
    adding: list[int]
    removing: list[int]
    #: whether the leader epoch moves on (a new leader, or a replica left the list)
    bump_epoch: bool
    #: the leader was chosen from outside the ISR and eligible leaders (data may be lost)
    unclean: bool = False
    #: the leader was chosen from the eligible leaders (the ISR then holds it alone)
    from_elr: bool = False


def plan(now: PartitionView, *, acceptable: Callable[[int], bool], min_isr: int,
         elr_enabled: bool, isr: list[int] | None = None, replicas: list[int] | None = None,
         adding: list[int] | None = None, removing: list[int] | None = None,
         election: Election = Election.ONLINE, unclean_shutdown: Iterable[int] = ()
         ) -> Change | None:
    """The change that the wanted ``isr`` / ``replicas`` / ``adding`` / ``removing`` (each
    None: as now) and ``election`` make to ``now``; None when it changes nothing.
    ``acceptable(r)`` says whether broker ``r`` may lead (registered, unfenced); ``min_isr`` is
    the topic's effective ``min.insync.replicas``; ``unclean_shutdown`` names brokers that
    came back from a crash (they may not stay eligible leaders)."""
    target_isr = list(now.isr if isr is None else isr)
    target_replicas = list(now.replicas if replicas is None else replicas)
    target_adding = list(now.adding if adding is None else adding)
    target_removing = list(now.removing if removing is None else removing)
    target_elr = list(now.elr)
    crashed = set(unclean_shutdown)

    # 1. a reassignment whose replicas have caught up completes
    completed = complete_reassignment(target_replicas, target_isr, target_adding,
                                      target_removing)
    if completed is not None:
        target_replicas, target_isr = completed
        target_adding, target_removing = [], []

    # 2. eligible leader replicas
    last_known = list(now.last_known_elr)
    if elr_enabled:
        if len(target_isr) >= min_isr:
            target_elr = []
        else:
            in_isr = set(target_isr)
            candidates = set(target_elr) | set(now.isr)
            target_elr = sorted(r for r in candidates if r not in in_isr and r not in crashed)

    # 3. the election
    def valid(r: int) -> bool:
        if r == NO_LEADER or not acceptable(r):
            return False
        return r in target_isr or (not target_isr and r in target_elr)

    def last_known_leader() -> int | None:
        if elr_enabled and not target_isr and not target_elr and len(now.last_known_elr) == 1 \
                and acceptable(now.last_known_elr[0]):
            return now.last_known_elr[0]
        return None

    leader, unclean = now.leader, False
    if election is Election.PREFERRED and valid(target_replicas[0]):
        leader = target_replicas[0]
    elif not valid(now.leader):
        chosen = next((r for r in target_replicas if valid(r)), None)
        if chosen is None:
            chosen = last_known_leader()
            unclean = chosen is not None
        if chosen is None and election is Election.UNCLEAN:
            chosen = next((r for r in target_replicas if acceptable(r)), None)
            unclean = chosen is not None
        leader = NO_LEADER if chosen is None else chosen
    from_elr = False
    if leader != now.leader and leader != NO_LEADER:
        if leader in target_elr and not unclean:
            from_elr = True
            target_isr = [leader]
            target_elr = [r for r in target_elr if r != leader]
        elif unclean:
            target_isr = [leader]
    if unclean:
        target_elr, last_known = [], []
    if not elr_enabled:
        target_elr, last_known = [], []
        if not target_isr:  # without eligible leaders the last ISR member stays in the ISR
            target_isr = list(now.isr)
    elif not unclean:
        # the last known leader: set when the partition first loses its leader, cleared when
        # it has one again
        if leader == NO_LEADER and not now.last_known_elr and now.leader != NO_LEADER:
            last_known = [now.leader]
        elif leader != NO_LEADER:
            last_known = []

    # 4. the leader epoch
    bump = leader != now.leader or not set(now.replicas) <= set(target_replicas)
    change = Change(replicas=target_replicas, isr=target_isr, leader=leader, elr=target_elr,
                    last_known_elr=last_known, adding=target_adding, removing=target_removing,
                    bump_epoch=bump, unclean=unclean, from_elr=from_elr)
    if (change.replicas, change.isr, change.leader, change.elr, change.last_known_elr,
            change.adding, change.removing) == (now.replicas, now.isr, now.leader, now.elr,
                                                now.last_known_elr, now.adding, now.removing):
        return None
    return change


def complete_reassignment(replicas: list[int], isr: list[int], adding: list[int],
                          removing: list[int]) -> tuple[list[int], list[int]] | None:
    """(replicas, ISR) once a reassignment can complete, or None: every adding replica is in
    the ISR without the removed ones, and when fewer are added than removed, every target
    replica is (so that completing does not shrink the ISR for nothing)."""
    if not adding and not removing:
        return None
    new_isr, new_replicas = list(isr), list(replicas)
    if removing:
        new_isr = [r for r in isr if r not in removing]
        if not new_isr:
            return None
        new_replicas = [r for r in replicas if r not in removing]
        if not new_replicas:
            return None
    if not set(adding) <= set(new_isr):
        return None
    if len(adding) < len(removing) and not set(new_replicas) <= set(new_isr):
        return None
    return new_replicas, new_isr


def reassignment_of(current: list[int], target: list[int]
                    ) -> tuple[list[int], list[int], list[int]]:
    """(replicas while it runs, adding, removing) for a reassignment from ``current`` to
    ``target``: the target in its order, then the removed replicas ascending."""
    removing = sorted(set(current) - set(target))
    adding = sorted(set(target) - set(current))
    return list(target) + removing, adding, removing


def revert_of(replicas: list[int], isr: list[int], adding: list[int]
              ) -> tuple[list[int], list[int], bool]:
    """(replicas, ISR, unclean) when a running reassignment is cancelled: the replicas without
    the adding ones, in their order; an ISR left empty takes the first of them, which is an
    unclean election."""
    kept = [r for r in replicas if r not in adding]
    new_isr = [r for r in isr if r not in adding]
    if not new_isr:
        return kept, kept[:1], True
    return kept, new_isr, False
