"""The serialized form: a ``google.protobuf.FileDescriptorProto``, base64-encoded.

confluent-kafka's ``ProtobufSerializer`` registers schemas in this form and asks for them back
with ``format=serialized``.  This module reads and writes the descriptor messages directly on
the protobuf wire format (no ``protobuf`` package needed), covering what Confluent itself
carries across: messages, fields, oneofs, enums, services, ``extend`` fields, reserved and
extension ranges, the standard options it maps one by one, and Confluent's ``confluent.*_meta``
options.  Other options (unknown extensions, editions ``features``) are dropped, as Confluent
drops what its extension registry does not know.

Reading (:func:`from_descriptor`) follows Confluent's ``ProtobufSchema.toProtoFile``: type names
stay fully qualified (``.pkg.Msg``), map fields stay ``repeated`` fields of their synthetic
``...Entry`` message, proto3 fields lose ``optional`` unless they are proto3 ``optional``.
Writing (:func:`to_descriptor`) follows its ``DynamicSchema`` builder: the file is named
``default``, only imports that resolve (references and built-in files) are listed, type names
are kept as written (with the message/enum type set when they resolve), a message's nested
types come first, then oneof members, then the other fields; map fields become ``...Entry``
messages and proto3 ``optional`` fields get their synthetic ``_name`` oneof.
"""

from __future__ import annotations

import re
from typing import Any, Iterator, Optional

from mockbroker.core import protowire

from .model import (BOOLEAN, ENUM, MAP, OPTION, PROTO2, PROTO3, SCALARS, STRING, Enum,
                    EnumConstant, Extend, Extensions, Field, Message, OneOf, Option, ProtoFile,
                    Range, Reserved, Rpc, Service, map_types)
from .scope import Scope


class DescriptorError(protowire.WireError):
    pass


# -- the wire format (read by mockbroker.core.protowire) ------------------------------------

def _varint(data: bytes, pos: int) -> tuple[int, int]:
    return protowire.varint(data, pos, DescriptorError)


def fields_of(data: bytes) -> Iterator[tuple[int, Any]]:
    """``(number, value)`` for each field on the wire: an int for varints and fixed-width
    values, bytes for length-delimited ones."""
    for number, _, value in protowire.fields(data, DescriptorError):
        yield number, value


def _signed32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


class _Writer:
    def __init__(self):
        self.out = bytearray()

    def _key(self, number: int, wire: int) -> None:
        self._raw_varint(number << 3 | wire)

    def _raw_varint(self, value: int) -> None:
        value &= (1 << 64) - 1
        while True:
            b = value & 0x7F
            value >>= 7
            if value:
                self.out.append(b | 0x80)
            else:
                self.out.append(b)
                return

    def varint(self, number: int, value: Optional[int]) -> "_Writer":
        if value is not None:
            self._key(number, 0)
            self._raw_varint(int(value))
        return self

    def bytes_(self, number: int, value: Optional[bytes]) -> "_Writer":
        if value is not None:
            self._key(number, 2)
            self._raw_varint(len(value))
            self.out += value
        return self

    def string(self, number: int, value: Optional[str]) -> "_Writer":
        return self.bytes_(number, None if value is None else value.encode())

    def message(self, number: int, value: Optional[bytes], always: bool = False) -> "_Writer":
        return self.bytes_(number, value if value or always else None)

    def done(self) -> bytes:
        return bytes(self.out)


# -- enums of descriptor.proto ----------------------------------------------------------------

TYPE_NAMES = {1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 6: "fixed64",
              7: "fixed32", 8: "bool", 9: "string", 10: "group", 11: "message", 12: "bytes",
              13: "uint32", 14: "enum", 15: "sfixed32", 16: "sfixed64", 17: "sint32",
              18: "sint64"}
TYPE_NUMBERS = {name: number for number, name in TYPE_NAMES.items() if name in SCALARS}
TYPE_MESSAGE, TYPE_ENUM = 11, 14
LABELS = {1: "optional", 2: "required", 3: "repeated"}
LABEL_NUMBERS = {name: number for number, name in LABELS.items()}
_ENUMS = {
    "optimize_for": ("", "SPEED", "CODE_SIZE", "LITE_RUNTIME"),
    "ctype": ("STRING", "CORD", "STRING_PIECE"),
    "jstype": ("JS_NORMAL", "JS_STRING", "JS_NUMBER"),
    "retention": ("RETENTION_UNKNOWN", "RETENTION_RUNTIME", "RETENTION_SOURCE"),
    "targets": tuple("TARGET_TYPE_" + t for t in (
        "UNKNOWN", "FILE", "EXTENSION_RANGE", "MESSAGE", "FIELD", "ONEOF", "ENUM",
        "ENUM_ENTRY", "SERVICE", "METHOD")),
    "idempotency_level": ("IDEMPOTENCY_UNKNOWN", "NO_SIDE_EFFECTS", "IDEMPOTENT"),
}

