"""Replication as the controller sees it: every partition's replicas, ISR, eligible leaders,
leader and leader epoch, and what moves them.

:class:`ReplicationControl` is the one place a partition's replication state changes.  Each
change is worked out by :func:`~mockbroker.core.controller.change.plan` (Kafka's partition change
builder) and applied by :meth:`ReplicationControl.apply`, which checks every partition's and
replica's move against the state tables (:mod:`~mockbroker.core.controller.states`), truncates
the log when a replica from outside the ISR takes the lead, and tells whoever follows
leadership.

The log is the leader's; a replica that is not in the ISR is described by where its log ends
(``Partition.ends``), frozen when it stops following: its broker stopped, or a control action
holds it back as lagging.  A replica that follows again catches up after the mock's
``replica.catch.up.ms`` (0: at once) on the broker clock, and the leader then adds it to the ISR
(ascending, as a leader's AlterPartition writes it).  While the ISR is below the effective
``min.insync.replicas`` the high watermark stays where it was and ``acks=all`` produce is refused
with NOT_ENOUGH_REPLICAS.

Kafka's controller runs two periodic tasks on its clock, and so does this one: every
``leader.imbalance.check.interval.seconds`` (with ``auto.leader.rebalance.enable``) a preferred
election for every partition led by another replica than its first, and every
``unclean.leader.election.interval.ms`` an unclean election for the partitions without a leader
whose topic allows one (a topic that allowed it when its leader was lost got one at once).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.core.controller import states
from mockbroker.core.controller.change import (
    NO_LEADER, Change, Election, PartitionView, plan, reassignment_of, revert_of)
from mockbroker.core.config.topic import topic_value_from_broker
from mockbroker.core.errors import ApiException
from wire import errors

if TYPE_CHECKING:
    from mockbroker.core.cluster import Cluster, Partition

ELR_FEATURE = "eligible.leader.replicas.version"


class ReplicationControl:
    """The controller's view of every partition's replication, for one cluster."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        #: brokers stopped as if they died, not yet back: they come back from a crash
        self.crashed: set[int] = set()
        #: (topic id, partition, broker) -> the timer of a replica catching up
        self._catching_up: dict[tuple, object] = {}
        settings = cluster.settings
        if settings.get("auto_leader_rebalance_enable", True):
            self._every(settings.get("leader_imbalance_check_interval_seconds", 300) * 1000,
                        self.rebalance_leaders)
        self._every(settings.get("unclean_leader_election_interval_ms", 300000),
                    self.elect_unclean_leaders)

    def _every(self, period_ms: int, task) -> None:
        def run() -> None:
            try:
                task()
            finally:
                self.cluster.timers.call_later(period_ms, run)
        self.cluster.timers.call_later(period_ms, run)

    # -- what the configs say ------------------------------------------------------------------

    @property
    def elr_enabled(self) -> bool:
        return self.cluster.features.level(ELR_FEATURE) >= 1

    def topic_value(self, partition: Partition, name: str) -> str:
        """A topic config as the controller reads it: the override, else the brokers'."""
        value = partition.topic.configs.get(name)
        if value is None:
            cluster = self.cluster
            controller = cluster.controller_id
            broker = controller if controller >= 0 else min(cluster.brokers)
            value = topic_value_from_broker(name, cluster.broker_configs.effective(broker))
        return value

    def min_isr(self, partition: Partition) -> int:
        """The effective ``min.insync.replicas``: never more than the replicas there are."""
        return min(int(self.topic_value(partition, "min.insync.replicas")),
                   len(partition.replicas) - len(partition.removing))

    def unclean_enabled(self, partition: Partition) -> bool:
        return self.topic_value(partition, "unclean.leader.election.enable") == "true"

    def _alive(self, node_id: int) -> bool:
        broker = self.cluster.brokers.get(node_id)
        return broker is not None and broker.active

    # -- the one way a partition changes -------------------------------------------------------

    def change(self, partition: Partition, *, election: Election | None = None,
               acceptable=None, cancelling: bool = False, **wanted) -> Change | None:
        """Work out and apply one change (see :func:`plan` for ``wanted``; ``cancelling``: it
        reverts a reassignment); returns it, or None when nothing changed."""
        if election is None:
            election = Election.UNCLEAN if self.unclean_enabled(partition) else Election.ONLINE
        now = PartitionView(list(partition.replicas), list(partition.isr), partition.leader,
                            list(partition.elr), list(partition.last_known_elr),
                            list(partition.adding), list(partition.removing))
        planned = plan(now, acceptable=acceptable or self._alive,
                       min_isr=self.min_isr(partition), elr_enabled=self.elr_enabled,
                       election=election, **wanted)
        if planned is not None:
            self.apply(partition, planned, cancelling=cancelling)
        return planned

    def apply(self, partition: Partition, change: Change, *, cancelling: bool = False) -> None:
        """Make ``change`` to ``partition``: check each move against the state tables, truncate
        the log to an unclean leader's end, and tell everyone who follows the partition."""
        everyone = set(partition.replicas) | set(change.replicas)
        before = {r: states.replica_state(partition, r, self._alive(r)) for r in everyone}
        partition_before = states.partition_state(partition)
        previous_leader = partition.leader
        log = partition.log
        if change.leader != previous_leader and change.leader != NO_LEADER:
            end = partition.ends.get(change.leader)
            if end is not None and end < log.log_end_offset:
                self._truncate(partition, end)
        for r in set(partition.replicas) - set(change.isr):  # they stop where the log ends
            partition.ends.setdefault(r, log.log_end_offset)
        for r in change.isr:
            partition.ends.pop(r, None)
        for r in set(partition.ends) - set(change.replicas):
            del partition.ends[r]
        isr_changed = (partition.isr, partition.elr) != (change.isr, change.elr)
        completed = (bool(partition.adding or partition.removing)
                     and not (change.adding or change.removing) and not cancelling)
        partition.replicas = change.replicas
        partition.isr = change.isr
        partition.elr = change.elr
        partition.last_known_elr = change.last_known_elr
        partition.adding = change.adding
        partition.removing = change.removing
        partition.leader = change.leader
        if change.bump_epoch:
            partition.leader_epoch += 1
        partition.partition_epoch += 1
        what = f"{partition.topic.name}-{partition.index}"
        for r in everyone:
            states.check(states.REPLICA_TABLE, before[r],
                         states.replica_state(partition, r, self._alive(r)),
                         f"replica {r} of {what}")
        states.check(states.PARTITION_TABLE, partition_before,
                     states.partition_state(partition), f"partition {what}")
        self.hold_high_watermark(partition)
        cluster = self.cluster
        cluster.metadata_changed()
        if isr_changed:
            cluster.events.emit("isr_changed", topic=partition.topic.name,
                                partition=partition.index, isr=list(partition.isr),
                                elr=list(partition.elr), leader=partition.leader)
        if completed:
            cluster.events.emit("reassignment_completed", topic=partition.topic.name,
                                partition=partition.index, replicas=list(partition.replicas))
        if change.leader != previous_leader or change.bump_epoch:
            cluster.leader_changed(partition, previous_leader, unclean=change.unclean)
        for r in partition.replicas:
            if r not in partition.isr:
                self.follow(partition, r)

    def _truncate(self, partition: Partition, offset: int) -> None:
        log = partition.log
        offset = max(offset, log.log_start_offset)
        lost = log.log_end_offset - offset
        log.truncate_to(offset)
        for r, end in list(partition.ends.items()):
            partition.ends[r] = min(end, offset)
        self.cluster.events.emit("log_truncated", topic=partition.topic.name,
                                 partition=partition.index, offset=offset, offsets_lost=lost)

    def hold_high_watermark(self, partition: Partition) -> None:
        """The leader moves the high watermark only while the ISR is at min.insync.replicas."""
        log = partition.log
        if len(partition.isr) < self.min_isr(partition):
            if log.held_high_watermark is None:
                log.held_high_watermark = log.log_end_offset
        elif log.held_high_watermark is not None:
            log.held_high_watermark = None
            self.cluster.notify_append(partition)

    # -- replicas following their leader -------------------------------------------------------

    def follow(self, partition: Partition, node_id: int) -> None:
        """``node_id`` fetches from the leader, if it can: it joins the ISR once caught up."""
        if not self._following(partition, node_id):
            return
        key = (partition.topic.topic_id, partition.index, node_id)
        if key in self._catching_up:
            return
        delay = self.cluster.settings.get("replica_catch_up_ms", 0)
        if delay <= 0:
            self._caught_up(partition, node_id)
            return

        def caught_up() -> None:
            self._catching_up.pop(key, None)
            self._caught_up(partition, node_id)
        self._catching_up[key] = self.cluster.timers.call_later(delay, caught_up)

    def _following(self, partition: Partition, node_id: int) -> bool:
        return (node_id in partition.replicas and node_id not in partition.isr
                and node_id not in partition.lagging and self._alive(node_id)
                and partition.leader >= 0 and self._alive(partition.leader)
                and self.cluster.topics.get(partition.topic.name) is partition.topic)

    def _caught_up(self, partition: Partition, node_id: int) -> None:
        if not self._following(partition, node_id):
            return
        partition.ends.pop(node_id, None)
        self.change(partition, isr=sorted(set(partition.isr) | {node_id}))

    def _stop_following(self, node_id: int) -> None:
        for key in [k for k in self._catching_up if k[2] == node_id]:
            self._catching_up.pop(key).cancel()

    # -- brokers stopped and started -----------------------------------------------------------

    def _moves_of(self, node_id: int):
        """Where ``node_id``'s replicas stand now, to check their moves against afterwards
        (a broker stopping or starting moves replicas no change names)."""
        return [(p, states.replica_state(p, node_id, self._alive(node_id)))
                for p in self.cluster.all_partitions() if node_id in p.replicas]

    def _check_moves(self, node_id: int, before) -> None:
        for partition, state in before:
            states.check(states.REPLICA_TABLE, state,
                         states.replica_state(partition, node_id, self._alive(node_id)),
                         f"replica {node_id} of {_name(partition)}")

    def broker_fenced(self, node_id: int, *, crashed: bool = True) -> None:
        """A broker stops: it leaves every ISR, and its partitions elect new leaders."""
        before = self._moves_of(node_id)
        self.cluster.brokers[node_id].alive = False
        self._fenced(node_id, crashed)
        self._check_moves(node_id, before)

    def _fenced(self, node_id: int, crashed: bool) -> None:
        self._stop_following(node_id)
        if crashed:
            self.crashed.add(node_id)
        for partition in self.cluster.all_partitions():
            if node_id not in partition.replicas:
                continue
            if node_id in partition.isr or partition.leader == node_id:
                self.change(partition, isr=[r for r in partition.isr if r != node_id],
                            acceptable=lambda r: r != node_id and self._alive(r))
            elif node_id not in partition.ends:
                partition.ends[node_id] = partition.log.log_end_offset

    def broker_unregistered(self, node_id: int) -> None:
        """UnregisterBroker: as for a broker fenced, it leaves every ISR and its partitions
        elect new leaders (an eligible leader replica stays one, as in Kafka, but may not
        lead while unregistered)."""
        before = self._moves_of(node_id)
        self.cluster.brokers[node_id].registered = False
        self._fenced(node_id, crashed=node_id in self.crashed)
        self._check_moves(node_id, before)

    def broker_unfenced(self, node_id: int) -> None:
        """A broker back (registered again if it was not): after a crash it is no eligible
        leader any more; leaderless partitions elect again (it may now lead them); its
        replicas catch up."""
        before = self._moves_of(node_id)
        broker = self.cluster.brokers[node_id]
        broker.alive = broker.registered = True
        self._unfenced(node_id)
        self._check_moves(node_id, before)

    def _unfenced(self, node_id: int) -> None:
        crashed = node_id in self.crashed
        self.crashed.discard(node_id)
        partitions = [p for p in self.cluster.all_partitions() if node_id in p.replicas]
        if crashed and self.elr_enabled:
            for partition in partitions:
                if node_id in partition.elr or node_id in partition.isr:
                    self.change(partition, isr=[r for r in partition.isr if r != node_id],
                                unclean_shutdown=[node_id],
                                acceptable=lambda r: r != node_id and self._alive(r))
        for partition in partitions:
            if partition.leader == NO_LEADER:
                self.change(partition)
        for partition in partitions:
            self.follow(partition, node_id)

    def clear_elrs(self, topic_name: str | None) -> None:
        """Empty the eligible leader replicas and last known ELR of ``topic_name``'s partitions
        (None: every partition), as Kafka's controller does when ``min.insync.replicas``
        changes; the partition epoch moves, the leader epoch does not."""
        if topic_name is None:
            partitions = list(self.cluster.all_partitions())
        else:
            topic = self.cluster.topics.get(topic_name)
            partitions = list(topic.partitions) if topic is not None else []
        for partition in partitions:
            if partition.elr or partition.last_known_elr:
                self.apply(partition, Change(
                    replicas=list(partition.replicas), isr=list(partition.isr),
                    leader=partition.leader, elr=[], last_known_elr=[],
                    adding=list(partition.adding), removing=list(partition.removing),
                    bump_epoch=False))

    # -- replicas held back ----------------------------------------------------------------------

    def set_lagging(self, partition: Partition, node_id: int, lagging: bool) -> None:
        """Hold a replica back (it stops fetching and leaves the ISR, though its broker runs),
        or let it follow again.  The leader cannot lag behind itself."""
        self._replica_of(partition, node_id)
        if lagging:
            if partition.leader == node_id:
                raise ApiException(errors.INVALID_REQUEST,
                                   f"broker {node_id} leads {_name(partition)}: a leader "
                                   "cannot lag behind itself")
            partition.lagging.add(node_id)
            key = (partition.topic.topic_id, partition.index, node_id)
            timer = self._catching_up.pop(key, None)
            if timer is not None:
                timer.cancel()
            if node_id in partition.isr:
                self.change(partition, isr=[r for r in partition.isr if r != node_id])
            elif node_id not in partition.ends:
                partition.ends[node_id] = partition.log.log_end_offset
        else:
            partition.lagging.discard(node_id)
            self.follow(partition, node_id)

    def _replica_of(self, partition: Partition, node_id: int) -> None:
        if node_id not in self.cluster.brokers:
            raise ApiException(errors.BROKER_NOT_AVAILABLE, f"unknown broker {node_id}")
        if node_id not in partition.replicas:
            raise ApiException(errors.INVALID_REPLICA_ASSIGNMENT,
                               f"broker {node_id} is not a replica of {_name(partition)} "
                               f"(replicas {partition.replicas})")

    # -- elections -------------------------------------------------------------------------------

    def elect_all(self, election: Election
                  ) -> list[tuple[str, list[tuple[int, int, str | None]]]]:
        """ElectLeaders for every partition (a null topic list): each topic with the
        (partition, error, message) of the partitions that needed an election."""
        out = []
        for name in sorted(self.cluster.topics):
            outcomes = []
            for partition in self.cluster.topics[name].partitions:
                code, message = self.elect(partition, election)
                if code != errors.ELECTION_NOT_NEEDED:
                    outcomes.append((partition.index, code, message))
            out.append((name, outcomes))
        return out

    def elect_named(self, name: str, index: int, election: Election
                    ) -> tuple[int, str | None]:
        """ElectLeaders for a partition named by the request: unknown ones answered as
        Kafka's controller answers them."""
        try:
            partition = self._named(name, index, f"No such topic as {name}",
                                    f"No such partition as {name}-{index}")
        except ApiException as exc:  # its message cut to what a response can carry
            return exc.error_code, exc.message
        return self.elect(partition, election)

    def _named(self, name: str, index: int, no_topic: str, no_partition: str) -> Partition:
        """The partition a request names, or UNKNOWN_TOPIC_OR_PARTITION with a message."""
        topic = self.cluster.topics.get(name)
        if topic is None:
            raise ApiException(errors.UNKNOWN_TOPIC_OR_PARTITION, no_topic)
        if not 0 <= index < len(topic.partitions):
            raise ApiException(errors.UNKNOWN_TOPIC_OR_PARTITION, no_partition)
        return topic.partitions[index]

    def elect(self, partition: Partition, election: Election) -> tuple[int, str | None]:
        """ElectLeaders for one partition: (error code, message) as Kafka answers."""
        if election is Election.PREFERRED and partition.leader == partition.replicas[0]:
            return errors.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition."
        if election is Election.UNCLEAN and partition.leader != NO_LEADER:
            return errors.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition."
        before = partition.leader
        self.change(partition, election=election)
        if partition.leader == before:
            if election is Election.PREFERRED:
                return (errors.PREFERRED_LEADER_NOT_AVAILABLE,
                        "The preferred leader was not available.")
            return (errors.ELIGIBLE_LEADERS_NOT_AVAILABLE,
                    "Eligible topic partition leaders are not available.")
        return errors.NONE, None

    def rebalance_leaders(self) -> None:
        """The periodic preferred-leader election (``auto.leader.rebalance.enable``)."""
        for partition in list(self.cluster.all_partitions()):
            if partition.leader != partition.replicas[0]:
                self.change(partition, election=Election.PREFERRED)

    def elect_unclean_leaders(self) -> None:
        """The periodic unclean election of leaderless partitions whose topic allows one."""
        for partition in list(self.cluster.all_partitions()):
            if partition.leader == NO_LEADER and self.unclean_enabled(partition):
                self.change(partition, election=Election.UNCLEAN)

    def move_leader(self, partition: Partition, node_id: int) -> None:
        """Make ``node_id`` lead (a control action): it must be a live replica; one out of
        the ISR catches up at once first."""
        broker = self.cluster.brokers.get(node_id)
        if broker is None:
            raise ApiException(errors.BROKER_NOT_AVAILABLE, f"unknown broker {node_id}")
        if not broker.active:
            state = "stopped" if not broker.alive else "unregistered"
            raise ApiException(errors.BROKER_NOT_AVAILABLE, f"broker {node_id} is {state}")
        self._replica_of(partition, node_id)
        if partition.leader != node_id:
            self.force_leader(partition, node_id)

    def force_leader(self, partition: Partition, leader: int) -> None:
        """Give ``partition`` to ``leader`` (a replica; -1: none) with a new leader epoch,
        even when it leads already (a re-election, as after a coordinator reloads): the
        cluster's raw knob, below the elections.  A replica out of the ISR catches up at
        once first."""
        if leader != NO_LEADER and leader not in partition.isr:
            partition.lagging.discard(leader)
            partition.ends.pop(leader, None)
            self.change(partition, isr=sorted(set(partition.isr) | {leader}))
        self.apply(partition, Change(
            replicas=list(partition.replicas), isr=list(partition.isr), leader=leader,
            elr=[r for r in partition.elr if r != leader],
            last_known_elr=list(partition.last_known_elr) if leader == NO_LEADER else [],
            adding=list(partition.adding), removing=list(partition.removing),
            bump_epoch=True))

    # -- reassignments ---------------------------------------------------------------------------

    def reassign_named(self, name: str, index: int, target: list[int] | None, *,
                       allow_replication_factor_change: bool = True) -> tuple[int, str | None]:
        """AlterPartitionReassignments for a partition a request names: (error, message)."""
        try:
            partition = self._named(name, index, f"Unable to find a topic named {name}.",
                                    f"Unable to find partition {name}:{index}.")
            self.reassign(partition, target,
                          allow_replication_factor_change=allow_replication_factor_change)
        except ApiException as exc:
            return exc.error_code, exc.message or None
        return errors.NONE, None

    def reassign(self, partition: Partition, target: list[int] | None, *,
                 allow_replication_factor_change: bool = True) -> None:
        """AlterPartitionReassignments for one partition (``target`` None cancels), with
        Kafka's checks; raises :class:`ApiException`."""
        name = f"{partition.topic.name}:{partition.index}"
        reassigning = bool(partition.adding or partition.removing)
        if target is None:
            if not reassigning:
                raise ApiException(errors.NO_REASSIGNMENT_IN_PROGRESS)
            replicas, isr, unclean = revert_of(partition.replicas, partition.isr,
                                               partition.adding)
            if unclean and not self.unclean_enabled(partition):
                raise ApiException(errors.INVALID_REPLICA_ASSIGNMENT, "Unable to revert "
                                   f"partition assignment for {name} because it would require "
                                   "an unclean leader election.")
            self.change(partition, replicas=replicas, isr=isr, adding=[], removing=[],
                        cancelling=True)
            self.cluster.events.emit("reassignment_cancelled", topic=partition.topic.name,
                                     partition=partition.index, replicas=list(replicas))
            return
        if not target:
            raise ApiException(errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition "
                               "assignment includes an empty replica list.")
        seen = set()
        for broker_id in sorted(target):
            if not self.cluster.registered(broker_id):
                raise ApiException(errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition "
                                   f"assignment includes broker {broker_id}, but no such "
                                   "broker is registered.")
            if broker_id in seen:
                raise ApiException(errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition "
                                   f"assignment includes the broker {broker_id} more than "
                                   "once.")
            seen.add(broker_id)
        current = [r for r in partition.replicas if r not in partition.removing]
        if not allow_replication_factor_change and len(target) != len(current):
            raise ApiException(errors.INVALID_REPLICATION_FACTOR, "The replication factor is "
                               f"changed from {len(current)} to {len(target)}")
        if not reassigning and list(target) == partition.replicas:
            return
        # a new target replaces a running one, from the full list it runs with
        replicas, adding, removing = reassignment_of(partition.replicas, target)
        for r in adding:
            if r not in partition.ends:
                partition.ends[r] = partition.log.log_start_offset
        self.cluster.events.emit("reassignment_started", topic=partition.topic.name,
                                 partition=partition.index, target=list(target),
                                 adding=adding, removing=removing)
        self.change(partition, replicas=replicas, adding=adding, removing=removing)

    def created(self, partition: Partition) -> None:
        """A new partition: check its and its replicas' first moves."""
        what = _name(partition)
        for r in partition.replicas:
            states.check(states.REPLICA_TABLE, states.ReplicaState.NON_EXISTENT,
                         states.replica_state(partition, r, self._alive(r)),
                         f"replica {r} of {what}")
        states.check(states.PARTITION_TABLE, states.PartitionState.NON_EXISTENT,
                     states.partition_state(partition), f"partition {what}")

    def deleted(self, partition: Partition) -> None:
        """A partition whose topic was deleted: its last moves, and no replica follows it."""
        what = _name(partition)
        for r in partition.replicas:
            key = (partition.topic.topic_id, partition.index, r)
            timer = self._catching_up.pop(key, None)
            if timer is not None:
                timer.cancel()
            states.check(states.REPLICA_TABLE,
                         states.replica_state(partition, r, self._alive(r)),
                         states.ReplicaState.NON_EXISTENT, f"replica {r} of {what}")
        states.check(states.PARTITION_TABLE, states.partition_state(partition),
                     states.PartitionState.NON_EXISTENT, f"partition {what}")

    def reassignments(self) -> list[Partition]:
        """The partitions being reassigned, in topic and partition order."""
        return [p for name in sorted(self.cluster.topics)
                for p in self.cluster.topics[name].partitions if p.adding or p.removing]


def _name(partition: Partition) -> str:
    return f"{partition.topic.name}-{partition.index}"
