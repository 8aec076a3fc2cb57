"""The OpenAPI 3.1 description of the admin API, served at ``GET /openapi.json``.

Written from the route table (:mod:`mockbroker.adminapi.routes`) and the views
(:mod:`mockbroker.adminapi.views`): nothing here describes a route or a field by hand.

Where the API requires a token (``document(bearer=True)``: an admin server off loopback, or
one given a token), the document declares the ``bearer`` security scheme for every operation
but the public ones (``GET /health``), each of which may then answer 401.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from mockbroker._version import __version__
from mockbroker.adminapi.jsonview import component_schema, schema, schema_name, views_in
from mockbroker.adminapi.routes import ROUTES, Param, Route
from mockbroker.adminapi.views import VIEWS, Error

_STATUS_TEXT = {400: "the call was refused; nothing changed",
                404: "the call was refused; nothing changed",
                409: "the call was refused; nothing changed",
                408: "the wait timed out; the error says what was seen instead",
                503: "the cluster is starting (not every listener is up yet) or stopping"}
#: the security scheme's name in the document
BEARER = "bearer"
_UNAUTHORIZED = ("no token, or a wrong one (Authorization: Bearer TOKEN); the "
                 "WWW-Authenticate header says which")


def _content(tp: Any) -> dict[str, Any]:
    return {"application/json": {"schema": schema(tp)}}


def _param(param: Param, where: str) -> dict[str, Any]:
    return {"name": param.name, "in": where, "required": where == "path",
            "schema": schema(param.type), "description": param.description}


def operation(route: Route, bearer: bool = False) -> dict[str, Any]:
    op: dict[str, Any] = {
        "operationId": route.name,
        "summary": route.summary,
        "responses": {str(route.status): {"description": route.answer_doc,
                                          "content": _content(route.answer)}},
    }
    for status in route.errors:
        op["responses"][str(status)] = {"description": _STATUS_TEXT[status],
                                        "content": _content(route.error_body)}
    params = [_param(p, "path") for p in route.path_params] + \
        [_param(p, "query") for p in route.query]
    if params:
        op["parameters"] = params
    if route.body is not None:
        op["requestBody"] = {"required": route.body_required, "content": _content(route.body)}
    if bearer and route.public:
        op["security"] = []
    elif bearer:
        op["responses"]["401"] = {"description": _UNAUTHORIZED, "content": _content(Error)}
    return op


def paths(bearer: bool = False) -> dict[str, Any]:
    out: dict[str, dict[str, Any]] = {}
    for route in ROUTES:
        out.setdefault(route.path, {})[route.method.lower()] = operation(route, bearer)
    return out


def components() -> dict[str, Any]:
    """A schema for every view, and for every view a route names (nested ones included)."""
    named: list[type] = list(VIEWS)
    for route in ROUTES:
        for tp in (route.answer, route.body, route.error_body):
            named += [v for v in views_in(tp) if v not in named]
    return {schema_name(cls): component_schema(cls) for cls in named}


@lru_cache(maxsize=2)
def document(bearer: bool = False) -> dict[str, Any]:
    """The document; ``bearer``: as served where every call but the public ones needs
    ``Authorization: Bearer TOKEN``."""
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": "mockbroker admin API", "version": __version__,
                 "description": "Fault injection and inspection for a mock Kafka cluster."},
        "paths": paths(bearer),
        "components": {"schemas": components()},
    }
    if bearer:
        doc["components"]["securitySchemes"] = {BEARER: {
            "type": "http", "scheme": "bearer",
            "description": "the admin token: mockbroker's ready line shows it (token=...), "
                           "or the one set with --admin-token, MOCKBROKER_ADMIN_TOKEN or "
                           "MockCluster(admin_token=...)"}}
        doc["security"] = [{BEARER: []}]
    return doc
