"""A KIP-1071 streams group (Kafka's ``StreamsGroup``) and its members (``StreamsGroupMember``).

A streams group is a new-style group
(:class:`~mockbroker.core.groups.modern.group.ModernGroup`) whose units are tasks: a task is a
subtopology and a partition number, and a member holds tasks in three roles, active, standby
and warm-up.  Beside its members the group keeps the topology the first member brought, that
topology as configured against the topics there are, and what it last assigned by (the number
of standby replicas).

Its state is derived, never stored, as Kafka derives it: Empty without members, NotReady while
its topology is not configured, Assigning while the group epoch is ahead of the target's,
Reconciling while a member has not reached the target, else Stable.
"""

from __future__ import annotations

from enum import Enum

from msgspec import Struct, field

from mockbroker.core.groups.modern.group import ModernGroup
from mockbroker.core.groups.modern.member import ModernMember
from mockbroker.core.groups.streams.topology import ConfiguredTopology, Topology

#: a member's state byte in its records (Kafka's streams ``MemberState``)
STABLE, UNREVOKED_TASKS, UNRELEASED_TASKS, UNKNOWN = 1, 2, 3, 127
STATE_NAMES = {STABLE: "stable", UNREVOKED_TASKS: "unrevoked_tasks",
               UNRELEASED_TASKS: "unreleased_tasks", UNKNOWN: "unknown"}

#: subtopology id -> task numbers
Tasks = dict[str, set[int]]
#: subtopology id -> {task number: the epoch the member got the active task at}
ActiveTasks = dict[str, dict[int, int]]


class StreamsGroupState(str, Enum):
    EMPTY = "Empty"
    NOT_READY = "NotReady"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


class TaskRoles(Struct):
    """Tasks in their three roles (Kafka's ``TasksTuple``); ``active`` with the epoch each
    task was assigned at where a member holds them."""

    active: ActiveTasks = field(default_factory=dict)
    standby: Tasks = field(default_factory=dict)
    warmup: Tasks = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not any(self.active.values()) and not any(self.standby.values()) and \
            not any(self.warmup.values())

    def keys(self) -> tuple[Tasks, Tasks, Tasks]:
        """The three roles' tasks, without epochs."""
        return ({s: set(ps) for s, ps in self.active.items() if ps},
                {s: set(ps) for s, ps in self.standby.items() if ps},
                {s: set(ps) for s, ps in self.warmup.items() if ps})

    def copy(self) -> "TaskRoles":
        return TaskRoles({s: dict(ps) for s, ps in self.active.items()},
                         {s: set(ps) for s, ps in self.standby.items()},
                         {s: set(ps) for s, ps in self.warmup.items()})


def target_roles(active: Tasks, standby: Tasks, warmup: Tasks) -> TaskRoles:
    """A target assignment's tasks (no epochs: 0 stands in)."""
    return TaskRoles({s: dict.fromkeys(ps, 0) for s, ps in active.items() if ps},
                     {s: set(ps) for s, ps in standby.items() if ps},
                     {s: set(ps) for s, ps in warmup.items() if ps})


