"""KIP-932's data path: how the partitions' leaders deliver a share group's records
(``SharePartitionManager`` and ``SharePartition`` in Kafka), and the share coordinator that
keeps their state.

* :mod:`.state`: a record's states and the table that moves them.
* :mod:`.partition`: one share partition: records in flight, acquisition, acknowledgement,
  locks, the start offset.
* :mod:`.sessions`: share sessions and their epochs.
* :mod:`.manager`: ShareFetch and ShareAcknowledge across brokers: sessions, share partitions
  on their leaders, lock timers, the long poll.
* :mod:`.coordinator`: the share coordinator over ``__share_group_state``, in Kafka's records.
* :mod:`.deadletter`: the share groups' dead-letter queues (KIP-1191).

Share groups themselves (membership, assignment) are the group coordinator's
(:mod:`mockbroker.core.groups.share`); this package knows no group, only group ids.  May import
the cluster, the logs, the coordinators' base, the group configs and the data path's append
(the dead-letter queue produces as a client would); nothing of the groups, the data path's
Fetch, control or observers.
"""