# The standard options Confluent carries, per options message: (name, number, kind), in the
# order Confluent lists them when it reads a descriptor.
_FILE_OPTIONS = (
    ("java_package", 1, STRING), ("java_outer_classname", 8, STRING),
    ("java_multiple_files", 10, BOOLEAN), ("java_generate_equals_and_hash", 20, BOOLEAN),
    ("java_string_check_utf8", 27, BOOLEAN), ("optimize_for", 9, ENUM),
    ("go_package", 11, STRING), ("cc_generic_services", 16, BOOLEAN),
    ("java_generic_services", 17, BOOLEAN), ("py_generic_services", 18, BOOLEAN),
    ("deprecated", 23, BOOLEAN), ("cc_enable_arenas", 31, BOOLEAN),
    ("objc_class_prefix", 36, STRING), ("csharp_namespace", 37, STRING),
    ("swift_prefix", 39, STRING), ("php_class_prefix", 40, STRING),
    ("php_namespace", 41, STRING), ("php_metadata_namespace", 44, STRING),
    ("ruby_package", 45, STRING))
_MESSAGE_OPTIONS = (("no_standard_descriptor_accessor", 2, BOOLEAN), ("deprecated", 3, BOOLEAN),
                    ("map_entry", 7, BOOLEAN))
_FIELD_OPTIONS = (("ctype", 1, ENUM), ("packed", 2, BOOLEAN), ("jstype", 6, ENUM),
                  ("deprecated", 3, BOOLEAN), ("debug_redact", 16, BOOLEAN),
                  ("retention", 17, ENUM), ("targets", 19, ENUM))
_ENUM_OPTIONS = (("allow_alias", 2, BOOLEAN), ("deprecated", 3, BOOLEAN))
_ENUM_VALUE_OPTIONS = (("deprecated", 1, BOOLEAN), ("debug_redact", 3, BOOLEAN))
_SERVICE_OPTIONS = (("deprecated", 33, BOOLEAN),)
_METHOD_OPTIONS = (("deprecated", 33, BOOLEAN), ("idempotency_level", 34, ENUM))
#: Confluent's metadata extension, the same number on every options message
META_NUMBER = 1088


# -- reading ------------------------------------------------------------------------------------

def _text(value: bytes) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DescriptorError(str(e)) from None


def _read_options(data: bytes, table, meta_name: Optional[str]) -> list[Option]:
    seen: dict[int, list[int | bytes]] = {}
    for number, value in fields_of(data):
        if number == 19 and isinstance(value, bytes):            # packed repeated enum
            for v in _packed(value):
                seen.setdefault(number, []).append(v)
        else:
            seen.setdefault(number, []).append(value)
    out = []
    for name, number, kind in table:
        for value in (seen.get(number, []) if name == "targets" else seen.get(number, [])[-1:]):
            if kind == STRING:
                out.append(Option(name, STRING, _text(value)))
            elif kind == BOOLEAN:
                out.append(Option(name, BOOLEAN, "true" if value else "false"))
            else:
                names = _ENUMS[name]
                out.append(Option(name, ENUM, names[value] if value < len(names) else str(value)))
    if meta_name and META_NUMBER in seen:
        merged = b"".join(v for v in seen[META_NUMBER] if isinstance(v, bytes))
        meta = _read_meta(merged)
        if meta:
            out.append(Option(meta_name, MAP, meta, True))
    return out


def _packed(data: bytes) -> Iterator[int]:
    pos = 0
    while pos < len(data):
        value, pos = _varint(data, pos)
        yield value


