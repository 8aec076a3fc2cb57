"""Group events: what changed in each group, told as events of the event log
(:mod:`mockbroker.core.observe.events`), and each group's rebalance timeline rebuilt from them.

Rather than have every path that touches a group (two protocols, migration between them,
loading, deletion, the admin knobs) emit events of its own, :class:`GroupWatch` compares a small
snapshot of each group (state, generation or epoch, members, assignments) after every request,
timer or admin call that can change one, and says what differs: members that joined, left or
were removed (and why: the cause in force says which request, timer or call it was), state and
generation changes, new assignments.  One place to read, and no protocol can forget to tell.
What a snapshot holds, and a group's assignments by topic name, are the group's type's to say
(the group coordinator asks its table of group types), as are the states in which a rebalance
is under way.
"""

from __future__ import annotations

import logging
from typing import Any, Iterable

from mockbroker.core.groups import GroupSnapshot
from mockbroker.core.groups.types import rebalancing_states
from mockbroker.core.observe.events import EventLog

log = logging.getLogger("mockbroker.core")

#: timer kinds of :class:`~mockbroker.core.groups.timers.TimerKind` -> why a member whose
#: removal one of them caused was removed
TIMER_REASONS = {
    "heartbeat": "session timeout",
    "join": "rebalance timeout: it did not rejoin in time",
    "sync": "sync timeout: it did not send SyncGroup in time",
    "revocation": "rebalance timeout: it did not revoke its partitions in time",
}
#: what a group change a timer caused is put down to
TIMER_CAUSES = {
    "heartbeat": "session timeout",
    "join": "join phase ended (initial delay or rebalance timeout)",
    "sync": "sync timeout",
    "revocation": "revocation timeout",
    "retention": "offset retention",
}
#: requests by which a member leaves by itself
LEAVING_REQUESTS = {"LeaveGroup", "ConsumerGroupHeartbeat"}
#: requests that can change a group (the watch looks at the group they name after each one)
GROUP_REQUESTS = frozenset({"JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup",
                            "ConsumerGroupHeartbeat", "OffsetCommit", "TxnOffsetCommit",
                            "DeleteGroups", "OffsetDelete"})
#: group requests that change nothing the watch sees when answered without an error: a
#: Heartbeat answered NONE only moves its member's session deadline (one that sends a member
#: back to rejoin, or finds it gone, is answered with an error)
UNCHANGED_WHEN_NONE = frozenset({"Heartbeat"})


class GroupWatch:
    """Snapshots of every group as last seen, and the events their changes make."""

    def __init__(self, core, events: EventLog):
        self._core = core
        self._events = events
        self._seen: dict[str, GroupSnapshot] = {}

    def look(self, group_ids: Iterable[str] | None = None) -> None:
        """Compare the groups named (None: every group) with how they were last seen.  A bug
        here is logged, never passed on: seeing must not break what is seen."""
        try:
            self._look(group_ids)
        except Exception:
            log.exception("the group watch failed")

    def _look(self, group_ids: Iterable[str] | None) -> None:
        groups = self._core.groups
        if group_ids is None:
            current = {g.group_id: (shard, g) for shard, g in groups.all_groups()}
            names = set(current) | set(self._seen)
        else:
            names = set(group_ids)
            current = {}
            for name in names:
                shard = groups.shard_of(name)
                if shard is not None and not shard.loading and name in shard.groups:
                    current[name] = (shard, shard.groups[name])
        for name in sorted(names):
            found = current.get(name)
            if found is None:
                shard = groups.shard_of(name)
                if shard is None or shard.loading:
                    continue  # its coordinator is loading it: not gone, only out of sight
                before = self._seen.pop(name, None)
                if before is not None:
                    self._gone(name, before)
                continue
            shard, group = found
            now = groups.snapshot(group)
            before = self._seen.get(name)
            if before != now:
                self._seen[name] = now
                self._compare(name, group, before, now)

    def forget(self) -> None:
        self._seen.clear()

    # -- what changed ----------------------------------------------------------------------------

    def _gone(self, name: str, before: GroupSnapshot) -> None:
        for member_id, member in before.members.items():
            self._events.emit("member_removed", group=name, member_id=member_id,
                              client_id=member.client_id, reason="its group was deleted")
        if before.state != "Dead":
            self._events.emit("group_state", group=name, group_type=before.group_type,
                              **{"from": before.state, "to": "Dead"},
                              generation=before.generation,
                              previous_generation=before.generation,
                              cause=describe_cause(self._events.cause, None))

    def _compare(self, name: str, group, before: GroupSnapshot | None,
                 now: GroupSnapshot) -> None:
        emit = self._events.emit
        old_members = before.members if before is not None else {}
        joined = [m for m in now.members if m not in old_members]
        removed = [m for m in old_members if m not in now.members]
        for member_id in joined:
            member = now.members[member_id]
            emit("member_joined", group=name, member_id=member_id, client_id=member.client_id,
                 client_host=member.client_host, group_instance_id=member.instance_id)
        for member_id in removed:
            member = old_members[member_id]
            kind, reason = removal(self._events.cause, member_id)
            emit(kind, group=name, member_id=member_id, client_id=member.client_id,
                 reason=reason)
        old_state = before.state if before is not None else None
        old_generation = before.generation if before is not None else None
        if old_state != now.state or old_generation != now.generation:
            member = (joined or removed or [None])[0]
            emit("group_state", group=name, group_type=now.group_type,
                 **{"from": old_state, "to": now.state}, generation=now.generation,
                 previous_generation=old_generation, members=len(now.members),
                 cause=describe_cause(self._events.cause, member,
                                      "joined" if joined else "left" if removed else None))
        old_assignment = {m: s.assignment for m, s in old_members.items()}
        new_assignment = {m: s.assignment for m, s in now.members.items()}
        if new_assignment != old_assignment and any(new_assignment.values()):
            emit("assignment", group=name, generation=now.generation,
                 assignments=self._core.groups.assignments(group))


