"""The Schema Registry's server: its own HTTP port beside the brokers and the admin API, on the
brokers' event loop (:mod:`.http` is the application); HTTPS with the brokers' certificate when
their listeners speak TLS."""

from __future__ import annotations

import socket
import ssl
from typing import TYPE_CHECKING, Any

from aiohttp import web

from mockbroker.io.admin.server import bind
from mockbroker.io.registry.http import make_app

if TYPE_CHECKING:
    from mockbroker.io.runtime import ClusterRuntime


class SchemaRegistryServer:
    """The registry on ``host:port`` (0: an ephemeral port, known once started)."""

    def __init__(self, host: str, port: int, runtime: "ClusterRuntime", *,
                 ssl_context: ssl.SSLContext | None = None):
        self.host = host
        self.port = port
        self.ssl_context = ssl_context
        #: (operation, HTTP status) -> calls answered (the process's, as the listeners' are)
        self.calls: dict[tuple[str, int], int] = {}
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
            await web.SockSite(runner, sock, ssl_context=self.ssl_context).start()
        self._runner = runner

    @property
    def scheme(self) -> str:
        return "https" if self.ssl_context is not None else "http"

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        for sock in self._sockets:
            sock.close()
        self._sockets = []
