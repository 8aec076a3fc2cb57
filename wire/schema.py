"""The data model for message definitions.

A definition says, for one message, which fields exist in which versions and how each is typed:
the same facts Apache Kafka's message specs carry, in a compact form of our own. The modules in
:mod:`wire.definitions` are written in this form; :mod:`wire.builder` turns a definition plus a
version into a codec.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator, Mapping
from importlib import import_module
from typing import Any

from msgspec import Struct

PRIMITIVES = frozenset({
    "bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64",
    "string", "bytes", "uuid", "records",
})

#: Types whose encoded size does not depend on the value.
FIXED_SIZES = {"bool": 1, "int8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4,
               "int64": 8, "float64": 8, "uuid": 16}

ZERO_UUID = uuid.UUID(int=0)


class Versions(Struct, frozen=True):
    """An inclusive version range; ``hi`` of None means "and every later version"."""

    lo: int
    hi: int | None

    NONE_HI = -1  # marker used by the empty range

    @classmethod
    def parse(cls, text: str | None) -> "Versions":
        if text is None or text == "none":
            return cls(0, cls.NONE_HI)
        text = text.strip()
        if text.endswith("+"):
            return cls(int(text[:-1]), None)
        if "-" in text:
            lo, hi = text.split("-", 1)
            return cls(int(lo), int(hi))
        return cls(int(text), int(text))

    def __contains__(self, version: int) -> bool:
        if self.hi == self.NONE_HI:
            return False
        return version >= self.lo and (self.hi is None or version <= self.hi)

    @property
    def empty(self) -> bool:
        return self.hi == self.NONE_HI

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.hi is None:
            return f"{self.lo}+"
        if self.lo == self.hi:
            return str(self.lo)
        return f"{self.lo}-{self.hi}"


class Field(Struct, frozen=True):
    """One field of a message or nested struct.

    ``type`` is a primitive name, a struct name, or ``[]`` followed by either.  ``fields`` holds
    the members of a struct type.  ``tag`` is set for tagged fields, which are only written in
    ``tagged`` versions.  ``flexible`` overrides the message's flexible versions for this field
    (the request header's client id is never compact).
    """

    name: str
    type: str
    versions: Versions
    nullable: Versions = Versions(0, Versions.NONE_HI)
    default: Any = None
    tag: int | None = None
    tagged: Versions = Versions(0, Versions.NONE_HI)
    ignorable: bool = False
    fields: tuple["Field", ...] = ()
    flexible: Versions | None = None

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        return self.element_type not in PRIMITIVES

    def present(self, version: int) -> bool:
        return version in self.versions

    def is_tagged(self, version: int) -> bool:
        return self.tag is not None and version in self.tagged

    def is_nullable(self, version: int) -> bool:
        return version in self.nullable

    def default_value(self) -> Any:
        """The value this field takes when absent: a fresh list for arrays (never shared)."""
        if self.default_is_null:
            return None
        if self.is_array:
            return []
        return self.default

    #: True when the definition's default is null (only for nullable strings, bytes, arrays
    #: and structs); for arrays and structs this is the only default that is not "empty".
    default_is_null: bool = False



class Message(Struct, frozen=True):
    """A top-level message definition (a request, a response, a header or an embedded format)."""

    name: str
    kind: str
    valid: Versions
    flexible: Versions
    fields: tuple[Field, ...]
    api_key: int | None = None

    def versions(self) -> range:
        if self.valid.empty:
            return range(0)
        return range(self.valid.lo, self.valid.hi + 1)

    def is_flexible(self, version: int) -> bool:
        return version in self.flexible


class Api(Struct, frozen=True):
    """An API key with its request and response definitions."""

    key: int
    name: str
    request: Message
    response: Message
    listeners: tuple[str, ...] = ("broker",)
    latest_version_unstable: bool = False

    @property
    def min_version(self) -> int:
        return self.request.valid.lo

    @property
    def max_version(self) -> int:
        return self.request.valid.hi


class ApiIndex(Mapping[int, Api]):
    """API key → :class:`Api`, importing an API's definition module the first time its key is
    looked up: a broker that is asked for a few APIs never builds the definitions of the rest.
    Names and membership are answered from the index alone."""

    def __init__(self, package: str, index: dict[int, tuple[str, str]]):
        self._package = package
        #: API key → (Kafka's name, the definition module's name)
        self._index = index
        self._loaded: dict[int, Api] = {}

    def __getitem__(self, api_key: int) -> Api:
        found = self._loaded.get(api_key)
        if found is None:
            name, module = self._index[api_key]
            found = import_module(f"{self._package}.{module}").API
            if found.key != api_key or found.name != name:
                raise ImportError(f"{self._package}.{module} defines {found.name} "
                                  f"(key {found.key}), not {name} (key {api_key})")
            self._loaded[api_key] = found
        return found

    def __contains__(self, api_key: object) -> bool:
        return api_key in self._index

    def __iter__(self) -> Iterator[int]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)

    def names(self) -> dict[int, str]:
        """API key → Kafka's name for it, without loading any definition."""
        return {key: name for key, (name, _) in self._index.items()}


def F(name: str, type: str, versions: str = "0+", *, nullable: str | None = None,
      default: Any = ..., tag: int | None = None, tagged: str | None = None,
      ignorable: bool = False, fields: list[Field] | tuple[Field, ...] = (),
      flexible: str | None = None) -> Field:
    """Shorthand used by the definition modules."""
    if default is ...:
        value, is_null = implicit_default(type), False
    else:
        value, is_null = coerce_default(type, default), default is None
    return Field(
        name=name, type=type, versions=Versions.parse(versions),
        nullable=Versions.parse(nullable), default=value, tag=tag,
        tagged=Versions.parse(tagged), ignorable=ignorable, fields=tuple(fields),
        flexible=Versions.parse(flexible) if flexible is not None else None,
        default_is_null=is_null,
    )


def M(name: str, kind: str, valid: str, flexible: str, fields: list[Field],
      api_key: int | None = None) -> Message:
    return Message(name=name, kind=kind, valid=Versions.parse(valid),
                   flexible=Versions.parse(flexible), fields=tuple(fields), api_key=api_key)


def implicit_default(type_name: str) -> Any:
    """The value a field has when the definition names no default (as Kafka's generator does)."""
    if type_name.startswith("[]"):
        return None
    if type_name in ("int8", "int16", "uint16", "int32", "uint32", "int64"):
        return 0
    if type_name == "float64":
        return 0.0
    if type_name == "bool":
        return False
    if type_name == "string":
        return ""
    if type_name in ("bytes", "records"):
        return b""
    if type_name == "uuid":
        return ZERO_UUID
    return None


def coerce_default(type_name: str, value: Any) -> Any:
    if value is None:
        return None
    if type_name in ("int8", "int16", "uint16", "int32", "uint32", "int64"):
        return int(value)
    if type_name == "float64":
        return float(value)
    if type_name == "bool":
        return bool(value)
    if type_name == "uuid":
        return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    return value


_CAMEL_1 = re.compile(r"([A-Z]+)([A-Z][a-z])")
_CAMEL_2 = re.compile(r"([a-z0-9])([A-Z])")


def snake_case(name: str) -> str:
    """Kafka's CamelCase field names as Python attribute names (``IsrNodes`` → ``isr_nodes``)."""
    return _CAMEL_2.sub(r"\1_\2", _CAMEL_1.sub(r"\1_\2", name)).lower()
