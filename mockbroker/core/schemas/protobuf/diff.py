"""Whether a protobuf schema can read what another wrote: Confluent's protobuf schema diff.

The writer ("original") and reader ("update") files are walked side by side.  Messages and
enums are matched by name within their scope, fields by number, enum constants by number, and a
field that refers to a message defined in another file (a reference or a built-in file) is
followed into that message.  Every difference found is recorded with its path
(``#/Msg/Inner/3``, ``#/Msg/oneof_name/3``); some kinds are harmless (:data:`COMPATIBLE`), the
others make the pair incompatible and become Confluent's messages
``{errorType:"TYPE", description:"..."}``.

Differences come out in the order Confluent finds them.  Where Confluent walks a Java
``HashMap``/``HashSet`` (message, enum and enum-constant names), this module reproduces Java's
iteration order (:func:`java_order`) so that messages listing several problems read the same.
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence, Union

from .model import Enum, Field, Message, ProtoFile, SCALARS, map_types
from .scope import Scope

PACKAGE_CHANGED = "PACKAGE_CHANGED"
MESSAGE_ADDED, MESSAGE_REMOVED, MESSAGE_MOVED = "MESSAGE_ADDED", "MESSAGE_REMOVED", "MESSAGE_MOVED"
ENUM_ADDED, ENUM_REMOVED = "ENUM_ADDED", "ENUM_REMOVED"
ENUM_CONST_ADDED, ENUM_CONST_CHANGED, ENUM_CONST_REMOVED = (
    "ENUM_CONST_ADDED", "ENUM_CONST_CHANGED", "ENUM_CONST_REMOVED")
FIELD_ADDED, FIELD_REMOVED = "FIELD_ADDED", "FIELD_REMOVED"
FIELD_NAME_CHANGED = "FIELD_NAME_CHANGED"
FIELD_KIND_CHANGED = "FIELD_KIND_CHANGED"
FIELD_SCALAR_KIND_CHANGED = "FIELD_SCALAR_KIND_CHANGED"
FIELD_NAMED_TYPE_CHANGED = "FIELD_NAMED_TYPE_CHANGED"
FIELD_NUMERIC_LABEL_CHANGED = "FIELD_NUMERIC_LABEL_CHANGED"
FIELD_STRING_OR_BYTES_LABEL_CHANGED = "FIELD_STRING_OR_BYTES_LABEL_CHANGED"
REQUIRED_FIELD_ADDED, REQUIRED_FIELD_REMOVED = "REQUIRED_FIELD_ADDED", "REQUIRED_FIELD_REMOVED"
ONEOF_ADDED, ONEOF_REMOVED = "ONEOF_ADDED", "ONEOF_REMOVED"
ONEOF_FIELD_ADDED, ONEOF_FIELD_REMOVED = "ONEOF_FIELD_ADDED", "ONEOF_FIELD_REMOVED"
ONEOF_FIELD_MOVED_TO_TOP_LEVEL = "ONEOF_FIELD_MOVED_TO_TOP_LEVEL"
MULTIPLE_FIELDS_MOVED_TO_ONEOF = "MULTIPLE_FIELDS_MOVED_TO_ONEOF"
FIELD_MOVED_TO_EXISTING_ONEOF = "FIELD_MOVED_TO_EXISTING_ONEOF"

#: differences a reader copes with
COMPATIBLE = frozenset((
    MESSAGE_ADDED, MESSAGE_MOVED, ENUM_ADDED, ENUM_REMOVED, ENUM_CONST_ADDED,
    ENUM_CONST_CHANGED, ENUM_CONST_REMOVED, FIELD_ADDED, FIELD_REMOVED, FIELD_NAME_CHANGED,
    FIELD_STRING_OR_BYTES_LABEL_CHANGED, ONEOF_ADDED, ONEOF_REMOVED, ONEOF_FIELD_ADDED,
    ONEOF_FIELD_MOVED_TO_TOP_LEVEL))

# What Confluent says about each incompatible kind; {p} is the path, the first %s names the
# reader ("new" for a BACKWARD check), the second the writer.  Kinds absent here have an
# empty description.
_DESCRIPTIONS = {
    PACKAGE_CHANGED: "The package at '{p}' in the %s schema does not match the package in the "
                     "%s schema",
    MESSAGE_REMOVED: "The %s schema is missing a MESSAGE type at path '{p}' in the %s schema",
    FIELD_KIND_CHANGED: "The type of a field at path '{p}' in the %s schema does not match the "
                        "%s schema",
    FIELD_SCALAR_KIND_CHANGED: "The kind of a SCALAR field at path '{p}' in the %s schema does "
                               "not match its kind in the %s schema",
    FIELD_NAMED_TYPE_CHANGED: "The type of a MESSAGE field at path '{p}' in the %s schema does "
                              "not match its type in the %s schema",
    FIELD_NUMERIC_LABEL_CHANGED: "The label for a NUMERIC field at path '{p}' in the %s schema "
                                 "does not match its label in the %s schema",
    # two spaces after "field": Confluent's wording
    REQUIRED_FIELD_ADDED: "A required field  at path '{p}' in the %s schema is missing in the "
                          "%s schema",
    REQUIRED_FIELD_REMOVED: "The %s schema is missing a required field at path: '{p}' in the "
                            "%s schema",
    ONEOF_FIELD_REMOVED: "The %s schema is missing a oneof field at path '{p}' in the %s schema",
    ONEOF_FIELD_MOVED_TO_TOP_LEVEL: "The oneof field at path '{p}' in the %s schema was moved "
                                    "out of its oneof to a top-level field in the %s schema",
    MULTIPLE_FIELDS_MOVED_TO_ONEOF: "Multiple fields in the oneof at path '{p}' in the %s "
                                    "schema are outside a oneof in the %s schema",
    FIELD_MOVED_TO_EXISTING_ONEOF: "A field in the oneof at path '{p}' in the %s schema is "
                                   "outside an existing oneof in the %s schema",
}


def message_of(kind: str, path: str) -> str:
    """Confluent's text for one difference."""
    description = _DESCRIPTIONS.get(kind, "").replace("{p}", path)
    return f'{{errorType:"{kind}", description:"{description}"}}'


