"""The Schema Registry's server: its own HTTP port beside the brokers and the admin API, on the
brokers' event loop (:mod:`.http` is the application)."""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING, Any

from aiohttp import web

from mockbroker.io.admin.server import bind
from mockbroker.io.registry.http import make_app

if TYPE_CHECKING:
    from mockbroker.io.runtime import ClusterRuntime


class SchemaRegistryServer:
    """The registry on ``host:port`` (0: an ephemeral port, known once started)."""

    def __init__(self, host: str, port: int, runtime: "ClusterRuntime"):
        self.host = host
        self.port = port
        self._runtime = runtime
        self._sockets: list[socket.socket] = []
        self._runner: Any = None

    async def start(self) -> None:
        self._sockets = bind(self.host, self.port)
        self.port = self._sockets[0].getsockname()[1]
        runner = web.AppRunner(make_app(self._runtime), access_log=None,
                               handle_signals=False)
        await runner.setup()
        for sock in self._sockets:
            await web.SockSite(runner, sock).start()
        self._runner = runner

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        for sock in self._sockets:
            sock.close()
        self._sockets = []