class StreamsMember(ModernMember):
    """A member: its process, client, endpoint and tags, its epochs and state, and its tasks
    (``assigned``: the active ones with their epochs, as every new-style member keeps its
    units; ``standby`` and ``warmup``; and what it has yet to revoke)."""

    instance_id: str | None = None
    rebalance_timeout_ms: int = -1
    topology_epoch: int = -1
    process_id: str = ""
    user_endpoint: tuple[str, int] | None = None
    client_tags: dict[str, str] = field(default_factory=dict)
    state: int = STABLE
    standby: Tasks = field(default_factory=dict)
    warmup: Tasks = field(default_factory=dict)
    pending: TaskRoles = field(default_factory=TaskRoles)

    @property
    def tasks(self) -> TaskRoles:
        return TaskRoles(self.assigned, self.standby, self.warmup)

    def is_reconciled_to(self, epoch: int) -> bool:
        return self.state == STABLE and self.member_epoch == epoch

    def metadata(self) -> tuple:
        """What its MemberMetadata record holds: a change is written."""
        return (self.instance_id, self.rack_id, self.client_id, self.client_host,
                self.rebalance_timeout_ms, self.topology_epoch, self.process_id,
                self.user_endpoint, tuple(sorted(self.client_tags.items())))

    def assignment(self) -> tuple:
        """What its CurrentMemberAssignment record holds."""
        return (self.member_epoch, self.previous_member_epoch, self.state,
                _frozen(self.assigned), _frozen(self.standby), _frozen(self.warmup),
                _frozen(self.pending.active), _frozen(self.pending.standby),
                _frozen(self.pending.warmup))

    def copy(self, **changes) -> "StreamsMember":
        fields = {name: getattr(self, name) for name in self.__struct_fields__}
        fields.update(assigned={s: dict(ps) for s, ps in self.assigned.items()},
                      standby={s: set(ps) for s, ps in self.standby.items()},
                      warmup={s: set(ps) for s, ps in self.warmup.items()},
                      pending=self.pending.copy(), client_tags=dict(self.client_tags))
        fields.update(changes)
        return StreamsMember(**fields)


def _frozen(tasks) -> tuple:
    return tuple(sorted((s, tuple(sorted(ps.items() if isinstance(ps, dict) else ps)))
                        for s, ps in tasks.items() if ps))


class StreamsGroup(ModernGroup[StreamsMember]):
    type = "streams"
    protocol_type = "streams"

    def __init__(self, group_id: str, now_ms: int):
        super().__init__(group_id, now_ms)
        self.assignment_epoch = 1  # Kafka's initial target assignment of a streams group
        #: member id -> its target (active, standby, warm-up; epochs 0)
        self.target: dict[str, TaskRoles] = {}  # type: ignore[assignment]
        self.topology: Topology | None = None
        self.configured: ConfiguredTopology | None = None
        self.validated_topology_epoch = -1
        #: the assignment configs the target was last computed with
        self.last_assignment_configs: dict[str, str] = {}
        self.shutdown_requested_by: str | None = None
        self.endpoint_information_epoch = 0
        #: member id -> {(subtopology, partition): offset}, as the members last reported
        self.task_offsets: dict[str, dict[tuple[str, int], int]] = {}
        self.task_end_offsets: dict[str, dict[tuple[str, int], int]] = {}

    @property
    def state(self) -> StreamsGroupState:
        if self.dead:
            return StreamsGroupState.DEAD
        if not self.members:
            return StreamsGroupState.EMPTY
        if self.topology is None or self.topology.epoch != self.validated_topology_epoch:
            return StreamsGroupState.NOT_READY
        if self.group_epoch > self.assignment_epoch:
            return StreamsGroupState.ASSIGNING
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return StreamsGroupState.RECONCILING
        return StreamsGroupState.STABLE

    def static_member(self, instance_id: str | None) -> StreamsMember | None:
        if instance_id is None:
            return None
        return next((m for m in self.members.values() if m.instance_id == instance_id), None)

    # -- what the shared parts ask ----------------------------------------------------------------

    def subscribed_topics(self) -> set[str]:
        return self.topology.source_topics() if self.topology is not None else set()

    # -- who holds a task now (assigned or still revoking) ---------------------------------------

    def active_owner(self, subtopology: str, partition: int, *, skip: str = "") -> str | None:
        """The process that holds the active task (assigned or revoking), or None."""
        for m in self.members.values():
            if m.member_id == skip:
                continue
            if partition in m.assigned.get(subtopology, ()) or \
                    partition in m.pending.active.get(subtopology, ()):
                return m.process_id
        return None

    def replica_processes(self, role: str, subtopology: str, partition: int, *,
                          skip: str = "") -> set[str]:
        """The processes holding the task as ``role`` ("standby" or "warmup")."""
        out = set()
        for m in self.members.values():
            if m.member_id == skip:
                continue
            if partition in getattr(m, role).get(subtopology, ()) or \
                    partition in getattr(m.pending, role).get(subtopology, ()):
                out.add(m.process_id)
        return out
