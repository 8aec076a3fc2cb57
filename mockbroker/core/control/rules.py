"""Control rules: one model for breaking Kafka on purpose and steering the cluster.

A :class:`Rule` is a match and an action.  The match picks requests: by API, the broker that
receives it, the topic, partition, group or client id it names, after the first N matching
requests, with a probability, a number of times (or until it is removed).  The action is one of
the table of :mod:`mockbroker.adminapi.actions`, which says what each needs; by its kind it

* answers the request otherwise: ``error`` answers with a Kafka error instead of handling it,
  in the API's own shape (see :mod:`mockbroker.core.control.error_responses`; for APIs that name
  partitions, only the partitions the rule targets fail, the others are handled as usual);
  ``delay``, ``drop`` and ``disconnect`` hold the answer back, lose it, or close the
  connection; ``callback`` (in-process only, :meth:`ControlTable.control`) lets a function see
  the decoded request and answer it, ask for a disconnect, or pass.
* changes the cluster, then lets the request be handled as usual: a control action (stop or
  start a broker, move a leader or a coordinator, expire a member, abort a transaction),
  carried out by :mod:`mockbroker.core.control.actions` on the rule's ``target_*`` fields.
  "Stop broker 1 when the third Fetch arrives" is ``{"api": "Fetch", "after": 2, "action":
  "stop_broker", "target_broker": 1}``.
* changes the request's connection or body, then handles it: ``expire_session`` ends the
  connection's SASL session, so its next request closes it, as Kafka closes a connection
  whose session has expired; ``hold_revocation`` has a ConsumerGroupHeartbeat handled as if
  its member still owned the partitions it is revoking (match the member by ``client_id``;
  with ``count`` null it holds until the rule is removed, or the member is fenced), and
  ``hold_task_revocation`` does the same to a streams member's StreamsGroupHeartbeat.

A rule with ``registry`` picks Schema Registry calls instead of Kafka requests: an operation
(:data:`mockbroker.core.schemas.routes.OPERATIONS`, or ``*``) and perhaps a ``subject``, then
answers with a Confluent ``error`` code (``50001`` a store failure, ``40901`` an incompatible
schema, or a plain HTTP status), a ``delay``, no answer (``drop``) or a closed connection
(``disconnect``): "the next two lookups of subject orders-value fail with 500" is
``{"registry": "lookup", "subject": "orders-value", "error": 500, "count": 2}``.

A rule may also match the ``principal`` a request comes from (``User:alice``): deny one
principal with an error, or, on ``SaslAuthenticate``, refuse one principal's login (the
exchange fails with the rule's error once the mechanism has named who is logging in; with no
``principal``, the next login of anyone).

``delay_ms`` also delays the other actions.  Rules are tried in the order they were added; the
first that picks a request applies, except that a ``chain`` rule (a broker's latency is one)
adds its delay and lets the next rule that picks the request apply too.  Everything runs on the
core's clock and timers, so a :class:`~mockbroker.core.clock.ManualClock` drives it in tests.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from typing import Any, Callable

from msgspec import Struct

from mockbroker.adminapi.actions import TARGETS, Kind, get as get_action, http_names, users
from mockbroker.core.cluster import topic_name_error
from mockbroker.core.control import actions
from mockbroker.core.deferred import Close, Deferred, as_deferred, later, never
from mockbroker.core.control.request_names import named_groups, named_partitions
from mockbroker.core.security import Principal
from wire import errors
from wire.apis import API_NAMES, resolve_api

#: the actions ``POST /faults`` may add, as refusals list them
_ADDABLE = ", ".join(http_names())
#: what a rule may do to a Schema Registry call
REGISTRY_ACTIONS = ("error", "delay", "drop", "disconnect")


def http_status(code: int) -> int | None:
    """The HTTP status of a Confluent error code (its first three digits: 50001 is 500), or
    None for a number that is none."""
    status = code
    while status >= 1000:
        status //= 10
    return status if 400 <= status <= 599 else None


class RuleError(ValueError):
    """A rule description that cannot be used; the message says what is wrong."""


class ControlledRequest(Struct, frozen=True):
    """What a callback rule sees of a request."""

    api_key: int
    api_version: int
    broker_id: int
    client_id: str | None
    body: Any


#: What a callback returns to have the connection closed instead of an answer.
DISCONNECT = Close("a control callback disconnects")


class Rule(Struct, repr_omit_defaults=True):
    """One control rule: which requests it picks, and what it does to them."""

    id: int
    action: str
    api: int | None = None
    error: int | None = None
    #: firings left; None fires until the rule is removed
    count: int | None = 1
    #: matching requests to let through before the rule fires
    after: int = 0
    broker: int | None = None
    topic: str | None = None
    partition: int | None = None
    group: str | None = None
    client_id: str | None = None
    delay_ms: int = 0
    probability: float = 1.0
    #: the throttle time a ``throttle`` rule answers with
    throttle_ms: int = 0
    #: the principal whose requests it picks (``User:alice``)
    principal: str | None = None
    #: a delay that adds up with the next rule that picks the request (a broker's latency)
    chain: bool = False
    target_broker: int | None = None
    target_topic: str | None = None
    target_partition: int | None = None
    target_group: str | None = None
    target_member: str | None = None
    target_transaction: str | None = None
    fired: int = 0
    #: requests that matched, fired or not (for ``after``)
    matched: int = 0
    callback: Callable[[ControlledRequest], Any] | None = None
    #: a Schema Registry operation (:data:`mockbroker.core.schemas.routes.OPERATIONS`, or
    #: ``*``): the rule picks registry calls, never Kafka requests
    registry: str | None = None
    subject: str | None = None

    def hits(self, topic: str | None, partition: int | None) -> bool:
        """Whether this rule's topic and partition pick a (topic, partition) of a request
        (partition None: the request names the topic without partitions)."""
        if self.topic is None:
            return True
        if topic != self.topic:
            return False
        return self.partition is None or partition is None or partition == self.partition



def _topic(name: str, topic: str | None) -> str | None:
    if topic is not None:
        problem = topic_name_error(topic)
        if problem:
            raise RuleError(f"{name}: {problem}")
    return topic


def _read_spec(spec: Any):
    """A fault spec checked against ``FaultSpec``, its one declaration (the fields, their
    types and bounds that ``POST /faults``'s schema states); the rest is checked here."""
    # with the first rule: the views are dataclasses, kept out of the broker's start-up
    from mockbroker.adminapi.jsonview import BodyError, read_body
    from mockbroker.adminapi.views import FaultSpec

    if not isinstance(spec, dict):
        raise RuleError("a fault is a JSON object")
    try:
        return read_body(FaultSpec, spec)
    except BodyError as exc:
        raise RuleError(str(exc)) from None


class ControlTable:
    """The rules in force, in the order they were added."""

    def __init__(self, core, seed: int | None = None):
        self._core = core
        self._rules: dict[int, Rule] = {}
        self._ids = itertools.count(1)
        self._random = random.Random(seed)

    def __bool__(self) -> bool:
        return bool(self._rules)

    def __iter__(self):
        return iter(list(self._rules.values()))

    def get(self, rule_id: int) -> Rule | None:
        return self._rules.get(rule_id)

    def remove(self, rule_id: int) -> Rule:
        return self._rules.pop(rule_id)

    def clear(self) -> int:
        removed = len(self._rules)
        self._rules.clear()
        return removed

    # -- adding ------------------------------------------------------------------------------

    def add(self, spec: Any) -> Rule:
        """Validate a rule description (the JSON body of ``POST /faults``) and add it; raises
        :class:`RuleError` and adds nothing when any part of it is wrong."""
        return self._insert(self.parse(spec))

    def _insert(self, rule: Rule) -> Rule:
        rule.id = next(self._ids)
        self._rules[rule.id] = rule
        return rule

    def control(self, api: int | str | None, fn: Callable[[ControlledRequest], Any], *,
                keep: bool = False, broker: int | None = None) -> Rule:
        """In-process control of requests to ``api`` (any API when None): ``fn`` sees each
        decoded request and returns a response message to answer it with, :data:`DISCONNECT`
        to close the connection, or None to let it through.  Once it answers the rule is gone,
        unless ``keep``."""
        rule = self._parse_match(_read_spec({"api": api, "count": None if keep else 1,
                                             "broker": broker}), "callback")
        rule.callback = fn
        return self._insert(rule)

    def set_latency(self, broker_id: int, delay_ms: int) -> None:
        """Every answer of ``broker_id`` held back ``delay_ms`` (0 removes it): a chained delay
        rule, so faults still apply on top of it."""
        for rule in list(self._rules.values()):
            if rule.chain and rule.action == "delay" and rule.broker == broker_id \
                    and rule.api is None and rule.topic is None and rule.client_id is None:
                del self._rules[rule.id]
        if delay_ms:
            self.add({"broker": broker_id, "action": "delay", "delay_ms": delay_ms,
                      "count": None, "chain": True})

    def latency_ms(self, broker_id: int) -> int:
        return sum(rule.delay_ms for rule in self._rules.values()
                   if rule.chain and rule.action == "delay" and rule.broker == broker_id
                   and rule.api is None and rule.topic is None and rule.client_id is None)

    def parse(self, spec: Any) -> Rule:
        spec = _read_spec(spec)
        if spec.registry is not None or spec.subject is not None:
            return self._parse_registry(spec)
        error = spec.error
        if error is not None:
            try:
                error = errors.resolve_error(error).code
            except (KeyError, TypeError) as exc:
                raise RuleError(f"error: {exc.args[0]}") from None
            if error == errors.NONE:
                raise RuleError("error: NONE is not an error")
        delay_ms = spec.delay_ms
        action = spec.action
        if action is None:
            action = "error" if error is not None else "delay" if delay_ms else None
            if action is None:
                raise RuleError("say what the fault does: an error, a delay_ms, or an action "
                                f"({_ADDABLE})")
        entry = get_action(action)  # one POST /faults may add: FaultSpec says which
        implied = resolve_api(entry.api) if entry.api is not None else None
        if implied is not None and spec.api is None:
            spec = dataclasses.replace(spec, api=implied)
        rule = self._parse_match(spec, action)
        if implied is not None and rule.api != implied:
            raise RuleError(f"action {action} is for {entry.api} requests")
        if action == "error" and error is None:
            raise RuleError("action error needs an error (a Kafka error name or code)")
        rule.error = error if action == "error" else None  # a copied example may say one
        if action == "delay" and delay_ms == 0:
            raise RuleError("action delay needs a delay_ms above 0")
        rule.delay_ms = delay_ms
        if action == "throttle" and spec.throttle_ms <= 0:
            raise RuleError("action throttle needs a throttle_ms above 0")
        rule.throttle_ms = spec.throttle_ms if action == "throttle" else 0
        if action == "error" and rule.api is not None:
            from mockbroker.core.control import error_responses  # with the first error rule

            # every version it serves, each named when it cannot carry the error
            problem = error_responses.cannot_express(self._core.registry.get(rule.api))
            if problem:
                raise RuleError(problem)
        chain = spec.chain
        if chain and action != "delay":
            raise RuleError("only a delay can chain")
        rule.chain = chain
        self._parse_targets(spec, rule)
        return rule

    def _parse_registry(self, spec) -> Rule:
        """A rule for Schema Registry calls: an operation (and subject), and an answer."""
        from mockbroker.core.schemas.routes import OPERATIONS

        if spec.registry is None:
            raise RuleError("subject needs registry (the Schema Registry operation to pick)")
        if spec.registry != "*" and spec.registry not in OPERATIONS:
            raise RuleError(f"registry: unknown operation {spec.registry!r}; operations are "
                            f"{', '.join(OPERATIONS)} (or *)")
        kafka_only = [name for name in ("api", "broker", "topic", "partition", "group",
                                        "client_id", "principal")
                      if getattr(spec, name) is not None]
        if kafka_only:
            raise RuleError(f"{', '.join(kafka_only)}: for Kafka requests, not registry calls")
        action = spec.action or ("error" if spec.error is not None else
                                 "delay" if spec.delay_ms else None)
        if action not in REGISTRY_ACTIONS:
            raise RuleError(f"action: registry calls take {', '.join(REGISTRY_ACTIONS)}"
                            + (f", not {action}" if action else ""))
        error = None
        if action == "error":
            error = spec.error
            if isinstance(error, bool) or not isinstance(error, int) or \
                    http_status(error) is None:
                raise RuleError("error: a registry rule answers with a Confluent error code "
                                "(an HTTP status such as 500, or a code such as 50001 or "
                                f"40901), not {error!r}")
        if action == "delay" and spec.delay_ms == 0:
            raise RuleError("action delay needs a delay_ms above 0")
        if spec.chain:
            raise RuleError("only a broker's delay can chain")
        rule = Rule(0, action, None, error, spec.count, spec.after, delay_ms=spec.delay_ms,
                    probability=float(spec.probability), registry=spec.registry,
                    subject=spec.subject)
        self._parse_targets(spec, rule)
        return rule

    def _parse_match(self, spec, action: str) -> Rule:
        """The match of a rule: what ``spec`` (a ``FaultSpec``) picks, checked against the
        cluster and the APIs served."""
        brokers = self._core.cluster.brokers
        api = spec.api
        if api is not None:
            try:
                api = resolve_api(api)
            except (KeyError, TypeError) as exc:
                raise RuleError(f"api: {exc.args[0]}") from None
            if self._core.registry.get(api) is None:
                raise RuleError(f"api: {API_NAMES[api]} is not served by mockbroker")
        if spec.broker is not None and spec.broker not in brokers:
            raise RuleError(f"unknown broker {spec.broker}; brokers are "
                            f"{', '.join(map(str, sorted(brokers)))}")
        topic = _topic("topic", spec.topic)
        registration = self._core.registry.get(api) if api is not None else None
        if topic is not None and registration is not None and not registration.names_topics:
            raise RuleError(f"topic: {API_NAMES[api]} requests name no topics")
        if spec.partition is not None:
            if topic is None:
                raise RuleError("partition needs a topic")
            if registration is not None and not registration.names_partitions:
                raise RuleError(f"partition: {API_NAMES[api]} requests name no partitions")
        principal = spec.principal
        if principal is not None:
            if ":" not in principal:
                principal = f"User:{principal}"
            try:
                Principal.parse(principal)
            except ValueError as exc:
                raise RuleError(f"principal: {exc}") from None
        return Rule(0, action, api, None, spec.count, spec.after, spec.broker, topic,
                    spec.partition, spec.group, spec.client_id, 0, float(spec.probability),
                    principal=principal)

    def _parse_targets(self, spec, rule: Rule) -> None:
        """The rule's ``target_*`` fields: those its action takes (given, or defaulted from
        the match), and no other."""
        needed = get_action(rule.action).target_names
        for param in TARGETS:
            value = getattr(spec, param.name)
            if param.refers_to == "topic":
                value = _topic(param.name, value)
            if value in (None, "") and param.default_from is not None and param.name in needed:
                value = getattr(rule, param.default_from)
            setattr(rule, param.name, value)
        for name in needed:
            if getattr(rule, name) is None:
                raise RuleError(f"action {rule.action} needs {name}")
        for param in TARGETS:
            if param.name not in needed and getattr(spec, param.name) is not None:
                raise RuleError(f"{param.name} is for {', '.join(users(param.name))}")
        for param in TARGETS:
            value = getattr(rule, param.name)
            if param.refers_to == "broker" and value is not None \
                    and value not in self._core.cluster.brokers:
                raise RuleError(f"unknown {param.name} {value}")

    # -- picking -----------------------------------------------------------------------------

    def pick(self, api_key: int, broker_id: int, client_id: str | None, body,
             principal: str | None = None) -> tuple[int, Rule | None, list[Rule]]:
        """For one request: (the delay of the chained rules that picked it, the rule that
        applies to it or None, every rule that fired).  Each is counted as fired."""
        names = groups = None
        chained_delay = 0
        fired: list[Rule] = []
        for rule in list(self._rules.values()):
            if rule.registry is not None:
                continue
            if rule.api is not None and rule.api != api_key:
                continue
            if rule.broker is not None and rule.broker != broker_id:
                continue
            if rule.client_id is not None and rule.client_id != client_id:
                continue
            if rule.principal is not None and rule.principal != principal:
                continue
            if rule.topic is not None:
                if names is None:
                    entry = self._core.registry.get(api_key)
                    names = named_partitions(self._core.cluster, entry.error_shape, body)
                    if entry.names is not None:
                        names |= entry.names(self._core, broker_id, body)
                if not any(rule.hits(topic, partition) for topic, partition in names):
                    continue
            if rule.group is not None:
                if groups is None:
                    groups = named_groups(body)
                if rule.group not in groups:
                    continue
            rule.matched += 1
            if rule.matched <= rule.after:
                continue
            if rule.probability < 1.0 and self._random.random() >= rule.probability:
                continue
            if rule.action == "callback":
                return chained_delay, rule, fired  # counted once it answers
            self._count(rule)
            fired.append(rule)
            if not rule.chain:
                return chained_delay, rule, fired
            chained_delay += rule.delay_ms
        return chained_delay, None, fired

    def pick_registry(self, operation: str, subject: str | None) -> Rule | None:
        """The rule that applies to one Schema Registry call, counted as fired, or None."""
        for rule in list(self._rules.values()):
            if rule.registry is None or rule.registry not in ("*", operation):
                continue
            if rule.subject is not None and rule.subject != subject:
                continue
            rule.matched += 1
            if rule.matched <= rule.after:
                continue
            if rule.probability < 1.0 and self._random.random() >= rule.probability:
                continue
            self._count(rule)
            return rule
        return None

    def _count(self, rule: Rule) -> None:
        rule.fired += 1
        self._core.events.emit("rule_fired", rule=rule.id, action=rule.action,
                               error=errors.ERRORS[rule.error].name
                               if rule.error in errors.ERRORS else rule.error)
        if rule.count is not None:
            rule.count -= 1
            if rule.count == 0:
                self._rules.pop(rule.id, None)


# -- applying a rule ----------------------------------------------------------------------------

def apply(core, table: ControlTable, rule: Rule, handler, request, ctx):
    """The answer to a request a rule picked."""
    body = request.body
    kind = get_action(rule.action).kind
    if kind is Kind.CONTROL:
        actions.carry_out(core, rule)
        if not core.cluster.brokers[ctx.broker_id].alive:
            return Close(f"rule {rule.id}: broker {ctx.broker_id} stopped")
        return later(core.timers, handler(core, ctx, body), rule.delay_ms)
    if kind is Kind.REQUEST:
        body = actions.rewrite(core, rule, ctx, body)
        return later(core.timers, handler(core, ctx, body), rule.delay_ms)
    # the rule answers the request otherwise
    if rule.action == "callback":
        answer = rule.callback(ControlledRequest(request.api_key, request.api_version,
                                                 ctx.broker_id, ctx.client_id, body))
        if answer is None:
            return handler(core, ctx, body)
        table._count(rule)
        return later(core.timers, answer, rule.delay_ms)
    if rule.action == "disconnect":
        if not rule.delay_ms:
            return Close(f"rule {rule.id} disconnects")
        closing = Deferred()
        core.timers.call_later(rule.delay_ms,
                               lambda: closing.resolve(Close(f"rule {rule.id} disconnects")))
        return closing
    if rule.action == "drop":
        return never(handler(core, ctx, body))
    if rule.action == "delay":
        return later(core.timers, handler(core, ctx, body), rule.delay_ms)
    if rule.action == "throttle":
        return later(core.timers, as_deferred(handler(core, ctx, body)).map(
            lambda response: _throttled(core, ctx, response, rule.throttle_ms)), rule.delay_ms)
    from mockbroker.core.control import error_responses  # with the first error a rule injects

    return later(core.timers, error_responses.answer_with_error(
        core, rule.id, rule.error, rule.hits, handler, request, ctx), rule.delay_ms)


def _throttled(core, ctx, response, throttle_ms: int):
    """An answer a ``throttle`` rule picked: its throttle time set (where its API has one), and
    its connection muted for as long, as Kafka treats a client over its quota."""
    from mockbroker.core.quotas.manager import with_throttle

    core.quotas.mute(ctx.broker_id, ctx.connection_id, throttle_ms)
    return with_throttle(response, throttle_ms)
