"""The conditions a test waits for, checked against the cluster as it is now.

Each check returns a :class:`Check`: whether the condition holds, what the caller gets when it
does, and what was seen (for the error of a wait that times out: "last seen: ...").  The
waiting itself (when to look again, how long to wait at most) belongs to the I/O layer, which
looks again whenever an event is emitted or records are appended.
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct

from mockbroker.core.observe import inspect


class Check(Struct, frozen=True):
    met: bool
    #: what was seen, in words
    seen: str
    #: what the caller gets (when met)
    result: Any = None


def _members_text(view) -> str:
    if not view.members:
        return "no members"
    shown = ", ".join(f"{m.member_id} ({m.client_id})" for m in view.members[:5])
    more = f" and {len(view.members) - 5} more" if len(view.members) > 5 else ""
    return f"{len(view.members)} member{'s' if len(view.members) != 1 else ''}: {shown}{more}"


def _assigned(view) -> dict[str, list[int]]:
    out: dict[str, set[int]] = {}
    for member in view.members:
        for topic, partitions in (member.assignment or {}).items():
            out.setdefault(topic, set()).update(partitions)
    return {t: sorted(ps) for t, ps in sorted(out.items()) if ps}


def group(core, group_id: str, state: str = "Stable", members: int | None = None,
          assignment: dict[str, list[int]] | None = None) -> Check:
    try:
        shard, found = inspect.group(core, group_id)
    except inspect.NotFound:
        return Check(False, f"no group {group_id!r}")
    view = inspect.group_view(core, shard, found)
    assigned = _assigned(view)
    seen = f"{view.state}, generation {view.generation}, {_members_text(view)}"
    if assignment is not None:
        seen += f", assigned {assigned}"
    wanted = {t: sorted(ps) for t, ps in assignment.items() if ps} if assignment else None
    met = view.state == state and (members is None or len(view.members) == members) and \
        (wanted is None or assigned == wanted)
    return Check(met, seen, view)


def records(core, topic: str, count: int) -> Check:
    found = core.cluster.topics.get(topic)
    if found is None:
        return Check(False, f"no topic {topic!r}")
    per_partition = [p.log.data_records() for p in found.partitions]
    held = sum(per_partition)
    seen = f"{held} record{'s' if held != 1 else ''} ({', '.join(map(str, per_partition))} " \
           f"by partition)"
    return Check(held >= count, seen, inspect.topic_view(found))


def lag_zero(core, group_id: str, topic: str | None = None) -> Check:
    try:
        shard, found = inspect.group(core, group_id)
    except inspect.NotFound:
        return Check(False, f"no group {group_id!r}")
    view = inspect.group_view(core, shard, found)
    partitions = {(t, p) for t, by_partition in view.offsets.items() for p in by_partition}
    for member in view.members:
        for t, ps in (member.assignment or {}).items():
            partitions.update((t, p) for p in ps)
    if topic is not None:
        partitions = {(t, p) for t, p in partitions if t == topic}
    behind = []
    for t, p in sorted(partitions):
        partition = core.cluster.partition(t, p)
        end = partition.log.high_watermark if partition is not None else 0
        committed = view.offsets.get(t, {}).get(p)
        if committed is None:
            start = partition.log.log_start_offset if partition is not None else 0
            if end > start:
                behind.append(f"{t}-{p} none committed (log end {end})")
        elif committed < end:
            behind.append(f"{t}-{p} lag {end - committed} (committed {committed}, "
                          f"log end {end})")
    if not partitions:
        return Check(False, f"group {group_id!r} has no committed offsets or assignment"
                     + (f" for {topic!r}" if topic else ""))
    if behind:
        shown = "; ".join(behind[:6]) + (f"; and {len(behind) - 6} more" if len(behind) > 6
                                          else "")
        return Check(False, shown)
    return Check(True, "lag 0", view)


def event(core, type: str | None, match: dict[str, Any], since: int) -> Check:
    wanted = dict(match)
    for found in core.events.since(since, types=[type] if type else None, match=wanted):
        return Check(True, "", found)
    last = core.events.last_seq
    return Check(False, f"no such event after seq {since} (the last is {last})")