def _read_meta(data: bytes) -> dict:
    doc, params, tags, rules = "", {}, [], []
    for number, value in fields_of(data):
        if number == 1:
            doc = _text(value)
        elif number == 2:
            entry = dict(fields_of(value))
            params[_text(entry.get(1, b""))] = _text(entry.get(2, b""))
        elif number == 3:
            tags.append(_text(value))
        elif number == 4:
            rule = {k: _text(v) for k, v in fields_of(value) if isinstance(v, bytes)}
            entry = {}
            for num, key in ((1, "name"), (2, "doc"), (3, "expr"), (4, "sql")):
                if rule.get(num):
                    entry[key] = rule[num]
            if entry:
                rules.append(entry)
    out: dict = {}
    if doc:
        out["doc"] = doc
    if params:
        pairs = []
        for key, value in params.items():
            pairs.append({"value": value, "key": key} if key in ("precision", "scale")
                         else {"key": key, "value": value})
        out["params"] = pairs
    if tags:
        out["tags"] = tags
    if rules:
        out["rules"] = rules
    return out


def _ranges(data: bytes, inclusive_end: bool):
    start = end = 0
    for number, value in fields_of(data):
        if number == 1:
            start = _signed32(value)
        elif number == 2:
            end = _signed32(value)
    last = end if inclusive_end else end - 1
    return start if start == last else Range(start, last)


def _read_field(data: bytes, proto3: bool) -> tuple[Field, Optional[int], bool, str]:
    """The field, its oneof index, whether it is proto3 ``optional``, and its extendee."""
    name = type_name = extendee = ""
    number = 0
    label = type_ = None
    default = json_name = oneof = None
    proto3_optional = False
    options: list[Option] = []
    for num, value in fields_of(data):
        if num == 1:
            name = _text(value)
        elif num == 2:
            extendee = _text(value)
        elif num == 3:
            number = _signed32(value)
        elif num == 4:
            label = value
        elif num == 5:
            type_ = value
        elif num == 6:
            type_name = _text(value)
        elif num == 7:
            default = _text(value)
        elif num == 8:
            options = _read_options(value, _FIELD_OPTIONS, "confluent.field_meta")
        elif num == 9:
            oneof = _signed32(value)
        elif num == 10:
            json_name = _text(value)
        elif num == 17:
            proto3_optional = bool(value)
    if proto3_optional:
        label_name = "optional"
    else:
        label_name = LABELS.get(label or 1)
        if proto3 and label_name != "repeated":
            label_name = None
    field_type = type_name or TYPE_NAMES.get(type_ or 0, "")
    field = Field(name, field_type, number, label_name,
                  None if proto3 else default, json_name, options)
    return field, oneof, proto3_optional, extendee


def _read_message(data: bytes, proto3: bool) -> Message:
    m = Message("")
    oneofs: list[OneOf] = []
    read_fields: list[tuple[Field, Optional[int]]] = []
    nested_messages, nested_enums, reserved_names = [], [], []
    extend_fields = []
    for number, value in fields_of(data):
        if number == 1:
            m.name = _text(value)
        elif number == 2:
            field, oneof, proto3_optional, _ = _read_field(value, proto3)
            read_fields.append((field, None if proto3_optional else oneof))
        elif number == 3:
            nested_messages.append(_read_message(value, proto3))
        elif number == 4:
            nested_enums.append(_read_enum(value))
        elif number == 5:
            m.extensions.append(Extensions([_ranges(value, False)]))
        elif number == 6:
            extend_fields.append(_read_field(value, proto3))
        elif number == 7:
            m.options = _read_options(value, _MESSAGE_OPTIONS, "confluent.message_meta")
        elif number == 8:
            name = next((_text(v) for n, v in fields_of(value) if n == 1), "")
            oneofs.append(OneOf(name))
        elif number == 9:
            m.reserveds.append(Reserved([_ranges(value, False)]))
        elif number == 10:
            reserved_names.append(Reserved([_text(value)]))
    fields = []
    for field, oneof in read_fields:
        if oneof is not None and 0 <= oneof < len(oneofs):
            field.label = None
            oneofs[oneof].fields.append(field)
        else:
            fields.append(field)
    m.fields = fields
    m.oneofs = [o for o in oneofs if o.fields]
    m.nested = nested_messages + nested_enums
    m.reserveds += reserved_names
    m.extends = _group_extends(extend_fields)
    return m


