"""KIP-1071 streams groups, as the group coordinator holds them: a Kafka Streams application's
topology and how it fits the topics there are (:mod:`.topology`), the group and its members with
their active, standby and warm-up tasks (:mod:`.group`), the ``sticky`` task assignor
(:mod:`.assignor`), a member's steps towards its target (:mod:`.reconcile`),
StreamsGroupHeartbeat and what StreamsGroupDescribe shows (:mod:`.protocol`), the group's
records in ``__consumer_offsets`` (:mod:`.records`), and what the type declares to the table of
group types (:mod:`.grouptype`).

The internal topics a topology needs are created by the broker that serves the heartbeat (its
handler), as Kafka's broker does; this package only says which.

May import the rest of the core and the shared parts of :mod:`mockbroker.core.groups` (with
:mod:`~mockbroker.core.groups.modern`); no other group type."""
