"""The broker's own traffic, as every listener counts it: requests handled per API and broker,
and how long each took, for ``GET /metrics`` (:mod:`mockbroker.io.admin.metrics` writes them out).

Apart from the exporter so that the listeners, which start before the admin API, import no HTTP
server.
"""

from __future__ import annotations

import bisect

from wire.apis import API_NAMES

#: upper bounds (seconds) of the request-duration buckets; +Inf is implied.  A mock answers
#: most requests in well under a millisecond; the upper ones catch Fetch long-polls, JoinGroup
#: waits and injected delays.
DURATION_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                    0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
#: the key under which requests of an API key no one knows are counted (garbage frames)
UNKNOWN_API = -1


class _Histogram:
    __slots__ = ("buckets", "total", "count")

    def __init__(self) -> None:
        #: observations per bucket (not cumulative); the last one is +Inf's own
        self.buckets = [0] * (len(DURATION_BUCKETS) + 1)
        self.total = 0.0
        self.count = 0


class RequestMetrics:
    """Requests handled per (API key, broker id), and their durations per API key.

    Kept by the :class:`~mockbroker.io.runtime.ClusterRuntime` for the life of the process and
    fed by every listener; a request counts once it is done with: answered, needing no answer
    (a Produce with acks=0), or answered by closing the connection.  Everything runs on the
    cluster's loop, so no lock; :meth:`observe` is a few dict lookups and additions."""

    def __init__(self) -> None:
        self.requests: dict[tuple[int, int], int] = {}
        self.durations: dict[int, _Histogram] = {}

    def observe(self, api_key: int, broker_id: int, seconds: float) -> None:
        if api_key not in API_NAMES:
            api_key = UNKNOWN_API  # a client's garbage must not grow the label set
        key = (api_key, broker_id)
        self.requests[key] = self.requests.get(key, 0) + 1
        histogram = self.durations.get(api_key)
        if histogram is None:
            histogram = self.durations[api_key] = _Histogram()
        histogram.buckets[bisect.bisect_left(DURATION_BUCKETS, seconds)] += 1
        histogram.total += seconds
        histogram.count += 1


def api_key_of(frame: bytes) -> int:
    """The API key a request frame starts with (:data:`UNKNOWN_API` if it is too short)."""
    return int.from_bytes(frame[:2], "big", signed=True) if len(frame) >= 2 else UNKNOWN_API