def _read_enum(data: bytes) -> Enum:
    e = Enum("")
    reserved_names = []
    for number, value in fields_of(data):
        if number == 1:
            e.name = _text(value)
        elif number == 2:
            constant = EnumConstant("", 0)
            for num, v in fields_of(value):
                if num == 1:
                    constant.name = _text(v)
                elif num == 2:
                    constant.tag = _signed32(v)
                elif num == 3:
                    constant.options = _read_options(v, _ENUM_VALUE_OPTIONS,
                                                     "confluent.enum_value_meta")
            e.constants.append(constant)
        elif number == 3:
            e.options = _read_options(value, _ENUM_OPTIONS, "confluent.enum_meta")
        elif number == 4:
            e.reserveds.append(Reserved([_ranges(value, True)]))
        elif number == 5:
            reserved_names.append(Reserved([_text(value)]))
    e.reserveds += reserved_names
    return e


def _read_service(data: bytes) -> Service:
    s = Service("")
    for number, value in fields_of(data):
        if number == 1:
            s.name = _text(value)
        elif number == 2:
            rpc = Rpc("", "", "")
            for num, v in fields_of(value):
                if num == 1:
                    rpc.name = _text(v)
                elif num == 2:
                    rpc.request = _text(v)
                elif num == 3:
                    rpc.response = _text(v)
                elif num == 4:
                    rpc.options = _read_options(v, _METHOD_OPTIONS, None)
                elif num == 5:
                    rpc.request_streaming = bool(v)
                elif num == 6:
                    rpc.response_streaming = bool(v)
            s.rpcs.append(rpc)
        elif number == 3:
            s.options = _read_options(value, _SERVICE_OPTIONS, None)
    return s


def _group_extends(fields) -> list[Extend]:
    grouped: dict[str, Extend] = {}
    for field, _, _, extendee in fields:
        grouped.setdefault(extendee, Extend(extendee)).fields.append(field)
    return list(grouped.values())


def from_descriptor(data: bytes) -> ProtoFile:
    """A ``FileDescriptorProto`` as Confluent reads it into a file element."""
    raw = list(fields_of(data))
    syntax = next((_text(v) for n, v in raw if n == 12), "")
    proto3 = syntax == PROTO3
    f = ProtoFile(syntax=syntax if syntax in (PROTO2, PROTO3) else None)
    messages, enums, dependencies, public, weak, extend_fields = [], [], [], set(), set(), []
    for number, value in raw:
        if number == 2:
            f.package = _text(value) or None
        elif number == 3:
            dependencies.append(_text(value))
        elif number == 4:
            messages.append(_read_message(value, proto3))
        elif number == 5:
            enums.append(_read_enum(value))
        elif number == 6:
            f.services.append(_read_service(value))
        elif number == 7:
            extend_fields.append(_read_field(value, proto3))
        elif number == 8:
            f.options = _read_options(value, _FILE_OPTIONS, "confluent.file_meta")
        elif number in (10, 11):
            indexes = _packed(value) if isinstance(value, bytes) else [value]
            (public if number == 10 else weak).update(_signed32(i) for i in indexes)
    for i, dep in enumerate(dependencies):
        (f.public_imports if i in public else f.weak_imports if i in weak
         else f.imports).append(dep)
    f.types = messages + enums
    f.extends = _group_extends(extend_fields)
    return f


# -- writing ------------------------------------------------------------------------------------

def _merged_options(options: list[Option]) -> dict[str, Option]:
    """Options by name (a leading dot dropped), repeated settings of one aggregate merged."""
    from .printer import _as_map
    merged: dict[str, Option] = {}
    for o in options:
        name = o.name[1:] if o.name.startswith(".") else o.name
        o = _as_map(o)
        if name in merged and merged[name].kind == MAP and o.kind == MAP:
            values = dict(merged[name].value)
            for key, value in o.value.items():
                if key in values:
                    joined = []
                    for v in _as_list(values[key]) + _as_list(value):
                        if v not in joined:
                            joined.append(v)
                    value = joined
                values[key] = value
            o = Option(o.name, MAP, values, o.parenthesized)
        merged[name] = o
    return merged


def _as_list(value: Any) -> list:
    return list(value) if isinstance(value, list) else [value]


def _scalar(value: Any) -> str:
    return str(getattr(value, "value", value))


