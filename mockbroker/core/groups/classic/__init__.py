"""Classic groups (JoinGroup, SyncGroup, Heartbeat, LeaveGroup): the state table
(:mod:`.state`), the group and its members (:mod:`.group`), the requests (:mod:`.protocol`) and
their rebalancing (:mod:`.rebalance`), the group's record in ``__consumer_offsets``
(:mod:`.records`), and what the type declares to the table of group types (:mod:`.grouptype`).

May import the rest of the core and the shared parts of :mod:`mockbroker.core.groups` (its
coordinator only for type checkers, never the table of types); no other group type, nor
:mod:`mockbroker.core.groups.mixed`, which imports this package to join it to the consumer type."""
