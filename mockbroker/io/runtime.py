"""Run a :class:`~mockbroker.core.dispatch.Core` (serving every API of
:mod:`mockbroker.handlers`) on an asyncio loop: one listener per broker, the admin HTTP server,
and the wake-ups for the core's timers."""

from __future__ import annotations

import asyncio
from typing import Any

from mockbroker.core.cluster import Broker
from mockbroker.handlers import new_core
from mockbroker.io.http import AdminServer
from mockbroker.io.server import BrokerListener


#: bind addresses meaning "every interface", which no client can connect to as advertised, and
#: the name advertised for each when no advertised host is given
WILDCARD_HOSTS = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "localhost"}


def host_port(host: str, port: int) -> str:
    """``host:port``, with an IPv6 address in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class ClusterRuntime:
    def __init__(self, *, brokers: int = 1, host: str = "127.0.0.1", port: int = 0,
                 http_port: int = 0, advertised_host: str | None = None,
                 topics: dict[str, int] | None = None, settings: dict[str, Any] | None = None,
                 clock=None):
        self.host = host
        self.advertised_host = advertised_host or WILDCARD_HOSTS.get(host, host)
        self._settings = dict(settings or {})
        self._clock = clock
        self.core = new_core([Broker(i, self.advertised_host, 0) for i in range(brokers)],
                             self._settings, clock)
        self.core.broker_watchers.append(self._broker_changed)
        max_request = self.core.settings["socket_request_max_bytes"]
        self.listeners = [BrokerListener(self.core, i, host, port + i if port else 0,
                                         max_request_bytes=max_request)
                          for i in range(brokers)]
        self.topics = dict(topics or {})
        self.admin = AdminServer(host, http_port, self)
        self.ready = False
        self._wakeup: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: set[asyncio.Task] = set()

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(host_port(self.advertised_host, listener.port)
                        for listener in self.listeners)

    @property
    def admin_url(self) -> str:
        return f"http://{host_port(self.advertised_host, self.admin.port)}"

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.core.timers.on_change = self._rearm
        self._rearm()  # timers the core set before the loop was ours (offset retention)
        try:
            for listener in self.listeners:
                await listener.start()
                self.core.cluster.brokers[listener.broker_id].port = listener.port
            await self.admin.start()
        except BaseException:
            await self.stop()
            raise
        for name, partitions in self.topics.items():
            self.core.cluster.create_topic(name, partitions)
        self.ready = True

    async def stop(self) -> None:
        self.ready = False
        if self._wakeup is not None:
            self._wakeup.cancel()
        await self.admin.stop()
        for listener in self.listeners:
            await listener.stop()

    async def stop_broker(self, node_id: int) -> None:
        """Take a broker down: its listener closes (with every connection) and the cluster moves
        its partition leadership and group coordination to live brokers."""
        listener = self._listener(node_id)
        await listener.stop()
        self.core.stop_broker(node_id)

    async def start_broker(self, node_id: int) -> None:
        """Bring a stopped broker back on its old port; it takes back what it prefers to lead."""
        listener = self._listener(node_id)
        if not listener.serving:
            await listener.start()
        self.core.start_broker(node_id)

    def _broker_changed(self, node_id: int, alive: bool) -> None:
        """The core stopped or started a broker (a control rule): close or reopen its
        listener to match."""
        listener = self._listener(node_id)
        if alive != listener.serving and self._loop is not None:
            self._pending.add(self._loop.create_task(
                listener.start() if alive else listener.stop()))
            self._pending = {task for task in self._pending if not task.done()}

    async def reset(self) -> None:
        """Forget everything (topics, groups, offsets, faults, broker latency, the request log,
        dynamic configs) as if the cluster had just started; every broker is up again on its
        port, and client connections are closed so that clients start afresh."""
        core = new_core([Broker(listener.broker_id, self.advertised_host, listener.port)
                         for listener in self.listeners], self._settings, self._clock)
        core.timers.on_change = self._rearm
        core.broker_watchers.append(self._broker_changed)
        self.core = core
        for listener in self.listeners:
            listener.core = core
            if not listener.serving:
                await listener.start()
            await listener.close_connections()
        self._rearm()

    def _listener(self, node_id: int) -> BrokerListener:
        for listener in self.listeners:
            if listener.broker_id == node_id:
                return listener
        raise KeyError(f"no broker {node_id}")

    def _rearm(self) -> None:
        """Sleep until the core's earliest timer; called whenever that deadline moves up."""
        loop = self._loop
        if loop is None:
            return
        if self._wakeup is not None:
            self._wakeup.cancel()
            self._wakeup = None
        deadline = self.core.timers.next_deadline()
        if deadline is None:
            return
        delay = max(0.0, (deadline - self.core.clock.now_ms()) / 1000)
        self._wakeup = loop.call_later(delay, self._fire)

    def _fire(self) -> None:
        self._wakeup = None
        try:
            self.core.timers.run_due()
        finally:
            self._rearm()  # whatever happened, the timers still due keep their wake-up
