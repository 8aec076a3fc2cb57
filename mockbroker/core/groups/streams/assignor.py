"""The ``sticky`` task assignor of a KIP-1071 streams group, as Kafka 4.4 computes it
(``StickyTaskAssignor``, the only assignor a 4.4 broker registers).

A streams group is assigned *tasks*, not partitions: subtopology ``s`` with ``n`` tasks has the
tasks ``(s, 0) .. (s, n - 1)``.  Every task gets one *active* owner; a task of a stateful
subtopology (one with changelog topics) also gets up to ``num.standby.replicas`` *standby*
owners, each on another process than the active one and than each other.  Warm-up tasks are
never handed out by 4.4 (the target's warm-up sets stay empty).

Members are grouped by their process id (one Kafka Streams instance runs several members, one
per stream thread).  Two quotas bound a member: ``ceil(active tasks / members)`` actives and
``ceil(all tasks incl. standbys / members)`` tasks of any kind.  When a member reaches a quota
exactly, it is taken out of the count and the quota is recomputed over the tasks and members
left, so the remainder spreads instead of piling up on the first members.

Actives are placed in three passes:

1. tasks in (partition, subtopology) order go back to the member that owns them now, while it
   is under its active quota;
2. the others go to a member that held them as standby (or reported an offset for them),
   preferring a previous standby, then the higher reported offset, then the least-loaded
   process and member;
3. the rest, in (subtopology, partition) order, go one by one to the least-loaded process
   (tasks per member) and its least-loaded member.

Standbys then walk the stateful tasks in descending (partition, subtopology) order: the member
that owned the task as active before, then the previous standby holders, as long as they are
under the total quota and their process does not hold the task yet; whatever is left goes to
the least-loaded processes that do not hold the task.  When no such process remains the task
gets fewer standbys than asked (Kafka only logs a warning).

The "previous" tasks Kafka hands the assignor are each member's *current* assignment (the
tasks it is assigned now, without those pending revocation; actives are the keys of its
active-task epoch map), not the previous target, plus the task offsets it last reported.
Rack-aware assignment tags and client tags are not read by 4.4's assignor.

The ties are Kafka's: members are visited in the order of Kafka's ``HashMap`` of member ids,
processes in the order of its ``HashMap`` of process ids (filled with ``computeIfAbsent``, which
orders a bucket differently from ``put``), a process's members in that of its ``HashMap`` of
member ids, and the least-loaded choices come from Java ``PriorityQueue``s
(binary heaps that do not keep insertion order among equals), simulated here exactly, so a
group gets the same assignment from mockbroker as from Kafka.
"""

from __future__ import annotations

from typing import Callable, Generic, TypeVar

import msgspec

from mockbroker.core import javaorder

NAME = "sticky"

Task = tuple[str, int]
T = TypeVar("T")


class TaskAssignorError(Exception):
    """The assignor cannot place a task (Kafka's ``TaskAssignorException``).  The coordinator
    turns it into UNKNOWN_SERVER_ERROR ``Failed to compute a new target assignment for epoch
    N: <message>``."""


class MemberSpec(msgspec.Struct, frozen=True):
    """One member as the assignor sees it.  ``active``, ``standby`` and ``warmup`` are the
    member's *current* assignment (``StreamsGroupMember.assignedTasks``: its actives without
    epochs, its standbys and warm-ups, nothing pending revocation); ``task_offsets`` the offset
    sums it last reported per task.  ``instance_id``, ``rack_id``, ``client_tags`` and
    ``warmup`` are handed to Kafka's assignor too, which does not use them."""

    member_id: str
    process_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_tags: dict[str, str] = msgspec.field(default_factory=dict)
    active: dict[str, frozenset[int]] = msgspec.field(default_factory=dict)
    standby: dict[str, frozenset[int]] = msgspec.field(default_factory=dict)
    warmup: dict[str, frozenset[int]] = msgspec.field(default_factory=dict)
    task_offsets: dict[tuple[str, int], int] = msgspec.field(default_factory=dict)


class SubtopologySpec(msgspec.Struct, frozen=True):
    """A configured subtopology: its number of tasks (the most partitions of its source and
    repartition-source topics) and whether it has state changelog topics (only then does it
    get standby tasks)."""

    num_tasks: int
    stateful: bool


class TaskAssignment(msgspec.Struct):
    """A member's new target: subtopology id -> task numbers (partitions), per role.  Only
    subtopologies with at least one task appear; ``warmup`` is always empty."""

    active: dict[str, set[int]]
    standby: dict[str, set[int]]
    warmup: dict[str, set[int]]


