"""Fault injection and the request log.

A :class:`Fault` picks requests (by API, broker, topic, partition and client id, with a
probability) and does one of four things to each it picks, a given number of times or until it
is removed:

* ``error``: answer with a Kafka error instead of handling the request, in the API's own shape
  (see :mod:`mockbroker.core.error_responses`).  For APIs that name partitions, only the
  partitions the fault targets fail; the others are handled as usual.
* ``delay``: handle the request now, hold its answer back for ``delay_ms``.
* ``drop``: handle the request, never answer it (the answer is lost on the way), so the client
  times out.
* ``disconnect``: close the connection without handling the request.

``delay_ms`` also delays the other actions.  Faults are tried in the order they were added; the
first that picks a request is the one that applies.  Everything here runs on the core's clock and
timers, so a :class:`~mockbroker.core.clock.ManualClock` drives it in tests.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Any, Callable

from mockbroker.core import error_responses
from mockbroker.core.cluster import topic_name_error
from mockbroker.core.deferred import Close, Deferred, later, never
from wire import errors
from wire.apis import API_NAMES, resolve_api

ACTIONS = ("error", "delay", "drop", "disconnect")
#: APIs whose requests name topics (a fault's ``topic`` can pick them).
TOPIC_APIS = frozenset(error_responses.PARTITIONED) | {3, 9, 19, 20, 35, 37, 47, 75}
#: APIs whose requests name partitions (a fault's ``partition`` can pick them).
PARTITION_APIS = frozenset(error_responses.PARTITIONED) | {47}
_SPEC_KEYS = ("api", "action", "error", "count", "broker", "topic", "partition", "client_id",
              "delay_ms", "probability")


class FaultSpecError(ValueError):
    """A fault description that cannot be used; the message says what is wrong."""


@dataclass(slots=True)
class Fault:
    id: int
    action: str
    api: int | None = None
    error: int | None = None
    #: firings left; None fires until the fault is removed
    count: int | None = 1
    broker: int | None = None
    topic: str | None = None
    partition: int | None = None
    client_id: str | None = None
    delay_ms: int = 0
    probability: float = 1.0
    fired: int = 0

    def hits(self, topic: str | None, partition: int | None) -> bool:
        """Whether this fault's topic and partition pick a (topic, partition) of a request
        (partition None: the request names the topic without partitions)."""
        if self.topic is None:
            return True
        if topic != self.topic:
            return False
        return self.partition is None or partition is None or partition == self.partition

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "action": self.action,
            "api": API_NAMES.get(self.api) if self.api is not None else None,
            "api_key": self.api,
            "error": errors.error_by_code(self.error).name if self.error is not None else None,
            "error_code": self.error,
            "count": self.count,
            "fired": self.fired,
            "broker": self.broker,
            "topic": self.topic,
            "partition": self.partition,
            "client_id": self.client_id,
            "delay_ms": self.delay_ms,
            "probability": self.probability,
        }


def _int(spec: dict, name: str, *, minimum: int, default: Any) -> Any:
    if name not in spec:
        return default
    value = spec[name]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise FaultSpecError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise FaultSpecError(f"{name} must be at least {minimum}, got {value}")
    return value


class FaultTable:
    """The faults in force, in the order they were added."""

    def __init__(self, broker_ids, registry, seed: int | None = None):
        self._broker_ids = frozenset(broker_ids)
        self._registry = registry
        self._faults: dict[int, Fault] = {}
        self._ids = itertools.count(1)
        self._random = random.Random(seed)

    def __bool__(self) -> bool:
        return bool(self._faults)

    def __iter__(self):
        return iter(list(self._faults.values()))

    def get(self, fault_id: int) -> Fault | None:
        return self._faults.get(fault_id)

    def remove(self, fault_id: int) -> Fault:
        return self._faults.pop(fault_id)

    def clear(self) -> int:
        removed = len(self._faults)
        self._faults.clear()
        return removed

    # -- adding ------------------------------------------------------------------------------

    def add(self, spec: Any) -> Fault:
        """Validate a fault description (the JSON body of ``POST /faults``) and add it; raises
        :class:`FaultSpecError` and adds nothing when any part of it is wrong."""
        fault = self.parse(spec)
        fault.id = next(self._ids)
        self._faults[fault.id] = fault
        return fault

    def parse(self, spec: Any) -> Fault:
        if not isinstance(spec, dict):
            raise FaultSpecError("a fault is a JSON object")
        unknown = sorted(set(spec) - set(_SPEC_KEYS))
        if unknown:
            raise FaultSpecError(f"unknown field(s) {', '.join(unknown)}; a fault has "
                                 f"{', '.join(_SPEC_KEYS)}")
        api = spec.get("api")
        if api is not None:
            try:
                api = resolve_api(api)
            except (KeyError, TypeError) as exc:
                raise FaultSpecError(f"api: {exc.args[0]}") from None
            if self._registry.get(api) is None:
                raise FaultSpecError(f"api: {API_NAMES[api]} is not served by mockbroker")
        error = spec.get("error")
        if error is not None:
            try:
                error = errors.resolve_error(error).code
            except (KeyError, TypeError) as exc:
                raise FaultSpecError(f"error: {exc.args[0]}") from None
            if error == errors.NONE:
                raise FaultSpecError("error: NONE is not an error")
        delay_ms = _int(spec, "delay_ms", minimum=0, default=0)
        if delay_ms is None:
            delay_ms = 0
        action = spec.get("action")
        if action is None:
            action = "error" if error is not None else "delay" if delay_ms else None
            if action is None:
                raise FaultSpecError("say what the fault does: an error, a delay_ms, or an "
                                     f"action ({', '.join(ACTIONS)})")
        if action not in ACTIONS:
            raise FaultSpecError(f"action must be one of {', '.join(ACTIONS)}, got {action!r}")
        if action == "error" and error is None:
            raise FaultSpecError("action error needs an error (a Kafka error name or code)")
        if action != "error":
            error = None  # only an error action answers with one (a copied example may say one)
        if action == "delay" and delay_ms == 0:
            raise FaultSpecError("action delay needs a delay_ms above 0")
        if action == "error" and api is not None:
            served = self._registry.get(api)
            if not error_responses.can_express(api, served.max_version):
                raise FaultSpecError(f"{API_NAMES[api]} responses have no error code to set")
        count = _int(spec, "count", minimum=1, default=1)
        broker = _int(spec, "broker", minimum=0, default=None)
        if broker is not None and broker not in self._broker_ids:
            raise FaultSpecError(f"unknown broker {broker}; brokers are "
                                 f"{', '.join(map(str, sorted(self._broker_ids)))}")
        topic = spec.get("topic")
        if topic is not None:
            if not isinstance(topic, str) or topic_name_error(topic):
                raise FaultSpecError(f"topic: {topic_name_error(topic) if isinstance(topic, str) else 'must be a string'}")
            if api is not None and api not in TOPIC_APIS:
                raise FaultSpecError(f"topic: {API_NAMES[api]} requests name no topics")
        partition = _int(spec, "partition", minimum=0, default=None)
        if partition is not None:
            if topic is None:
                raise FaultSpecError("partition needs a topic")
            if api is not None and api not in PARTITION_APIS:
                raise FaultSpecError(f"partition: {API_NAMES[api]} requests name no partitions")
        client_id = spec.get("client_id")
        if client_id is not None and not isinstance(client_id, str):
            raise FaultSpecError(f"client_id must be a string, got {client_id!r}")
        probability = spec.get("probability", 1.0)
        if probability is None:
            probability = 1.0
        if isinstance(probability, bool) or not isinstance(probability, (int, float)) or \
                not 0 < probability <= 1:
            raise FaultSpecError(f"probability must be a number above 0 and at most 1, "
                                 f"got {probability!r}")
        return Fault(0, action, api, error, count, broker, topic, partition, client_id,
                     delay_ms, float(probability))

    # -- picking -----------------------------------------------------------------------------

    def pick(self, api_key: int, broker_id: int, client_id: str | None,
             named: Callable[[], set[tuple[str, int | None]]]) -> Fault | None:
        """The fault that applies to a request, counted as fired; ``named`` lists the
        (topic, partition) pairs the request names (computed only if a fault asks)."""
        names = None
        for fault in list(self._faults.values()):
            if fault.api is not None and fault.api != api_key:
                continue
            if fault.broker is not None and fault.broker != broker_id:
                continue
            if fault.client_id is not None and fault.client_id != client_id:
                continue
            if fault.topic is not None:
                if names is None:
                    names = named()
                if not any(fault.hits(topic, partition) for topic, partition in names):
                    continue
            if fault.probability < 1.0 and self._random.random() >= fault.probability:
                continue
            fault.fired += 1
            if fault.count is not None:
                fault.count -= 1
                if fault.count == 0:
                    del self._faults[fault.id]
            return fault
        return None


# -- what a request names -----------------------------------------------------------------------

def topic_name(cluster, item, name_field: str) -> str | None:
    name = getattr(item, name_field, None)
    if name:
        return name
    topic_id = getattr(item, "topic_id", None)
    if topic_id is not None:
        topic = cluster.topics_by_id.get(topic_id)
        if topic is not None:
            return topic.name
    return name


def named_partitions(cluster, api_key: int, body) -> set[tuple[str, int | None]]:
    """Every (topic, partition or None) a request names."""
    if api_key in error_responses.PARTITIONED:
        return set(error_responses.request_partitions(
            api_key, body, lambda item, name_field: topic_name(cluster, item, name_field)))
    found: set[tuple[str, int | None]] = set()
    _walk_names(cluster, body, found, depth=2)
    return found


def _walk_names(cluster, struct, found: set, depth: int) -> None:
    for name in ("topics", "topic_data"):
        for item in getattr(struct, name, None) or ():
            if isinstance(item, str):
                found.add((item, None))
                continue
            topic = topic_name(cluster, item, "name") or topic_name(cluster, item, "topic")
            partitions = getattr(item, "partitions", None) or getattr(item, "partition_indexes",
                                                                      None) or ()
            if not partitions:
                found.add((topic, None))
            for partition in partitions:
                index = partition if isinstance(partition, int) else \
                    getattr(partition, "partition_index", None)
                found.add((topic, index))
    for name in getattr(struct, "topic_names", None) or ():
        found.add((name, None))
    if depth:
        for group in getattr(struct, "groups", None) or ():
            if not isinstance(group, str):
                _walk_names(cluster, group, found, depth - 1)


# -- applying a fault ---------------------------------------------------------------------------

def apply_fault(core, fault: Fault, handler, request, ctx):
    """The answer to a request a fault picked."""
    body = request.body
    if fault.action == "disconnect":
        if not fault.delay_ms:
            return Close(f"fault {fault.id} disconnects")
        closing = Deferred()
        core.timers.call_later(fault.delay_ms,
                               lambda: closing.resolve(Close(f"fault {fault.id} disconnects")))
        return closing
    if fault.action == "drop":
        return never(handler(core, ctx, body))
    if fault.action == "delay":
        return later(core.timers, handler(core, ctx, body), fault.delay_ms)
    return later(core.timers, _error_answer(core, fault, handler, request, ctx), fault.delay_ms)


def _error_answer(core, fault: Fault, handler, request, ctx):
    """The request answered with the fault's error, in the API's shape; for APIs that name
    partitions only the fault's partitions fail and the rest is handled as usual."""
    api_key, version, body, code = request.api_key, request.api_version, request.body, \
        fault.error
    if api_key in error_responses.PARTITIONED:
        shape = error_responses.PARTITIONED[api_key]
        rest, hit = error_responses.split_partitioned(
            api_key, body, lambda topic, partition: fault.hits(
                topic_name(core.cluster, topic, shape.request_name),
                getattr(partition, shape.request_index)))
        if rest is not None and api_key == error_responses.FETCH:
            rest.max_wait_ms = 0  # a partition in error answers a fetch at once
        result = handler(core, ctx, rest) if rest is not None else None
        if api_key == error_responses.PRODUCE and body.acks == 0:
            return Close(f"fault {fault.id}: produce with acks=0 failed")
        if isinstance(result, Deferred):
            return result.map(lambda value: error_responses.merge_partitioned(
                api_key, version, value, hit, code))
        return error_responses.merge_partitioned(api_key, version, result, hit, code)
    if api_key == error_responses.METADATA:
        result = handler(core, ctx, body)
        error_responses.set_topic_errors(result, code, lambda name: fault.hits(name, None))
        return result
    try:
        return error_responses.error_response(api_key, version, body, code)
    except error_responses.CannotExpress as exc:
        return Close(f"fault {fault.id}: {exc}")
