"""How a streams member moves one step towards its target (Kafka's streams
``CurrentAssignmentBuilder``).

A task may run in one place only as an active task, and a process should not hold one task in
two roles: so a member is given an active task only once no process holds it active any more,
and a standby or warm-up only once its process does not hold it otherwise.  A member that must
give up tasks keeps its epoch until it says it no longer owns them (UNREVOKED_TASKS); one that
waits for others to release tasks moves to the target epoch with what it can have now
(UNRELEASED_TASKS).  An active task that becomes a standby on the same member is demoted at
once, a standby that becomes a warm-up (or back) likewise, and a standby or warm-up that is to
become active stays in its role until the active task is granted.  A newly granted active task
carries the target's epoch: the epoch its offset commits are checked against.
"""

from __future__ import annotations

from mockbroker.core.errors import ApiException
from mockbroker.core.groups.streams.group import STABLE, UNKNOWN, UNRELEASED_TASKS, \
    UNREVOKED_TASKS, StreamsGroup, StreamsMember, TaskRoles, Tasks
from wire import errors


def reconcile(group: StreamsGroup, member: StreamsMember, target_epoch: int,
              target: TaskRoles, owned: TaskRoles | None) -> StreamsMember:
    """The member after one step towards ``target`` at ``target_epoch``; ``owned`` is what it
    said it holds (None: it did not say)."""
    if member.state == STABLE:
        if member.member_epoch != target_epoch:
            return _next(group, member, member.member_epoch, target_epoch, target, owned)
        return member
    if member.state == UNREVOKED_TASKS:
        if _not_released(owned, member.pending):
            return member
        return _next(group, member, member.member_epoch + 1, target_epoch, target, owned)
    if member.state == UNRELEASED_TASKS:
        return _next(group, member, member.member_epoch, target_epoch, target, owned)
    if member.state == UNKNOWN:
        if owned is not None and owned.is_empty():
            return _next(group, member, target_epoch, target_epoch, target, owned)
        raise ApiException(errors.FENCED_MEMBER_EPOCH, (
            "The streams group member is in a unknown state. The member must abandon all its "
            "tasks and rejoin."))
    return member


def _not_released(owned: TaskRoles | None, pending: TaskRoles) -> bool:
    """Whether the member may still hold a task it must give up (not saying counts)."""
    if owned is None:
        return True
    return any(set(owned_ps) & set(pending_ps.get(s, ()))
               for owned_role, pending_ps in ((owned.active, pending.active),
                                              (owned.standby, pending.standby),
                                              (owned.warmup, pending.warmup))
               for s, owned_ps in owned_role.items())


def _split(current: dict, target: Tasks, unreleased, *, with_epochs: bool = False
           ) -> tuple[dict, dict, dict, bool]:
    """(kept, to revoke, to assign, whether some of the target is held elsewhere) for one role;
    ``current`` maps tasks to epochs for the active role, else holds sets."""
    kept: dict = {}
    revoking: dict = {}
    assigning: dict = {}
    held_back = False
    for s in set(target) | set(current):
        have = current.get(s) or ({} if with_epochs else set())
        want = target.get(s, set())
        if with_epochs:
            k = {p: e for p, e in have.items() if p in want}
            r = {p: e for p, e in have.items() if p not in k}
        else:
            k = set(have) & want
            r = set(have) - k
        a = {p for p in want if p not in k}
        blocked = {p for p in a if unreleased(s, p)}
        held_back |= bool(blocked)
        a -= blocked
        if k:
            kept[s] = k
        if r:
            revoking[s] = r
        if a:
            assigning[s] = a
    return kept, revoking, assigning, held_back


def _grant(pending: dict[str, set[int]], assigned: dict[str, set[int]], s: str,
           p: int) -> None:
    _remove(pending, s, p)
    assigned.setdefault(s, set()).add(p)


def _remove(tasks: dict, s: str, p: int) -> None:
    ps = tasks.get(s)
    if ps is not None and p in ps:
        if isinstance(ps, dict):
            del ps[p]
        else:
            ps.discard(p)
        if not ps:
            del tasks[s]