def assign(members: list[MemberSpec], subtopologies: dict[str, SubtopologySpec],
           num_standby_replicas: int) -> dict[str, TaskAssignment]:
    """The next target assignment of every member (an empty one for a member given nothing).

    ``members`` come in the order Kafka puts them into the assignor's member map (the order
    of the group's member map); the result iterates them in the order of that ``HashMap``,
    which is also the order Kafka writes their target-assignment records in.  Raises
    :class:`TaskAssignorError` when there are tasks but no members."""
    return _StickyRun(members, subtopologies, num_standby_replicas).run()


# -- Java's PriorityQueue --------------------------------------------------------------------


class _JavaHeap(Generic[T]):
    """``java.util.PriorityQueue`` with a comparator on ``key``: the same binary heap, sifted
    the same way, so equal keys come out in the same order as in Java."""

    def __init__(self, key: Callable[[T], float]) -> None:
        self._items: list[T] = []
        self._key = key

    def __bool__(self) -> bool:
        return bool(self._items)

    def add(self, item: T) -> None:
        items, key = self._items, self._key
        items.append(item)
        k = len(items) - 1
        while k > 0:
            parent = (k - 1) >> 1
            if key(item) >= key(items[parent]):
                break
            items[k] = items[parent]
            k = parent
        items[k] = item

    def poll(self) -> T | None:
        items, key = self._items, self._key
        if not items:
            return None
        head = items[0]
        last = items.pop()
        n = len(items)
        if n:
            k = 0
            while k < n >> 1:
                child = 2 * k + 1
                if child + 1 < n and key(items[child]) > key(items[child + 1]):
                    child += 1
                if key(last) <= key(items[child]):
                    break
                items[k] = items[child]
                k = child
            items[k] = last
        return head


# -- per-process bookkeeping -----------------------------------------------------------------


class _Slot:
    """A member and its task count, as an entry of a process's member heap."""

    __slots__ = ("member_id", "count")

    def __init__(self, member_id: str, count: int) -> None:
        self.member_id = member_id
        self.count = count


class _Process:
    """The tasks placed on one process so far, by member (Kafka's ``ProcessState``)."""

    def __init__(self, process_id: str) -> None:
        self.process_id = process_id
        self.capacity = 0
        self.task_count = 0
        self.load = 0.0
        self.counts: dict[str, int] = {}          # member id -> tasks, in insertion order
        self.active: dict[str, set[Task]] = {}
        self.standby: dict[str, set[Task]] = {}
        self.tasks: set[Task] = set()
        self._by_load: _JavaHeap[_Slot] | None = None

    def add_member(self, member_id: str) -> None:
        self.counts[member_id] = 0
        self.capacity += 1
        self._compute_load()

    def _compute_load(self) -> None:
        self.load = self.task_count / self.capacity if self.capacity > 0 else -1.0

    def has(self, task: Task) -> bool:
        return task in self.tasks

    def add(self, member_id: str, task: Task, active: bool) -> int:
        """Give ``task`` to ``member_id``; its new task count.  Forgets the member heap, which
        the next least-loaded pick rebuilds."""
        count = self._place(member_id, task, active)
        self._by_load = None
        return count

    def _place(self, member_id: str, task: Task, active: bool) -> int:
        self.task_count += 1
        self.tasks.add(task)
        (self.active if active else self.standby).setdefault(member_id, set()).add(task)
        self.counts[member_id] += 1
        self._compute_load()
        return self.counts[member_id]

    def add_to_least_loaded(self, task: Task, active: bool) -> int:
        """Give ``task`` to the member with the fewest tasks; its new count (-1: no member)."""
        if not self.counts:
            return -1
        if len(self.counts) == 1:
            return self._place(next(iter(self.counts)), task, active)
        if self._by_load is None:
            self._by_load = _JavaHeap(lambda slot: slot.count)
            for member_id in javaorder.string_order(self.counts):
                self._by_load.add(_Slot(member_id, self.counts[member_id]))
        slot = self._by_load.poll()
        assert slot is not None
        slot.count = self._place(slot.member_id, task, active)
        self._by_load.add(slot)
        return slot.count


# -- the assignor ----------------------------------------------------------------------------