# -- Java's hash iteration order ------------------------------------------------------------------

def _java_hash(key: Union[str, int]) -> int:
    if isinstance(key, int):
        h = key & 0xFFFFFFFF
    else:
        h = 0
        data = key.encode("utf-16-be", "surrogatepass")
        for i in range(0, len(data), 2):
            h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h ^ (h >> 16)


def _table_size(n: int) -> int:
    size = 1
    while size < n:
        size <<= 1
    return size


def java_order(keys: Iterable, capacity: int = 16) -> list:
    """The order a Java ``HashMap`` (or ``HashSet``) created with ``capacity`` iterates over
    ``keys`` added in this order (duplicates ignored): bucket by bucket, each bucket in
    insertion order, the table doubling whenever it gets three quarters full."""
    table = _table_size(capacity)
    seen: list = []
    for key in keys:
        if key in seen:
            continue
        seen.append(key)
        if len(seen) > table * 3 // 4:
            table *= 2
    index = {key: i for i, key in enumerate(seen)}
    return sorted(seen, key=lambda k: (_java_hash(k) & (table - 1), index[k]))


def _union_order(first: Sequence, second: Sequence) -> list:
    """``new HashSet<>(first)`` followed by ``addAll(second)``, both already in map order."""
    return java_order(list(first) + list(second), max(int(len(first) / 0.75) + 1, 16))


# -- the walk -----------------------------------------------------------------------------------

class _Context:
    def __init__(self, scopes: dict[bool, Scope]):
        self.scopes = scopes                      # True: original (writer), False: update
        self.path: list[str] = []
        self.names: list[str] = []
        self.visiting: set[int] = set()
        self.diffs: list[tuple[str, str]] = []

    def sub(self) -> "_Context":
        other = _Context(dict(self.scopes))
        other.path, other.names = list(self.path), list(self.names)
        other.visiting = set(self.visiting)
        return other

    def add(self, kind: str, *extra: str) -> None:
        self.diffs.append((kind, "#/" + "/".join(self.path + list(extra))))

    def compatible(self) -> bool:
        return all(kind in COMPATIBLE for kind, _ in self.diffs)

    def lookup(self, name: str, original: bool):
        return self.scopes[original].lookup(name, self.names)

    def resolve(self, name: str, original: bool) -> Optional[str]:
        return self.scopes[original].resolve(name, self.names)


def compare(original: ProtoFile, update: ProtoFile, original_scope: Scope,
            update_scope: Scope) -> list[tuple[str, str]]:
    """Every difference from ``original`` (the writer) to ``update`` (the reader), as
    ``(kind, path)`` in Confluent's order."""
    ctx = _Context({True: original_scope, False: update_scope})
    if (original.package or None) != (update.package or None):
        ctx.add(PACKAGE_CHANGED)
    _compare_types(ctx, original.types, update.types)
    return ctx.diffs


def _index(types) -> tuple[dict[str, Message], dict[str, int], dict[str, Enum]]:
    messages, indexes, enums = {}, {}, {}
    for t in types:
        if isinstance(t, Message):
            messages[t.name] = t
            indexes[t.name] = len(indexes)
        else:
            enums[t.name] = t
    return messages, indexes, enums


