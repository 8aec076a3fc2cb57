"""Which API versions a broker serves, for its ApiVersions response, and who serves them.

The codec defines every version Kafka defines; a broker serves a subset, one handler per API.
An :class:`ApiRegistry` is built from a table of :class:`Served` entries (API key → module and
version range) and answers ApiVersions from it alone; the module of an API is imported the first
time a request of that API is dispatched, and its handler registers then.  An API may be listed
only when a broker setting is on (:attr:`Served.advertised_if`).  A registration whose range
the codec cannot read is refused, so a broker can never serve a version it would fail to
decode.  The core is given a registry and dispatches through it; it never imports the handlers
itself.

A broker emulating an older Kafka release (the ``kafka_version`` setting) lists only the APIs
that release lists, with that release's ranges (:mod:`wire.releases`), and serves the versions
its handler serves within them (:meth:`ApiRegistry.served`).  A release's minimum may lie below
what the codec reads (Kafka 3.x still lists the versions 4.0 removed): it is listed as the
release lists it, as Kafka 4 lists Produce from 0, and a request in such a version is refused
like any other the broker does not serve.  An API of the release that the mock has no handler
for is never listed.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any, Callable, Iterator, Mapping, NamedTuple

from msgspec import Struct

from mockbroker.core import kafka_version
from wire.apis import API_NAMES
from wire.definitions import APIS
from wire.releases import LATEST, RELEASES


class Served(NamedTuple):
    """What a broker serves of one API: the module whose handler serves it, and the versions."""

    module: str
    min_version: int
    max_version: int
    #: the minimum ApiVersions reports, when it differs from what is served
    advertised_min: int | None = None
    #: a broker setting that must be on for ApiVersions to list the API (Kafka serves it all
    #: the same: GetTelemetrySubscriptions and PushTelemetry without a telemetry receiver)
    advertised_if: str | None = None


class Registration(Struct, frozen=True):
    """One API's handler, the versions it serves, and what control rules need of it."""

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
    #: (:data:`mockbroker.core.control.error_responses.ErrorShape`; None: one top-level error code)
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
    """API key → the version range served and the handler that serves it.

    Given ``served`` (API key → :class:`Served`) and the package its modules live in, it loads a
    handler the first time :meth:`get` asks for its API; :meth:`register` adds one directly."""

    def __init__(self, served: dict[int, Served] | None = None,
                 package: str | None = None) -> None:
        self._served: dict[int, Served] = dict(served or {})
        self._package = package
        self._entries: dict[int, Registration] = {}
        #: API key → (min, max, advertised min) for ApiVersions, without loading a handler
        self._ranges: dict[int, tuple[int, int, int]] = {
            key: (s.min_version, s.max_version,
                  s.min_version if s.advertised_min is None else s.advertised_min)
            for key, s in self._served.items()}
        #: API key -> the setting that must be on for ApiVersions to list it
        self._advertised_if = {key: s.advertised_if for key, s in self._served.items()
                               if s.advertised_if is not None}
        self._advertising_settings = tuple(sorted(set(self._advertised_if.values())))

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
        partitioned = False
        if errors is not None:  # loaded by the handler module that declares a shape
            from mockbroker.core.control.error_responses import PartitionShape

            partitioned = isinstance(errors, PartitionShape)
        self._entries[api_key] = Registration(
            api_key, min_version, max_version, handler, advertised_min, unsupported, errors,
            names_topics or names_partitions or partitioned, names_partitions or partitioned,
            names)
        self._ranges[api_key] = (min_version, max_version,
                                 min_version if advertised_min is None else advertised_min)

    def handler(self, api_key: int, **options: Any) -> Callable:
        """Decorator: registers a handler module's function for ``api_key``, with the versions
        the served table gives it."""
        served = self._served.get(api_key)
        if served is None:
            raise ValueError(f"API key {api_key} is not in the served table")

        def decorate(fn):
            self.register(api_key, served.min_version, served.max_version, fn,
                          advertised_min=served.advertised_min, **options)
            return fn
        return decorate

    def get(self, api_key: int) -> Registration | None:
        """The registration of ``api_key``, loading its handler module on first use; None when
        it is not served."""
        entry = self._entries.get(api_key)
        if entry is None and api_key in self._served:
            entry = self._load(api_key)
        return entry

    def _load(self, api_key: int) -> Registration:
        module = f"{self._package}.{self._served[api_key].module}"
        import_module(module)  # its decorator registers it (the import lock makes this once)
        entry = self._entries.get(api_key)
        if entry is None:
            raise ImportError(f"{module} registered no handler for API key {api_key}")
        return entry

    def supports(self, api_key: int, api_version: int) -> bool:
        found = self._ranges.get(api_key)
        return found is not None and found[0] <= api_version <= found[1]

    def served(self, api_key: int, release: str | None = None) -> tuple[int, int] | None:
        """(min, max) of the versions of ``api_key`` a broker of Kafka ``release`` (a
        ``kafka_version``; None: the newest) serves: its handler's, within what the release
        lists; None when it serves none."""
        found = self._ranges.get(api_key)
        if found is None or release is None or release == LATEST:
            return None if found is None else (found[0], found[1])
        table = RELEASES.get(release) or kafka_version.release(release)  # 4.0, or 4.0.2
        listed = table.apis.get(api_key)
        if listed is None:
            return None
        lo, hi = max(found[0], listed[0]), min(found[1], listed[1])
        return (lo, hi) if lo <= hi else None

    def __iter__(self) -> Iterator[Registration]:
        """Every registration, by API key (which loads every handler)."""
        return iter([self.get(key) for key in sorted(self._ranges)])

    def __len__(self) -> int:
        return len(self._ranges)

    def advertising(self, settings: Mapping[str, Any]) -> tuple:
        """What of ``settings`` :meth:`api_versions` reads: equal for equal lists."""
        return (settings.get("kafka_version"),
                *(bool(settings.get(name)) for name in self._advertising_settings))

    def api_versions(self, settings: Mapping[str, Any] | None = None
                     ) -> list[tuple[int, int, int]]:
        """(api key, min version, max version) for every API a broker with ``settings`` (its
        resolved settings; None: the defaults) advertises, by key, as ApiVersions reports
        them: those of its ``kafka_version``."""
        settings = settings or {}
        listed = [(key, advertised, hi) for key, (_, hi, advertised)
                  in sorted(self._ranges.items())
                  if key not in self._advertised_if or settings.get(self._advertised_if[key])]
        release = settings.get("kafka_version")
        if release is None or kafka_version.release_name(release) == LATEST:
            return listed
        apis = kafka_version.release(release).apis
        return [(key, apis[key][0], min(hi, apis[key][1])) for key, _, hi in listed
                if key in apis]
