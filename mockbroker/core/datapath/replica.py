"""What a partition's leader checks before it reads or writes for a client."""

from __future__ import annotations

from mockbroker.core.cluster import Partition
from wire import errors


def replica_error(partition: Partition | None, broker_id: int,
                  current_leader_epoch: int = -1, *, leader_only: bool = True) -> int:
    """What Kafka's leader checks answer a client that reads or writes ``partition`` on
    ``broker_id``, in Kafka's order: a broker with no replica, then a fenced or unknown leader
    epoch (which a stale client learns before it learns that the leader moved), then a replica
    that is not the leader (a partition without a leader has none).  Without ``leader_only``
    (a consumer's Fetch from v11, KIP-392) any replica may answer."""
    if partition is None or partition.deleted:
        return errors.UNKNOWN_TOPIC_OR_PARTITION
    if broker_id not in partition.replicas:
        return errors.NOT_LEADER_OR_FOLLOWER
    error = epoch_error(partition, current_leader_epoch)
    if error == errors.NONE and leader_only and partition.leader != broker_id:
        return errors.NOT_LEADER_OR_FOLLOWER
    return error


def epoch_error(partition: Partition, current_leader_epoch: int) -> int:
    """Kafka's leader-epoch fencing (KIP-320): -1 means the client does not say."""
    if current_leader_epoch < 0 or current_leader_epoch == partition.leader_epoch:
        return errors.NONE
    if current_leader_epoch > partition.leader_epoch:
        return errors.UNKNOWN_LEADER_EPOCH
    return errors.FENCED_LEADER_EPOCH
