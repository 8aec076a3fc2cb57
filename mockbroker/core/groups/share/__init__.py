"""KIP-932 share groups, as the group coordinator holds them: the group and its members
(:mod:`.group`), the server-side ``simple`` assignor (:mod:`.assignor`), ShareGroupHeartbeat
and ShareGroupDescribe (:mod:`.protocol`), the group's records in ``__consumer_offsets``
(:mod:`.records`), and what the type declares to the table of group types (:mod:`.grouptype`).

The records themselves, their delivery and acknowledgement, live with the partitions' leaders
(:mod:`mockbroker.core.share`), and their state with the share coordinator; this package only
asks the share coordinator to initialize a partition's state before the assignor hands the
partition out (through ``coordinator.share_states``, never by import).

May import the rest of the core and the shared parts of :mod:`mockbroker.core.groups` (with
:mod:`~mockbroker.core.groups.modern`); no other group type."""
