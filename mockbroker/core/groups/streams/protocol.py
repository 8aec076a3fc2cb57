"""StreamsGroupHeartbeat as Kafka 4.4's group coordinator answers it (``GroupMetadataManager``
with ``StreamsGroup``): joining with a topology, heartbeating with the tasks a member owns,
leaving (-1, or -2 for a static member that will come back), the topology configured against
the topics there are, the internal topics it still needs, the target assignment of the
``sticky`` task assignor, each member's reconciliation, the session and rebalance timeouts, a
member's request to shut the whole application down, and the records every change writes.

A new group waits ``streams.initial.rebalance.delay.ms`` for more members before its first
assignment, and computes a new target at most once per ``streams.assignment.interval.ms``; in
the meantime each heartbeat is told so (status ASSIGNMENT_DELAYED), as on Kafka.  The internal
topics the topology needs are created by the broker that serves the heartbeat (the handler), as
Kafka's broker does; until they exist every member's target is empty.
"""

from __future__ import annotations

import copy

from msgspec import Struct, field

from mockbroker.core.config.group import group_value
from mockbroker.core.errors import ApiException
from mockbroker.core.groups.modern.protocol import ModernProtocol
from mockbroker.core.groups.streams import records
from mockbroker.core.groups.streams.group import STABLE, UNREVOKED_TASKS, StreamsGroup, \
    StreamsMember, TaskRoles, Tasks
from mockbroker.core.groups.streams.reconcile import reconcile
from mockbroker.core.groups.streams.topology import ASSIGNMENT_DELAYED, MISSING_CLIENT_TAGS, \
    SHUTDOWN_APPLICATION, STALE_TOPOLOGY, ConfiguredTopology, Topology, TopicInfo, configure, \
    from_wire, invalid_topology
from mockbroker.core.groups.timers import TimerKey, TimerKind
from mockbroker.core.javaorder import string_order
from wire import errors

LEAVE, STATIC_LEAVE = -1, -2
#: the name of the protocol whose requests this module serves, as the table routes them
STREAMS = StreamsGroup.type
#: the timers a member may have: its session, and its revocation
MEMBER_TIMERS = (TimerKind.HEARTBEAT, TimerKind.REVOCATION)
#: Kafka's internal defaults of what 4.4 does not let a group set yet
TASK_OFFSET_INTERVAL_MS = 60_000
ACCEPTABLE_RECOVERY_LAG = 10_000


class Heartbeat(Struct):
    """A StreamsGroupHeartbeat as the coordinator reads it (None: not sent / unchanged)."""

    group_id: str
    member_id: str
    member_epoch: int
    endpoint_information_epoch: int = 0
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    #: the request's Topology struct, as sent
    topology: object | None = None
    #: what the member says it owns, per role; None: not sent
    active: Tasks | None = None
    standby: Tasks | None = None
    warmup: Tasks | None = None
    process_id: str | None = None
    user_endpoint: tuple[str, int] | None = None
    client_tags: dict[str, str] | None = None
    #: [(subtopology, partition, offset)]
    task_offsets: list[tuple[str, int, int]] | None = None
    task_end_offsets: list[tuple[str, int, int]] | None = None
    shutdown_application: bool = False
    client_id: str = ""
    client_host: str = ""
    version: int = 1

    def owned(self) -> TaskRoles | None:
        """What the member owns, when it said (all three roles are sent together)."""
        if self.active is None or self.standby is None or self.warmup is None:
            return None
        return TaskRoles({s: dict.fromkeys(ps, 0) for s, ps in self.active.items()},
                         self.standby, self.warmup)


class EndpointPartitions(Struct):
    host: str
    port: int
    #: [(topic, partitions)]
    active: list[tuple[str, list[int]]]
    standby: list[tuple[str, list[int]]]


class HeartbeatResult(Struct):
    member_id: str
    member_epoch: int
    heartbeat_interval_ms: int = 0
    task_offset_interval_ms: int = 0
    acceptable_recovery_lag: int = -1
    status: list[tuple[int, str]] = field(default_factory=list)
    #: the member's tasks, when it is told them
    active: Tasks | None = None
    standby: Tasks | None = None
    warmup: Tasks | None = None
    endpoint_information_epoch: int = 0
    partitions_by_user_endpoint: list[EndpointPartitions] | None = None
    #: internal topics the topology needs and the cluster lacks: the broker creates them
    to_create: dict[str, TopicInfo] = field(default_factory=dict)


def _invalid(message: str) -> ApiException:
    return ApiException(errors.INVALID_REQUEST, message)


