"""The data path: what Produce and Fetch do, apart from their wire formats.

:mod:`.produce` appends a Produce request's batches (validation, idempotence, transactions'
first writes, acks), :mod:`.fetch` reads for a Fetch (long polls, isolation levels, preferred
replicas) with :mod:`.fetch_sessions` (KIP-227's incremental sessions), :mod:`.replica` holds
the leader's checks before a read or write and :mod:`.producers` hands out producer ids.  The
logs they append to and read from, and their retention, are :mod:`mockbroker.core.log`.

It may import the cluster, the logs, configs and the machinery of the core; never the
coordinators (groups, transactions), control rules or the observers, which sit beside or above
it (it writes to the event log through the cluster).
"""
