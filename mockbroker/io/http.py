"""The admin API over HTTP: aiohttp serves each route of :mod:`mockbroker.core.routes` with its
handler in :mod:`mockbroker.io.admin_api`.

Served on the same event loop as the brokers, so every handler sees the cluster between two
Kafka requests, never in the middle of one.  JSON in and out; a bad call gets a 4xx with
``{"error": "..."}`` and is checked in full before anything changes.  The routes and their
bodies are described by ``GET /openapi.json`` (:mod:`mockbroker.io.openapi`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from aiohttp import web

from mockbroker.core import routes
from mockbroker.io.admin_api import AdminApi, Call, no_such_endpoint, not_allowed

if TYPE_CHECKING:
    from mockbroker.io.runtime import ClusterRuntime

log = logging.getLogger("mockbroker.http")


def _handler(api: AdminApi, route: routes.Route):
    async def serve(request: web.Request) -> web.Response:
        query = {name: request.query[name] for name in request.query.keys()}
        call = Call(dict(request.match_info), query, await request.read())
        status, data = await api.handle(route, call)
        return web.json_response(data, status=status)

    serve.__name__ = route.name
    return serve


def aiohttp_routes(api: AdminApi) -> list[web.RouteDef]:
    """One aiohttp route per entry of the route table."""
    return [web.route(route.method, route.path, _handler(api, route))
            for route in routes.ROUTES]


@web.middleware
async def _errors_as_json(request: web.Request, handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        if exc.status == 404:
            status, data = no_such_endpoint(request.method, request.path)
        elif exc.status == 405:
            status, data = not_allowed(request.method, request.path)
        else:
            status, data = exc.status, {"error": exc.reason}
        response = web.json_response(data, status=status)
        if "Allow" in exc.headers:
            response.headers["Allow"] = exc.headers["Allow"]
        return response
    except Exception:
        log.exception("admin API: %s %s failed", request.method, request.path)
        return web.json_response({"error": "internal error (see the server log)"}, status=500)


def make_app(runtime: "ClusterRuntime") -> web.Application:
    app = web.Application(middlewares=[_errors_as_json])
    app.add_routes(aiohttp_routes(AdminApi(runtime)))
    return app


class AdminServer:
    def __init__(self, host: str, port: int, runtime: "ClusterRuntime"):
        self.host = host
        self.port = port
        self._runner = web.AppRunner(make_app(runtime), access_log=None)
        self._site: web.TCPSite | None = None

    async def start(self) -> None:
        await self._runner.setup()
        self._site = web.TCPSite(self._runner, self.host, self.port)
        await self._site.start()
        self.port = self._site._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        await self._runner.cleanup()
