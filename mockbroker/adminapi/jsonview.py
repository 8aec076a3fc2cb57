"""JSON for the admin API's view dataclasses, driven by their type hints.

* :func:`to_json`: a view (or a list or dict of them) as JSON-ready data; integer dict keys
  become strings, as JSON objects need.
* :func:`from_json`: the other way, for the client; keys a newer server adds are ignored, and
  string keys of a ``dict[int, ...]`` become integers again.
* :func:`component_schema` / :func:`schema`: the OpenAPI 3.1 (JSON Schema) description of a view
  or of any type hint a view uses.
* :func:`read_body`: a request body checked against the view that declares it (the same type
  hints, required fields, minimums, maximums, lengths and enums its schema says), or a
  :class:`BodyError` saying what is wrong.  So a body is described once: its schema and its
  validation cannot disagree.

Standard library only: the server and the stdlib-only admin client both import it.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from functools import cache
from typing import Any, Literal, Optional, Union, get_args, get_origin

__all__ = ["BodyError", "component_schema", "describe", "from_json", "from_object", "hints",
           "read_body", "schema", "schema_name", "to_json", "views_in"]

_NONE = type(None)
_SIMPLE = {bool: "boolean", int: "integer", float: "number", str: "string"}


#: a field's own wording for a value of the wrong shape (``describe(refused=...)``): an OpenAPI
#: extension of its schema, so the document shows it too
_REFUSED = "x-refused"


def describe(description: str | None = None, *, default: Any = dataclasses.MISSING,
             default_factory: Any = dataclasses.MISSING, refused: str | None = None,
             **extra: Any) -> Any:
    """A view field with a description and extra JSON Schema keywords (``minimum=1``).

    ``refused``: what a body field of the wrong shape is told, where the generic wording would
    say less (``"{name} must map topic names to lists of partitions"``); ``{name}``, ``{value}``
    and ``{choices}`` (a Literal's values) are filled in."""
    metadata = dict(extra)
    if description:
        metadata["description"] = description
    if refused:
        metadata[_REFUSED] = refused
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
    body = getattr(cls, "closed", False)
    for f in dataclasses.fields(cls):
        hint = hints(cls)[f.name]
        if body and not _required(f):  # a body's null takes the default (see read_body)
            hint = Optional[hint]
        properties[f.name] = {**schema(hint), **f.metadata}
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


# -- request bodies ----------------------------------------------------------------------------

class BodyError(ValueError):
    """A request body its view refuses; the message says what is wrong, naming the field."""


def _required(f: dataclasses.Field) -> bool:
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


def read_body(cls: type, data: Any) -> Any:
    """``data`` (parsed JSON) as an instance of the body view ``cls``, defaults filled in, once
    every field is what the view declares: no unknown field, every required one, each of its
    type (a null only where the hint allows one, or for a field with a default, which it then
    takes: the schema of a body says so) and within the field's ``minimum``, ``maximum``,
    ``exclusiveMinimum`` and ``minLength``.  Raises :class:`BodyError` on the first field that
    is not."""
    if not isinstance(data, dict):
        raise BodyError("the body must be a JSON object")
    fields = dataclasses.fields(cls)
    names = [f.name for f in fields]
    unknown = sorted(set(data) - set(names))
    if unknown:
        raise BodyError(f"unknown field(s) {', '.join(unknown)}; expected {', '.join(names)}")
    values: dict[str, Any] = {}
    for f in fields:
        if f.name not in data:
            if _required(f):
                raise BodyError(f"{f.name} is required")
            continue  # the default
        value = data[f.name]
        hint = hints(cls)[f.name]
        if value is None and not _accepts(hint, None):
            if _required(f):
                raise BodyError(f"{f.name} is required")
            continue  # null where the type has none: the default
        if not _accepts(hint, value):
            raise BodyError(_refusal(f, hint, value))
        _check_bounds(f, value)
        values[f.name] = value
    return cls(**values)


def _accepts(tp: Any, value: Any) -> bool:
    """Whether a JSON value is of type hint ``tp``."""
    if tp is Any:
        return True
    if tp is _NONE:
        return value is None
    if value is None:
        return _NONE in (_union_args(tp) or ())
    if tp is bool:
        return isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if tp is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if tp is str:
        return isinstance(value, str)
    origin = get_origin(tp)
    if origin is Literal:
        return any(value == v and type(value) is type(v) for v in get_args(tp))
    if origin is list or tp is list:
        (item,) = get_args(tp) or (Any,)
        return isinstance(value, list) and all(_accepts(item, v) for v in value)
    if origin is dict or tp is dict:
        key, item = get_args(tp) or (str, Any)
        return isinstance(value, dict) and all(_accepts(item, v) for v in value.values())
    args = _union_args(tp)
    if args is not None:
        return any(_accepts(a, value) for a in args)
    raise TypeError(f"no body check for the type hint {tp!r}")


#: what a value of each plain type is called in a refusal
_WORDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string",
          list: "a list", dict: "an object"}


def _literal(tp: Any) -> tuple | None:
    present = [a for a in (_union_args(tp) or (tp,)) if a is not _NONE]
    if len(present) == 1 and get_origin(present[0]) is Literal:
        return get_args(present[0])
    return None


def _refusal(f: dataclasses.Field, tp: Any, value: Any) -> str:
    choices = _literal(tp)
    shown = ", ".join(map(str, choices)) if choices else ""
    template = f.metadata.get(_REFUSED)
    if template:
        return template.format(name=f.name, value=value, choices=shown)
    if choices:
        return f"{f.name} must be one of {shown}, got {value!r}"
    kinds = [a for a in (_union_args(tp) or (tp,)) if a is not _NONE]
    words = [_WORDS.get(get_origin(a) or a, str(a)) for a in kinds]
    return f"{f.name} must be {' or '.join(words)}, got {value!r}"


def _check_bounds(f: dataclasses.Field, value: Any) -> None:
    meta = f.metadata
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in meta and value < meta["minimum"]:
            raise BodyError(f"{f.name} must be at least {meta['minimum']}, got {value}")
        if "maximum" in meta and value > meta["maximum"]:
            raise BodyError(f"{f.name} must be at most {meta['maximum']}, got {value}")
        if "exclusiveMinimum" in meta and value <= meta["exclusiveMinimum"]:
            raise BodyError(f"{f.name} must be above {meta['exclusiveMinimum']}, got {value}")
    if isinstance(value, str) and len(value) < meta.get("minLength", 0):
        raise BodyError(f"{f.name} must be a non-empty string, got {value!r}"
                        if meta["minLength"] == 1 else
                        f"{f.name} must be at least {meta['minLength']} characters long")
