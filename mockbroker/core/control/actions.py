"""What each action of the table (:mod:`mockbroker.adminapi.actions`) does to the core, where
it is more than an answer: one function per action, registered against the table's entry.

* a control action (``@applies``) changes the cluster; the request is then handled as usual.
  One that cannot be carried out now (a stopped target, an unknown group or transactional id)
  logs why and does nothing: the rule still counts as fired.
* a request action (``@rewrites``) acts on the request's connection or body, and gives the body
  to handle.

At import, every control and request action of the table must have exactly one function here,
and every function an action of that kind: a new entry without its function fails at once.
"""

from __future__ import annotations

import copy

import logging
from typing import TYPE_CHECKING, Any, Callable

from mockbroker.adminapi import actions as table
from mockbroker.core.errors import ApiException

if TYPE_CHECKING:
    from mockbroker.core.context import RequestContext
    from mockbroker.core.control.rules import Rule

log = logging.getLogger("mockbroker.control")

#: name -> the function that carries a control action out: (core, rule) -> None
APPLIERS: dict[str, Callable[[Any, Rule], None]] = {}
#: name -> the function of a request action: (core, rule, ctx, body) -> the body to handle
REWRITERS: dict[str, Callable[[Any, Rule, RequestContext, Any], Any]] = {}
#: every registration, in order: (the name it was given, the kind it is for, the function)
REGISTERED: list[tuple[str, table.Kind, Callable]] = []


def _register(into: dict, kind: table.Kind, name: str):
    def register(fn):
        REGISTERED.append((name, kind, fn))
        into.setdefault(name, fn)
        return fn
    return register


def applies(name: str):
    """Register the function that carries out the control action ``name``."""
    return _register(APPLIERS, table.Kind.CONTROL, name)


def rewrites(name: str):
    """Register the function of the request action ``name``."""
    return _register(REWRITERS, table.Kind.REQUEST, name)


def carry_out(core, rule: Rule) -> None:
    """Carry a rule's control action out, or log why it did nothing."""
    applier = APPLIERS[rule.action]
    try:
        applier(core, rule)
    except KeyError:  # what the transaction coordinator raises for an id it has not loaded
        log.info("rule %d: %s did nothing: unknown transactional id %r", rule.id, rule.action,
                 rule.target_transaction)
    except ApiException as exc:
        log.info("rule %d: %s did nothing: %s", rule.id, rule.action, exc)


def rewrite(core, rule: Rule, ctx: RequestContext, body: Any) -> Any:
    """The body of a request a request action picked, as it is to be handled."""
    return REWRITERS[rule.action](core, rule, ctx, body)


# -- control actions: the cluster changes ------------------------------------------------------

@applies("stop_broker")
def _stop_broker(core, rule: Rule) -> None:
    core.stop_broker(rule.target_broker)


@applies("start_broker")
def _start_broker(core, rule: Rule) -> None:
    core.start_broker(rule.target_broker)


@applies("move_leader")
def _move_leader(core, rule: Rule) -> None:
    partition = core.cluster.partition(rule.target_topic, rule.target_partition)
    if partition is not None:  # no such partition (yet): nothing to move
        core.cluster.move_leader(partition, rule.target_broker)


@applies("lag_replica")
def _lag_replica(core, rule: Rule) -> None:
    _set_lagging(core, rule, True)


@applies("catch_up_replica")
def _catch_up_replica(core, rule: Rule) -> None:
    _set_lagging(core, rule, False)


def _set_lagging(core, rule: Rule, lagging: bool) -> None:
    partition = core.cluster.partition(rule.target_topic, rule.target_partition)
    if partition is not None:  # no such partition (yet): no replica to hold back
        core.cluster.replication.set_lagging(partition, rule.target_broker, lagging)


@applies("move_coordinator")
def _move_coordinator(core, rule: Rule) -> None:
    core.groups.admin.move_coordinator(rule.target_group, rule.target_broker)


@applies("expire_member")
def _expire_member(core, rule: Rule) -> None:
    core.groups.admin.expire_member(rule.target_group, rule.target_member)


@applies("abort_transaction")
def _abort_transaction(core, rule: Rule) -> None:
    core.transactions.abort_now(rule.target_transaction)


@applies("move_transaction_coordinator")
def _move_transaction_coordinator(core, rule: Rule) -> None:
    core.cluster.move_leader(core.transactions.placement.partition(rule.target_transaction),
                             rule.target_broker)


@applies("expire_share_locks")
def _expire_share_locks(core, rule: Rule) -> None:
    core.share_partitions.expire_locks(rule.target_group)


# -- request actions: the connection or the body changes ---------------------------------------

@rewrites("hold_acknowledgements")
def _hold_acknowledgements(core, rule: Rule, ctx: RequestContext, body: Any) -> Any:
    if not hasattr(body, "share_session_epoch"):
        log.info("rule %d: hold_acknowledgements did nothing: a %s carries no share "
                 "acknowledgements", rule.id, type(body).__name__)
        return body
    held = copy.deepcopy(body)
    for topic in held.topics:
        for partition in topic.partitions:
            partition.acknowledgement_batches = []
    if getattr(held, "is_renew_ack", False):
        held.is_renew_ack = False
    return held


@rewrites("expire_session")
def _expire_session(core, rule: Rule, ctx: RequestContext, body: Any) -> Any:
    if ctx.session is not None and ctx.session.authenticated:
        ctx.session.expires_ms = ctx.now_ms
    else:
        log.info("rule %d: expire_session did nothing: the connection has no SASL session",
                 rule.id)
    return body


@rewrites("hold_revocation")
def _hold_revocation(core, rule: Rule, ctx: RequestContext, body: Any) -> Any:
    return core.groups.consumer.holding_revocation(body)


@rewrites("hold_task_revocation")
def _hold_task_revocation(core, rule: Rule, ctx: RequestContext, body: Any) -> Any:
    return core.groups.streams.holding_revocation(body)


def check(registered: list[tuple[str, table.Kind, Callable]]) -> list[str]:
    """What is wrong between the table and a list of registrations (empty: nothing): each
    control and request action needs exactly one function, and each function an action of the
    kind it was registered for."""
    problems = []
    seen: dict[str, Callable] = {}
    for name, kind, fn in registered:
        action = table.find(name)
        if action is None:
            problems.append(f"{fn.__name__} is for {name!r}, which is no action")
        elif action.kind is not kind:
            problems.append(f"{fn.__name__} is for {name}, an action of kind "
                            f"{action.kind.value}")
        elif name in seen:
            problems.append(f"{name} has two functions: {seen[name].__name__} and "
                            f"{fn.__name__}")
        seen.setdefault(name, fn)
    for action in table.ACTIONS:
        if action.kind is not table.Kind.ANSWER and action.name not in seen:
            problems.append(f"the {action.kind.value} action {action.name} has no function")
    return problems


_problems = check(REGISTERED)
if _problems:
    raise RuntimeError("the control actions and their table disagree: " + "; ".join(_problems))
