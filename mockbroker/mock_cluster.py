"""``MockCluster``: a whole cluster in-process, its event loop on a background thread.

    with MockCluster(brokers=3, topics={"orders": 6}) as cluster:
        cluster.bootstrap_servers   # "127.0.0.1:PORT1,127.0.0.1:PORT2,127.0.0.1:PORT3"
        cluster.admin_url           # "http://127.0.0.1:PORT"

    with MockCluster(security_protocol="SASL_SSL", users={"alice": "secret"}) as cluster:
        cluster.ssl_ca_location     # the PEM of the CA that signed the brokers' certificates

    with MockCluster(clock="manual") as cluster:
        cluster.wait_for_group("app", members=2)
        cluster.advance_clock(45_000)   # sessions that end within 45 s end now
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any, Callable

from mockbroker.admin import AdminClient
from mockbroker.core.clock import CLOCKS, make_clock
from mockbroker.core.security.config import SECURITY_NAMES, check_security
from mockbroker.core.settings import resolve_settings
from mockbroker.io.admin.token import check_admin_token
from mockbroker.io.admin.local import LocalTransport
from mockbroker.io.runtime import TLS_FILES, ClusterRuntime

if TYPE_CHECKING:  # mockbroker.io.kafka.tls imports cryptography, for TLS clusters only
    from mockbroker.io.kafka.tls import ClientCertificate

_OWN_SETTINGS = ("brokers", "host", "port", "http_port", "advertised_host", "topics",
                 "admin_token", "admin_tls", "clock", "schema_registry", "schema_registry_port")


def _check_own(values: dict[str, Any]) -> None:
    brokers = values.get("brokers", 1)
    if isinstance(brokers, bool) or not isinstance(brokers, int) or brokers < 1:
        raise ValueError(f"brokers: must be an integer of at least 1, got {brokers!r}")
    for name in ("port", "http_port", "schema_registry_port"):
        port = values.get(name, 0)
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError(f"{name}: must be a port number (0 for any), got {port!r}")
    for name in ("host", "advertised_host"):
        host = values.get(name)
        if host is not None and (not isinstance(host, str) or not host):
            raise ValueError(f"{name}: must be a host name or address, got {host!r}")
    check_admin_token(values.get("admin_token"))
    if values.get("clock", "real") not in CLOCKS:
        raise ValueError(f"clock: must be real or manual, got {values['clock']!r}")
    for name in ("admin_tls", "schema_registry"):
        if not isinstance(values.get(name, False), bool):
            raise ValueError(f"{name}: expected true or false, got {values[name]!r}")
    topics = values.get("topics") or {}
    if not isinstance(topics, dict):
        raise ValueError(f"topics: must map topic names to partition counts, got {topics!r}")
    for name, partitions in topics.items():
        if not isinstance(name, str) or isinstance(partitions, bool) or \
                not isinstance(partitions, int) or partitions < 1:
            raise ValueError(f"topics: {name!r} needs a partition count of at least 1, "
                             f"got {partitions!r}")


def _tls_files(files: dict[str, Any]) -> dict[str, str]:
    for name, value in files.items():
        if not isinstance(value, str) or not value:
            raise ValueError(f"{name}: expected the path of a PEM file, got {value!r}")
    if files and ("ssl_certificate_location" not in files or "ssl_key_location" not in files):
        raise ValueError("ssl_certificate_location and ssl_key_location go together "
                         "(ssl_ca_location, for client certificates, is optional)")
    return files


class MockCluster:
    """A started cluster between :meth:`start` and :meth:`stop` (or inside ``with``)."""

    def __init__(self, **settings: Any):
        own = {k: settings.pop(k) for k in _OWN_SETTINGS if k in settings}
        _check_own(own)
        own["security"] = check_security(
            {k: settings.pop(k) for k in SECURITY_NAMES if k in settings})
        own["tls_files"] = _tls_files({k: settings.pop(k) for k in TLS_FILES if k in settings})
        resolve_settings(settings)  # raises ValueError naming a bad setting, before any start
        self._own = own
        self._settings = settings
        self._runtime: ClusterRuntime | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> "MockCluster":
        """Start every listener; returns once they all accept connections."""
        if self._thread is not None:
            raise RuntimeError("cluster is already started")
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                own = dict(self._own)
                own["clock"] = make_clock(own.get("clock", "real"))
                self._runtime = ClusterRuntime(settings=self._settings, **own)
                loop.run_until_complete(self._runtime.start())
            except BaseException as exc:  # reported to the caller of start()
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._runtime.stop())
            loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=run, name="mockbroker", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            self._thread.join()
            self._thread = self._loop = self._runtime = None
            raise failure[0]
        return self

    def stop(self) -> None:
        """Close every listener and the admin server."""
        if self._thread is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._thread = self._loop = None

    def __enter__(self) -> "MockCluster":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    # -- what users read -----------------------------------------------------------------------

    @property
    def bootstrap_servers(self) -> str:
        return self._started().bootstrap_servers

    @property
    def admin_url(self) -> str:
        return self._started().admin_url

    @property
    def schema_registry_url(self) -> str | None:
        """The Schema Registry's URL (Confluent's REST API) with ``schema_registry=True``;
        None without."""
        return self._started().schema_registry_url

    @property
    def admin_token(self) -> str | None:
        """The token the HTTP admin API requires (``Authorization: Bearer TOKEN``): the
        ``admin_token`` given, or one made at start when ``host`` is not loopback; else None."""
        return self._started().admin_token

    @property
    def listeners(self) -> dict[str, str]:
        """Each listener's bootstrap string by name (its security protocol), in the order
        configured; :attr:`bootstrap_servers` is the first's."""
        return self._started().listener_bootstraps

    def bootstrap_for(self, listener: str) -> str:
        """The bootstrap string of one listener: ``cluster.bootstrap_for("SASL_SSL")``."""
        return self._started().bootstrap_for(listener)

    @property
    def ssl_ca_location(self) -> str | None:
        """The PEM file of the CA clients of a TLS listener trust (None without TLS)."""
        return self._started().ssl_ca_location

    def client_certificate(self, subject: str = "CN=client") -> ClientCertificate:
        """A client certificate signed by the generated CA, for ``ssl.client.auth``: its
        ``cert_location`` and ``key_location`` (PEM) and ``pkcs12_location`` (PKCS#12).
        The connection's principal is ``User:`` and the subject as Kafka writes it."""
        runtime = self._started()
        if runtime.tls is None:
            raise RuntimeError("no generated CA: the cluster has no TLS listener, or uses "
                               "the user's own certificates")
        return runtime.tls.issue_client(subject)

    @property
    def admin(self) -> AdminClient:
        """A client for this cluster's admin API (faults, brokers, groups, topics) that calls
        the API's handlers in-process, without HTTP; ``AdminClient(cluster.admin_url)`` is the
        same over HTTP."""
        runtime = self._started()
        return AdminClient(self.admin_url, transport=LocalTransport(runtime, self._loop))

    @property
    def core(self):
        """The sans-IO core (for tests that inspect state); touch it only via :meth:`call`."""
        return self._started().core

    def call(self, fn, *args):
        """Run ``fn(*args)`` on the cluster's loop thread and return its result."""
        self._started()

        async def invoke():
            return fn(*args)

        return asyncio.run_coroutine_threadsafe(invoke(), self._loop).result()

    def control(self, api: int | str | None, fn: Callable, *, keep: bool = False,
                broker: int | None = None) -> int:
        """Control requests to ``api`` (a Kafka API name or key; None: any) in-process, as
        franz-go's kfake ControlKey does: ``fn(request)`` runs on the cluster's thread with the
        decoded request (``.body``, ``.api_key``, ``.api_version``, ``.broker_id``,
        ``.client_id``) and returns a response message to answer with, ``DISCONNECT`` to close
        the connection, or None to let the request through.  It is removed once it answers,
        unless ``keep``.  Returns the rule id (``admin.remove_fault(id)`` removes it)."""
        return self.call(lambda: self._started().core.control.control(
            api, fn, keep=keep, broker=broker).id)

    # -- time and waiting ---------------------------------------------------------------------

    @property
    def now_ms(self) -> int:
        """The broker clock's time (a manual clock's, under ``clock="manual"``)."""
        return self._started().clock.now_ms()

    def advance_clock(self, ms: int) -> int:
        """Move the manual clock (``MockCluster(clock="manual")``) ``ms`` forward: every
        session, rebalance and transaction timeout, retention check and fetch wait due by
        then happens now, in deadline order.  Returns the new time."""
        if isinstance(ms, bool) or not isinstance(ms, int) or ms < 0:
            raise ValueError(f"ms: must be a whole number of milliseconds >= 0, got {ms!r}")
        return self.admin.advance_clock(ms).now_ms

    def wait_for_group(self, group_id: str, **condition: Any):
        """:meth:`AdminClient.wait_for_group`: the group once it is Stable (or ``state``), with
        ``members`` members or ``assignment`` if given, within ``timeout`` seconds."""
        return self.admin.wait_for_group(group_id, **condition)

    def wait_for_records(self, topic: str, records: int, **options: Any):
        """:meth:`AdminClient.wait_for_records`: the topic once it holds ``records``."""
        return self.admin.wait_for_records(topic, records, **options)

    def wait_for_lag_zero(self, group_id: str, **options: Any):
        """:meth:`AdminClient.wait_for_lag_zero`: the group once it has consumed everything."""
        return self.admin.wait_for_lag_zero(group_id, **options)

    def wait_for_event(self, type: str | None = None, **options: Any) -> dict[str, Any]:
        """:meth:`AdminClient.wait_for_event`: the first matching event after ``since``."""
        return self.admin.wait_for_event(type, **options)

    def events(self, type=None, **filters: Any) -> list[dict[str, Any]]:
        """:meth:`AdminClient.events`: what happened, oldest first."""
        return self.admin.events(type, **filters)

    def stop_broker(self, node_id: int, *, controlled: bool = False) -> None:
        """Take broker ``node_id`` down as if it had died (``controlled``: in a controlled
        shutdown, after which it is still an eligible leader replica); leaders and
        coordinators move."""
        self._run(self._started().stop_broker(node_id, controlled=controlled))

    def start_broker(self, node_id: int) -> None:
        """Bring a stopped broker back on the same port."""
        self._run(self._started().start_broker(node_id))

    def reset(self) -> None:
        """Drop all topics, groups, offsets and faults, as ``POST /reset`` does."""
        self._run(self._started().reset())

    def _run(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def _started(self) -> ClusterRuntime:
        if self._runtime is None or self._thread is None:
            raise RuntimeError("cluster is not started")
        return self._runtime
