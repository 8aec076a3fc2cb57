"""Which API versions a broker serves, for its ApiVersions response.

The codec defines every version Kafka defines; a broker serves a subset, one handler per API.
An :class:`ApiRegistry` records what the handlers registered and refuses a range the codec cannot
read, so a broker can never advertise a version it would fail to decode.  The core is given a
registry and dispatches through it; it never imports the handlers itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator

from mockbroker.core.error_responses import PartitionShape
from wire.apis import API_NAMES
from wire.definitions import APIS

@dataclass(frozen=True, slots=True)
class Registration:
    api_key: int
    min_version: int
    max_version: int
    handler: Any
    #: the minimum ApiVersions reports, when it differs from what is served (Kafka 4 reports
    #: Produce from 0 for older librdkafka's sake, yet serves only 3 and up)
    advertised_min: int | None = None
    #: ``fn(core, header) -> (version, response)``: the answer to a request in a version this
    #: API does not serve, instead of closing the connection (ApiVersions' KIP-511 fallback)
    unsupported: Callable | None = None
    #: how an injected error is shaped in this API's response
    #: (:data:`mockbroker.core.error_responses.ErrorShape`; None: one top-level error code)
    error_shape: Any = None
    #: whether its requests name topics, and partitions (for control rules that pick them)
    names_topics: bool = False
    names_partitions: bool = False
    #: ``fn(core, broker_id, body) -> {(topic, partition)}``: what a request names beyond its
    #: own fields (a Fetch in a session names the session's partitions)
    names: Callable | None = None

    @property
    def name(self) -> str:
        return API_NAMES[self.api_key]


class ApiRegistry:
    """API key → the version range served and the handler that serves it."""

    def __init__(self) -> None:
        self._entries: dict[int, Registration] = {}

    def register(self, api_key: int, min_version: int, max_version: int, handler: Any, *,
                 advertised_min: int | None = None, unsupported: Callable | None = None,
                 errors: Any = None, names_topics: bool = False,
                 names_partitions: bool = False, names: Callable | None = None) -> None:
        spec = APIS.get(api_key)
        if spec is None:
            raise ValueError(f"no definition for API key {api_key}")
        valid = spec.request.valid
        if not (valid.lo <= min_version <= max_version <= valid.hi):
            raise ValueError(f"{spec.name} versions {min_version}-{max_version} are outside the "
                             f"defined {valid}")
        if api_key in self._entries:
            raise ValueError(f"{spec.name} is already registered")
        if advertised_min is not None and advertised_min > min_version:
            raise ValueError(f"{spec.name}: advertised minimum above the served minimum")
        partitioned = isinstance(errors, PartitionShape)
        self._entries[api_key] = Registration(
            api_key, min_version, max_version, handler, advertised_min, unsupported, errors,
            names_topics or names_partitions or partitioned, names_partitions or partitioned,
            names)

    def handler(self, api_key: int, min_version: int, max_version: int,
                **options: Any) -> Callable:
        """Decorator form of :meth:`register`."""
        def decorate(fn):
            self.register(api_key, min_version, max_version, fn, **options)
            return fn
        return decorate

    def get(self, api_key: int) -> Registration | None:
        return self._entries.get(api_key)

    def supports(self, api_key: int, api_version: int) -> bool:
        entry = self._entries.get(api_key)
        return entry is not None and entry.min_version <= api_version <= entry.max_version

    def __iter__(self) -> Iterator[Registration]:
        return iter(sorted(self._entries.values(), key=lambda r: r.api_key))

    def __len__(self) -> int:
        return len(self._entries)

    def api_versions(self) -> list[tuple[int, int, int]]:
        """(api key, min version, max version) for every registered API, by key."""
        return [(r.api_key, r.min_version if r.advertised_min is None else r.advertised_min,
                 r.max_version) for r in self]
