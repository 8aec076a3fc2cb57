"""KIP-848 consumer groups: the group (:mod:`.group`), its members and their reconciliation
(:mod:`.member`), the server-side assignors (:mod:`.assignors`), ConsumerGroupHeartbeat
(:mod:`.protocol`) and the group's records in ``__consumer_offsets`` (:mod:`.records`)."""
