"""Type names across a schema and the files it imports, resolved the way Confluent's protobuf
provider does it (its ``diff.Context``): every message and enum of every dependency (the
schema's references plus the built-in well-known files, imported or not) and of the schema is
known by its full name ``package.Outer.Inner``; a name is looked up by trying the enclosing
scopes from the innermost out (``pkg.Outer.Inner.Name``, ``pkg.Outer.Name``, ``pkg.Name``,
``Name``), or exactly when it starts with a dot.  Extension fields (``extend`` blocks) are
known the same way, for custom options.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Sequence, Union

from .model import Enum, Extend, Field, Message, ProtoFile


@dataclass
class TypeInfo:
    package: str
    #: the import path of the file that defines it; "" for the schema itself
    source: str
    element: Union[Message, Enum]
    is_map: bool = False
    key: Optional[Field] = None
    value: Optional[Field] = None

    def map_type(self) -> Optional[str]:
        if not self.is_map or self.key is None or self.value is None:
            return None
        return f"map<{self.key.type}, {self.value.type}>"


@dataclass
class ExtendInfo:
    package: str
    source: str
    field: Field

    @property
    def repeated(self) -> bool:
        return self.field.label == "repeated"


class Scope:
    """All the named types one schema can see."""

    def __init__(self, schema: ProtoFile, dependencies: Iterable[tuple[str, ProtoFile]]):
        self.types: dict[str, TypeInfo] = {}
        self.extend_fields: dict[str, ExtendInfo] = {}
        for source, dep in dependencies:
            self._collect_file(source, dep)
        self._collect_file("", schema)
        self.package = schema.package or ""

    def _collect_file(self, source: str, f: ProtoFile) -> None:
        package = f.package or ""
        self._collect_extends(package, source, f.extends, [])
        self._collect_types(package, source, f.types, [])

    def _collect_extends(self, package: str, source: str, extends: Sequence[Extend],
                         path: list[str]) -> None:
        for extend in extends:
            for field in extend.fields:
                name = ".".join(path + [field.name])
                self.extend_fields[_join(package, name)] = ExtendInfo(package, source, field)

    def _collect_types(self, package: str, source: str, types, path: list[str]) -> None:
        for t in types:
            inner = path + [t.name]
            info = TypeInfo(package, source, t)
            if isinstance(t, Message):
                self._collect_extends(package, source, t.extends, inner)
                if t.is_map_entry():
                    info.is_map = True
                    info.key = next((f for f in t.fields if f.name == "key"), None)
                    info.value = next((f for f in t.fields if f.name == "value"), None)
            self.types[_join(package, ".".join(inner))] = info
            self._collect_types(package, source, t.nested, inner)

    # -- lookups -----------------------------------------------------------------------------
    def _resolve(self, table: Callable[[str], object], name: str,
                 scope: Sequence[str]) -> Optional[str]:
        if not self.types:
            return None
        if name.startswith("."):
            return name[1:] if table(name[1:]) is not None else None
        prefix = (self.package.split(".") if self.package else []) + list(scope)
        while prefix:
            candidate = ".".join(prefix) + "." + name
            if table(candidate) is not None:
                return candidate
            prefix.pop()
        return name if table(name) is not None else None

    def resolve(self, name: str, scope: Sequence[str]) -> Optional[str]:
        """The full name (no leading dot) of the type ``name`` seen from ``scope``."""
        return self._resolve(self.type_named, name, scope)

    def resolve_extension(self, name: str, scope: Sequence[str]) -> Optional[str]:
        return self._resolve(self.extend_named, name, scope)

    def type_named(self, full_name: str) -> Optional[TypeInfo]:
        return self.types.get(full_name[1:] if full_name.startswith(".") else full_name)

    def extend_named(self, full_name: str) -> Optional[ExtendInfo]:
        return self.extend_fields.get(full_name[1:] if full_name.startswith(".") else full_name)

    def lookup(self, name: str, scope: Sequence[str]) -> Optional[TypeInfo]:
        full = self.resolve(name, scope)
        return self.type_named(full) if full is not None else None

    def with_package(self, package: str) -> "Scope":
        """The same types, names seen from another file's package."""
        other = object.__new__(Scope)
        other.types, other.extend_fields, other.package = self.types, self.extend_fields, package
        return other


def _join(package: str, name: str) -> str:
    return f"{package}.{name}" if package else name
