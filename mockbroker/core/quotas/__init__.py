"""Client quotas (KIP-13, KIP-124, KIP-219, KIP-599): the quota entities the cluster keeps
(:mod:`.entities`), how a client's usage is measured against them (:mod:`.rate`), and the
enforcement every broker applies (:mod:`.manager`): throttle times in the answers and muted
connections.  Knows nothing of the handlers or the I/O layer; the front door asks it."""
