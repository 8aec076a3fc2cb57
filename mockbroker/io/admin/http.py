"""The admin API over HTTP: aiohttp serves each route of :mod:`mockbroker.adminapi.routes` with its
handler in :mod:`mockbroker.io.admin.api`.

Served on the same event loop as the brokers, so every handler sees the cluster between two
Kafka requests, never in the middle of one.  JSON in and out; a bad call gets a 4xx with
``{"error": "..."}`` and is checked in full before anything changes.  The routes and their
bodies are described by ``GET /openapi.json`` (:mod:`mockbroker.adminapi.openapi`).

Off loopback (bound to anything but 127.0.0.0/8, ::1 or localhost: another interface, or every
one), or wherever a token was given, every call but the public routes (``GET /health``) needs
``Authorization: Bearer TOKEN``; the token is the one given (``admin_token``) or one made at
start (:attr:`~mockbroker.io.admin.server.AdminServer.token`, which ``mockbroker serve`` prints
in its ready line).  A call without it, or with another, gets 401 with ``{"error": "<why>"}``
and a ``WWW-Authenticate: Bearer`` challenge (RFC 6750).  A GET may carry the token as the
query parameter ``access_token`` instead (RFC 6750, section 2.3), for the dashboard's event
stream: a browser's EventSource cannot send headers.  With an SSL context the server speaks
HTTPS only.

``GET /`` is the dashboard (:mod:`mockbroker.io.admin.pages`), public as it holds no data.
"""

from __future__ import annotations

import hmac
import logging
from typing import TYPE_CHECKING

from aiohttp import hdrs, web

from mockbroker.adminapi import routes
from mockbroker.io.admin.api import AdminApi, Call, no_such_endpoint, not_allowed
from mockbroker.io.admin.event_stream import EventStreams
from mockbroker.io.admin.metrics import serve_metrics
from mockbroker.io.admin.pages import serve_pages

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


# -- the token ---------------------------------------------------------------------------------
# Which hosts need one and what it may hold: mockbroker.io.admin.token.

_REALM = 'Bearer realm="mockbroker admin API"'
#: the query parameter a GET may carry the token in (RFC 6750, section 2.3)
ACCESS_TOKEN = "access_token"


def _refusal(header: str | None, expected: bytes) -> tuple[str | None, str] | None:
    """None when ``header`` (Authorization) carries the token; else (RFC 6750 error code or
    None, the reason shown to the caller)."""
    if header is None or not header.strip():
        return None, ("this admin API requires a token: send Authorization: Bearer TOKEN "
                      "(mockbroker serve shows it as token=... in its ready line; "
                      "MockCluster.admin_token holds it)")
    scheme, _, credentials = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not credentials.strip():
        # a scheme's name is shown back, never what could be the token itself
        shown = f", not {scheme} ..." if credentials.strip() and len(scheme) <= 20 else ""
        return "invalid_request", f"the Authorization header must be Bearer TOKEN{shown}"
    if not hmac.compare_digest(credentials.strip().encode(), expected):
        return "invalid_token", "wrong token: not the one this admin API requires"
    return None


def _require_token(token: str):
    expected = token.encode()

    @web.middleware
    async def require_token(request: web.Request, handler) -> web.StreamResponse:
        method = "GET" if request.method == "HEAD" else request.method
        route, _, _ = routes.match(method, request.path)
        if route is not None and route.public:
            return await handler(request)
        header = request.headers.get(hdrs.AUTHORIZATION)
        if ACCESS_TOKEN in request.query:
            # no API route takes the parameter: it goes, whether it is used or not
            query = request.rel_url.without_query_params(ACCESS_TOKEN)
            if header is None and method == "GET":
                # only for reads (RFC 6750 advises against tokens in URLs): a link cannot make
                # the API change anything
                header = "Bearer " + request.query[ACCESS_TOKEN]
            request = request.clone(rel_url=query)
        refused = _refusal(header, expected)
        if refused is None:
            return await handler(request)
        code, reason = refused
        challenge = _REALM + (f', error="{code}"' if code else "")
        return web.json_response({"error": reason}, status=401,
                                 headers={hdrs.WWW_AUTHENTICATE: challenge})

    return require_token


# -- the server --------------------------------------------------------------------------------

#: the app's live event streams (ended when the server stops)
EVENT_STREAMS = web.AppKey("event_streams", EventStreams)


def make_app(runtime: "ClusterRuntime", token: str | None = None) -> web.Application:
    """The admin API's application; with ``token``, every call but the public routes needs
    ``Authorization: Bearer <token>``."""
    middlewares = [_errors_as_json, serve_pages]
    if token is not None:
        middlewares.append(_require_token(token))
    # GET /metrics (Prometheus text) and GET /events/stream (server-sent events): not JSON,
    # so outside the router and its OpenAPI document; after the token check
    middlewares.append(serve_metrics(runtime))
    streams = EventStreams(runtime)
    middlewares.append(streams.middleware)
    app = web.Application(middlewares=middlewares)
    app.add_routes(aiohttp_routes(AdminApi(runtime)))
    app[EVENT_STREAMS] = streams
    return app
