"""Python classes for decoded messages.

Every message definition (and every struct inside one) gets a class with ``__slots__`` for each
field it has in any version, so code reads ``request.topics[0].partitions`` whatever the version,
and a field the version lacks holds its default.  Nested struct classes hang off their message
class under Kafka's struct name: ``ProduceRequest.TopicProduceData``.
"""

from __future__ import annotations

import keyword
import uuid
from typing import Any, Iterator

from wire.schema import Field, Message


class Struct:
    """Base class of generated message and struct classes."""

    __slots__ = ("_unknown_tags",)
    _fields: tuple[Field, ...] = ()
    _field_names: tuple[str, ...] = ()
    _struct_classes: dict[str, type["Struct"]] = {}

    def __init__(self, **values: Any):
        # The first message of each class gets here: it compiles the class's own constructor
        # (see _compile_init) and is built by it, as every later one is.
        cls = type(self)
        if cls is Struct:
            raise TypeError("Struct is the base of the generated message classes")
        _compile_init(cls)(self, **values)

    @classmethod
    def _plan_defaults(cls) -> tuple[tuple[str, Any, Any], ...]:
        """(name, maker of a fresh default or None, the shared default) per field."""
        plan = []
        for f in cls._fields:
            if f.is_struct and not f.is_array and not f.default_is_null:
                plan.append((f.name, cls._struct_classes[f.element_type], None))
            elif f.is_array and not f.default_is_null:
                plan.append((f.name, list, None))
            else:
                plan.append((f.name, None, f.default_value()))
        return tuple(plan)

    @classmethod
    def _default(cls, f: Field) -> Any:
        if f.is_struct and not f.is_array and not f.default_is_null:
            return cls._struct_classes[f.element_type]()
        return f.default_value()

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        for n in self._field_names:  # a loop, not all() over a generator: half the cost
            if getattr(self, n) != getattr(other, n):
                return False
        return True

    def __repr__(self) -> str:
        body = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._field_names)
        return f"{type(self).__qualname__}({body})"

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        for n in self._field_names:
            yield n, getattr(self, n)

    def to_dict(self) -> dict[str, Any]:
        """Plain data: nested structs as dicts, UUIDs as strings, bytes left as bytes."""
        return {n: _plain(getattr(self, n)) for n in self._field_names}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Struct":
        """Build from plain data (the inverse of :meth:`to_dict`); missing fields get defaults."""
        values = {}
        by_name = {f.name: f for f in cls._fields}
        for key, value in data.items():
            f = by_name.get(key)
            if f is None:
                raise TypeError(f"{cls.__name__} has no field {key}")
            values[key] = _from_plain(cls, f, value)
        return cls(**values)


def _plain(value: Any) -> Any:
    if isinstance(value, Struct):
        return value.to_dict()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def _from_plain(owner: type[Struct], f: Field, value: Any) -> Any:
    if value is None:
        return None
    if f.is_struct:
        sub = owner._struct_classes[f.element_type]
        if f.is_array:
            return [v if isinstance(v, Struct) else sub.from_dict(v) for v in value]
        return value if isinstance(value, Struct) else sub.from_dict(value)
    if f.element_type == "uuid":
        conv = (lambda v: v if isinstance(v, uuid.UUID) else uuid.UUID(str(v)))
        return [conv(v) for v in value] if f.is_array else conv(value)
    return value


#: a keyword argument left out of a generated constructor (its field gets a fresh default)
_MISSING = object()


def _compile_init(cls: type[Struct]):
    """Give ``cls`` a constructor of its own, with one keyword argument per field, and return
    it.  A message is built for every answer a handler makes: a loop over the fields asking
    which were given cost four times as much as assigning each slot directly."""
    params, lines = [], []
    env: dict[str, Any] = {"_MISSING": _MISSING, "_no_such": _no_such_fields, "_cls": cls}
    for i, (name, fresh, default) in enumerate(cls._plan_defaults()):
        if keyword.iskeyword(name) or not name.isidentifier() or name.startswith("_"):
            raise TypeError(f"{cls.__name__}: field {name!r} cannot be a keyword argument")
        if fresh is None:  # shared: a number, a string, None, the zero UUID
            env[f"_d{i}"] = default
            params.append(f"{name}=_d{i}")
            lines.append(f"    _s.{name} = {name}")
        else:  # never shared between messages: a new list or struct each time
            env[f"_f{i}"] = fresh
            params.append(f"{name}=_MISSING")
            lines.append(f"    _s.{name} = _f{i}() if {name} is _MISSING else {name}")
    source = "\n".join([
        f"def __init__(_s, *, {', '.join(params + ['**_extra'])}):" if params
        else "def __init__(_s, **_extra):",
        "    if _extra: _no_such(_cls, _extra)",
        *lines,
        "    _s._unknown_tags = None",
    ])
    exec(compile(source, f"<wire {cls.__qualname__}.__init__>", "exec"), env)
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init
    return init


def _no_such_fields(cls: type[Struct], values: dict[str, Any]) -> None:
    raise TypeError(f"{cls.__name__} has no field(s) {', '.join(sorted(values))}")


_classes: dict[str, type[Struct]] = {}


def message_class(message: Message) -> type[Struct]:
    """The class for a message definition (created once, then cached by message name)."""
    cls = _classes.get(message.name)
    if cls is None:
        structs: dict[str, type[Struct]] = {}
        cls = _make_class(message.name, message.fields, structs, qualname=message.name)
        for name, sub in structs.items():
            setattr(cls, name, sub)
        _classes[message.name] = cls
    return cls


def _make_class(name: str, fields: tuple[Field, ...], structs: dict[str, type[Struct]],
                qualname: str) -> type[Struct]:
    for f in fields:
        if f.is_struct and f.element_type not in structs:
            structs[f.element_type] = _make_class(
                f.element_type, f.fields, structs, qualname=f"{qualname.split('.')[0]}.{f.element_type}")
    names = tuple(f.name for f in fields)
    cls = type(name, (Struct,), {
        "__slots__": names,
        "_fields": fields,
        "_field_names": names,
        "_struct_classes": structs,
        "__module__": "wire.messages",
    })
    cls.__qualname__ = qualname
    return cls
