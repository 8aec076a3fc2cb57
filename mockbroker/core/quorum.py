"""The KRaft controller quorum: who leads the metadata log ``__cluster_metadata``, in which
epoch, how far the log has come, and how far each controller has fetched it.

mockbroker runs no controllers and no metadata log, but a client can ask about them:
DescribeQuorum (``kafka-metadata-quorum.sh describe``, the Admin's ``describeMetadataQuorum``),
AddRaftVoter and RemoveRaftVoter (``add-controller``, ``remove-controller``),
UnregisterController.  This module
models what a Kafka 4.4 cluster of combined nodes would answer:

* **Voters.**  Every broker is also a controller (``process.roles=broker,controller``, as the
  static broker configs say) and a voter of a static quorum (``controller.quorum.voters``):
  the voter keys carry no directory id, so DescribeQuorum shows the zero UUID, and
  ``kraft.version`` is 0 unless the cluster's feature levels say otherwise.  The mock has no
  CONTROLLER listener; a controller's endpoint (``nodes``, DescribeQuorum v2) is its broker's
  address under the listener name ``CONTROLLER``.
* **The leader** starts as the lowest live voter, which is the controller id Metadata and
  DescribeCluster report while nothing moved it, in epoch 1.  When the leader's broker stops,
  the lowest live voter is elected in the next epoch; :meth:`ControllerQuorum.failover` (the
  admin API's ``POST /quorum/failover``) hands leadership to another live voter in the next
  epoch.  Each new leader appends a leader-change record, and emits ``quorum_leader_changed``.
  A quorum that lost its majority still has a leader here (Kafka's would resign): the rest of
  the mock goes on changing metadata too.
* **The metadata log's end offset**, which is also the high watermark, counts the records
  Kafka's controller would have appended for what changed since the cluster started: a topic
  record and a partition record each, a partition change for every new leader, a removal for a
  deleted topic, one config record per config key set or removed, a feature level record per
  feature updated, a client quota record per entity, and the fencing and registration of
  brokers stopped and started.  It is counted by listening (the cluster's listener lists and
  its event log) and, for configs and feature levels, by comparing what they are now with what
  they were when last looked at.  Kafka also appends a no-op record every 500 ms
  (``metadata.max.idle.interval.ms``); the mock does not, so the offset only moves when the
  metadata does.  When the quorum is first built (on first use), the offset starts from the
  records the present state would have taken.
* **Replica states**, as the leader knows them in its epoch: a live controller fetches all the
  time (log end offset = the high watermark, last fetch and last caught up = now); one whose
  broker stopped keeps what it had reached when it stopped, or -1 for everything if it has not
  fetched from this leader at all (stopped before the epoch began), as Kafka shows.
  Observers are brokers that are not voters, which only a dynamic quorum (``kraft.version``
  1) has: a voter removed with RemoveRaftVoter goes on fetching as an observer.  An observer
  that has not fetched for five minutes is forgotten, as Kafka's leader forgets it.

Add and remove are refused with Kafka's checks, in Kafka's order, with its errors and messages
(:meth:`ControllerQuorum.add_voter`, :meth:`ControllerQuorum.remove_voter`): on a static
quorum every well-formed request ends with UNSUPPORTED_VERSION.  With ``kraft.version`` 1 the
voter set changes: a voter is added once it is a live broker at the endpoint given, fetching
as an observer with the directory id given; a voter is removed unless it is the last.

The quorum belongs to the cluster, which builds it as it starts (``cluster.quorum``;
:func:`quorum_of` reads it), so it hears every metadata change from the first.
"""

from __future__ import annotations

import base64
import uuid
import weakref
from typing import Any, Iterable

from msgspec import Struct

from mockbroker.core.javaorder import hashmap_order, string_order, uuid_hash

