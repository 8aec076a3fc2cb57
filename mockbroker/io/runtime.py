"""Run a :class:`~mockbroker.core.dispatch.Core` (serving every API of
:mod:`mockbroker.handlers`) on an asyncio loop: a listener per broker for each security
protocol configured, the admin HTTP server, and the wake-ups for the core's timers.

A TLS listener presents a broker certificate: the user's (``ssl_certificate_location``,
``ssl_key_location`` and the ``ssl_ca_location`` that signs client certificates), or one signed
by a CA generated at start, whose PEM is :attr:`ClusterRuntime.ssl_ca_location` for clients to
trust.  With ``admin_tls`` the admin API serves HTTPS with the same certificate; off loopback
(or given ``admin_token``) it requires a token (:attr:`ClusterRuntime.admin_token`).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Callable

from mockbroker.core.clock import Clock, ManualClock
from mockbroker.core.cluster import Broker
from mockbroker.core.observe.events import EventLog
from mockbroker.core.security.config import SecuritySettings, uses_tls
from mockbroker.handlers import new_core
from mockbroker.io.admin.server import AdminServer
from mockbroker.core.observe.request_metrics import RequestMetrics
from mockbroker.io.kafka.server import BrokerListener

# mockbroker.io.kafka.tls imports cryptography: only a TLS listener or HTTPS needs it
if TYPE_CHECKING:
    from mockbroker.io.kafka.tls import TlsMaterial


#: bind addresses meaning "every interface", which no client can connect to as advertised, and
#: the name advertised for each when no advertised host is given
WILDCARD_HOSTS = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "localhost"}


def host_port(host: str, port: int) -> str:
    """``host:port``, with an IPv6 address in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


#: the user's own TLS material (PEM files), all three or none
#: the real clock's timers are run on ticks of this many ms (a timer runs on the first at or
#: after its deadline, so never early and at most this late)
TIMER_TICK_MS = 5
TLS_FILES = ("ssl_certificate_location", "ssl_key_location", "ssl_ca_location")


