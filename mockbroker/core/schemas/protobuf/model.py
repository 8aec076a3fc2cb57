"""The parsed form of one ``.proto`` file: a tree of plain records, the same shape whichever
way the schema arrived (``.proto`` text or a serialized ``FileDescriptorProto``).

Names and types are kept as written (``Foo``, ``pkg.Foo`` or ``.pkg.Foo``); resolving them is
:mod:`.scope`'s job.  Option values keep the parser's own shape so that the registry can print
them back the way Confluent does:

* an :class:`Option` has a ``kind``: ``STRING`` (value a str), ``BOOLEAN``/``NUMBER``/``ENUM``
  (value the literal text), ``MAP`` (value a dict), ``LIST`` (value a list) or ``OPTION``
  (value another :class:`Option`, as in ``(my.opt).sub = 1``);
* inside maps and lists, strings stay str, other literals are :class:`Primitive`, nested
  messages are dicts and repeated values lists.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Union

STRING, BOOLEAN, NUMBER, ENUM, MAP, LIST, OPTION = (
    "STRING", "BOOLEAN", "NUMBER", "ENUM", "MAP", "LIST", "OPTION")

PROTO2, PROTO3 = "proto2", "proto3"

#: the highest field number; ``to max`` in a range
MAX_TAG = (1 << 29) - 1

SCALARS = frozenset((
    "bool", "bytes", "double", "float", "fixed32", "fixed64", "int32", "int64", "sfixed32",
    "sfixed64", "sint32", "sint64", "string", "uint32", "uint64"))


@dataclass(frozen=True)
class Primitive:
    """A boolean, number or enum literal inside an option map or list."""
    kind: str
    value: Any


@dataclass
class Option:
    name: str
    kind: str
    value: Any
    parenthesized: bool = False


@dataclass(frozen=True)
class Range:
    """An inclusive range of numbers, ``start to end``."""
    start: int
    end: int


Reservation = Union[str, int, Range]


@dataclass
class Field:
    name: str
    type: str
    tag: int
    label: Optional[str] = None        # None, "optional", "required" or "repeated"
    default: Optional[str] = None
    json_name: Optional[str] = None
    options: list[Option] = field(default_factory=list)


@dataclass
class Group:
    name: str
    tag: int
    label: Optional[str] = None
    fields: list[Field] = field(default_factory=list)


@dataclass
class OneOf:
    name: str
    fields: list[Field] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)
    options: list[Option] = field(default_factory=list)


@dataclass
class Reserved:
    values: list[Reservation]


@dataclass
class Extensions:
    values: list[Union[int, Range]]
    options: list[Option] = field(default_factory=list)


@dataclass
class Extend:
    name: str
    fields: list[Field] = field(default_factory=list)


@dataclass
class EnumConstant:
    name: str
    tag: int
    options: list[Option] = field(default_factory=list)


@dataclass
class Enum:
    name: str
    constants: list[EnumConstant] = field(default_factory=list)
    options: list[Option] = field(default_factory=list)
    reserveds: list[Reserved] = field(default_factory=list)

    @property
    def nested(self) -> list:
        return []


@dataclass
class Message:
    name: str
    fields: list[Field] = field(default_factory=list)
    oneofs: list[OneOf] = field(default_factory=list)
    nested: list[Union["Message", Enum]] = field(default_factory=list)
    options: list[Option] = field(default_factory=list)
    reserveds: list[Reserved] = field(default_factory=list)
    extensions: list[Extensions] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)
    extends: list[Extend] = field(default_factory=list)

    def all_fields(self) -> list[Field]:
        """Top-level fields and oneof members alike."""
        return self.fields + [f for o in self.oneofs for f in o.fields]

    def is_map_entry(self) -> bool:
        return any(o.name == "map_entry" and not o.parenthesized and str(o.value) == "true"
                   for o in self.options)


@dataclass
class Rpc:
    name: str
    request: str
    response: str
    request_streaming: bool = False
    response_streaming: bool = False
    options: list[Option] = field(default_factory=list)


@dataclass
class Service:
    name: str
    rpcs: list[Rpc] = field(default_factory=list)
    options: list[Option] = field(default_factory=list)


@dataclass
class ProtoFile:
    package: Optional[str] = None
    syntax: Optional[str] = None
    imports: list[str] = field(default_factory=list)
    public_imports: list[str] = field(default_factory=list)
    weak_imports: list[str] = field(default_factory=list)
    types: list[Union[Message, Enum]] = field(default_factory=list)
    services: list[Service] = field(default_factory=list)
    extends: list[Extend] = field(default_factory=list)
    options: list[Option] = field(default_factory=list)


def map_types(type_name: str) -> Optional[tuple[str, str]]:
    """``("K", "V")`` for a ``map<K, V>`` type, else None (Wire's ``ProtoType`` reading)."""
    if type_name.startswith("map<") and type_name.endswith(">"):
        comma = type_name.find(",")
        if comma == -1:
            raise ValueError(f"expected ',' in map type: {type_name}")
        return type_name[4:comma].strip(), type_name[comma + 1:-1].strip()
    return None


def check_map_key(type_name: str) -> None:
    """Wire refuses map keys that are not integral, bool or string scalars."""
    kv = map_types(type_name)
    if kv and (kv[0] not in SCALARS or kv[0] in ("bytes", "double", "float")):
        raise ValueError(f"map key must be non-byte, non-floating point scalar: {kv[0]}")