def _blank(value: str | None) -> bool:
    return value is not None and not value.strip()


class StreamsProtocol(ModernProtocol):
    records = records
    settings_prefix = "group_streams_"
    member_timers = MEMBER_TIMERS

    def __init__(self, coordinator):
        super().__init__(coordinator)
        #: group id -> {internal topic: why the broker could not create it}, kept until it is
        #: created (Kafka's broker caches such errors to tell the members)
        self.creation_failures: dict[str, dict[str, str]] = {}

    # -- configs ----------------------------------------------------------------------------------

    def group_config(self, group_id: str, name: str):
        """Group config ``name`` (``streams.session.timeout.ms``) of the group now."""
        cluster = self.coordinator.cluster
        return group_value(cluster.broker_configs, group_id, name, cluster.controller_id)

    def assignment_configs(self, group_id: str) -> dict[str, str]:
        """What the target is computed by: a change asks for a new one (Kafka's
        ``LastAssignmentConfigs``)."""
        configs = {"num.standby.replicas":
                   str(self.group_config(group_id, "streams.num.standby.replicas"))}
        tags = self.group_config(group_id, "streams.rack.aware.assignment.tags")
        if tags:
            configs["rack.aware.assignment.tags"] = ",".join(tags)
        return configs

    def session_timeout_ms(self, group: StreamsGroup, member: StreamsMember) -> int:
        return self.group_config(group.group_id, "streams.session.timeout.ms")

    # -- validation ----------------------------------------------------------------------------

    @staticmethod
    def validate(req: Heartbeat) -> None:
        """Kafka's checks of a heartbeat before it looks at the group, in its order."""
        topology = req.topology
        if topology is not None and any(s.source_topic_regex
                                        for s in topology.subtopologies or ()):
            raise _invalid("Regular expressions for source topics are not supported yet.")
        if not req.member_id.strip():
            raise _invalid("MemberId can't be empty.")
        if not req.group_id.strip():
            raise _invalid("GroupId can't be empty.")
        if _blank(req.instance_id):
            raise _invalid("InstanceId can't be empty.")
        if _blank(req.rack_id):
            raise _invalid("RackId can't be empty.")
        if req.member_epoch == 0:
            if req.rebalance_timeout_ms == -1:
                raise _invalid("RebalanceTimeoutMs must be provided in first request.")
            for name, tasks in (("ActiveTasks", req.active), ("StandbyTasks", req.standby),
                                ("WarmupTasks", req.warmup)):
                if tasks is None or any(tasks.values()):
                    raise _invalid(f"{name} must be empty when (re-)joining.")
            if topology is None:
                raise _invalid("Topology must be non-null when (re-)joining.")
            for s in topology.subtopologies or ():
                for changelog in s.state_changelog_topics or ():
                    if changelog.partitions != 0:
                        raise invalid_topology(
                            f"Changelog topic {changelog.name} must have an undefined "
                            f"partition count, but it is set to {changelog.partitions}.")
        elif req.member_epoch == STATIC_LEAVE:
            if req.instance_id is None:
                raise _invalid("InstanceId can't be null.")
        elif req.member_epoch < STATIC_LEAVE:
            raise _invalid(f"MemberEpoch is {req.member_epoch}, but must be greater than or "
                           f"equal to -2.")
        sent = [t is not None for t in (req.active, req.standby, req.warmup)]
        if any(sent) and not all(sent):
            raise _invalid("If one task-type is non-null, all must be non-null.")
        if req.member_epoch != 0 and topology is not None:
            raise _invalid("Topology can only be provided when (re-)joining.")

    # -- the heartbeat ---------------------------------------------------------------------------

    def heartbeat(self, broker_id: int, req: Heartbeat) -> HeartbeatResult:
        """One StreamsGroupHeartbeat on ``broker_id``; ApiException for a refusal."""
        self.validate(req)
        shard = self.coordinator.shard_for(req.group_id, broker_id)
        if req.member_epoch in (LEAVE, STATIC_LEAVE):
            return self._leave(shard, req)
        joining = req.member_epoch == 0
        writes: list = []
        group = self._group(shard, req.group_id, create=joining)
        stored = shard.groups.get(req.group_id) is group
        if joining:
            self._check_size(group, req)
        was_empty = not group.members
        replaced: str | None = None
        if req.instance_id is None:
            member = self._dynamic_member(group, req, joining)
        else:
            holder = group.static_member(req.instance_id)
            if holder is not None and holder.member_id != req.member_id:
                replaced = holder.member_id
            member = self._static_member(group, req, joining, writes)
        updated = member.copy()
        if req.instance_id is not None:
            updated.instance_id = req.instance_id
        if req.rack_id is not None:
            updated.rack_id = req.rack_id
        if req.rebalance_timeout_ms != -1:
            updated.rebalance_timeout_ms = req.rebalance_timeout_ms
        if req.topology is not None:
            updated.topology_epoch = req.topology.epoch
        updated.client_id, updated.client_host = req.client_id, req.client_host
        if req.process_id is not None:
            updated.process_id = req.process_id
        if req.client_tags is not None:
            updated.client_tags = dict(req.client_tags)
        if joining or req.user_endpoint is not None:
            updated.user_endpoint = req.user_endpoint
        recompute = False
        new_member = updated.member_id not in group.members
        if new_member or updated.metadata() != member.metadata():
            writes.append(records.member(group.group_id, updated))
            recompute = req.instance_id is None or new_member or (
                updated.topology_epoch, updated.rack_id, updated.client_tags,
                updated.process_id) != (member.topology_epoch, member.rack_id,
                                        member.client_tags, member.process_id)
        topology = self._topology(group, req, writes)
        status: list[tuple[int, str]] = []
        if group.topology is not None and updated.topology_epoch < group.topology.epoch:
            status.append((STALE_TOPOLOGY, (
                f"The member's topology epoch {updated.topology_epoch} is behind the group's "
                f"topology epoch {group.topology.epoch}.")))
        metadata_hash = self.metadata_hash_of(topology)
        configured = group.configured
        if configured is None or metadata_hash != group.metadata_hash or \
                configured.epoch != topology.epoch:
            if metadata_hash != group.metadata_hash:
                recompute = True
            configured = group.configured = configure(
                topology, metadata_hash, self._partitions_of, _hash_order)
        validated = -1
        if configured.ready:
            validated = topology.epoch
            for tasks in (req.active, req.standby, req.warmup):
                _check_tasks(configured, tasks)
        group.members[updated.member_id] = updated
        if req.task_offsets is not None or req.task_end_offsets is not None:
            for table, given in ((group.task_offsets, req.task_offsets),
                                 (group.task_end_offsets, req.task_end_offsets)):
                if given is not None:
                    table[updated.member_id] = _offsets(given)
        if validated != group.validated_topology_epoch:
            recompute = True
        configs = self.assignment_configs(group.group_id)
        if not recompute and configs != group.last_assignment_configs:
            recompute = True
        if recompute:
            group.group_epoch += 1
            group.metadata_hash = metadata_hash
            group.validated_topology_epoch = validated
            group.last_assignment_configs = configs
            writes.append(records.group_epoch(group))
        if was_empty:
            self._maybe_delay_first_assignment(group)
        target_epoch, target = self._target(group, configured, writes, status)
        updated = self._reconcile(group, updated, target_epoch, target.get(updated.member_id),
                                  req.owned(), writes)
        self._install(shard, group)
        self.write(group, writes)
        self.arm_session(group, updated)
        if req.shutdown_application and group.shutdown_requested_by is None:
            group.shutdown_requested_by = updated.member_id
        result = self._answer(group, req, member, updated, stored, configured, configs, status,
                              replaced)
        if not stored:
            # Kafka answers a new group's first join from a group object it then drops: the
            # group its records create has none of what no record holds
            group.endpoint_information_epoch = 0
            group.task_offsets, group.task_end_offsets = {}, {}
            group.shutdown_requested_by = None
        return result

    def _answer(self, group: StreamsGroup, req: Heartbeat, before: StreamsMember,
                updated: StreamsMember, stored: bool, configured: ConfiguredTopology,
                configs: dict[str, str], status: list, replaced: str | None
                ) -> HeartbeatResult:
        joining = req.member_epoch == 0
        result = HeartbeatResult(
            updated.member_id, updated.member_epoch,
            heartbeat_interval_ms=self.group_config(group.group_id,
                                                    "streams.heartbeat.interval.ms"),
            task_offset_interval_ms=TASK_OFFSET_INTERVAL_MS,
            acceptable_recovery_lag=ACCEPTABLE_RECOVERY_LAG)
        changed = before.tasks.keys() != updated.tasks.keys()
        if joining or changed:
            result.active, result.standby, result.warmup = updated.tasks.keys()
        endpoint_changed = before.user_endpoint != updated.user_endpoint
        if endpoint_changed or (changed and updated.user_endpoint is not None):
            group.endpoint_information_epoch += 1
        if group.endpoint_information_epoch != req.endpoint_information_epoch:
            result.partitions_by_user_endpoint = self._endpoints(group, configured)
        if stored:
            result.endpoint_information_epoch = group.endpoint_information_epoch
        if configured.problem is not None:
            result.to_create = dict(configured.to_create)
            status.append((configured.problem.status, configured.problem.message))
        if group.shutdown_requested_by is not None:
            status.append((SHUTDOWN_APPLICATION, (
                f"Streams group member {group.shutdown_requested_by} encountered a fatal error "
                f"and requested a shutdown for the entire application.")))
        tags = configs.get("rack.aware.assignment.tags", "").strip()
        if req.version >= 1 and tags:
            missing = [t for t in (x.strip() for x in tags.split(","))
                       if t not in updated.client_tags]
            if missing:
                status.append((MISSING_CLIENT_TAGS, (
                    f"Missing required client tags for rack-aware standby assignment: "
                    f"[{', '.join(missing)}]. Configure them via 'client.tag.<tagKey>' in your "
                    f"Streams config.")))
        result.status = status
        return result

    # -- groups and members ----------------------------------------------------------------------

    def _group(self, shard, group_id: str, *, create: bool) -> StreamsGroup:
        """The streams group, or a new one (not in its shard until its first write: a refused
        join leaves nothing behind)."""
        group = shard.groups.get(group_id)
        if group is not None and group.is_dead:
            group = None
        if group is None or (create and group.type == "classic" and group.is_empty):
            if not create:
                raise ApiException(errors.GROUP_ID_NOT_FOUND,
                                   f"Streams group {group_id} not found.")
            return StreamsGroup(group_id, self.now)  # an empty classic group makes way
        if group.type != STREAMS:
            raise ApiException(errors.GROUP_ID_NOT_FOUND,
                               f"Group {group_id} is not a streams group.")
        return group

    def _install(self, shard, group: StreamsGroup) -> None:
        """A new group takes its place in its shard (an empty classic group's, whose offsets
        it keeps)."""
        old = shard.groups.get(group.group_id)
        if old is group:
            return
        if old is not None and not old.is_dead:
            self.coordinator.replace_group(shard, old, group)
        else:
            shard.groups[group.group_id] = group

    def _check_size(self, group: StreamsGroup, req: Heartbeat) -> None:
        if group.static_member(req.instance_id) is not None:
            return
        limit = self.setting("max_size")
        if len(group.members) >= limit and req.member_id not in group.members:
            raise ApiException(errors.GROUP_MAX_SIZE_REACHED, (
                f"The streams group has reached its maximum capacity of {limit} members."))

    def _dynamic_member(self, group: StreamsGroup, req: Heartbeat,
                        joining: bool) -> StreamsMember:
        member = group.members.get(req.member_id)
        if member is None:
            if not joining:
                raise ApiException(errors.UNKNOWN_MEMBER_ID, (
                    f"Member {req.member_id} is not a member of group {group.group_id}."))
            member = StreamsMember(req.member_id)
        _check_epoch(member, req)
        return member

    def _static_member(self, group: StreamsGroup, req: Heartbeat, joining: bool,
                       writes: list) -> StreamsMember:
        holder = group.static_member(req.instance_id)
        if joining:
            if holder is None:
                return group.members.get(req.member_id) or StreamsMember(req.member_id)
            if holder.member_id == req.member_id:
                return holder
            if holder.member_epoch != STATIC_LEAVE:
                raise ApiException(errors.UNRELEASED_INSTANCE_ID, (
                    f"Static member {req.member_id} with instance id {req.instance_id} cannot "
                    f"join the group because the instance id is owned by {holder.member_id} "
                    f"member."))
            return self._replace(group, holder, req.member_id, writes)
        holder = self.known_member(group, req.member_id, req.instance_id)
        _check_epoch(holder, req)
        return holder

    def _replace(self, group: StreamsGroup, old: StreamsMember, member_id: str,
                 writes: list) -> StreamsMember:
        """A static member back under a new member id takes its predecessor's place and
        tasks, without a rebalance."""
        writes.extend(records.member_tombstones(group.group_id, old.member_id))
        del group.members[old.member_id]
        self.cancel_timers(group, old.member_id)
        target = group.target.pop(old.member_id, TaskRoles())
        group.target[member_id] = target
        for table in (group.task_offsets, group.task_end_offsets):
            table.pop(old.member_id, None)
        replacement = old.copy(member_id=member_id, member_epoch=0, previous_member_epoch=0)
        group.members[member_id] = replacement
        writes.append(records.member(group.group_id, replacement))
        writes.append(records.target_member(group.group_id, member_id, target))
        writes.append(records.current_assignment(group.group_id, replacement))
        return replacement

    def _topology(self, group: StreamsGroup, req: Heartbeat, writes: list) -> Topology:
        """The group's topology after this heartbeat: the first member's initialises it."""
        if req.topology is None:
            return group.topology
        given = from_wire(req.topology)
        if group.topology is None:
            group.topology = given
            writes.append(records.topology(group.group_id, given))
            return given
        if group.topology.epoch > given.epoch:
            return group.topology
        if group.topology != given:
            raise _invalid("Topology updates are not supported yet.")
        return group.topology

    # -- the topology against the topics ---------------------------------------------------------

    def _partitions_of(self, name: str) -> int | None:
        topic = self.coordinator.cluster.topics.get(name)
        return None if topic is None else len(topic.partitions)

    def metadata_hash_of(self, topology: Topology | None) -> int:
        """What the topology's topics look like now: a change reconfigures the topology and
        asks for a new target."""
        if topology is None:
            return 0
        topics = self.coordinator.cluster.topics
        seen = tuple(sorted((n, topics[n].topic_id.int, len(topics[n].partitions))
                            for n in topology.required_topics() if n in topics))
        return hash(seen) & ((1 << 63) - 1) if seen else 0

    def metadata_hash(self, group: StreamsGroup) -> int:
        return self.metadata_hash_of(group.topology)

    # -- the target assignment -------------------------------------------------------------------

    def _maybe_delay_first_assignment(self, group: StreamsGroup) -> None:
        """A group that had no member waits for more before its first assignment."""
        delay = self.group_config(group.group_id, "streams.initial.rebalance.delay.ms")
        key = TimerKey(TimerKind.JOIN, group.group_id)
        if delay <= 0 or key in self.timers:
            return

        def assign_now() -> None:
            if not self.coordinator.is_live(group) or not group.members or \
                    group.configured is None or group.group_epoch <= group.assignment_epoch:
                return
            writes: list = []
            self._compute_target(group, group.configured, writes)
            self.write(group, writes)

        self.timers.schedule(key, delay, assign_now)

    def _target(self, group: StreamsGroup, configured: ConfiguredTopology, writes: list,
                status: list) -> tuple[int, dict[str, TaskRoles]]:
        """The target epoch and assignment this heartbeat reconciles towards."""
        if TimerKey(TimerKind.JOIN, group.group_id) in self.timers:
            status.append((ASSIGNMENT_DELAYED,
                           "Assignment delayed due to the configured initial rebalance delay."))
            return group.assignment_epoch, {}
        if group.assignment_epoch >= group.group_epoch:
            return group.assignment_epoch, group.target
        interval = self.group_config(group.group_id, "streams.assignment.interval.ms")
        if group.assignment_timestamp and interval and \
                self.now < group.assignment_timestamp + interval:
            status.append((ASSIGNMENT_DELAYED,
                           "Assignment delayed due to the configured assignment interval."))
            return group.assignment_epoch, group.target
        self._compute_target(group, configured, writes)
        return group.assignment_epoch, group.target

    def _compute_target(self, group: StreamsGroup, configured: ConfiguredTopology,
                        writes: list) -> None:
        target = self.compute_target(group, configured)
        for member_id, roles in target.items():
            if member_id not in group.target or roles.keys() != group.target[member_id].keys():
                writes.append(records.target_member(group.group_id, member_id, roles))
        group.target = target
        group.assignment_epoch = group.group_epoch
        group.assignment_timestamp = self.now
        writes.append(records.target_epoch(group))

    def compute_target(self, group: StreamsGroup, configured: ConfiguredTopology | None = None
                       ) -> dict[str, TaskRoles]:
        """The sticky assignor over the group's members and its configured topology (every
        member's target is empty while the topology is not ready)."""
        from mockbroker.core.groups.streams.assignor import MemberSpec, SubtopologySpec, \
            TaskAssignorError, assign

        configured = configured or group.configured
        if configured is None or not configured.ready:
            return {m: TaskRoles() for m in group.members}
        subtopologies = {s: SubtopologySpec(c.number_of_tasks, bool(c.state_changelog_topics))
                         for s, c in configured.subtopologies.items()}
        specs = []
        for m in group.members.values():
            active, standby, warmup = m.tasks.keys()  # what it holds now, as Kafka hands it
            offsets = group.task_offsets.get(m.member_id, {})
            specs.append(MemberSpec(
                m.member_id, m.process_id, instance_id=m.instance_id, rack_id=m.rack_id,
                client_tags=dict(m.client_tags),
                active={s: frozenset(ps) for s, ps in active.items()},
                standby={s: frozenset(ps) for s, ps in standby.items()},
                warmup={s: frozenset(ps) for s, ps in warmup.items()},
                task_offsets=dict(offsets)))
        standbys = int(group.last_assignment_configs.get(
            "num.standby.replicas",
            self.group_config(group.group_id, "streams.num.standby.replicas")))
        try:
            assigned = assign(specs, subtopologies, standbys)
        except TaskAssignorError as exc:
            raise ApiException(errors.UNKNOWN_SERVER_ERROR, (
                f"Failed to compute a new target assignment for epoch {group.group_epoch}: "
                f"{exc}")) from None
        return {member_id: TaskRoles(
            {s: dict.fromkeys(ps, 0) for s, ps in a.active.items() if ps},
            {s: set(ps) for s, ps in a.standby.items() if ps},
            {s: set(ps) for s, ps in a.warmup.items() if ps})
            for member_id, a in assigned.items()}

    # -- reconciliation --------------------------------------------------------------------------

    def _reconcile(self, group: StreamsGroup, member: StreamsMember, target_epoch: int,
                   target: TaskRoles | None, owned: TaskRoles | None,
                   writes: list) -> StreamsMember:
        new_member = member.member_id not in group.members
        updated = member
        if not member.is_reconciled_to(target_epoch):
            updated = reconcile(group, member, target_epoch, target or TaskRoles(), owned)
        group.members[updated.member_id] = updated
        if updated.assignment() != member.assignment() or new_member:
            writes.append(records.current_assignment(group.group_id, updated))
            self._arm_revocation(group, updated)
        return updated

    def _arm_revocation(self, group: StreamsGroup, member: StreamsMember) -> None:
        key = TimerKey(TimerKind.REVOCATION, group.group_id, member.member_id)
        if member.state != UNREVOKED_TASKS:
            self.timers.cancel(key)
            return
        epoch = member.member_epoch

        def fence() -> None:
            current = group.members.get(member.member_id)
            if self.coordinator.is_live(group) and current is not None and \
                    current.member_epoch == epoch:
                self.fence(group, {member.member_id})

        self.timers.schedule(key, max(member.rebalance_timeout_ms, 0), fence)

    def holding_revocation(self, request):
        """A StreamsGroupHeartbeat request as a member slow to revoke would send it: the
        tasks it is revoking are still reported as owned (fault injection)."""
        group = self.coordinator.find_group(request.group_id)
        member = group.members.get(request.member_id) \
            if isinstance(group, StreamsGroup) else None
        if member is None or member.pending.is_empty() or request.active_tasks is None:
            return request  # nothing to hold, or it reports nothing (it still owns them)
        held = copy.copy(request)
        cls = type(request).TaskIds
        for field_name, pending in (("active_tasks", member.pending.active),
                                    ("standby_tasks", member.pending.standby),
                                    ("warmup_tasks", member.pending.warmup)):
            owned: dict[str, set[int]] = {}
            for entry in getattr(request, field_name) or ():
                owned.setdefault(entry.subtopology_id, set()).update(entry.partitions)
            for s, ps in pending.items():
                owned.setdefault(s, set()).update(ps)
            setattr(held, field_name, [cls(subtopology_id=s, partitions=sorted(ps))
                                       for s, ps in sorted(owned.items())])
        return held

    # -- leaving ---------------------------------------------------------------------------------

    def _leave(self, shard, req: Heartbeat) -> HeartbeatResult:
        group = shard.groups.get(req.group_id)
        if group is None or group.is_dead:
            raise ApiException(errors.GROUP_ID_NOT_FOUND, f"Group {req.group_id} not found.")
        if group.type != STREAMS:
            raise ApiException(errors.GROUP_ID_NOT_FOUND,
                               f"Group {req.group_id} is not a streams group.")
        if req.shutdown_application and group.shutdown_requested_by is None:
            group.shutdown_requested_by = req.member_id
        member = self.known_member(group, req.member_id, req.instance_id)
        if req.instance_id is not None and req.member_epoch == STATIC_LEAVE:
            # it will be back: it keeps its slot and tasks until its session expires
            kept = member.copy(member_epoch=STATIC_LEAVE, pending=TaskRoles(), assigned={
                s: dict.fromkeys(ps, 0) for s, ps in member.assigned.items()})
            group.members[member.member_id] = kept
            self.write(group, [records.current_assignment(group.group_id, kept)])
            return HeartbeatResult(member.member_id, STATIC_LEAVE)
        self.fence(group, {member.member_id})
        return HeartbeatResult(req.member_id, req.member_epoch)

    def fence(self, group: StreamsGroup, member_ids) -> None:
        """Members leave or are fenced: tombstones, and the group a new epoch (an empty group
        a target at that epoch, and no shutdown request any more)."""
        member_ids = {m for m in member_ids if m in group.members}
        if not member_ids:
            return
        writes: list = []
        for member_id in member_ids:
            group.members.pop(member_id)
            group.target.pop(member_id, None)
            group.task_offsets.pop(member_id, None)
            group.task_end_offsets.pop(member_id, None)
            self.cancel_timers(group, member_id)
            writes += records.member_tombstones(group.group_id, member_id)
        group.group_epoch += 1
        writes.append(records.group_epoch(group))
        if not group.members:
            group.assignment_epoch = group.group_epoch
            group.assignment_timestamp = 0
            group.shutdown_requested_by = None
            self.timers.cancel(TimerKey(TimerKind.JOIN, group.group_id))
            writes.append(records.target_epoch(group, 0))
        self.write(group, writes)

    def loaded(self, group: StreamsGroup) -> None:
        """A new coordinator gives every member a fresh session, and a member that was
        revoking its rebalance timeout."""
        for member in group.members.values():
            self.arm_session(group, member)
            self._arm_revocation(group, member)

    # -- the endpoints of interactive queries ----------------------------------------------------

    def _endpoints(self, group: StreamsGroup, configured: ConfiguredTopology
                   ) -> list[EndpointPartitions]:
        """Each member with a user endpoint and the partitions its tasks read."""
        out = []
        subtopologies = configured.subtopologies or {}
        topics = self.coordinator.cluster.topics

        def partitions(tasks: Tasks) -> list[tuple[str, list[int]]]:
            found = []
            for s, ps in tasks.items():
                sub = subtopologies.get(s)
                if sub is None:
                    continue
                for topic in _hash_order(list(sub.sources())):  # a HashSet's order
                    count = len(topics[topic].partitions) if topic in topics else 0
                    mine = sorted(p for p in ps if p < count)
                    if mine:
                        found.append((topic, mine))
            return found

        for m in group.members.values():
            if m.user_endpoint is None:
                continue
            active, standby, warmup = m.tasks.keys()
            replicas = {s: standby.get(s, set()) | warmup.get(s, set())
                        for s in set(standby) | set(warmup)}
            out.append(EndpointPartitions(m.user_endpoint[0], m.user_endpoint[1],
                                          partitions(active), partitions(replicas)))
        return out

    # -- offsets ---------------------------------------------------------------------------------

    def validate_offset_commit(self, shard, group_id: str, group: StreamsGroup, member_id: str,
                               instance_id: str | None, member_epoch: int, api_version: int,
                               *, transactional: bool = False, topics=None) -> StreamsGroup:
        """An OffsetCommit (or TxnOffsetCommit) to a streams group, checked as Kafka's
        ``StreamsGroup.validateOffsetCommit`` does (an older epoch only for tasks the member
        got at or before it)."""
        if group.is_dead:
            raise ApiException(errors.COORDINATOR_NOT_AVAILABLE)
        if member_epoch < 0 and not group.members:
            return group
        if transactional and member_epoch < 0 and not member_id and instance_id is None:
            return group
        member = group.members.get(member_id)
        if member is None:
            raise ApiException(errors.UNKNOWN_MEMBER_ID, (
                f"Member {member_id} is not a member of group {group.group_id}."))
        if not transactional and api_version < 9:
            raise ApiException(errors.UNSUPPORTED_VERSION, (
                "OffsetCommit version 9 or above must be used by members using the streams "
                "group protocol"))
        if member_epoch > member.member_epoch:
            raise ApiException(errors.STALE_MEMBER_EPOCH, (
                f"Received member epoch {member_epoch} is newer than current member epoch "
                f"{member.member_epoch}."))
        self.arm_session(group, member)
        return group

    def validate_offset_partition(self, group: StreamsGroup, member_id: str, member_epoch: int,
                                  topic: str, partition: int) -> None:
        """An older epoch's commit of one partition: the task must be the member's (assigned
        or being revoked) since that epoch or before."""
        member = group.members.get(member_id)
        if member is None or member_epoch >= member.member_epoch:
            return
        subtopology = None
        for s in (group.topology.subtopologies if group.topology else ()):
            if topic in s.sources():
                subtopology = s.subtopology_id
                break
        if subtopology is None:
            raise ApiException(errors.STALE_MEMBER_EPOCH, f"Topic {topic} is not in the topology.")
        epoch = member.assigned.get(subtopology, {}).get(partition)
        if epoch is None:
            epoch = member.pending.active.get(subtopology, {}).get(partition)
        if epoch is None:
            raise ApiException(errors.STALE_MEMBER_EPOCH, (
                f"Task {subtopology}-{partition} is not assigned or pending revocation for "
                f"member."))
        if member_epoch < epoch:
            raise ApiException(errors.STALE_MEMBER_EPOCH, (
                f"Received member epoch {member_epoch} is older than assignment epoch {epoch} "
                f"for task {subtopology}-{partition}."))

    # -- describing ----------------------------------------------------------------------------

    def described_topology(self, group: StreamsGroup) -> Topology | None:
        """The topology as StreamsGroupDescribe shows it: configured (partition counts filled
        in) when it is ready, else as the members sent it."""
        if group.topology is None:
            return None
        configured = group.configured
        if configured is None or configured.subtopologies is None or not configured.ready:
            return group.topology
        from mockbroker.core.groups.streams.topology import Subtopology

        subs = []
        for s in group.topology.subtopologies:
            c = configured.subtopologies.get(s.subtopology_id)
            if c is None:
                subs.append(s)
                continue
            subs.append(Subtopology(
                s.subtopology_id, s.source_topics, s.source_topic_regex,
                tuple(c.state_changelog_topics.get(t.name, t) for t in s.state_changelog_topics),
                s.repartition_sink_topics,
                tuple(c.repartition_source_topics.get(t.name, t)
                      for t in s.repartition_source_topics), s.copartition_groups))
        return Topology(group.topology.epoch, tuple(subs))

    def offsets_topics(self, group: StreamsGroup) -> set[str]:
        return group.subscribed_topics()


