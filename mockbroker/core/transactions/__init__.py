"""The transaction coordinator (:mod:`~mockbroker.core.transactions.coordinator`): its state
table, what it knows of each transactional id, its records in ``__transaction_state``, and the
markers that end a transaction in each partition.

It stands on the coordinators' base (:mod:`mockbroker.core.coordinators`) and may import the
cluster, the logs and the producer ids of the data path; never the group coordinator (which
hears of a transaction's end through a listener), control rules or the front door."""
