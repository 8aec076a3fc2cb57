"""The transaction coordinator (:mod:`~mockbroker.core.transactions.coordinator`): its state
table, what it knows of each transactional id, its records in ``__transaction_state``, and the
markers that end a transaction in each partition."""
