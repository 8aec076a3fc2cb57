"""The controller's side of the cluster: replication state and what moves it.

* :mod:`.change` works out one change to one partition, as Kafka's partition change builder
  does (ISR, eligible leaders, the election, a reassignment completing);
* :mod:`.states` names where partitions and replicas stand and every move between them;
* :mod:`.replication` applies changes: brokers stopped and started, replicas lagging and catching
  up, elections (ElectLeaders, the preferred-leader rebalance, unclean elections), and
  reassignments.

It sits below the cluster (:mod:`mockbroker.core.cluster` owns one replication control and
imports this package; nothing here imports the cluster but for type checkers).
"""
