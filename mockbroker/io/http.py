"""The HTTP admin API, served by the same event loop as the brokers."""

from __future__ import annotations

from typing import Callable

from aiohttp import web


def make_app(ready: Callable[[], bool]) -> web.Application:
    async def health(request: web.Request) -> web.Response:
        if ready():
            return web.json_response({"status": "ok"})
        return web.json_response({"status": "starting"}, status=503)

    async def not_found(request: web.Request) -> web.Response:
        return web.json_response({"error": f"no such endpoint: {request.method} {request.path}"},
                                 status=404)

    app = web.Application()
    app.router.add_get("/health", health)
    app.router.add_route("*", "/{tail:.*}", not_found)
    return app


class AdminServer:
    def __init__(self, host: str, port: int, ready: Callable[[], bool]):
        self.host = host
        self.port = port
        self._runner = web.AppRunner(make_app(ready), access_log=None)
        self._site: web.TCPSite | None = None

    async def start(self) -> None:
        await self._runner.setup()
        self._site = web.TCPSite(self._runner, self.host, self.port)
        await self._site.start()
        self.port = self._site._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        await self._runner.cleanup()
