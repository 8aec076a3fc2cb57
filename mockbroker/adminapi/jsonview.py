"""JSON for the admin API's view dataclasses, driven by their type hints.

* :func:`to_json`: a view (or a list or dict of them) as JSON-ready data; integer dict keys
  become strings, as JSON objects need.
* :func:`from_json`: the other way, for the client; keys a newer server adds are ignored, and
  string keys of a ``dict[int, ...]`` become integers again.
* :func:`component_schema` / :func:`schema`: the OpenAPI 3.1 (JSON Schema) description of a view
  or of any type hint a view uses.

Standard library only: the server and the stdlib-only admin client both import it.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from functools import cache
from typing import Any, Literal, Union, get_args, get_origin

__all__ = ["component_schema", "describe", "from_json", "from_object", "hints", "schema",
           "schema_name", "to_json", "views_in"]

_NONE = type(None)
_SIMPLE = {bool: "boolean", int: "integer", float: "number", str: "string"}


def describe(description: str | None = None, *, default: Any = dataclasses.MISSING,
             default_factory: Any = dataclasses.MISSING, **extra: Any) -> Any:
    """A view field with a description and extra JSON Schema keywords (``minimum=1``)."""
    metadata = dict(extra)
    if description:
        metadata["description"] = description
    return dataclasses.field(default=default, default_factory=default_factory,
                             metadata=metadata)


@cache
def hints(cls: type) -> dict[str, Any]:
    """The resolved type hint of each field of a view dataclass, in field order."""
    resolved = typing.get_type_hints(cls)
    return {f.name: resolved[f.name] for f in dataclasses.fields(cls)}


def schema_name(cls: type) -> str:
    """The component name of a view: its class name without a ``View`` suffix."""
    return cls.__name__.removesuffix("View")


def _is_view(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def _union_args(tp: Any) -> tuple[Any, ...] | None:
    if get_origin(tp) in (Union, types.UnionType):
        return get_args(tp)
    return None


# -- to and from JSON ------------------------------------------------------------------------

def to_json(value: Any) -> Any:
    """JSON-ready data (dicts, lists, strings, numbers, booleans, None) of a view."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k) if isinstance(k, int) else k: to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, enum.Enum):
        return value.value
    return value


def from_json(tp: Any, data: Any) -> Any:
    """A value of type hint ``tp`` (a view, ``list[...]``, ``dict[...]``, ...) from JSON."""
    if data is None:
        return None
    if _is_view(tp):
        if not isinstance(data, dict):
            raise TypeError(f"{schema_name(tp)}: expected a JSON object, got {data!r}")
        fields = hints(tp)
        return tp(**{name: from_json(fields[name], value) for name, value in data.items()
                     if name in fields})
    args = _union_args(tp)
    if args is not None:
        present = [a for a in args if a is not _NONE]
        if len(present) == 1:
            return from_json(present[0], data)
        views = [a for a in present if _is_view(a)]
        if views and isinstance(data, dict):  # the first view whose fields are all there
            for view in views:
                if {f.name for f in dataclasses.fields(view)
                        if f.default is dataclasses.MISSING
                        and f.default_factory is dataclasses.MISSING} <= set(data):
                    return from_json(view, data)
        return data
    origin = get_origin(tp)
    if origin is list:
        (item,) = get_args(tp) or (Any,)
        return [from_json(item, v) for v in data]
    if origin is dict:
        key, item = get_args(tp) or (str, Any)
        return {(int(k) if key is int else k): from_json(item, v) for k, v in data.items()}
    return data


def from_object(cls: type, source: Any, **computed: Any) -> Any:
    """A view whose fields are taken from ``source``'s attributes of the same names, except
    those given in ``computed``; a field ``source`` lacks keeps its default."""
    values = dict(computed)
    for f in dataclasses.fields(cls):
        if f.name not in values and hasattr(source, f.name):
            values[f.name] = getattr(source, f.name)
    return cls(**values)


# -- JSON Schema -----------------------------------------------------------------------------

def _ref(cls: type) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{schema_name(cls)}"}


def schema(tp: Any) -> dict[str, Any]:
    """The JSON Schema of a type hint; views are ``$ref`` to their component."""
    if tp is Any:
        return {}
    if tp is _NONE:
        return {"type": "null"}
    if tp in _SIMPLE:
        return {"type": _SIMPLE[tp]}
    if _is_view(tp):
        return _ref(tp)
    if tp is dict:
        return {"type": "object"}
    if tp is list:
        return {"type": "array"}
    origin = get_origin(tp)
    if origin is Literal:
        values = list(get_args(tp))
        out: dict[str, Any] = {"enum": values}
        if all(isinstance(v, str) for v in values):
            out["type"] = "string"
        return out
    if origin is list:
        (item,) = get_args(tp)
        return {"type": "array", "items": schema(item)}
    if origin is dict:
        _, item = get_args(tp)
        return {"type": "object", "additionalProperties": schema(item)}
    args = _union_args(tp)
    if args is not None:
        return _union_schema(args)
    raise TypeError(f"no JSON Schema for the type hint {tp!r}")


def _union_schema(args: tuple[Any, ...]) -> dict[str, Any]:
    parts = [schema(a) for a in args]
    if all(set(p) == {"type"} for p in parts):  # ["string", "integer", "null"]
        names: list[str] = []
        for p in parts:
            names += p["type"] if isinstance(p["type"], list) else [p["type"]]
        return {"type": names}
    nullable = _NONE in args
    rest = [schema(a) for a in args if a is not _NONE]
    if len(rest) == 1:
        only = dict(rest[0])
        if "enum" in only and nullable:  # Literal[...] | None
            only["enum"] = [*only["enum"], None]
            if "type" in only:
                only["type"] = [only["type"], "null"]
            return only
        if isinstance(only.get("type"), str) and nullable:  # list[...] | None, dict | None
            only["type"] = [only["type"], "null"]
            return only
    return {"anyOf": rest + ([{"type": "null"}] if nullable else [])}


def views_in(tp: Any) -> list[type]:
    """Every view a type hint names, nested views included, each once."""
    found: list[type] = []

    def walk(t: Any) -> None:
        if _is_view(t):
            if t in found:
                return
            found.append(t)
            for hint in hints(t).values():
                walk(hint)
            return
        for arg in get_args(t):
            walk(arg)

    walk(tp)
    return found


def component_schema(cls: type) -> dict[str, Any]:
    """The OpenAPI component of a view: its fields as properties (with the description and
    schema keywords of :func:`describe`), those without a default as required."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for f in dataclasses.fields(cls):
        properties[f.name] = {**schema(hints(cls)[f.name]), **f.metadata}
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    if getattr(cls, "closed", False):
        out["additionalProperties"] = False
    doc = cls.__doc__ or ""
    if doc and not doc.startswith(cls.__name__ + "("):  # not the signature dataclass writes
        out["description"] = " ".join(doc.split())
    return out