def _write_meta(option: Optional[Option]) -> Optional[bytes]:
    if option is None:
        return None
    if option.kind == MAP:
        values = option.value
    elif option.kind == OPTION:
        values = {option.value.name: option.value.value}
    else:
        return None
    w = _Writer()
    doc = values.get("doc")
    if doc:
        w.string(1, _scalar(doc))
    params = values.get("params")
    pairs = [params] if isinstance(params, dict) else params or []
    for pair in pairs:
        if isinstance(pair, dict):
            entry = _Writer().string(1, _scalar(pair.get("key", ""))) \
                .string(2, _scalar(pair.get("value", ""))).done()
            w.message(2, entry, always=True)
    tags = values.get("tags")
    for tag in _as_list(tags) if tags is not None else []:
        w.string(3, _scalar(tag))
    rules = values.get("rules")
    for rule in _as_list(rules) if rules is not None else []:
        if isinstance(rule, dict):
            r = _Writer()
            for num, key in ((1, "name"), (2, "doc"), (3, "expr"), (4, "sql")):
                if rule.get(key):
                    r.string(num, _scalar(rule[key]))
            if r.out:
                w.message(4, r.done(), always=True)
    return w.done() or None


def _write_options(options: list[Option], table, meta_name: Optional[str]) -> bytes:
    merged = _merged_options(options)
    values: list[tuple[int, str, Any]] = []
    for name, number, kind in table:
        if name == "targets":
            chosen = [o for o in options if o.name == name]
        else:
            chosen = [merged[name]] if name in merged else []
        for o in chosen:
            values.append((number, kind, o.value))
    w = _Writer()
    for number, kind, value in sorted(values, key=lambda v: v[0]):
        text = _scalar(value)
        if kind == STRING:
            w.string(number, text)
        elif kind == BOOLEAN:
            w.varint(number, 1 if text.lower() == "true" else 0)
        else:
            names = [n for (n, num, _) in table if num == number][0]
            choices = _ENUMS[names]
            if text in choices:
                w.varint(number, choices.index(text))
    if meta_name:
        w.message(META_NUMBER, _write_meta(merged.get(meta_name)))
    return w.done()


