"""The broker as a sans-IO state machine: typed requests in, typed responses out.

No sockets, no event loop, no threads: the I/O layer (:mod:`mockbroker.io`) feeds it frames
and writes out what it answers; time comes only from an injected clock.  What lives where:

* the machinery, at the top: :mod:`.dispatch` (the front door: a request in, an outcome out),
  :mod:`.cluster` (brokers, topics, partitions, leaders), :mod:`.clock` (real or manual) and
  :mod:`.deferred` (answers given later), :mod:`.context`, :mod:`.errors`, :mod:`.settings`,
  :mod:`.statetable` (the one way a state machine steps), :mod:`.kept`, :mod:`.names` and
  :mod:`.features`;
* :mod:`.log`: partition logs, batches kept as bytes;
* :mod:`.datapath`: Produce, Fetch and what they need (fetch sessions, the leader's checks,
  retention, producer ids);
* :mod:`.coordinators`: the base of the coordinators that keep their state in an internal
  topic (placement by key, shards loaded and replayed from the topic's records), used by
  :mod:`.groups` (the group coordinator and its group types) and :mod:`.transactions`;
* :mod:`.config` (broker, topic and group configs) and :mod:`.security` (principals, SASL,
  ACLs);
* :mod:`.control`: rules that break or steer the cluster, and the control actions' table;
* :mod:`.observe`: what the outside sees of it: the event log, the request log, the group watch,
  waits, and the admin API's views of every object.

The core may import :mod:`wire` and the admin API's description (:mod:`mockbroker.adminapi`,
for the views it fills in); never the handlers, the I/O layer or anything above them
(``[tool.importlinter]`` in ``pyproject.toml`` holds it).
"""
