"""The partition and replica state tables.

A KRaft controller keeps no state names: a partition is online while it has a leader, and a
replica's place follows from the partition's replica list, ISR, eligible leaders (KIP-966) and
reassignment, and from whether its broker is registered.  The tables here name those places,
in the terms of the controller's older partition and replica state machines where they still
fit, and list every move between them that Kafka makes and what makes it; the replication
control derives each partition's and replica's state before and after every change it applies
and checks the move against the table (a move missing from it is a bug, and fails loudly).
"""

from __future__ import annotations

from enum import Enum

from mockbroker.core.statetable import IllegalTransition


class PartitionState(Enum):
    NON_EXISTENT = "NonExistentPartition"
    #: it has a leader
    ONLINE = "OnlinePartition"
    #: it has none (Metadata answers LEADER_NOT_AVAILABLE for it)
    OFFLINE = "OfflinePartition"


class ReplicaState(Enum):
    NON_EXISTENT = "NonExistentReplica"
    #: added by a reassignment, copying the leader's log, not yet in the ISR
    ADDING = "AddingReplica"
    #: in the ISR, on a live broker
    IN_SYNC = "InSyncReplica"
    #: on a live broker, out of the ISR: catching up, or held back as lagging
    OUT_OF_SYNC = "OutOfSyncReplica"
    #: out of the ISR but known to hold every committed record (KIP-966): it may lead
    ELIGIBLE = "EligibleLeaderReplica"
    #: on a stopped broker (and not an eligible leader)
    OFFLINE = "OfflineReplica"


P, R = PartitionState, ReplicaState

#: (from, to) -> what makes a partition move
PARTITION_TABLE: dict[tuple[PartitionState, PartitionState], str] = {
    (P.NON_EXISTENT, P.ONLINE): "created: its first live replica leads",
    (P.ONLINE, P.ONLINE): "a new leader elected (preferred, reassignment, lost leader)",
    (P.ONLINE, P.OFFLINE): "its leader stopped and no replica may take over",
    (P.OFFLINE, P.ONLINE): "a replica came back that may lead, or an unclean election",
    (P.ONLINE, P.NON_EXISTENT): "its topic deleted",
    (P.OFFLINE, P.NON_EXISTENT): "its topic deleted",
}

#: (from, to) -> what makes a replica move
REPLICA_TABLE: dict[tuple[ReplicaState, ReplicaState], str] = {
    (R.NON_EXISTENT, R.IN_SYNC): "created with its partition on a live broker",
    (R.NON_EXISTENT, R.OFFLINE): "created with its partition on a stopped broker",
    (R.NON_EXISTENT, R.ADDING): "added by a reassignment",
    (R.ADDING, R.IN_SYNC): "caught up with the leader: joined the ISR",
    (R.ADDING, R.OFFLINE): "its broker stopped",
    (R.ADDING, R.NON_EXISTENT): "its reassignment cancelled",
    (R.OFFLINE, R.ADDING): "its broker came back while it is being added",
    (R.IN_SYNC, R.OUT_OF_SYNC): "fell behind the leader (held back as lagging)",
    (R.IN_SYNC, R.OFFLINE): "its broker stopped, or was unregistered",
    (R.IN_SYNC, R.ELIGIBLE): "left the ISR while the ISR is below min.insync.replicas",
    (R.IN_SYNC, R.NON_EXISTENT): "removed by a reassignment, or its topic deleted",
    (R.OUT_OF_SYNC, R.IN_SYNC): "caught up with the leader: joined the ISR",
    (R.OUT_OF_SYNC, R.OFFLINE): "its broker stopped",
    (R.OUT_OF_SYNC, R.NON_EXISTENT): "removed by a reassignment, or its topic deleted",
    (R.OFFLINE, R.OUT_OF_SYNC): "its broker came back: it catches up",
    (R.OFFLINE, R.IN_SYNC): "its broker came back and took the partition's lead, or caught up "
                            "at once",
    (R.OFFLINE, R.NON_EXISTENT): "removed by a reassignment, or its topic deleted",
    (R.OFFLINE, R.ELIGIBLE): "its broker stopped while in the ISR, which is now below "
                             "min.insync.replicas",
    (R.ELIGIBLE, R.IN_SYNC): "elected from the eligible leaders, or caught up",
    (R.ELIGIBLE, R.OUT_OF_SYNC): "the ISR is back at min.insync.replicas, or min.insync.replicas "
                                 "changed: no longer eligible",
    (R.ELIGIBLE, R.OFFLINE): "no longer eligible while its broker is down (the ISR recovered, "
                             "an unclean election, min.insync.replicas changed, or its broker "
                             "crashed)",
    (R.ELIGIBLE, R.NON_EXISTENT): "removed by a reassignment, or its topic deleted",
}


def partition_state(partition) -> PartitionState:
    if partition is None:
        return P.NON_EXISTENT
    return P.ONLINE if partition.leader >= 0 else P.OFFLINE


def replica_state(partition, node_id: int, alive: bool) -> ReplicaState:
    """Where ``node_id`` stands in ``partition`` (None: no partition), its broker ``alive``."""
    if partition is None or node_id not in partition.replicas:
        return R.NON_EXISTENT
    if node_id in partition.elr:
        return R.ELIGIBLE
    if not alive:
        return R.OFFLINE
    if node_id in partition.isr:
        return R.IN_SYNC
    if node_id in partition.adding:
        return R.ADDING
    return R.OUT_OF_SYNC


def check(table: dict, before: Enum, after: Enum, what: str) -> str | None:
    """What the move from ``before`` to ``after`` is (None when nothing moved); a move the
    table lacks raises :class:`IllegalTransition`."""
    if before is after and (before, after) not in table:
        return None
    try:
        return table[(before, after)]
    except KeyError:
        raise IllegalTransition(f"{what} cannot move from {before.value} to "
                                f"{after.value}") from None


def mermaid(table: dict, initial: Enum) -> str:
    """A table as a Mermaid state diagram."""
    lines = ["stateDiagram-v2", f"    [*] --> {initial.value}"]
    for (source, target), why in table.items():
        lines.append(f"    {source.value} --> {target.value}: {why}")
    return "\n".join(lines) + "\n"
