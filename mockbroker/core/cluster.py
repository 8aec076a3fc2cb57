"""The in-memory cluster: brokers, topics, partitions and who leads them.

Everything a broker would learn from the controller lives here, for all brokers at once: topic
ids, partition replicas and leaders, leader epochs, configs.  Replica placement follows Kafka's
rack-unaware rule (partition *i*'s first replica on broker ``(start + i) mod n``, the other
replicas shifted from it), with a seeded random start so a cluster's layout is repeatable.

Every topic comes to be through :meth:`Cluster.create_topic`, with the controller's checks:
CreateTopics, Metadata's auto-creation, the admin HTTP API, the topics a cluster starts with
and the coordinators' internal topics.

The cluster owns its broker config layers (``broker_configs``, a
:class:`~mockbroker.core.config.broker.BrokerConfigs` built from its settings and brokers) and
imports the config package at the top; the config package never imports this module (its
operations take the cluster as an argument).
"""

from __future__ import annotations

import random
import uuid
from typing import Callable, Iterable, Mapping

from msgspec import Struct, field

from mockbroker.core.clock import Clock, Timers
from mockbroker.core.controller.replication import ReplicationControl
from mockbroker.core.log_dirs import LogDirs
from mockbroker.core.quorum import ControllerQuorum
from mockbroker.core.features import FeatureLevels
from mockbroker.core.config.broker import BrokerConfigs
from mockbroker.core.config.topic import new_topic_configs, topic_value_from_broker
from mockbroker.core.errors import ApiException
from mockbroker.core.observe.events import EventLog
from mockbroker.core.kept import Kept
from mockbroker.core.log import PartitionLog
# topic_name_error is also imported from here (the admin HTTP API, fault specs)
from mockbroker.core.names import colliding_topic, topic_name_error
from mockbroker.core.log.retention import LogRetention
from wire import errors

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
#: the internal topics whose partitions' leaders coordinate something, and what
COORDINATOR_TOPICS = {"__consumer_offsets": "group", "__transaction_state": "transaction",
                      "__share_group_state": "share"}


class Broker(Struct):
    """One broker: its id, where clients reach it, and whether it is up."""

    node_id: int
    #: the address of its first listener
    host: str
    port: int
    rack: str | None = None
    #: its process runs: its listener is open
    alive: bool = True
    #: the controller knows it (UnregisterBroker removes it; it registers again when it starts)
    registered: bool = True
    #: listener name -> (host, port), for brokers with more than one listener
    endpoints: dict[str, tuple[str, int]] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        """Running and registered: it may lead, join ISRs, and clients are told of it."""
        return self.alive and self.registered

    def address(self, listener: str) -> tuple[str, int]:
        """Where clients of ``listener`` reach this broker (Kafka advertises to each client
        the brokers' endpoints of the listener it came in on)."""
        return self.endpoints.get(listener, (self.host, self.port))


class Partition(Struct, eq=False):
    """One partition of a topic: its replicas, its leader and ISR, and its log.  The
    replication control (:mod:`mockbroker.core.controller.replication`) is the one place its
    replication state changes."""

    topic: "Topic"
    index: int
    #: the preferred leader first; while a reassignment runs, the target then the removed
    replicas: list[int]
    leader: int
    isr: list[int]
    leader_epoch: int = 0
    log: PartitionLog = field(default_factory=PartitionLog)
    #: eligible leader replicas (KIP-966), and the last leader while it has none
    elr: list[int] = field(default_factory=list)
    last_known_elr: list[int] = field(default_factory=list)
    #: a running reassignment's replicas being added and removed
    adding: list[int] = field(default_factory=list)
    removing: list[int] = field(default_factory=list)
    #: where the log of each replica out of the ISR ends (it stopped following there)
    ends: dict[int, int] = field(default_factory=dict)
    #: replicas a control action holds back: they do not fetch
    lagging: set[int] = field(default_factory=set)
    #: moves on with every change to its replication state
    partition_epoch: int = 0
    #: its topic was deleted: whoever still holds it (a waiting Fetch) is answered
    #: UNKNOWN_TOPIC_OR_PARTITION, and its log no longer holds the records
    deleted: bool = False