class ClusterRuntime:
    def __init__(self, *, brokers: int = 1, host: str = "127.0.0.1", port: int = 0,
                 http_port: int = 0, advertised_host: str | None = None,
                 topics: dict[str, int] | None = None, settings: dict[str, Any] | None = None,
                 clock=None, security: SecuritySettings | None = None,
                 tls_files: dict[str, str] | None = None, admin_token: str | None = None,
                 admin_tls: bool = False, schema_registry: bool = False,
                 schema_registry_port: int = 0):
        self.host = host
        self.advertised_host = advertised_host or WILDCARD_HOSTS.get(host, host)
        self._settings = dict(settings or {})
        self.clock = clock if clock is not None else Clock()
        #: what happened, in order; kept across a reset (which is one of the events)
        self.events = EventLog(self.clock)
        self.security = security or SecuritySettings()
        self.core = new_core([Broker(i, self.advertised_host, 0) for i in range(brokers)],
                             self._settings, self.clock, self.security, self.events)
        self.core.broker_watchers.append(self._broker_changed)
        max_request = self.core.settings["socket_request_max_bytes"]
        backlog = self.core.settings["socket_listen_backlog_size"]
        self.tls: TlsMaterial | None = None
        self._tls_dir: str | None = None
        self.ssl_ca_location: str | None = None
        context = None
        tls_files = dict(tls_files or {})
        if any(uses_tls(p) for p in self.security.listeners):
            context = self._tls_context(tls_files)
        #: requests counted and timed by every listener (GET /metrics); kept by a reset
        self.request_metrics = RequestMetrics()
        #: listeners in order: every broker's first listener, then every broker's second, ...
        self.listeners = [
            BrokerListener(self.core, i, host, port + j * brokers + i if port else 0,
                           max_request_bytes=max_request, backlog=backlog, name=protocol,
                           protocol=protocol,
                           tls=context if uses_tls(protocol) else None,
                           metrics=self.request_metrics)
            for j, protocol in enumerate(self.security.listeners) for i in range(brokers)]
        self.topics = dict(topics or {})
        self.admin = AdminServer(host, http_port, self, token=admin_token,
                                 ssl_context=self._admin_tls_context(tls_files) if admin_tls
                                 else None)
        #: the Schema Registry's server, when the cluster runs one
        self.schema_registry = None
        if schema_registry:
            from mockbroker.io.registry.server import SchemaRegistryServer

            # over HTTPS with the brokers' certificate when they speak TLS
            self.schema_registry = SchemaRegistryServer(
                host, schema_registry_port, self,
                ssl_context=self._admin_tls_context(tls_files) if context else None)
        self.ready = False
        #: set once :meth:`stop` begins
        self.stopping = False
        #: called once each when the cluster starts to stop: the admin API's waits in
        #: progress end there, so that their callers hear of it rather than waiting it out
        self.on_stop: list[Callable[[], None]] = []
        self._wakeup: asyncio.TimerHandle | None = None
        self._wakeup_at = 0  # the core's time (ms) the wake-up is for
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: set[asyncio.Task] = set()

    def _tls_context(self, files: dict[str, str]):
        """The TLS listeners' context: the user's files, or a CA and broker certificate made
        now (kept until the cluster stops)."""
        from mockbroker.io.kafka.tls import server_context

        client_auth = self.security.ssl_client_auth
        if files.get("ssl_certificate_location") or files.get("ssl_key_location"):
            self.ssl_ca_location = files.get("ssl_ca_location")
            return server_context(files["ssl_certificate_location"], files["ssl_key_location"],
                                  client_auth=client_auth, ca_location=self.ssl_ca_location)
        return self._generated_tls().server_context(client_auth)

    def _generated_tls(self) -> TlsMaterial:
        """A CA and broker certificate made now (once; kept until the cluster stops)."""
        from mockbroker.io.kafka.tls import TlsMaterial

        if self.tls is None:
            import tempfile

            self._tls_dir = tempfile.mkdtemp(prefix="mockbroker-tls-")
            hosts = sorted({self.advertised_host, "localhost", "127.0.0.1"})
            self.tls = TlsMaterial.generate(self._tls_dir, hosts)
            self.ssl_ca_location = self.tls.ca_location
        return self.tls

    def _admin_tls_context(self, files: dict[str, str]):
        """The admin API's HTTPS context: the user's certificate, or the generated one (no
        client certificates asked for)."""
        from mockbroker.io.kafka.tls import server_context

        if files.get("ssl_certificate_location"):
            return server_context(files["ssl_certificate_location"], files["ssl_key_location"])
        return self._generated_tls().server_context()

    @property
    def bootstrap_servers(self) -> str:
        """The bootstrap string of the first listener."""
        return self.bootstrap_for(self.security.listeners[0])

    def bootstrap_for(self, listener: str) -> str:
        """The bootstrap string of ``listener`` (a security protocol's name)."""
        chosen = [lsn for lsn in self.listeners if lsn.name == listener.upper()]
        if not chosen:
            raise KeyError(f"no {listener} listener (there are "
                           f"{', '.join(self.security.listeners)})")
        return ",".join(host_port(self.advertised_host, lsn.port) for lsn in chosen)

    @property
    def listener_bootstraps(self) -> dict[str, str]:
        """Each listener's bootstrap string, by name, in the order configured."""
        return {name: self.bootstrap_for(name) for name in self.security.listeners}

    @property
    def admin_url(self) -> str:
        return f"{self.admin.scheme}://{host_port(self.advertised_host, self.admin.port)}"

    @property
    def schema_registry_url(self) -> str | None:
        """The Schema Registry's URL, or None when the cluster runs none."""
        server = self.schema_registry
        return None if server is None else \
            f"{server.scheme}://{host_port(self.advertised_host, server.port)}"

    @property
    def admin_token(self) -> str | None:
        """The token the admin API requires (``Authorization: Bearer``), or None."""
        return self.admin.token

    async def start(self, *, wait_for_admin: bool = True) -> None:
        """Listen, and create the topics asked for; with ``wait_for_admin=False``, return before
        the admin API's application serves (its socket listens: :meth:`AdminServer.up`)."""
        self._loop = asyncio.get_running_loop()
        self.core.timers.on_change = self._rearm
        self._rearm()  # timers the core set before the loop was ours (offset retention)
        try:
            for listener in self.listeners:
                await listener.start()
                self._advertise(self.core, listener)
            await self.admin.start(wait=wait_for_admin)
        except BaseException:
            await self.stop()
            raise
        for name, partitions in self.topics.items():
            self.core.cluster.create_topic(name, partitions)
        if self.schema_registry is not None:
            self._start_registry(self.core)
            try:
                await self.schema_registry.start()
            except BaseException:
                await self.stop()
                raise
        self.ready = True

    @staticmethod
    def _start_registry(core) -> None:
        """The registry's ``_schemas`` topic, created as it starts."""
        from mockbroker.core.schemas.cluster import registry_of

        registry_of(core.cluster)

    def _advertise(self, core, listener: BrokerListener) -> None:
        broker = core.cluster.brokers[listener.broker_id]
        broker.endpoints[listener.name] = (self.advertised_host, listener.port)
        if listener.name == self.security.listeners[0]:
            broker.port = listener.port
        core.cluster.metadata_changed()

    async def stop(self) -> None:
        self.ready = False
        self.stopping = True
        if self._wakeup is not None:
            self._wakeup.cancel()
            self._wakeup = None
        callbacks, self.on_stop = self.on_stop, []
        for callback in callbacks:
            callback()
        await self.admin.stop()
        if self.schema_registry is not None:
            await self.schema_registry.stop()
        for listener in self.listeners:
            await listener.stop()
        if self._tls_dir is not None:
            import shutil

            shutil.rmtree(self._tls_dir, ignore_errors=True)
            self._tls_dir = None

    async def stop_broker(self, node_id: int, *, controlled: bool = False) -> None:
        """Take a broker down, as if it died or (``controlled``) in a controlled shutdown: its
        listener closes (with every connection) and the cluster moves its partition leadership
        and group coordination to live brokers."""
        for listener in self._listeners(node_id):
            await listener.stop()
        self.core.stop_broker(node_id, controlled=controlled)

    async def start_broker(self, node_id: int) -> None:
        """Bring a stopped broker back on its old port (it leads again where it is preferred
        at the next preferred-leader election)."""
        for listener in self._listeners(node_id):
            if not listener.serving:
                await listener.start()
        self.core.start_broker(node_id)

    def _broker_changed(self, node_id: int, alive: bool) -> None:
        """The core stopped or started a broker (a control rule): close or reopen its
        listener to match."""
        for listener in self._listeners(node_id):
            if alive != listener.serving and self._loop is not None:
                self._pending.add(self._loop.create_task(
                    listener.start() if alive else listener.stop()))
        self._pending = {task for task in self._pending if not task.done()}

    async def reset(self) -> None:
        """Forget everything (topics, groups, offsets, faults, broker latency, the request log,
        dynamic configs) as if the cluster had just started; every broker is up again on its
        port, and client connections are closed so that clients start afresh.  The request
        metrics (:attr:`request_metrics`) are the process's, as the listeners are, and stay:
        a Prometheus counter only grows."""
        brokers = sorted({listener.broker_id for listener in self.listeners})
        core = new_core([Broker(i, self.advertised_host, 0) for i in brokers], self._settings,
                        self.clock, self.security, self.events)
        for listener in self.listeners:
            self._advertise(core, listener)
        core.timers.on_change = self._rearm
        core.broker_watchers.append(self._broker_changed)
        if self.schema_registry is not None:
            self._start_registry(core)
        self.core = core
        self.events.emit("reset", admin="reset")
        for listener in self.listeners:
            listener.core = core
            if not listener.serving:
                await listener.start()
            await listener.close_connections()
        self._rearm()

    def _listeners(self, node_id: int) -> list[BrokerListener]:
        mine = [listener for listener in self.listeners if listener.broker_id == node_id]
        if not mine:
            raise KeyError(f"no broker {node_id}")
        return mine

    def _rearm(self) -> None:
        """Sleep until the core's earliest timer; called whenever that deadline moves up.  On
        the real clock the wake-up comes on the next tick (:data:`TIMER_TICK_MS`) at or after
        the deadline, with every timer due by then: an idle consumer's long polls, each due
        half a second after it came, share wake-ups.  A wake-up already due no later is kept:
        waking early finds nothing due and sleeps again (a member's heartbeat replaces its
        session timer, the earliest, at every beat, and the loop's timer need not follow)."""
        loop = self._loop
        if loop is None:
            return
        deadline = self.core.timers.next_deadline()
        now = self.core.clock.now_ms()
        if deadline is not None and deadline > now and not self.manual_clock:
            deadline += -deadline % TIMER_TICK_MS
        if self._wakeup is not None:
            if deadline is not None and self._wakeup_at <= deadline:
                return
            self._wakeup.cancel()
            self._wakeup = None
        if deadline is None or (self.manual_clock and deadline > now):
            return  # (a manual clock's future comes only with advance_clock)
        self._wakeup = loop.call_later(max(0.0, (deadline - now) / 1000), self._fire)
        self._wakeup_at = deadline

    @property
    def manual_clock(self) -> bool:
        return isinstance(self.clock, ManualClock)

    def advance_clock(self, ms: int) -> int:
        """Move the manual clock forward ``ms``: every timer due by then runs, in deadline
        order, at once.  Returns the new time."""
        if not isinstance(self.clock, ManualClock):
            raise RuntimeError("the broker clock is real: start the cluster with "
                               "clock=\"manual\" (--clock manual) to move it")
        self.clock.advance(ms)
        self.events.emit("clock_advanced", ms=ms, now_ms=self.clock.now_ms())
        self._rearm()
        return self.clock.now_ms()

    def _fire(self) -> None:
        self._wakeup = None
        try:
            self.core.timers.run_due()
        finally:
            self._rearm()  # whatever happened, the timers still due keep their wake-up