#: the metadata log's topic and partition
METADATA_TOPIC = "__cluster_metadata"
METADATA_PARTITION = 0
#: the listener name of a controller's endpoint (``controller.listener.names``)
CONTROLLER_LISTENER = "CONTROLLER"
ZERO_UUID = uuid.UUID(int=0)
#: how long the leader remembers an observer that stopped fetching (``LeaderState``)
OBSERVER_SESSION_TIMEOUT_MS = 300_000
#: the feature that makes the voter set dynamic (KIP-853)
KRAFT_VERSION = "kraft.version"

# Kafka error codes of the voter and registration APIs
NONE = 0
REQUEST_TIMED_OUT = 7
UNSUPPORTED_VERSION = 35
INVALID_REQUEST = 42
INCONSISTENT_CLUSTER_ID = 104
DUPLICATE_VOTER = 126
VOTER_NOT_FOUND = 127
CONTROLLER_ID_NOT_REGISTERED = 136

#: records Kafka's controller appends when a broker is fenced (stopped) and when it registers
#: again and is unfenced (started)
FENCE_RECORDS, REGISTER_RECORDS = 1, 2


def kafka_uuid(value: uuid.UUID) -> str:
    """A UUID as Kafka writes one (``Uuid.toString``: URL-safe base64 without padding)."""
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode()


def directory_id(cluster_id: str, node_id: int) -> uuid.UUID:
    """The metadata log directory id of a node (``directory.id`` of its meta.properties): the
    same for a node of a cluster every time."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"mockbroker:{cluster_id}:metadata:{node_id}")


class QuorumError(Exception):
    """A voter change Kafka refuses: its error code and message."""

    def __init__(self, error_code: int, message: str | None):
        super().__init__(message or "")
        self.error_code = error_code
        self.message = message


class FailoverError(Exception):
    """A failover that cannot happen (``POST /quorum/failover`` answers 409, or 404 with
    ``unknown`` for a node that does not exist)."""

    def __init__(self, message: str, unknown: bool = False):
        super().__init__(message)
        self.unknown = unknown


class ReplicaState(Struct):
    """A controller's fetch state as the leader knows it in its epoch (-1: not yet known)."""

    node_id: int
    directory_id: uuid.UUID
    log_end_offset: int = -1
    last_fetch_timestamp: int = -1
    last_caught_up_timestamp: int = -1


class ReplicaKey(Struct, frozen=True):
    """A voter: its id and its directory id (None for a static voter, whose key has none)."""

    id: int
    directory_id: uuid.UUID | None = None

    def __str__(self) -> str:  # ReplicaKey.toString
        shown = "<undefined>" if self.directory_id is None else kafka_uuid(self.directory_id)
        return f"ReplicaKey(id={self.id}, directoryId={shown})"


def _replica_key_hash(key: ReplicaKey) -> int:
    # Objects.hash(id, Optional<Uuid>)
    return 31 * (31 + key.id) + (0 if key.directory_id is None else uuid_hash(key.directory_id))


def _key_set(keys: Iterable[ReplicaKey]) -> str:
    """A ``HashSet<ReplicaKey>`` as Java prints it."""
    ordered = hashmap_order(sorted(keys, key=lambda k: k.id), _replica_key_hash)
    return "[" + ", ".join(str(k) for k in ordered) + "]"


