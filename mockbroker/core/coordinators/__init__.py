"""The base of the coordinators that keep their state in an internal topic.

A coordinator of this kind (the group coordinator over ``__consumer_offsets``, the transaction
coordinator over ``__transaction_state``) places each key on a partition of its topic
(:mod:`.placement`), holds the keys of each partition it leads in a shard, and rebuilds a shard
from the partition's records when leadership moves to it.  :mod:`.sharded` does all of that
once; a coordinator built on it names its topic and shard type and says how records become
shard state, and what follows a load or an unload.

It may import the cluster and the machinery of the core; the coordinators built on it import
it, never the other way round.
"""