def _check_epoch(member: StreamsMember, req: Heartbeat) -> None:
    epoch = req.member_epoch
    if epoch == 0:
        return
    if epoch > member.member_epoch:
        raise ApiException(errors.FENCED_MEMBER_EPOCH, (
            f"The streams group member has a greater member epoch ({epoch}) than the one known "
            f"by the group coordinator ({member.member_epoch}). The member must abandon all its "
            f"partitions and rejoin."))
    if epoch < member.member_epoch:
        owned = req.owned()
        if epoch != member.previous_member_epoch or owned is None or not (
                _within(owned.active, member.assigned) and
                _within(owned.standby, member.standby) and
                _within(owned.warmup, member.warmup)):
            raise ApiException(errors.FENCED_MEMBER_EPOCH, (
                f"The streams group member has a smaller member epoch ({epoch}) than the one "
                f"known by the group coordinator ({member.member_epoch}). The member must "
                f"abandon all its partitions and rejoin."))


def _within(owned: dict, assigned: dict) -> bool:
    return all(set(ps) <= set(assigned.get(s, ())) for s, ps in owned.items() if ps)


def _check_tasks(configured: ConfiguredTopology, tasks: Tasks | None) -> None:
    """Tasks a member says it owns must exist in the configured topology."""
    for s, ps in (tasks or {}).items():
        sub = configured.subtopologies.get(s)
        if sub is None:
            raise _invalid(f"Subtopology {s} does not exist in the topology.")
        for p in sorted(ps):
            if p < 0 or p >= sub.number_of_tasks:
                raise _invalid(f"Task {p} for subtopology {s} is invalid. Number of tasks for "
                               f"this subtopology: {sub.number_of_tasks}")


def _offsets(given: list[tuple[str, int, int]]) -> dict[tuple[str, int], int]:
    out: dict[tuple[str, int], int] = {}
    for s, p, offset in given:
        if (s, p) in out:
            raise _invalid(f"Task offsets contain a duplicate entry for subtopology {s} and "
                           f"partition {p}.")
        out[(s, p)] = offset
    return out


def _hash_order(names: list[str]) -> list[str]:
    """The order a Java HashMap of these topic names lists them in."""
    return string_order(names)


__all__ = ["Heartbeat", "HeartbeatResult", "StreamsProtocol", "EndpointPartitions", "STABLE"]