class ControllerQuorum:
    """The controller quorum of one cluster (build it with :func:`quorum_of`)."""

    def __init__(self, cluster):
        self.cluster = cluster
        #: voter id -> its key (directory id None while the quorum is static)
        self.voters: dict[int, ReplicaKey] = {
            node_id: ReplicaKey(node_id) for node_id in sorted(cluster.brokers)}
        self.leader_id = -1
        self.leader_epoch = 0
        #: the controllers registered with the active one (every node is a controller)
        self.registered: set[int] = set(cluster.brokers)
        #: node id -> its fetch state in the leader's epoch (voters and observers)
        self._states: dict[int, ReplicaState] = {}
        #: the metadata log's end offset (= the high watermark)
        self.end_offset = self._records_so_far()
        self._features_epoch = cluster.features.epoch
        self._configs = self._config_snapshot()
        #: which brokers are up, as this quorum heard (a broker's stop is heard before the
        #: cluster has fenced it)
        self._alive = {n: b.alive for n, b in cluster.brokers.items()}
        #: the cluster's metadata generation when this quorum last heard an event
        self._generation = cluster.metadata_answers.generation
        live = self._live_voters()
        if live:
            self._lead(live[0], count_record=False)
        cluster.leadership_listeners.append(self._leader_changed)
        cluster.partitions_added_listeners.append(self._partitions_added)
        cluster.topic_deleted_listeners.append(self._topic_deleted)
        _listen_to_events(self)

    # -- what it shows ---------------------------------------------------------------------------

    @property
    def kraft_version(self) -> int:
        return self.cluster.features.level(KRAFT_VERSION)

    @property
    def high_watermark(self) -> int:
        self._catch_up()
        return self.end_offset

    def now_ms(self) -> int:
        return self.cluster.clock.now_ms()

    def directory_id(self, node_id: int) -> uuid.UUID:
        return directory_id(self.cluster.cluster_id, node_id)

    def endpoint(self, node_id: int) -> tuple[str, str, int]:
        """(listener name, host, port) of a controller: its broker's address."""
        broker = self.cluster.brokers.get(node_id)
        if broker is None:
            return CONTROLLER_LISTENER, "localhost", 0
        return CONTROLLER_LISTENER, broker.host, broker.port

    def voter_states(self) -> list[ReplicaState]:
        """The voters' states in id order (Kafka's ``HashMap<Integer, ...>`` order), each
        with the directory id of its key (zero for a static voter)."""
        self._catch_up()
        return [self._state(node_id, key.directory_id or ZERO_UUID)
                for node_id, key in sorted(self.voters.items())]

    def observer_states(self) -> list[ReplicaState]:
        """The observers' states, in id order: brokers that are not voters, while the
        leader remembers them."""
        self._catch_up()
        now = self.now_ms()
        out = []
        for node_id in sorted(self.cluster.brokers):
            if node_id in self.voters:
                continue
            state = self._state(node_id, self.directory_id(node_id))
            if state.last_fetch_timestamp < 0 or \
                    now - state.last_fetch_timestamp >= OBSERVER_SESSION_TIMEOUT_MS:
                continue
            out.append(state)
        return out

    def _state(self, node_id: int, directory: uuid.UUID) -> ReplicaState:
        state = self._states.get(node_id)
        if state is None:
            state = self._states[node_id] = ReplicaState(node_id, directory)
        state.directory_id = directory
        if node_id == self.leader_id or self._alive.get(node_id, False):
            now = self.now_ms()  # it fetches all the time: caught up now
            state.log_end_offset = self.end_offset
            state.last_fetch_timestamp = state.last_caught_up_timestamp = now
        return state

    # -- leadership --------------------------------------------------------------------------

    def _live_voters(self) -> list[int]:
        return [n for n in sorted(self.voters) if self._alive.get(n, False)]

    def _lead(self, node_id: int, *, count_record: bool = True) -> None:
        """``node_id`` leads in the next epoch: the states start afresh (a controller that is
        down has not fetched from it), and it appends its leader-change record."""
        self._catch_up()
        previous = self.leader_id
        self.leader_id = node_id
        self.leader_epoch += 1
        self._states = {}
        if count_record:
            self.end_offset += 1
            self.cluster.events.emit("quorum_leader_changed", leader=node_id,
                                     previous_leader=previous, leader_epoch=self.leader_epoch)

    def failover(self, target: int | None = None) -> None:
        """Move leadership to another live voter (``target``, or the next one after the
        leader in id order) in the next epoch, as a leader that resigns hands it on."""
        live = self._live_voters()
        if target is None:
            others = [n for n in live if n > self.leader_id] + \
                [n for n in live if n < self.leader_id]
            if not others:
                raise FailoverError("no other live voter to take over the quorum's leadership "
                                    f"(voters {sorted(self.voters)}, live {live})")
            target = others[0]
        elif target not in self.cluster.brokers:
            raise FailoverError(f"unknown controller {target}", unknown=True)
        elif target not in self.voters:
            raise FailoverError(f"controller {target} is not a voter (voters "
                                f"{sorted(self.voters)})")
        elif target == self.leader_id:
            raise FailoverError(f"controller {target} already leads the quorum")
        elif target not in live:
            raise FailoverError(f"controller {target} is stopped")
        self._lead(target)

    def _elect(self) -> None:
        """The leader is gone (stopped, or no longer a voter): the lowest live voter wins the
        election in the next epoch; with none, there is no leader until one starts."""
        live = self._live_voters()
        if live:
            self._lead(live[0])
        elif self.leader_id != -1:
            previous, self.leader_id = self.leader_id, -1
            self.cluster.events.emit("quorum_leader_changed", leader=-1,
                                     previous_leader=previous, leader_epoch=self.leader_epoch)

    # -- brokers stopping and starting ---------------------------------------------------------

    def broker_stopped(self, node_id: int) -> None:
        """A broker stopped: it is fenced, and its controller stops fetching where it was
        (everything, as it fetched all the time); if it led, the next epoch begins."""
        if not self._alive.get(node_id):
            return
        self._alive[node_id] = False
        self._catch_up()
        now = self.now_ms()
        self._states[node_id] = ReplicaState(node_id, ZERO_UUID, self.end_offset, now, now)
        self.end_offset += FENCE_RECORDS
        if node_id == self.leader_id:
            self._elect()

    def broker_started(self, node_id: int) -> None:
        """A broker came back: it registers and is unfenced, and its controller fetches
        again; with no leader until then, an election follows."""
        if node_id not in self._alive or self._alive[node_id]:
            return
        self._alive[node_id] = True
        self.end_offset += REGISTER_RECORDS
        if node_id not in self.registered:
            self.registered.add(node_id)
            self.end_offset += 1  # its controller registers again
        if self.leader_id == -1 and node_id in self.voters:
            self._elect()

    # -- controller registrations ----------------------------------------------------------------

    def unregister_controller(self, controller_id: int) -> None:
        """UnregisterController, with the active controller's checks: it will not unregister
        itself, nor a controller that is not registered.  A controller that is running sees
        its registration gone from the metadata log and registers again at once (two
        records); a stopped one stays unregistered until its node starts."""
        if controller_id == self.leader_id:
            raise QuorumError(INVALID_REQUEST,
                              "Controller cannot unregister itself while it is active.")
        if controller_id not in self.registered:
            raise QuorumError(CONTROLLER_ID_NOT_REGISTERED, f"Controller ID {controller_id} "
                                                            "is not currently registered.")
        self._catch_up()
        self.end_offset += 1  # the UnregisterControllerRecord
        if self._alive.get(controller_id, False):
            self.end_offset += 1  # it registers again
        else:
            self.registered.discard(controller_id)
        self.cluster.events.emit("controller_unregistered", controller=controller_id)

    # -- the voter set (KIP-853) -----------------------------------------------------------------

    def _check_cluster_id(self, cluster_id: str | None) -> None:
        if cluster_id is not None and cluster_id != self.cluster.cluster_id:
            raise QuorumError(INCONSISTENT_CLUSTER_ID, f'The given id "{cluster_id}" doesn\'t '
                                                       f'match the cluster id '
                                                       f'"{self.cluster.cluster_id}"')

    def _voter_keys(self) -> str:
        return _key_set(self.voters.values())

    def add_voter(self, cluster_id: str | None, voter_id: int, voter_directory_id: uuid.UUID,
                  listeners: list[tuple[str, str, int]]) -> None:
        """AddRaftVoter, as the leader checks it (``KafkaRaftClient``, ``AddVoterHandler``);
        raises :class:`QuorumError`."""
        self._catch_up()
        self._check_cluster_id(cluster_id)
        if voter_id < 0 or voter_directory_id == ZERO_UUID:
            raise QuorumError(INVALID_REQUEST, "Add voter request didn't include a valid voter")
        endpoints: dict[str, tuple[str, int]] = {}
        for name, host, port in listeners:
            endpoints[name.upper()] = (host, port)
        if CONTROLLER_LISTENER not in endpoints:
            shown = ", ".join(f"ListenerName({name})={host}/<unresolved>:{port}"
                              for name in string_order(endpoints, initial=len(listeners))
                              for host, port in [endpoints[name]])
            raise QuorumError(INVALID_REQUEST, "Add voter request didn't include the endpoint "
                                               f"(Endpoints(endpoints={{{shown}}})) for the "
                                               "default listener "
                                               f"ListenerName({CONTROLLER_LISTENER})")
        level = self.kraft_version
        if level < 1:
            raise QuorumError(UNSUPPORTED_VERSION, "Cluster doesn't support adding voter "
                                                   f"because the {KRAFT_VERSION} feature is "
                                                   f"{level}")
        key = ReplicaKey(voter_id, voter_directory_id)
        if voter_id in self.voters:
            raise QuorumError(DUPLICATE_VOTER, f"The voter id for {key} is already part of the "
                                               f"set of voters {self._voter_keys()}.")
        # the leader asks the new voter's CONTROLLER endpoint for its API versions
        host, port = endpoints[CONTROLLER_LISTENER]
        reached = [b for b in self.cluster.brokers.values()
                   if self._alive.get(b.node_id) and (b.host, b.port) == (host, port)]
        if not reached:
            raise QuorumError(REQUEST_TIMED_OUT, "Aborted add voter operation for since "
                                                 "API_VERSIONS returned an error "
                                                 "BROKER_NOT_AVAILABLE")
        observer = self.cluster.brokers.get(voter_id)
        if observer is None or not self._alive.get(voter_id) or \
                self.directory_id(voter_id) != voter_directory_id:
            raise QuorumError(REQUEST_TIMED_OUT, f"Aborted add voter operation for {key} since "
                                                 "it is lagging behind")
        self.voters[voter_id] = key
        self.voters = dict(sorted(self.voters.items()))
        self.end_offset += 1  # the VotersRecord

    def remove_voter(self, cluster_id: str | None, voter_id: int,
                     voter_directory_id: uuid.UUID) -> None:
        """RemoveRaftVoter, as the leader checks it (``KafkaRaftClient``,
        ``RemoveVoterHandler``); raises :class:`QuorumError`.  A leader that removes itself
        hands leadership to the lowest live voter left."""
        self._catch_up()
        self._check_cluster_id(cluster_id)
        if voter_id < 0 or voter_directory_id == ZERO_UUID:
            raise QuorumError(INVALID_REQUEST,
                              "Remove voter request didn't include a valid voter")
        level = self.kraft_version
        if level < 1:
            raise QuorumError(UNSUPPORTED_VERSION, "Cluster doesn't support removing voter "
                                                   f"because the {KRAFT_VERSION} feature is "
                                                   f"{level}")
        key = ReplicaKey(voter_id, voter_directory_id)
        if self.voters.get(voter_id) != key or len(self.voters) == 1:
            raise QuorumError(VOTER_NOT_FOUND, f"Cannot remove voter {key} from the set of "
                                               f"voters {self._voter_keys()}")
        del self.voters[voter_id]
        self.end_offset += 1  # the VotersRecord
        if voter_id == self.leader_id:
            self._elect()

    def dynamic(self) -> None:
        """The voters' keys take their directory ids, as when ``kraft.version`` goes to 1 (the
        leader learns them from the voters)."""
        self.voters = {n: ReplicaKey(n, self.directory_id(n)) for n in self.voters}

    # -- the metadata log's offset -------------------------------------------------------------

    def _records_so_far(self) -> int:
        """The records the present state took: the bootstrap feature levels and their
        changes, a registration and unfencing per broker, a topic record and partition
        records per topic, a partition change per leader epoch, a config record per config,
        and the first leader's leader-change record."""
        cluster = self.cluster
        records = len(cluster.features.finalized()) + cluster.features.epoch - 1
        records += 2 * len(cluster.brokers) + 1
        for topic in cluster.topics.values():
            records += 1 + len(topic.partitions) + sum(p.leader_epoch for p in topic.partitions)
        return records + len(self._config_snapshot())

    def _config_snapshot(self) -> dict[tuple[str, str, str], str]:
        """Every config set dynamically or on a topic: (kind, resource, key) -> value."""
        cluster = self.cluster
        configs = cluster.broker_configs
        out: dict[tuple[str, str, str], str] = {}
        for key, value in configs.dynamic_default.items():
            out[("broker", "", key)] = value
        for broker_id, values in configs.dynamic_per_broker.items():
            for key, value in values.items():
                out[("broker", str(broker_id), key)] = value
        for group_id, values in configs.group_configs.items():
            for key, value in values.items():
                out[("group", group_id, key)] = value
        for topic in cluster.topics.values():
            for key, value in topic.configs.items():
                out[("topic", topic.name, key)] = value
        return out

    def _catch_up(self) -> None:
        """Count the config and feature level records written since last looked at."""
        features = self.cluster.features.epoch
        if features != self._features_epoch:
            self.end_offset += max(0, features - self._features_epoch)
            self._features_epoch = features
        if self.kraft_version >= 1 and any(k.directory_id is None for k in self.voters.values()):
            self.dynamic()
        now = self._config_snapshot()
        before = self._configs
        if now != before:
            live = {(kind, name) for kind, name, _ in now} | \
                {("topic", name) for name in self.cluster.topics} | \
                {("broker", ""), *(("broker", str(b)) for b in self.cluster.brokers)}
            changed = sum(1 for key, value in now.items() if before.get(key) != value)
            removed = sum(1 for key in before if key not in now and key[:2] in live)
            self.end_offset += changed + removed
            self._configs = now

    def _leader_changed(self, partition) -> None:
        self.end_offset += 1

    def _partitions_added(self, topic, partitions) -> None:
        created = len(partitions) == len(topic.partitions)
        self.end_offset += len(partitions) + (1 if created else 0)

    def _topic_deleted(self, topic) -> None:
        self.end_offset += 1

    def heard(self, event: dict[str, Any]) -> None:
        """An event of the log: a broker stopping or starting, client quotas altered.  The
        event log outlives a cluster (``POST /reset`` builds another on the same log), so an
        event counts only when this cluster's metadata changed since the last one heard, as
        it does right before a broker stops or starts: a cluster reset away changes no
        more."""
        generation = self.cluster.metadata_answers.generation
        ours, self._generation = generation != self._generation, generation
        kind = event["type"]
        if kind == "broker_stopped" and ours:
            self.broker_stopped(event["broker"])
        elif kind == "broker_started" and ours:
            self.broker_started(event["broker"])
        elif kind == "client_quotas_altered":
            self.end_offset += len(event.get("entities") or ())


def _listen_to_events(quorum: ControllerQuorum) -> None:
    """Hear the cluster's events while the quorum lives: the event log outlives a cluster
    (``POST /reset`` builds a new one), so it holds the quorum weakly and lets go once the
    quorum is gone."""
    events = quorum.cluster.events
    ref = weakref.ref(quorum)

    def heard(event: dict[str, Any]) -> None:
        alive = ref()
        if alive is None:
            if heard in events.listeners:
                events.listeners.remove(heard)
            return
        alive.heard(event)

    events.listeners.append(heard)


def quorum_of(cluster) -> ControllerQuorum:
    """The cluster's controller quorum (the cluster builds it as it starts)."""
    return cluster.quorum
