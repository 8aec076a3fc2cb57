"""KIP-848 consumer groups: the group (:mod:`.group`), its members and their reconciliation
(:mod:`.member`), the server-side assignors (:mod:`.assignors`), ConsumerGroupHeartbeat
(:mod:`.protocol`), the group's records in ``__consumer_offsets`` (:mod:`.records`), and what
the type declares to the table of group types (:mod:`.grouptype`).

May import the rest of the core and the shared parts of :mod:`mockbroker.core.groups` (its
coordinator only for type checkers, never the table of types); no other group type, nor
:mod:`mockbroker.core.groups.mixed`, which imports this package to join it to the classic type."""