def _compare_types(ctx: _Context, original, update) -> None:
    o_messages, o_indexes, o_enums = _index(original)
    u_messages, u_indexes, u_enums = _index(update)
    names = _union_order(java_order(o_messages), java_order(u_messages))
    for name in names:
        ctx.path.append(name)
        ctx.names.append(name)
        try:
            before, after = o_messages.get(name), u_messages.get(name)
            if after is None:
                info = ctx.lookup(name, True)
                if info is not None and not info.is_map:
                    ctx.add(MESSAGE_REMOVED)
            elif before is None:
                info = ctx.lookup(name, False)
                if info is not None and not info.is_map:
                    ctx.add(MESSAGE_ADDED)
            else:
                _compare_messages(ctx, before, after)
                if o_indexes.get(name) != u_indexes.get(name):
                    ctx.add(MESSAGE_MOVED)
        finally:
            ctx.path.pop()
            ctx.names.pop()
    for name in _union_order(java_order(o_enums), java_order(u_enums)):
        ctx.path.append(name)
        ctx.names.append(name)
        try:
            before, after = o_enums.get(name), u_enums.get(name)
            if after is None:
                ctx.add(ENUM_REMOVED)
            elif before is None:
                ctx.add(ENUM_ADDED)
            else:
                _compare_enums(ctx, before, after)
        finally:
            ctx.path.pop()
            ctx.names.pop()


def _compare_enums(ctx: _Context, original: Enum, update: Enum) -> None:
    before = {c.tag: c for c in original.constants}
    after = {c.tag: c for c in update.constants}
    for tag in _union_order(java_order(before), java_order(after)):
        b, a = before.get(tag), after.get(tag)
        if a is None:
            ctx.add(ENUM_CONST_REMOVED, str(tag))
        elif b is None:
            ctx.add(ENUM_CONST_ADDED, str(tag))
        elif b.name != a.name:
            ctx.add(ENUM_CONST_CHANGED, str(tag))


def _fields_by_tag(m: Message):
    by_tag: dict[int, Field] = {f.tag: f for f in m.fields}
    oneof_of: dict[int, str] = {}
    oneofs = {}
    for o in m.oneofs:
        oneofs[o.name] = o
        for f in o.fields:
            by_tag[f.tag] = f
            oneof_of[f.tag] = o.name
    return by_tag, oneof_of, oneofs


def _compare_messages(ctx: _Context, original: Message, update: Message) -> None:
    if id(original) not in ctx.visiting:
        ctx.visiting.add(id(original))
        try:
            _compare_fields(ctx, original, update)
        finally:
            ctx.visiting.discard(id(original))
    _compare_types(ctx, original.nested, update.nested)


def _compare_fields(ctx: _Context, original: Message, update: Message) -> None:
    o_tags, o_oneof_of, o_oneofs = _fields_by_tag(original)
    u_tags, u_oneof_of, u_oneofs = _fields_by_tag(update)
    # a oneof gone by name with none of its members left anywhere is simply deleted
    deleted = {name for name, o in o_oneofs.items() if name not in u_oneofs
               and not any(f.tag in u_tags for f in o.fields)}
    # members of one oneof must have been exclusive before: each earlier oneof is one group,
    # each earlier top-level field its own group; new fields do not count
    for o in update.oneofs:
        groups, moved_in = set(), 0
        for f in o.fields:
            if f.tag in o_oneof_of:
                groups.add(("oneof", o_oneof_of[f.tag]))
            elif f.tag in o_tags:
                groups.add(("field", f.tag))
                moved_in += 1
        if len(groups) > 1:
            ctx.add(MULTIPLE_FIELDS_MOVED_TO_ONEOF if moved_in > 1
                    else FIELD_MOVED_TO_EXISTING_ONEOF, o.name)
    for name in sorted(set(o_oneofs) | set(u_oneofs)):
        if name not in u_oneofs:
            ctx.add(ONEOF_REMOVED, name)
        elif name not in o_oneofs:
            ctx.add(ONEOF_ADDED, name)
    for tag in sorted(set(o_tags) | set(u_tags)):
        before, after = o_tags.get(tag), u_tags.get(tag)
        was_in, now_in = o_oneof_of.get(tag), u_oneof_of.get(tag)
        if after is None:
            if was_in is not None:
                if was_in not in deleted:
                    ctx.add(ONEOF_FIELD_REMOVED, was_in, str(tag))
            else:
                ctx.add(REQUIRED_FIELD_REMOVED if before.label == "required" else FIELD_REMOVED,
                        str(tag))
        elif before is None:
            if now_in is not None:
                ctx.add(ONEOF_FIELD_ADDED, now_in, str(tag))
            else:
                ctx.add(REQUIRED_FIELD_ADDED if after.label == "required" else FIELD_ADDED,
                        str(tag))
        else:
            if was_in is not None and now_in is None:
                ctx.add(ONEOF_FIELD_MOVED_TO_TOP_LEVEL, str(tag))
            where = [now_in, str(tag)] if now_in is not None else [str(tag)]
            ctx.path += where
            try:
                _compare_field(ctx, before, after)
            finally:
                del ctx.path[-len(where):]


