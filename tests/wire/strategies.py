"""Hypothesis strategies that build random message values from our definitions."""

from __future__ import annotations

from hypothesis import strategies as st

from wire.model import Struct
from wire.schema import Field, Message

_INTS = {
    "int8": (-(1 << 7), (1 << 7) - 1),
    "int16": (-(1 << 15), (1 << 15) - 1),
    "uint16": (0, (1 << 16) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1),
    "uint32": (0, (1 << 32) - 1),
    "int64": (-(1 << 63), (1 << 63) - 1),
}


def _primitive(type_name: str, nullable: bool) -> st.SearchStrategy:
    if type_name in _INTS:
        lo, hi = _INTS[type_name]
        base = st.integers(lo, hi)
    elif type_name == "bool":
        base = st.booleans()
    elif type_name == "float64":
        base = st.floats(allow_nan=False)
    elif type_name == "string":
        base = st.text(max_size=12)
    elif type_name in ("bytes", "records"):
        base = st.binary(max_size=24)
    elif type_name == "uuid":
        base = st.uuids()
    else:
        raise KeyError(type_name)
    return st.one_of(st.none(), base) if nullable else base


def _unknown_tags(known: set[int]) -> st.SearchStrategy:
    tags = st.integers(0, 300).filter(lambda t: t not in known)
    return st.one_of(st.none(), st.dictionaries(tags, st.binary(max_size=6), min_size=1,
                                                max_size=2))


def struct_values(owner: type[Struct], fields: tuple[Field, ...], version: int,
                  flexible: bool) -> st.SearchStrategy:
    """Instances of ``owner`` with every field present in ``version`` drawn at random (fields
    the version lacks keep their defaults, which is what a decoder hands back for them)."""
    parts = {}
    for f in fields:
        if not f.present(version):
            continue
        parts[f.name] = _field_values(owner, f, version, flexible)
    known_tags = {f.tag for f in fields if f.tag is not None}
    unknown = _unknown_tags(known_tags) if flexible else st.none()

    def build(values, tags):
        obj = owner(**values)
        obj._unknown_tags = tags
        return obj

    return st.builds(build, st.fixed_dictionaries(parts), unknown)


def _field_values(owner: type[Struct], f: Field, version: int, flexible: bool):
    nullable = f.is_nullable(version)
    if f.is_struct:
        sub = owner._struct_classes[f.element_type]
        element = st.deferred(lambda: struct_values(sub, f.fields, version, flexible))
    else:
        element = _primitive(f.element_type, nullable and not f.is_array)
    if f.is_array:
        values = st.lists(element, max_size=3)
        return st.one_of(st.none(), values) if nullable else values
    if f.is_struct and nullable:
        return st.one_of(st.none(), element)
    return element


def message_values(message: Message, cls: type[Struct], version: int) -> st.SearchStrategy:
    return struct_values(cls, message.fields, version, message.is_flexible(version))
