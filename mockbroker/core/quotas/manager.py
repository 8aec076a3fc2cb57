"""Client quotas enforced as Kafka's brokers enforce them (``ClientQuotaManager``,
``ClientRequestQuotaManager``, ``ControllerMutationQuotaManager``).

Which quota a request is held to is resolved per quota key from the entities, the first that
exists of: (user, client id), (user, default client id), user, (default user, client id),
(default user, default client id), default user, client id, default client id.  The user is the
connection's principal (``ANONYMOUS`` without authentication, so default-user quotas reach
PLAINTEXT clients).  Usage is measured per level matched: a user's own quota is shared by all
its client ids, a client id's by all users with it.

Each broker measures its own traffic, as each Kafka broker does:

* ``producer_byte_rate``: the size of every Produce request;
* ``consumer_byte_rate``: the size of every Fetch answer (a throttled one is answered empty,
  and not counted);
* ``request_percentage``: the time the broker spent handling the request, as a percentage of
  one thread; its throttle is at most one quota window (1 s);
* ``controller_mutation_rate``: partitions created or deleted, on a token bucket.

A request over its quota is answered at once with ``throttle_time_ms`` set, and its connection
is muted for that long (KIP-219): the broker reads nothing more from it until then.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

from mockbroker.core.quotas.entities import CLIENT_ID, IP, USER, ClientQuotas, Entity
from mockbroker.core.quotas.rate import WINDOW_MS, Rate, TokenBucket, throttle_ms

PRODUCE, FETCH, REQUEST, MUTATION = ("producer_byte_rate", "consumer_byte_rate",
                                     "request_percentage", "controller_mutation_rate")
CONNECTIONS = "connection_creation_rate"
#: the throttle cap of each quota key (None: no cap)
_CAPS = {PRODUCE: None, FETCH: None, REQUEST: WINDOW_MS}


def _levels(user: str, client_id: str) -> list[tuple[Entity, tuple[str, str]]]:
    """The entities a (user, client id) may be held to, in Kafka's order, each with the tags
    its usage is measured under."""
    both = (user, client_id)
    return [(((USER, user), (CLIENT_ID, client_id)), both),
            (((USER, user), (CLIENT_ID, None)), both),
            (((USER, user),), (user, "")),
            (((USER, None), (CLIENT_ID, client_id)), both),
            (((USER, None), (CLIENT_ID, None)), both),
            (((USER, None),), (user, "")),
            (((CLIENT_ID, client_id),), ("", client_id)),
            (((CLIENT_ID, None),), ("", client_id))]


class Quotas:
    """The cluster's quota entities and every broker's measurement of its clients."""

    def __init__(self, now: Callable[[], int]):
        self._now = now
        self.entities = ClientQuotas()
        self._resolved: dict[tuple, tuple[float, tuple[str, str]] | None] = {}
        self._resolved_version = -1
        #: (broker, key, tags) -> the rate measured
        self._rates: dict[tuple, Rate] = {}
        #: tags -> the controller's token bucket
        self._buckets: dict[tuple[str, str], TokenBucket] = {}
        #: (broker, connection id) -> when its connection is unmuted (ms on the cluster clock)
        self._muted: dict[tuple[int, int], int] = {}

    # -- which quota ----------------------------------------------------------------------------

    def enforced(self, key: str) -> bool:
        """Whether any entity sets ``key`` (until one does, nothing is measured, as in
        Kafka)."""
        return any(key in values for values in self.entities.values.values())

    def quota(self, key: str, user: str, client_id: str) -> tuple[float, tuple[str, str]] | None:
        """(the bound, the tags its usage is measured under) a client is held to for ``key``,
        or None."""
        if self._resolved_version != self.entities.version:
            self._resolved.clear()
            self._resolved_version = self.entities.version
        cache_key = (key, user, client_id)
        if cache_key not in self._resolved:
            found = None
            values = self.entities.values
            for entity, tags in _levels(user, client_id):
                bound = values.get(entity, {}).get(key)
                if bound is not None:
                    found = (bound, tags)
                    break
            self._resolved[cache_key] = found
        return self._resolved[cache_key]

    # -- measuring ------------------------------------------------------------------------------

    def record(self, key: str, broker: int, user: str, client_id: str, value: float) -> int:
        """Count ``value`` against the client's ``key`` quota on ``broker``; the throttle time
        in ms it has earned (0 within its quota)."""
        held = self.quota(key, user, client_id)
        if held is None:
            return 0
        bound, tags = held
        now = self._now()
        rate = self._rates.get((broker, key, tags))
        if rate is None:
            rate = self._rates[(broker, key, tags)] = Rate()
        rate.record(value, now)
        measured, window = rate.measure(now)
        throttle = throttle_ms(measured, bound, window)
        cap = _CAPS.get(key)
        return min(throttle, cap) if cap is not None else throttle

    def unrecord(self, key: str, broker: int, user: str, client_id: str, value: float) -> None:
        """Take back what :meth:`record` counted (a throttled Fetch's answer is not sent)."""
        held = self.quota(key, user, client_id)
        if held is not None:
            rate = self._rates.get((broker, key, held[1]))
            if rate is not None:
                rate.record(-value, self._now())

    def fetch_limit(self, broker: int, user: str, client_id: str) -> int | None:
        """The most a Fetch answer may carry for this client: its quota's worth of bytes over
        the window less one sample (10 s by default), as Kafka caps it."""
        held = self.quota(FETCH, user, client_id)
        return None if held is None else int(held[0] * 10)

    # -- connections ----------------------------------------------------------------------------

    def connection_accepted(self, broker: int, ip: str) -> int:
        """A new connection from ``ip`` to ``broker``: 0 to serve it, or how long (ms, at
        most one quota window) to hold it unread before closing it, when its IP's
        ``connection_creation_rate`` is exceeded (Kafka's acceptor does so; the refused
        connection does not count)."""
        values = self.entities.values
        bound = values.get(((IP, ip),), {}).get(CONNECTIONS)
        if bound is None:
            bound = values.get(((IP, None),), {}).get(CONNECTIONS)
        if bound is None:
            return 0
        now = self._now()
        rate = self._rates.get((broker, CONNECTIONS, ip))
        if rate is None:
            rate = self._rates[(broker, CONNECTIONS, ip)] = Rate()
        rate.record(1, now)
        measured, window = rate.measure(now)
        throttle = throttle_ms(measured, bound, window)
        if throttle:
            rate.record(-1, now)
        return min(throttle, WINDOW_MS)

    # -- the controller's mutation quota --------------------------------------------------------

    def mutations(self, user: str, client_id: str, strict: bool) -> "MutationQuota":
        """The controller mutation quota one CreateTopics, CreatePartitions or DeleteTopics
        is held to: strict (refusing what goes over, from CreateTopics v6, CreatePartitions v3
        and DeleteTopics v5) or permissive (doing it, and throttling)."""
        held = self.quota(MUTATION, user, client_id)
        bucket = None
        if held is not None:
            bound, tags = held
            bucket = self._buckets.get(tags)
            if bucket is None or bucket.rate != bound:
                bucket = self._buckets[tags] = TokenBucket(bound, self._now())
        return MutationQuota(bucket, strict, self._now)

    # -- muting ---------------------------------------------------------------------------------

    def mute(self, broker: int, connection_id: int, throttle: int) -> None:
        """Read nothing more from the connection for ``throttle`` ms."""
        if throttle > 0:
            until = self._now() + throttle
            key = (broker, connection_id)
            self._muted[key] = max(until, self._muted.get(key, 0))

    def muted_until(self, broker: int, connection_id: int) -> int | None:
        """When the connection is read again, if it is muted now."""
        until = self._muted.get((broker, connection_id))
        if until is None:
            return None
        if until <= self._now():
            del self._muted[(broker, connection_id)]
            return None
        return until

    def connection_closed(self, broker: int, connection_id: int) -> None:
        self._muted.pop((broker, connection_id), None)

    def reset(self) -> None:
        self.entities.reset()
        self._rates.clear()
        self._buckets.clear()
        self._muted.clear()


class MutationQuota:
    """One request's use of the controller mutation quota (Kafka's ``Strict`` and
    ``PermissiveControllerMutationQuota``): each topic's partitions are taken from the bucket
    after its other checks pass."""

    def __init__(self, bucket: TokenBucket | None, strict: bool, now: Callable[[], int]):
        self._bucket = bucket
        self.strict = strict
        self._now = now
        #: the request's throttle time, for its answer
        self.throttle_ms = 0

    @property
    def active(self) -> bool:
        return self._bucket is not None

    def admit(self, permits: int) -> bool:
        """Whether a mutation of ``permits`` partitions may go ahead; a strict quota refuses
        it (THROTTLING_QUOTA_EXCEEDED) while the bucket is below zero, yet lets the one that
        takes it below zero through."""
        bucket = self._bucket
        if bucket is None:
            return True
        now = self._now()
        if self.strict:
            deficit = bucket.deficit_ms(now)
            if deficit > 0:
                self.throttle_ms = max(self.throttle_ms, deficit)
                return False
            bucket.take(permits, now)
            return True
        bucket.take(permits, now)
        self.throttle_ms = max(self.throttle_ms, bucket.deficit_ms(now))
        return True


def with_throttle(response: Any, throttle: int) -> Any:
    """``response`` with ``throttle_time_ms`` at least ``throttle``: a copy (an answer may be
    kept and sent again, as Metadata's are, encoded), or the response itself when its API has
    no throttle time."""
    message = getattr(response, "message", response)  # an encoded answer's message
    current = getattr(message, "throttle_time_ms", None)
    if current is None or current >= throttle:
        return response
    throttled = copy.copy(message)  # shallow: only the throttle time differs
    throttled.throttle_time_ms = throttle
    return throttled