def _compare_field(ctx: _Context, original: Field, update: Field) -> None:
    if original.name != update.name:
        ctx.add(FIELD_NAME_CHANGED)
    _compare_types_of(ctx, original.label, update.label, original.type, update.type)


_SCALAR_KINDS = {
    "int32": "GENERAL_NUMBER", "int64": "GENERAL_NUMBER", "uint32": "GENERAL_NUMBER",
    "uint64": "GENERAL_NUMBER", "bool": "GENERAL_NUMBER", "sint32": "SIGNED_NUMBER",
    "sint64": "SIGNED_NUMBER", "string": "STRING_OR_BYTES", "bytes": "STRING_OR_BYTES",
    "fixed32": "FIXED32", "sfixed32": "FIXED32", "fixed64": "FIXED64", "sfixed64": "FIXED64",
    "float": "FLOAT", "double": "DOUBLE"}


def _kind(ctx: _Context, type_name: str, original: bool) -> str:
    if type_name in SCALARS:
        return "SCALAR"
    if map_types(type_name) is not None:
        return "MAP"
    info = ctx.lookup(type_name, original)
    return "SCALAR" if info is not None and isinstance(info.element, Enum) else "MESSAGE"


def _scalar_kind(ctx: _Context, type_name: str, original: bool) -> str:
    info = ctx.lookup(type_name, original)
    if info is not None and isinstance(info.element, Enum):
        return "GENERAL_NUMBER"
    return _SCALAR_KINDS[type_name]


def _compare_types_of(ctx: _Context, o_label, u_label, o_type: str, u_type: str) -> None:
    info = ctx.lookup(o_type, True)
    if info is not None and info.is_map:
        o_type = info.map_type() or o_type
    info = ctx.lookup(u_type, False)
    if info is not None and info.is_map:
        u_type = info.map_type() or u_type
    o_kind, u_kind = _kind(ctx, o_type, True), _kind(ctx, u_type, False)
    if o_kind != u_kind:
        ctx.add(FIELD_KIND_CHANGED)
    elif o_kind == "SCALAR":
        before, after = _scalar_kind(ctx, o_type, True), _scalar_kind(ctx, u_type, False)
        if before != after:
            ctx.add(FIELD_SCALAR_KIND_CHANGED)
        elif o_label is not None and u_label is not None and o_label != u_label:
            ctx.add(FIELD_STRING_OR_BYTES_LABEL_CHANGED if before == "STRING_OR_BYTES"
                    else FIELD_NUMERIC_LABEL_CHANGED)
    elif o_kind == "MESSAGE":
        _compare_message_types(ctx, o_type, u_type)
    else:
        (o_key, o_value), (u_key, u_value) = map_types(o_type), map_types(u_type)
        _compare_types_of(ctx, None, None, o_key, u_key)
        _compare_types_of(ctx, None, None, o_value, u_value)


def _local(full_name: str, package: str) -> str:
    return full_name[len(package) + 1:] if full_name.startswith(package + ".") else full_name


def _compare_message_types(ctx: _Context, o_type: str, u_type: str) -> None:
    o_full, u_full = ctx.resolve(o_type, True), ctx.resolve(u_type, False)
    if o_full is None or u_full is None:
        if o_type != u_type:
            ctx.add(FIELD_NAMED_TYPE_CHANGED)
        return
    o_info = ctx.scopes[True].type_named(o_full)
    u_info = ctx.scopes[False].type_named(u_full)
    o_local, u_local = _local(o_full, o_info.package), _local(u_full, u_info.package)
    if o_local != u_local:
        ctx.add(FIELD_NAMED_TYPE_CHANGED)
        return
    if o_info.source == "" and u_info.source == "":
        return          # both defined in the schemas themselves: compared where they stand
    if not isinstance(o_info.element, Message) or not isinstance(u_info.element, Message):
        return
    sub = ctx.sub()
    sub.scopes = {True: ctx.scopes[True].with_package(o_info.package),
                  False: ctx.scopes[False].with_package(u_info.package)}
    sub.path, sub.names = o_local.split("."), o_local.split(".")
    _compare_messages(sub, o_info.element, u_info.element)
    ctx.diffs += sub.diffs
    if not sub.compatible():
        ctx.add(FIELD_NAMED_TYPE_CHANGED)


def incompatibilities(original: ProtoFile, update: ProtoFile, original_scope: Scope,
                      update_scope: Scope) -> list[str]:
    """Confluent's messages for what keeps ``update`` from reading ``original``'s data."""
    return [message_of(kind, path)
            for kind, path in compare(original, update, original_scope, update_scope)
            if kind not in COMPATIBLE]