def removal(cause: dict[str, Any], member_id: str) -> tuple[str, str]:
    """(event type, reason) of a member removed under ``cause``."""
    request = cause.get("request")
    if request in LEAVING_REQUESTS and (request == "LeaveGroup"
                                        or cause.get("member_id") == member_id):
        return "member_left", f"it left ({request})"
    timer = cause.get("timer")
    if timer is not None:
        return "member_expired", TIMER_REASONS.get(timer, f"{timer} timer")
    admin = cause.get("admin")
    if admin == "expire_member" or cause.get("action") == "expire_member":
        return "member_expired", "expired on request (the admin API or a control rule)"
    if admin is not None:
        return "member_removed", f"removed by the admin call {admin}"
    if request is not None:
        return "member_removed", f"removed while handling {request} (replaced or fenced)"
    return "member_removed", "removed"


def describe_cause(cause: dict[str, Any], member_id: str | None,
                   what: str | None = None) -> str:
    """A short sentence for a group change under ``cause``: ``JoinGroup from client c1
    (member m1 joined)``, ``session timeout of m1``, ``admin: expire_member``."""
    request, timer, admin = cause.get("request"), cause.get("timer"), cause.get("admin")
    if timer is not None:
        text = TIMER_CAUSES.get(timer, f"{timer} timer")
        who = cause.get("timer_member") or member_id
        return f"{text} of {who}" if who else text
    if request is not None:
        text = f"{request} from client {cause.get('client_id') or '?'}"
        if member_id and what:
            text += f" (member {member_id} {what})"
        return text
    if admin is not None:
        return f"admin API: {admin}"
    if cause.get("action"):
        return f"control rule: {cause['action']}"
    return "internal"


# -- the rebalance timeline ----------------------------------------------------------------------

MEMBERSHIP = {"member_joined": "joined", "member_left": "left", "member_expired": "expired",
              "member_removed": "left"}


def rebalances(events: Iterable[dict[str, Any]], group_id: str) -> list[dict[str, Any]]:
    """Each rebalance of ``group_id`` the log still holds, oldest first: when it started and
    ended, its cause, who joined, left or expired for it, and the generation (classic) or
    group epoch (consumer) it produced.  A member change between rebalances counts toward the
    next one, which it starts."""
    rebalancing = rebalancing_states()  # the states a rebalance is under way in, by type
    out: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    waiting: dict[str, list[str]] = {"joined": [], "left": [], "expired": []}
    for event in events:
        if event.get("group") != group_id:
            continue
        kind = event["type"]
        if kind in MEMBERSHIP:
            target = current if current is not None else waiting
            target[MEMBERSHIP[kind]].append(event["member_id"])
            continue
        if kind != "group_state":
            continue
        # every group_state event names its group's type (the watch emits them all)
        state, group_type = event["to"], event.get("group_type")
        under_way = state in rebalancing.get(group_type, ())
        if current is None and (under_way or (
                event["from"] is not None and event["generation"] != event[
                    "previous_generation"])):
            current = {"generation": event["generation"], "started_ms": event["time_ms"],
                       "ended_ms": None, "duration_ms": None, "cause": event["cause"],
                       "outcome": None, "members": event.get("members", 0), **waiting}
            waiting = {"joined": [], "left": [], "expired": []}
            out.append(current)
        if current is None:
            continue
        current["generation"] = event["generation"]
        current["members"] = event.get("members", current["members"])
        if not under_way:
            current["ended_ms"] = event["time_ms"]
            current["duration_ms"] = event["time_ms"] - current["started_ms"]
            current["outcome"] = state
            current = None
    return out
