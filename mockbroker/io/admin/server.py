"""The admin API's server: its socket bound at start, its HTTP application loaded beside the
brokers.

The HTTP application (aiohttp, the routes, the dashboard: most of what a start imports) is
loaded on a worker thread once the socket listens.  ``mockbroker serve`` prints its ready line
without waiting for it, so the brokers answer from the start; a call to the admin API made
meanwhile waits in the socket's backlog and is answered once the application serves.  If the
application cannot start, the socket is closed (a caller is refused, never left waiting) and
:meth:`AdminServer.up` raises.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import socket
import ssl
from typing import TYPE_CHECKING, Any

from mockbroker.io.admin.token import admin_token_for

if TYPE_CHECKING:
    from mockbroker.io.runtime import ClusterRuntime

log = logging.getLogger("mockbroker.http")

#: pending connections a listening socket holds while the application loads
_BACKLOG = 128
#: the module whose ``make_app`` is the application (loaded on a worker thread)
APPLICATION = "mockbroker.io.admin.http"


def bind(host: str, port: int) -> list[socket.socket]:
    """Listening sockets for ``host:port`` as asyncio's ``create_server`` would make them: one
    per address the host resolves to (every interface for ``""``), all on one port (``port`` 0:
    the first one's ephemeral port)."""
    # An ASCII host goes as bytes: a str is encoded with the idna codec, whose import (with
    # unicodedata) costs more than the rest of the lookup, and it only matters for non-ASCII.
    infos = socket.getaddrinfo((host.encode() if host.isascii() else host) or None, port,
                               type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(infos):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            if len(sockets) > 1:  # the port the first one got
                address = (address[0], sockets[0].getsockname()[1], *address[2:])
            sock.bind(address)
            sock.listen(_BACKLOG)
            sock.setblocking(False)
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return sockets


class AdminServer:
    """The admin API on ``host:port`` (0: an ephemeral port, known once started).

    ``token``: the one callers must send (:func:`admin_token_for` decides, so off loopback
    there always is one: :attr:`token`).  ``ssl_context``: serve HTTPS with it."""

    def __init__(self, host: str, port: int, runtime: "ClusterRuntime", *,
                 token: str | None = None, ssl_context: ssl.SSLContext | None = None):
        self.host = host
        self.port = port
        self.token = admin_token_for(host, token)
        self.ssl_context = ssl_context
        self._runtime = runtime
        self._sockets: list[socket.socket] = []
        self._runner: Any = None  # aiohttp's AppRunner, once the application serves
        self._starting: asyncio.Task | None = None

    @property
    def scheme(self) -> str:
        return "https" if self.ssl_context is not None else "http"

    async def start(self, *, wait: bool = True) -> None:
        """Listen, and load and start the application; with ``wait=False``, return once the
        socket listens (the application comes up in the background: :meth:`up`)."""
        self._sockets = bind(self.host, self.port)
        self.port = self._sockets[0].getsockname()[1]
        self._starting = asyncio.get_running_loop().create_task(self._serve())
        if wait:
            await self.up()

    async def up(self) -> None:
        """Wait until the application serves; raises what kept it from starting."""
        if self._starting is not None:
            await asyncio.shield(self._starting)

    async def _serve(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            # aiohttp and the routes load on a worker thread: the loop keeps serving Kafka
            http = await loop.run_in_executor(None, importlib.import_module, APPLICATION)
            from aiohttp import web

            runner = web.AppRunner(http.make_app(self._runtime, self.token), access_log=None)
            await runner.setup()
            self._runner = runner
            for sock in self._sockets:
                await web.SockSite(runner, sock, ssl_context=self.ssl_context).start()
        except Exception as exc:
            log.error("the admin API on port %d did not start: %s", self.port, exc)
            await self._close()
            raise
        except asyncio.CancelledError:  # stopped before it served
            await self._close()
            raise

    async def stop(self) -> None:
        if self._starting is not None and not self._starting.done():
            self._starting.cancel()
            with contextlib.suppress(BaseException):
                await self._starting
        await self._close()

    async def _close(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            from mockbroker.io.admin.http import EVENT_STREAMS

            runner.app[EVENT_STREAMS].close_all()  # else the server would wait for them
            await runner.cleanup()  # closes the sockets its sites serve
        for sock in self._sockets:
            sock.close()
        self._sockets = []