def _compute_if_absent_order(keys: list[str], initial: int) -> list[str]:
    """The iteration order of a ``new HashMap<>(initial)`` filled by calling
    ``computeIfAbsent`` once per entry of ``keys`` (repeats included).  Unlike ``put``, it
    puts a new key at the *head* of its bucket, and it grows the table before a call (any
    call) that finds it over three quarters full rather than after an insertion."""
    capacity = javaorder.table_size(initial)
    threshold = capacity
    table: list[list[str]] | None = None
    size = 0

    def bucket(key: str, length: int) -> int:
        h = javaorder.java_string_hashcode(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (length - 1)

    for key in keys:
        if table is None or size > threshold:
            length = threshold if table is None else 2 * len(table)
            grown: list[list[str]] = [[] for _ in range(length)]
            for chain in table or ():
                for old in chain:                # a split keeps the order within a bucket
                    grown[bucket(old, length)].append(old)
            table, threshold = grown, int(length * 0.75)
        chain = table[bucket(key, len(table))]
        if key not in chain:
            chain.insert(0, key)
            size += 1
    return [key for chain in table or () for key in chain]


def _java_string_key(text: str) -> bytes:
    """A sort key that orders strings like Java's ``String.compareTo`` (UTF-16 code units)."""
    return text.encode("utf-16-be", "surrogatepass")


def _per_member(tasks: int, members: int) -> int:
    """``ceil(tasks / members)`` in Java int arithmetic; 0 when no member is left."""
    if members == 0:
        return 0
    quotient = abs(tasks) // abs(members)
    if (tasks < 0) != (members < 0):
        quotient = -quotient
    if tasks - quotient * members > 0:
        quotient += 1
    return quotient


def _task_name(task: Task) -> str:
    return f"{task[0]}_{task[1]}"


class _StickyRun:
    """One run of the assignor over a group."""

    def __init__(self, members: list[MemberSpec], subtopologies: dict[str, SubtopologySpec],
                 num_standby_replicas: int) -> None:
        specs: dict[str, MemberSpec] = {}
        for member in members:
            specs[member.member_id] = member
        self.member_ids = javaorder.string_order(specs)
        self.specs = specs
        self.subtopologies = subtopologies
        self.replicas = num_standby_replicas

        total_active = sum(s.num_tasks for s in subtopologies.values())
        total = total_active + sum(s.num_tasks * num_standby_replicas
                                   for s in subtopologies.values() if s.stateful)
        # The quotas and what is left to share under each (Kafka's LocalState).
        self.active_left = total_active
        self.tasks_left = total
        self.members_under_active_quota = len(self.member_ids)
        self.members_under_task_quota = len(self.member_ids)
        self.active_quota = _per_member(total_active, len(self.member_ids))
        self.task_quota = _per_member(total, len(self.member_ids))

        process_of: dict[str, str] = {}
        by_process: dict[str, _Process] = {}
        self.prev_active: dict[Task, str] = {}
        candidates: dict[Task, list[tuple[int, int, str]]] = {}
        for member_id in self.member_ids:
            spec = specs[member_id]
            process_of[member_id] = spec.process_id
            if spec.process_id not in by_process:
                by_process[spec.process_id] = _Process(spec.process_id)
            by_process[spec.process_id].add_member(member_id)
            for sub, partitions in spec.active.items():
                for partition in partitions:
                    self.prev_active[(sub, partition)] = member_id
            self._collect_candidates(candidates, spec)
        self.process_of = process_of
        # Processes in the order of Kafka's HashMap sized for the number of members, which it
        # fills with one computeIfAbsent per member.
        self.processes = [by_process[p] for p in _compute_if_absent_order(
            [specs[m].process_id for m in self.member_ids], len(self.member_ids))]
        self.by_process = by_process
        # Per task: the members that held it as standby, or at least reported an offset for
        # it, best first (previous standbys first, then by reported offset, descending; a
        # stable sort, so equals stay in member order).
        self.prev_standby: dict[Task, list[str]] = {
            task: [m for _, _, m in sorted(found, key=lambda c: (c[0], -c[1]))]
            for task, found in candidates.items()}

    @staticmethod
    def _collect_candidates(candidates: dict[Task, list[tuple[int, int, str]]],
                            spec: MemberSpec) -> None:
        for sub, partitions in spec.standby.items():
            for partition in partitions:
                offset = spec.task_offsets.get((sub, partition), 0)
                candidates.setdefault((sub, partition), []).append((0, offset, spec.member_id))
        for (sub, partition), offset in spec.task_offsets.items():
            if partition not in spec.standby.get(sub, ()):
                candidates.setdefault((sub, partition), []).append((1, offset, spec.member_id))

    # -- helpers ---------------------------------------------------------------------------

    def _process(self, member_id: str) -> _Process:
        return self.by_process[self.process_of[member_id]]

    def _count(self, member_id: str) -> int:
        return self._process(member_id).counts[member_id]

    def _reached(self, count: int, active: bool) -> None:
        """A member now holds ``count`` tasks: when that is a quota exactly, take the member
        out of that quota's count and spread what is left over the others."""
        if active and count == self.active_quota:
            self.members_under_active_quota -= 1
            self.active_left -= count
            self.active_quota = _per_member(self.active_left, self.members_under_active_quota)
        if count == self.task_quota:
            self.members_under_task_quota -= 1
            self.tasks_left -= count
            self.task_quota = _per_member(self.tasks_left, self.members_under_task_quota)

    def _least_loaded_previous(self, members: list[str] | None,
                               standby_of: Task | None) -> str | None:
        """The first of ``members`` (skipping those whose process holds ``standby_of``),
        replaced by a later one only if both its process and it are strictly less loaded."""
        best: str | None = None
        best_process_load = best_member_load = 0.0
        for member_id in members or ():
            process = self._process(member_id)
            if standby_of is not None and process.has(standby_of):
                continue
            member_load = float(process.counts[member_id])
            if best is None or (process.load < best_process_load
                                and member_load < best_member_load):
                best, best_process_load, best_member_load = (member_id, process.load,
                                                             member_load)
        return best

    def _give(self, member_id: str, task: Task, active: bool) -> None:
        self._reached(self._process(member_id).add(member_id, task, active), active)

    # -- the passes ------------------------------------------------------------------------

    def run(self) -> dict[str, TaskAssignment]:
        tasks = [(sub, p) for sub, spec in self.subtopologies.items()
                 for p in range(spec.num_tasks)]
        self._assign_active(tasks)
        if self.replicas > 0:
            stateful = [(sub, p) for sub, spec in self.subtopologies.items() if spec.stateful
                        for p in range(spec.num_tasks)]
            self._assign_standby(stateful)
        return {member_id: self._result(member_id) for member_id in self.member_ids}

    def _assign_active(self, tasks: list[Task]) -> None:
        tasks = sorted(tasks, key=lambda t: (t[1], _java_string_key(t[0])))
        left = []
        for task in tasks:                       # 1. back to the current owner
            owner = self.prev_active.get(task)
            if owner is not None and self._count(owner) < self.active_quota:
                self._give(owner, task, True)
            else:
                left.append(task)
        tasks, left = left, []
        for task in tasks:                       # 2. to a member that kept it warm
            member_id = self._least_loaded_previous(self.prev_standby.get(task), None)
            if member_id is not None and self._count(member_id) < self.active_quota:
                self._give(member_id, task, True)
            else:
                left.append(task)
        left.sort(key=lambda t: (_java_string_key(t[0]), t[1]))
        queue: _JavaHeap[_Process] = _JavaHeap(lambda process: process.load)
        for process in self.processes:
            queue.add(process)
        for task in left:                        # 3. to the least-loaded process
            process = queue.poll()
            if process is None:
                raise TaskAssignorError(
                    f"No process available to assign active task {_task_name(task)}.")
            count = process.add_to_least_loaded(task, True)
            if count == -1:
                raise TaskAssignorError(
                    f"No member available to assign active task {_task_name(task)}.")
            self._reached(count, True)
            queue.add(process)

    def _assign_standby(self, tasks: list[Task]) -> None:
        tasks = sorted(tasks, key=lambda t: (t[1], _java_string_key(t[0])), reverse=True)
        missing: list[tuple[Task, int]] = []
        for task in tasks:
            placed = 0
            while placed < self.replicas:
                owner = self.prev_active.get(task)
                if (owner is not None and not self._process(owner).has(task)
                        and self._count(owner) < self.task_quota):
                    self._give(owner, task, False)
                    placed += 1
                    continue
                member_id = self._least_loaded_previous(self.prev_standby.get(task), task)
                if member_id is None or self._count(member_id) >= self.task_quota:
                    break
                self._give(member_id, task, False)
                placed += 1
            if placed < self.replicas:
                missing.append((task, self.replicas - placed))
        missing.sort(key=lambda m: (_java_string_key(m[0][0]), m[0][1]), reverse=True)
        queue: _JavaHeap[_Process] = _JavaHeap(lambda process: process.load)
        for process in self.processes:
            queue.add(process)
        for task, wanted in missing:
            for _ in range(wanted):
                if not self._standby_to_least_loaded(queue, task):
                    break                        # Kafka logs "Unable to assign ..." and goes on

    def _standby_to_least_loaded(self, queue: _JavaHeap[_Process], task: Task) -> bool:
        """Give a standby of ``task`` to the least-loaded process that does not hold it; the
        processes looked at go back into the queue, the last one looked at first."""
        looked_at: list[_Process] = []
        found = False
        while queue:
            process = queue.poll()
            assert process is not None
            looked_at.append(process)
            if not process.has(task):
                count = process.add_to_least_loaded(task, False)
                if count != -1:
                    found = True
                    self._reached(count, False)
                break
        for process in reversed(looked_at):
            queue.add(process)
        return found

    def _result(self, member_id: str) -> TaskAssignment:
        process = self._process(member_id)
        active: dict[str, set[int]] = {}
        for sub, partition in process.active.get(member_id, ()):
            active.setdefault(sub, set()).add(partition)
        standby: dict[str, set[int]] = {}
        for sub, partition in process.standby.get(member_id, ()):
            standby.setdefault(sub, set()).add(partition)
        return TaskAssignment(active=active, standby=standby, warmup={})