class Topic(Struct, eq=False):
    """A topic: its name, its id, its partitions and its config overrides."""

    name: str
    topic_id: uuid.UUID
    partitions: list[Partition] = field(default_factory=list)
    configs: dict[str, str] = field(default_factory=dict)

    @property
    def internal(self) -> bool:
        return self.name in INTERNAL_TOPICS


class Cluster:
    """All brokers' shared view of the cluster."""

    def __init__(self, settings: dict, brokers: list[Broker], clock: Clock | None = None,
                 seed: int = 0, events: EventLog | None = None):
        self.settings = settings
        self.clock = clock or Clock()
        self.timers = Timers(self.clock)
        #: what happened, in order (kept across a reset by whoever passes it in)
        self.events = events if events is not None else EventLog(self.clock)
        #: Metadata answers already encoded, by what was asked (the Metadata handler's); every
        #: change a Metadata answer shows (topics, partitions, leaders, ISRs, brokers and their
        #: addresses) empties it, through :meth:`metadata_changed`
        self.metadata_answers = Kept()
        #: Fetch answers that carry no records, encoded, keyed by everything they say (an idle
        #: consumer's long poll ends with the same one every time)
        self.fetch_answers = Kept(limit=4096)
        self.brokers: dict[int, Broker] = {b.node_id: b for b in brokers}
        self.cluster_id: str = settings["cluster_id"]
        self.topics: dict[str, Topic] = {}
        self.topics_by_id: dict[uuid.UUID, Topic] = {}
        self._random = random.Random(seed)
        #: Called with (topic, partition index) after every append: Fetch long-polls listen here.
        self.append_listeners: set[Callable[[Partition], None]] = set()
        #: Called with a partition whenever its leader changes (the group coordinator listens).
        self.leadership_listeners: list[Callable[[Partition], None]] = []
        #: Called with a topic created or grown and its new partitions, and with a topic just
        #: deleted: the coordinators load and let go of their internal topics' partitions.
        self.partitions_added_listeners: list[Callable[[Topic, list[Partition]], None]] = []
        self.topic_deleted_listeners: list[Callable[[Topic], None]] = []
        #: The finalized feature levels (UpdateFeatures moves them), of the emulated release.
        self.features = FeatureLevels(settings.get("kafka_version"))
        #: The broker config layers (defaults, static settings, dynamic values).
        self.broker_configs = BrokerConfigs(settings, self.brokers,
                                            self.default_replication_factor())
        #: deletes old log segments every log.retention.check.interval.ms
        self.retention = LogRetention(self)
        #: replicas, ISRs, elections and reassignments, as the controller keeps them
        self.replication = ReplicationControl(self)
        #: the KRaft controller quorum, hearing every metadata change from the start
        self.quorum = ControllerQuorum(self)
        #: each broker's log directories and the replicas in them
        self.log_dirs = LogDirs(self)
        if self.replication.elr_enabled:
            # a cluster formatted with eligible leader replicas on has a cluster-wide
            # min.insync.replicas, which every topic and broker then reports
            self.eligible_leaders_on()

    # -- brokers -------------------------------------------------------------------------------

    def metadata_changed(self) -> None:
        """Something a Metadata answer shows has changed: answers kept so far are stale."""
        self.metadata_answers.changed()

    def live_brokers(self) -> list[Broker]:
        return [b for b in sorted(self.brokers.values(), key=lambda b: b.node_id) if b.active]

    @property
    def elr_enabled(self) -> bool:
        return self.replication.elr_enabled

    def eligible_leaders_on(self) -> None:
        """Eligible leader replicas are turned on (at start, or by UpdateFeatures): as Kafka's
        controller does, ``min.insync.replicas`` becomes a cluster-level config (the static
        value, unless one is set) and no broker keeps its own."""
        configs = self.broker_configs
        configs.dynamic_default.setdefault(
            "min.insync.replicas", str(configs.static_setting("min_insync_replicas")))
        for node_id, props in list(configs.dynamic_per_broker.items()):
            props.pop("min.insync.replicas", None)
            if not props:
                del configs.dynamic_per_broker[node_id]
        configs.sync_settings()

    def min_isr_changed(self, topic: str | None) -> None:
        """``min.insync.replicas`` was written for ``topic`` (None: for the cluster or a
        broker): with eligible leader replicas on, Kafka's controller then clears the ELR of
        that topic's partitions (or of every partition), as they were worked out under the
        old value."""
        if self.replication.elr_enabled:
            self.replication.clear_elrs(topic)

    def registered(self, node_id: int) -> bool:
        """Whether ``node_id`` is a broker the controller knows (running or not)."""
        broker = self.brokers.get(node_id)
        return broker is not None and broker.registered

    @property
    def controller_id(self) -> int:
        live = self.live_brokers()
        return live[0].node_id if live else -1

    def default_replication_factor(self) -> int:
        return min(3, len(self.brokers))

    # -- topics --------------------------------------------------------------------------------

    def placement(self, partitions: int, replication_factor: int, first_index: int = 0
                  ) -> list[list[int]]:
        """Kafka's rack-unaware replica assignment over the live brokers."""
        ids = [b.node_id for b in self.live_brokers()]
        n = len(ids)
        if replication_factor > n:
            raise ApiException(errors.INVALID_REPLICATION_FACTOR,
                               f"replication factor {replication_factor} is larger than the "
                               f"{n} available brokers")
        start = self._random.randrange(n)
        shift = self._random.randrange(n)
        layout = []
        for i in range(first_index, first_index + partitions):
            if i > 0 and i % n == 0:
                shift += 1
            first = (start + i) % n
            replicas = [ids[first]]
            for j in range(replication_factor - 1):
                step = 1 + (shift + j) % (n - 1)
                replicas.append(ids[(first + step) % n])
            layout.append(replicas)
        return layout

    def create_topic(self, name: str, num_partitions: int | None = -1,
                     replication_factor: int | None = -1,
                     configs: Mapping[str, str | None] | Iterable[tuple[str, str | None]]
                     | None = None,
                     assignments: Iterable[tuple[int, list[int]]] | None = None, *,
                     validate_only: bool = False) -> Topic:
        """Create a topic, or with ``validate_only`` only check that it could be; the one way
        topics come to be.  The controller's checks come in the controller's order (name,
        existence, collision, configs, then partitions and replicas) and refuse with Kafka's
        error codes and messages (:class:`ApiException`).

        ``-1`` (or None) asks for the broker default; ``configs`` are the topic's overrides
        (a mapping or (name, value) pairs), stored normalised; ``assignments`` are (partition
        index, replica broker ids) and need ``-1`` for both counts.  Returns the topic with its
        partitions; with ``validate_only`` it is not added to the cluster."""
        problem = topic_name_error(name)
        if problem:
            raise ApiException(errors.INVALID_TOPIC_EXCEPTION, problem)
        if name in self.topics:
            raise ApiException(errors.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
        other = colliding_topic(name, self.topics)
        if other is not None:
            raise ApiException(errors.INVALID_TOPIC_EXCEPTION,
                               f"Topic '{name}' collides with existing topic: {other}")
        if isinstance(configs, Mapping):
            configs = configs.items()
        overrides = new_topic_configs(self, configs) if configs else {}
        num_partitions = -1 if num_partitions is None else num_partitions
        replication_factor = -1 if replication_factor is None else replication_factor
        if assignments:
            layout = self._manual_layout(assignments, num_partitions, replication_factor)
        else:
            if replication_factor < -1 or replication_factor == 0:
                raise ApiException(errors.INVALID_REPLICATION_FACTOR, "Replication factor must "
                                   "be larger than 0, or -1 to use the default value.")
            if num_partitions < -1 or num_partitions == 0:
                raise ApiException(errors.INVALID_PARTITIONS, "Number of partitions was set to "
                                   "an invalid non-positive value.")
            if num_partitions == -1:
                num_partitions = self.settings["num_partitions"]
            if replication_factor == -1:
                replication_factor = self.default_replication_factor()
            self._check_replication_factor(replication_factor, prefix=True)
            layout = self.placement(num_partitions, replication_factor)
        topic = Topic(name, uuid.uuid4(), configs=overrides)
        for index, replicas in enumerate(layout):
            topic.partitions.append(self._new_partition(topic, index, replicas))
        if not validate_only:
            for partition in topic.partitions:
                self.replication.created(partition)
            self.topics[name] = topic
            self.topics_by_id[topic.topic_id] = topic
            self.metadata_changed()
            self.events.emit("topic_created", topic=name, partitions=len(topic.partitions),
                             internal=topic.internal)
            for listener in list(self.partitions_added_listeners):
                listener(topic, topic.partitions)
        return topic

    def _manual_layout(self, assignments: Iterable[tuple[int, list[int]]], num_partitions: int,
                       replication_factor: int) -> list[list[int]]:
        """A CreateTopics manual assignment, checked as the controller checks it, as the
        replicas of partitions 0, 1, ..."""
        if replication_factor != -1:
            raise ApiException(errors.INVALID_REQUEST, "A manual partition assignment was "
                               "specified, but replication factor was not set to -1.")
        if num_partitions != -1:
            raise ApiException(errors.INVALID_REQUEST, "A manual partition assignment was "
                               "specified, but numPartitions was not set to -1.")
        by_index: dict[int, list[int]] = {}
        rf = None
        for index, broker_ids in assignments:
            if index in by_index:
                raise ApiException(errors.INVALID_REPLICA_ASSIGNMENT, "Found multiple manual "
                                   f"partition assignments for partition {index}")
            self._check_manual_assignment(broker_ids, rf, index)
            rf = len(broker_ids)
            by_index[index] = list(broker_ids)
        if sorted(by_index) != list(range(len(by_index))):
            raise ApiException(errors.INVALID_REPLICA_ASSIGNMENT,
                               "partitions should be a consecutive 0-based integer sequence")
        return [by_index[i] for i in range(len(by_index))]

    def _new_partition(self, topic: Topic, index: int, replicas: list[int]) -> Partition:
        live = [r for r in replicas if self.brokers[r].active]
        leader = live[0] if live else -1
        partition = Partition(topic, index, replicas, leader, live or list(replicas[:1]))
        partition.ends = {r: 0 for r in replicas if r not in partition.isr}
        partition.log.segment_config = lambda: self.retention.segment_config(partition)
        return partition

    def delete_topic(self, name: str) -> Topic:
        topic = self.topic_or_error(name)
        del self.topics[name]
        del self.topics_by_id[topic.topic_id]
        for partition in topic.partitions:
            self.replication.deleted(partition)
            partition.deleted = True
        self.metadata_changed()
        self.events.emit("topic_deleted", topic=name)
        for listener in list(self.topic_deleted_listeners):
            listener(topic)
        for partition in topic.partitions:
            # Fetches waiting on it are answered now, as Kafka completes a delayed fetch
            # whose partition went away.  Its records go at once: a partition refers back to
            # its topic, and only the cycle collector would free the pair, which a broker
            # that allocates little runs seldom (a deleted topic's gigabytes would stay).
            self.notify_append(partition)
            partition.log = PartitionLog()
        return topic

    def topic_or_error(self, name: str) -> Topic:
        topic = self.topics.get(name)
        if topic is None:
            raise ApiException(errors.UNKNOWN_TOPIC_OR_PARTITION, f"unknown topic {name!r}")
        return topic

    def partition(self, name: str, index: int) -> Partition | None:
        topic = self.topics.get(name)
        if topic is None or not 0 <= index < len(topic.partitions):
            return None
        return topic.partitions[index]

    # -- leadership ----------------------------------------------------------------------------

    def leader_changed(self, partition: Partition, previous: int, *,
                       unclean: bool = False) -> None:
        """The replication control gave ``partition`` a new leader or leader epoch: tell
        whoever follows leadership."""
        name = partition.topic.name
        leader = partition.leader
        self.events.emit("leader_changed", topic=name, partition=partition.index,
                         leader=leader, previous_leader=previous,
                         leader_epoch=partition.leader_epoch, unclean=unclean)
        if name in COORDINATOR_TOPICS and leader != previous:
            self.events.emit("coordinator_moved", kind=COORDINATOR_TOPICS[name],
                             partition=partition.index, broker=leader,
                             previous_broker=previous)
        for listener in list(self.leadership_listeners):
            listener(partition)

    def set_leader(self, partition: Partition, leader: int) -> None:
        """Give ``partition`` to ``leader`` (-1: none) with a new leader epoch, even when it
        leads already (a re-election)."""
        self.replication.force_leader(partition, leader)

    def move_leader(self, partition: Partition, node_id: int) -> None:
        """Make ``node_id`` (a live replica) lead ``partition``, with a new leader epoch, as a
        control action does; a refusal says why."""
        self.replication.move_leader(partition, node_id)

    def stop_broker(self, node_id: int, *, controlled: bool = False) -> None:
        """A broker stops: as if it had died (its session expired), or in a ``controlled``
        shutdown.  It leaves every ISR and its partitions elect new leaders."""
        broker = self.brokers[node_id]
        if not broker.alive:
            return
        self.metadata_changed()
        self.events.emit("broker_stopped", broker=node_id, controlled=controlled)
        self.replication.broker_fenced(node_id, crashed=not controlled)

    def start_broker(self, node_id: int) -> None:
        """A broker comes back (registering again if it was unregistered): leaderless
        partitions it may lead elect it, and its replicas catch up and rejoin their ISRs.  It
        leads again where it is the preferred replica at the next preferred-leader rebalance
        (or ElectLeaders)."""
        broker = self.brokers[node_id]
        if broker.active:
            return
        self.metadata_changed()
        self.events.emit("broker_started", broker=node_id)
        self.replication.broker_unfenced(node_id)

    def unregister_broker(self, node_id: int) -> None:
        """UnregisterBroker: the controller forgets a broker.  It leaves every ISR, its
        partitions elect other leaders, and clients are no longer told of it; a broker still
        running keeps its listener open (as Kafka's process does, its heartbeats refused) until
        it is stopped and started again, which registers it anew."""
        if not self.registered(node_id):
            raise ApiException(errors.BROKER_ID_NOT_REGISTERED,
                               f"Broker ID {node_id} is not currently registered")
        self.metadata_changed()
        self.events.emit("broker_unregistered", broker=node_id)
        self.replication.broker_unregistered(node_id)

    def all_partitions(self):
        for topic in list(self.topics.values()):
            yield from topic.partitions

    # -- data ----------------------------------------------------------------------------------

    def notify_append(self, partition: Partition) -> None:
        if self.append_listeners:
            for listener in list(self.append_listeners):
                listener(partition)
        self.events.appended()

    def lookup_or_create(self, name: str | None, allow_auto_create: bool) -> tuple[Topic | None, int]:
        """A topic a client asked for by name, created if the broker and client allow it, as
        a Metadata request does; returns (topic or None, error code)."""
        topic = self.topics.get(name) if name is not None else None
        if topic is not None:
            return topic, errors.NONE
        if topic_name_error(name):
            return None, errors.INVALID_TOPIC_EXCEPTION
        if allow_auto_create and self.settings["auto_create_topics_enable"] and \
                name not in INTERNAL_TOPICS:
            try:
                return self.create_topic(name), errors.NONE
            except ApiException as exc:
                return None, exc.error_code
        return None, errors.UNKNOWN_TOPIC_OR_PARTITION

    # -- admin operations: CreatePartitions, DeleteTopics, DeleteRecords ----------------------

    def _check_replication_factor(self, replication_factor: int, prefix: bool) -> None:
        """Kafka's replica placer refusing more replicas than there are live brokers."""
        live = len(self.live_brokers())
        if live == 0:
            reason = "All brokers are currently fenced."
        elif replication_factor > live:
            reason = (f"The target replication factor of {replication_factor} cannot be reached "
                      f"because only {live} broker(s) are registered.")
        else:
            return
        if prefix:
            reason = f"Unable to replicate the partition {replication_factor} time(s): {reason}"
        raise ApiException(errors.INVALID_REPLICATION_FACTOR, reason)

    def _check_manual_assignment(self, broker_ids: list[int], replication_factor: int | None,
                                 index: int) -> None:
        """The controller's checks of one partition's manual replica assignment."""
        if not broker_ids:
            raise ApiException(errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition "
                               "assignment includes an empty replica list.")
        previous = None
        for broker_id in sorted(broker_ids):
            if not self.registered(broker_id):
                raise ApiException(errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition "
                                   f"assignment includes broker {broker_id}, but no such broker "
                                   "is registered.")
            if broker_id == previous:
                raise ApiException(errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition "
                                   f"assignment includes the broker {broker_id} more than once.")
            previous = broker_id
        if replication_factor is not None and len(broker_ids) != replication_factor:
            raise ApiException(errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition "
                               f"assignment includes a partition with {len(broker_ids)} "
                               "replica(s), but this is not consistent with previous "
                               f"partitions, which have {replication_factor} replica(s).")
        if not any(self.brokers[b].active for b in broker_ids):
            raise ApiException(errors.INVALID_REPLICA_ASSIGNMENT, "All brokers specified in the "
                               f"manual partition assignment for partition {index} are fenced "
                               "or in controlled shutdown.")

    #: The controller writes at most this many records for one request.
    MAX_RECORDS_PER_REQUEST = 10000

    def admin_create_partitions(self, name: str, count: int,
                                assignments: list[list[int]] | None = None, *,
                                validate_only: bool = False) -> None:
        """One topic of a CreatePartitions request: grow ``name`` to ``count`` partitions, with
        the controller's checks; ``assignments`` gives the replicas of each new partition."""
        topic = self.topics.get(name)
        if topic is None:
            raise ApiException(errors.UNKNOWN_TOPIC_OR_PARTITION, "")
        current = len(topic.partitions)
        if count == current:
            raise ApiException(errors.INVALID_PARTITIONS,
                               f"Topic already has {current} partition(s).")
        if count < current:
            raise ApiException(errors.INVALID_PARTITIONS, f"The topic {name} currently has "
                               f"{current} partition(s); {count} would not be an increase.")
        additional = count - current
        if assignments is not None and len(assignments) != additional:
            raise ApiException(errors.INVALID_REPLICA_ASSIGNMENT, f"Attempted to add "
                               f"{additional} additional partition(s), but only "
                               f"{len(assignments)} assignment(s) were specified.")
        if additional > self.MAX_RECORDS_PER_REQUEST:
            raise ApiException(errors.UNKNOWN_SERVER_ERROR, "Cannot add another "
                               f"{additional} partitions in one request; the limit is "
                               f"{self.MAX_RECORDS_PER_REQUEST}.")
        replication_factor = len(topic.partitions[0].replicas)
        if assignments is not None:
            layout = []
            for offset, broker_ids in enumerate(assignments):
                self._check_manual_assignment(broker_ids, replication_factor, current + offset)
                layout.append(list(broker_ids))
        else:
            self._check_replication_factor(replication_factor, prefix=False)
            layout = self.placement(additional, replication_factor, first_index=current)
        if validate_only:
            return
        for offset, replicas in enumerate(layout):
            topic.partitions.append(self._new_partition(topic, current + offset, replicas))
            self.replication.created(topic.partitions[-1])
        self.metadata_changed()
        self.events.emit("partitions_created", topic=name, partitions=count)
        for listener in list(self.partitions_added_listeners):
            listener(topic, topic.partitions[current:])

    def delete_topic_by_id(self, topic_id: uuid.UUID) -> Topic:
        topic = self.topics_by_id.get(topic_id)
        if topic is None:
            raise ApiException(errors.UNKNOWN_TOPIC_ID, "")
        return self.delete_topic(topic.name)

    def delete_records(self, name: str, index: int, offset: int, broker_id: int) -> int:
        """DeleteRecords on the leader ``broker_id``: move the log start offset up to
        ``offset`` (-1 means the high watermark); returns the new low watermark."""
        partition = self.partition(name, index)
        where = f"{name}-{index}"
        if partition is None:
            raise ApiException(errors.UNKNOWN_TOPIC_OR_PARTITION, "")
        if partition.topic.internal:
            raise ApiException(errors.INVALID_TOPIC_EXCEPTION,
                               f"Cannot delete records of internal topic {name}")
        if partition.leader != broker_id:
            raise ApiException(errors.NOT_LEADER_OR_FOLLOWER,
                               f"Leader not local for partition {where} on broker {broker_id}")
        policy = partition.topic.configs.get("cleanup.policy")
        if policy is None:
            policy = topic_value_from_broker("cleanup.policy",
                                             self.broker_configs.effective(broker_id))
        if "delete" not in [p.strip().lower() for p in policy.split(",")]:
            raise ApiException(errors.POLICY_VIOLATION, f"Records of partition {where} can not "
                               "be deleted due to the configured policy")
        log = partition.log
        target = log.high_watermark if offset == -1 else offset
        if target < 0:
            raise ApiException(errors.OFFSET_OUT_OF_RANGE,
                               f"The offset {target} for partition {where} is not valid")
        if target > log.high_watermark:
            raise ApiException(errors.OFFSET_OUT_OF_RANGE, "Cannot increment the log start "
                               f"offset to {target} of partition {where} since it is larger "
                               f"than the high watermark {log.high_watermark}")
        return log.delete_records_before(target)
