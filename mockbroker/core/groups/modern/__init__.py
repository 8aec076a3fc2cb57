"""What the new-style group types share (Kafka's ``ModernGroup``): KIP-848's consumer groups,
KIP-932's share groups and KIP-1071's streams groups.

* :mod:`.group`: a group of epochs: the group epoch, the target assignment and the epoch it was
  computed at, members that each reach it at an epoch of their own, and the group's state
  derived from those, as Kafka derives it.
* :mod:`.member`: a member's fields every type keeps (its epochs, client, subscription, and
  what it is assigned), over a generic unit: partitions by topic id for consumer and share
  groups, tasks by subtopology for streams groups; both are ``{key: {index: ...}}``.
* :mod:`.protocol`: the heartbeat machinery around a type's own rules: subscriptions by name or
  by regular expression (:mod:`.regex`), the subscribed topics' hash that asks for a new
  target, a new target at most once per assignment interval, members leaving or fenced with
  their records' tombstones, and the session timers.

A type subclasses these and says what is its own: its records (in Kafka's formats), its
assignor, how a member moves towards its target (a consumer member revokes before it takes; a
share member takes its target at once), its settings' names.

May import the rest of the core and the shared parts of :mod:`mockbroker.core.groups`; no
group type (each type imports this package instead)."""