class _DescriptorWriter:
    def __init__(self, f: ProtoFile, scope: Scope):
        self.file = f
        self.scope = scope
        self.path: list[str] = []
        self.proto3 = f.syntax == PROTO3

    def field(self, f: Field, label: Optional[str], *, type_: Optional[str] = None,
              oneof: Optional[int] = None, proto3_optional: bool = False,
              extendee: Optional[str] = None) -> bytes:
        type_ = f.type if type_ is None else type_
        w = _Writer().string(1, f.name).string(2, extendee).varint(3, f.tag)
        w.varint(4, LABEL_NUMBERS.get(label) if label else None)
        if type_ in TYPE_NUMBERS:
            w.varint(5, TYPE_NUMBERS[type_])
        else:
            info = self.scope.lookup(type_, self.path)
            if info is not None:
                w.varint(5, TYPE_MESSAGE if isinstance(info.element, Message) else TYPE_ENUM)
            w.string(6, type_)
        w.string(7, f.default)
        w.message(8, _write_options(f.options, _FIELD_OPTIONS, "confluent.field_meta"))
        w.varint(9, oneof)
        w.string(10, f.json_name)
        w.varint(17, 1 if proto3_optional else None)
        return w.done()

    def message(self, m: Message) -> bytes:
        w = _Writer().string(1, m.name)
        nested_messages, nested_enums = [], []
        for t in m.nested:
            self.path.append(t.name)
            try:
                if isinstance(t, Message):
                    nested_messages.append(self.message(t))
                else:
                    nested_enums.append(self.enum(t))
            finally:
                self.path.pop()
        fields, oneof_names = [], [o.name for o in m.oneofs]
        in_oneof = set()
        for index, o in enumerate(m.oneofs):
            for f in o.fields:
                fields.append(self.field(f, "optional", oneof=index))
                in_oneof.add(f.name)
        for f in m.fields:
            if f.name in in_oneof:
                continue
            label, type_ = f.label, f.type
            kv = map_types(type_)
            if kv is not None:
                label, type_ = "repeated", map_entry_name(f.name)
                entry = (_Writer().string(1, type_)
                         .message(2, self.field(Field("key", kv[0], 1), None), always=True)
                         .message(2, self.field(Field("value", kv[1], 2), None), always=True)
                         .message(7, _Writer().varint(7, 1).done()))
                nested_messages.append(entry.done())
            if label == "optional" and self.proto3:
                oneof_names.append("_" + f.name)
                fields.append(self.field(f, label, type_=type_, oneof=len(oneof_names) - 1,
                                         proto3_optional=True))
            else:
                fields.append(self.field(f, label, type_=type_))
        for f in fields:
            w.message(2, f, always=True)
        for nested in nested_messages:
            w.message(3, nested, always=True)
        for nested in nested_enums:
            w.message(4, nested, always=True)
        for e in m.extensions:
            for v in e.values:
                start, end = (v.start, v.end) if isinstance(v, Range) else (v, v)
                w.message(5, _Writer().varint(1, start).varint(2, end + 1).done(), always=True)
        for e in m.extends:
            for f in e.fields:
                w.message(6, self.field(f, f.label, extendee=e.name), always=True)
        w.message(7, _write_options(m.options, _MESSAGE_OPTIONS, "confluent.message_meta"))
        for name in oneof_names:
            w.message(8, _Writer().string(1, name).done(), always=True)
        names = []
        for r in m.reserveds:
            for v in r.values:
                if isinstance(v, str):
                    names.append(v)
                else:
                    start, end = (v.start, v.end) if isinstance(v, Range) else (v, v)
                    w.message(9, _Writer().varint(1, start).varint(2, end + 1).done(),
                              always=True)
        for name in names:
            w.string(10, name)
        return w.done()

    def enum(self, e: Enum) -> bytes:
        w = _Writer().string(1, e.name)
        for c in e.constants:
            value = _Writer().string(1, c.name).varint(2, c.tag).message(
                3, _write_options(c.options, _ENUM_VALUE_OPTIONS, "confluent.enum_value_meta"))
            w.message(2, value.done(), always=True)
        w.message(3, _write_options(e.options, _ENUM_OPTIONS, "confluent.enum_meta"))
        names = []
        for r in e.reserveds:
            for v in r.values:
                if isinstance(v, str):
                    names.append(v)
                else:
                    start, end = (v.start, v.end) if isinstance(v, Range) else (v, v)
                    w.message(4, _Writer().varint(1, start).varint(2, end).done(), always=True)
        for name in names:
            w.string(5, name)
        return w.done()

    def service(self, s: Service) -> bytes:
        w = _Writer().string(1, s.name)
        for r in s.rpcs:
            method = (_Writer().string(1, r.name).string(2, r.request).string(3, r.response)
                      .message(4, _write_options(r.options, _METHOD_OPTIONS, None))
                      .varint(5, int(r.request_streaming)).varint(6, int(r.response_streaming)))
            w.message(2, method.done(), always=True)
        w.message(3, _write_options(s.options, _SERVICE_OPTIONS, None))
        return w.done()

    def write_file(self, available: set[str]) -> bytes:
        f = self.file
        w = _Writer().string(1, "default").string(2, f.package)
        dependencies: list[str] = []
        public: list[int] = []
        for name in f.imports:
            if name in available and name not in dependencies:
                dependencies.append(name)
        for name in f.public_imports:
            if name in available:
                if name not in dependencies:
                    dependencies.append(name)
                public.append(dependencies.index(name))
        for name in dependencies:
            w.string(3, name)
        messages, enums = [], []
        for t in f.types:
            self.path.append(t.name)
            try:
                (messages.append(self.message(t)) if isinstance(t, Message)
                 else enums.append(self.enum(t)))
            finally:
                self.path.pop()
        for m in messages:
            w.message(4, m, always=True)
        for e in enums:
            w.message(5, e, always=True)
        for s in f.services:
            w.message(6, self.service(s), always=True)
        for e in f.extends:
            for field in e.fields:
                w.message(7, self.field(field, field.label, extendee=e.name), always=True)
        w.message(8, _write_options(f.options, _FILE_OPTIONS, "confluent.file_meta"))
        for index in public:
            w.varint(10, index)
        w.string(12, f.syntax)
        return w.done()


def to_descriptor(f: ProtoFile, scope: Scope, available: set[str]) -> bytes:
    """The ``FileDescriptorProto`` Confluent builds for a file; ``available`` are the import
    paths it can resolve (references and built-in files)."""
    return _DescriptorWriter(f, scope).write_file(available)


def map_entry_name(field_name: str) -> str:
    """protoc's (and Confluent's) name of a map field's entry message: ``my_map`` ->
    ``MyMapEntry``."""
    if "_" in field_name:
        field_name = re.sub(r"_+([a-zA-Z0-9]?)", lambda m: m.group(1).upper(), field_name.lower())
        field_name = field_name[:1].upper() + field_name[1:]
    return field_name + "Entry"
