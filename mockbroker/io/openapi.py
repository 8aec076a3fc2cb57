"""The OpenAPI 3.1 description of the admin API, served at ``GET /openapi.json``.

Written from the route table (:mod:`mockbroker.core.routes`) and the views
(:mod:`mockbroker.core.views`): nothing here describes a route or a field by hand.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from mockbroker._version import __version__
from mockbroker.core.jsonview import component_schema, schema, schema_name, views_in
from mockbroker.core.routes import ROUTES, Param, Route
from mockbroker.core.views import VIEWS

_STATUS_TEXT = {400: "the call was refused; nothing changed",
                404: "the call was refused; nothing changed",
                409: "the call was refused; nothing changed",
                503: "not every listener is up yet"}


def _content(tp: Any) -> dict[str, Any]:
    return {"application/json": {"schema": schema(tp)}}


def _param(param: Param, where: str) -> dict[str, Any]:
    return {"name": param.name, "in": where, "required": where == "path",
            "schema": schema(param.type), "description": param.description}


def operation(route: Route) -> dict[str, Any]:
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
    return op


def paths() -> dict[str, Any]:
    out: dict[str, dict[str, Any]] = {}
    for route in ROUTES:
        out.setdefault(route.path, {})[route.method.lower()] = operation(route)
    return out


def components() -> dict[str, Any]:
    """A schema for every view, and for every view a route names (nested ones included)."""
    named: list[type] = list(VIEWS)
    for route in ROUTES:
        for tp in (route.answer, route.body, route.error_body):
            named += [v for v in views_in(tp) if v not in named]
    return {schema_name(cls): component_schema(cls) for cls in named}


@lru_cache(maxsize=1)
def document() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "mockbroker admin API", "version": __version__,
                 "description": "Fault injection and inspection for a mock Kafka cluster."},
        "paths": paths(),
        "components": {"schemas": components()},
    }