def _next(group: StreamsGroup, member: StreamsMember, epoch: int, target_epoch: int,
          target: TaskRoles, owned: TaskRoles | None) -> StreamsMember:
    process = member.process_id
    target_active = {s: set(ps) for s, ps in target.active.items()}

    def held_elsewhere_here(role: str, mine: Tasks, s: str, p: int) -> bool:
        return process in group.replica_processes(role, s, p) and p not in mine.get(s, ())

    def unreleased_active(s: str, p: int) -> bool:
        return group.active_owner(s, p) is not None or \
            held_elsewhere_here("standby", member.standby, s, p) or \
            held_elsewhere_here("warmup", member.warmup, s, p)

    def unreleased_standby(s: str, p: int) -> bool:
        run_here_by_other = group.active_owner(s, p) == process and \
            p not in member.assigned.get(s, {})
        return run_here_by_other or process in group.replica_processes("standby", s, p) or \
            held_elsewhere_here("warmup", member.warmup, s, p)

    def unreleased_warmup(s: str, p: int) -> bool:
        return group.active_owner(s, p) == process or \
            held_elsewhere_here("standby", member.standby, s, p) or \
            process in group.replica_processes("warmup", s, p)

    active, active_revoking, active_assigning, held_a = _split(
        member.assigned, target_active, unreleased_active, with_epochs=True)
    standby, standby_revoking, standby_assigning, held_s = _split(
        member.standby, target.standby, unreleased_standby)
    warmup, warmup_revoking, warmup_assigning, held_w = _split(
        member.warmup, target.warmup, unreleased_warmup)
    # an active task to become a standby here is demoted at once
    for s, ps in member.assigned.items():
        for p in ps:
            if p in standby_assigning.get(s, ()):
                _grant(standby_assigning, standby, s, p)
    # standby <-> warm-up on the same member: at once, and nothing to revoke
    for outgoing, revoking, incoming_pending, incoming in (
            (member.standby, standby_revoking, warmup_assigning, warmup),
            (member.warmup, warmup_revoking, standby_assigning, standby)):
        for s, ps in outgoing.items():
            for p in ps:
                if p in incoming_pending.get(s, ()):
                    _grant(incoming_pending, incoming, s, p)
                    _remove(revoking, s, p)
    # a standby or warm-up to become active is not revoked; it stays until the active comes
    for replicas, revoking in ((member.standby, standby_revoking),
                               (member.warmup, warmup_revoking)):
        for s, ps in replicas.items():
            for p in ps:
                if p in target_active.get(s, ()):
                    _remove(revoking, s, p)
    pending = TaskRoles({s: dict(ps) for s, ps in active_revoking.items()},
                        standby_revoking, warmup_revoking)
    to_revoke = not pending.is_empty() and _not_released(owned, pending)
    for replicas, kept in ((member.standby, standby), (member.warmup, warmup)):
        for s, ps in replicas.items():
            granted = active_assigning.get(s, set())
            for p in ps:
                promoted_now = not to_revoke and p in granted
                if p in target_active.get(s, ()) and not promoted_now:
                    kept.setdefault(s, set()).add(p)
    if to_revoke:
        return member.copy(state=UNREVOKED_TASKS, previous_member_epoch=member.member_epoch,
                           member_epoch=epoch, assigned=active, standby=standby,
                           warmup=warmup, pending=pending)
    if active_assigning or standby_assigning or warmup_assigning:
        for s, ps in active_assigning.items():
            active.setdefault(s, {}).update(dict.fromkeys(ps, target_epoch))
        for s, ps in standby_assigning.items():
            standby.setdefault(s, set()).update(ps)
        for s, ps in warmup_assigning.items():
            warmup.setdefault(s, set()).update(ps)
    held = held_a or held_s or held_w
    return member.copy(state=UNRELEASED_TASKS if held else STABLE,
                       previous_member_epoch=member.member_epoch, member_epoch=target_epoch,
                       assigned=active, standby=standby, warmup=warmup, pending=TaskRoles())
