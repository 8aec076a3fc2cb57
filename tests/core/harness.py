"""One way for core tests to talk to a broker: a :class:`Core` on a :class:`ManualClock`, and
``send`` for requests as a client would frame them (encoded, decoded, dispatched)."""

from __future__ import annotations

from typing import Any

import wire
from wire import decode_embedded, embedded_struct, encode_embedded
from mockbroker.core.clock import ManualClock
from mockbroker.core.cluster import Broker
from mockbroker.core.deferred import NO_RESPONSE, Close, Deferred
from mockbroker.core.dispatch import Core, RequestContext
from mockbroker.core.security import ANONYMOUS, Principal
from mockbroker.handlers import new_core

START_MS = 1_700_000_000_000


#: every core made for the test running now (the conftest checks their timers afterwards)
MADE: list[Core] = []


def make_core(brokers: int = 1, *, clock: ManualClock | None = None, racks: bool = False,
              **settings: Any) -> Core:
    """A core with ``brokers`` brokers (ids 0.., ports 9092..) on a manual clock."""
    core = new_core([Broker(i, "127.0.0.1", 9092 + i, rack=f"r{i}" if racks else None)
                     for i in range(brokers)], settings, clock or ManualClock(START_MS))
    MADE.append(core)
    return core


def send(core: Core, api_key: int, version: int, body: Any = None, *, broker: int = 0,
         client_id: str | None = "app", connection_id: int = 1, correlation_id: int = 7,
         principal: Principal | None = None, **fields: Any):
    """The answer to one request as a client sees it: the response message (encoded and
    decoded again, in the request's version), a pending :class:`Deferred` of it, a
    :class:`Close` (the connection was closed instead), or None (no answer, as for acks=0).
    ``fields`` build the body when no ``body`` is given; ``principal`` is who sends it
    (User:ANONYMOUS by default)."""
    if body is None:
        body = wire.request_class(api_key)(**fields)
    frame = wire.encode_request(api_key, version, correlation_id, client_id, body,
                                size_prefix=False)
    request = wire.decode_request(frame)
    ctx = RequestContext(broker, connection_id, client_id, version, core.clock.now_ms(),
                         principal=ANONYMOUS if principal is None else principal)
    return settled(core.handle(request, ctx).map(
        lambda response: received(api_key, request.api_version, response)))


def received(api_key: int, version: int, response: Any) -> Any:
    """``response`` as the client reads it off the wire."""
    if response is NO_RESPONSE or isinstance(response, Close):
        return response
    frame = wire.encode_response(api_key, version, 0, response, size_prefix=False)
    return wire.decode_response(api_key, version, frame)[1]


def settled(outcome: Deferred):
    """A resolved outcome's value (None for no response), or the Deferred still pending."""
    if not outcome.done:
        return outcome
    value = outcome.value
    return None if value is NO_RESPONSE else value


def answer(result):
    """What the client has received: a direct result, or a resolved Deferred's value."""
    if isinstance(result, Deferred):
        assert result.done, "the broker has not answered yet"
        return settled(result)
    return result


def closed(result) -> bool:
    return isinstance(answer(result), Close)


# -- the consumer protocol's embedded formats, as Kafka's consumers write them ----------------

def subscription(owned=(), topics=("t",)) -> bytes:
    """A Subscription (v3) to ``topics``, owning ``owned`` partitions of "t"."""
    cls = embedded_struct("ConsumerProtocolSubscription", 3).cls
    return encode_embedded("ConsumerProtocolSubscription", 3, cls(
        topics=list(topics), user_data=None, generation_id=-1, rack_id=None,
        owned_partitions=[cls.TopicPartition(topic="t", partitions=list(owned))] if owned else []))


def assignment_of(data: bytes) -> list[int]:
    """The partitions an Assignment gives (of any topic)."""
    if not data:
        return []
    return sorted(p for tp in decode_embedded("ConsumerProtocolAssignment", data)[1]
                  .assigned_partitions for p in tp.partitions)


def full_assignment(partitions) -> bytes:
    """An Assignment (v3) of ``partitions`` of "t"."""
    cls = embedded_struct("ConsumerProtocolAssignment", 3).cls
    return encode_embedded("ConsumerProtocolAssignment", 3, cls(
        assigned_partitions=[cls.TopicPartition(topic="t", partitions=list(partitions))],
        user_data=None))
