"""Writing a :class:`~.model.ProtoFile` back as ``.proto`` text, in the layout Confluent stores
(its ``ProtobufSchemaUtils.toString``), and in the normalized variant ``normalize=true`` asks for.

Layout: ``syntax`` then ``package`` lines, a blank line and the imports, a blank line and the
file options, a blank line and the types (all messages first, then all enums, each in the order
written), then ``extend`` blocks and services.  Inside a message: reserved ranges, options,
fields, oneofs, groups, extension ranges, ``extend`` blocks, then nested messages and enums,
each group after a blank line; two spaces per level; comments are dropped.

Normalizing also: omits ``syntax = "proto2"``, sorts and de-duplicates imports, sorts options by
name (custom ones under their full names, merged into one aggregate value per extension),
sorts fields, oneofs (by first member), reserved and extension ranges one per line, sorts enum
constants by number, writes every type reference fully qualified (``.pkg.Msg``) and map fields
as ``map<K, V>`` even when they arrived as synthetic ``...Entry`` messages, and formats numbers
in option values plainly.  Resolving types may fail: ``Could not resolve type: X``.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any, Optional

from .model import (BOOLEAN, ENUM, LIST, MAP, MAX_TAG, NUMBER, OPTION, PROTO3, SCALARS, STRING,
                    Enum, EnumConstant, Extend, Extensions, Field, Group, Message, OneOf,
                    Option, Primitive, ProtoFile, Range, Reserved, Rpc, Service, check_map_key,
                    map_types)
from .scope import Scope


class UnresolvedType(ValueError):
    pass


_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
            "\v": "\\v", "\\": "\\\\", "'": "\\'", '"': '\\"'}


def escape(text: str) -> str:
    return "".join(_ESCAPES.get(ch, ch) for ch in text)


def indent(text: str) -> str:
    """Every line of ``text`` two spaces in (blank lines get the two spaces too)."""
    lines = text.split("\n")
    while len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return "".join(f"  {line}\n" for line in lines)


def _default_kind(type_name: str) -> str:
    if type_name == "bool":
        return BOOLEAN
    if type_name == "string":
        return STRING
    return NUMBER if type_name in SCALARS else ENUM


class Printer:
    def __init__(self, normalize: bool = False, scope: Optional[Scope] = None,
                 ignore_extensions: bool = False):
        self.normalize = normalize
        self.scope = scope
        self.ignore_extensions = ignore_extensions
        self.path: list[str] = []          # names of the enclosing types

    # -- file --------------------------------------------------------------------------------
    def file(self, f: ProtoFile) -> str:
        out = []
        if f.syntax is not None and (not self.normalize or f.syntax == PROTO3):
            out.append(f'syntax = "{f.syntax}";\n')
        if f.package is not None:
            out.append(f"package {f.package};\n")
        if f.imports or f.public_imports:
            out.append("\n")
            imports, public = f.imports, f.public_imports
            if self.normalize:
                imports, public = sorted(set(imports)), sorted(set(public))
            out += [f'import "{i}";\n' for i in imports]
            out += [f'import public "{i}";\n' for i in public]
        options = self.options(f.options)
        if options:
            out.append("\n")
            out += [self.declaration(o) for o in options]
        types = self.types(f.types)
        if types:
            out.append("\n")
            out += self.typed(types, nested=False)
        if f.extends and not self.ignore_extensions:
            out.append("\n")
            out += [self.extend(e) for e in self.extends(f.extends)]
        if f.services:
            out.append("\n")
            out += [self.service(s) for s in f.services]
        return "".join(out)

    def typed(self, types, nested: bool) -> list[str]:
        out = []
        for kind in (Message, Enum):
            for t in types:
                if isinstance(t, kind):
                    self.path.append(t.name)
                    try:
                        text = self.message(t) if kind is Message else self.enum(t)
                    finally:
                        self.path.pop()
                    out.append(indent(text) if nested else text)
        return out

    def types(self, types):
        if not self.normalize:
            return types
        kept = []
        for t in types:
            if isinstance(t, Message):
                info = self.scope.lookup(t.name, self.path) if self.scope else None
                if info is not None and info.is_map:
                    continue                 # synthetic map entry: the field says map<K, V>
            kept.append(t)
        return kept

    # -- messages ----------------------------------------------------------------------------
    def message(self, m: Message) -> str:
        out = [f"message {m.name} {{"]
        if m.reserveds:
            out.append("\n")
            out += [indent(self.reserved("reserved", r.values)) for r in
                    self.split_ranges(m.reserveds, lambda r, v: Reserved([v]), by_name=True)]
        options = self.options(m.options)
        if options:
            out.append("\n")
            out += [indent(self.declaration(o)) for o in options]
        if m.fields:
            out.append("\n")
            fields = sorted(m.fields, key=lambda f: f.tag) if self.normalize else m.fields
            out += [indent(self.field(f)) for f in fields]
        if m.oneofs:
            out.append("\n")
            oneofs = m.oneofs
            if self.normalize:
                oneofs = [OneOf(o.name, sorted(o.fields, key=lambda f: f.tag), o.groups,
                                o.options) for o in oneofs if o.fields]
                oneofs.sort(key=lambda o: o.fields[0].tag)
            out += [indent(self.oneof(o)) for o in oneofs]
        if m.groups:
            out.append("\n")
            groups = sorted(m.groups, key=lambda g: g.tag) if self.normalize else m.groups
            out += [indent(self.group(g)) for g in groups]
        if m.extensions and not self.ignore_extensions:
            out.append("\n")
            out += [indent(self.extensions(e)) for e in
                    self.split_ranges(m.extensions, lambda e, v: Extensions([v], e.options))]
        if m.extends and not self.ignore_extensions:
            out.append("\n")
            out += [indent(self.extend(e)) for e in self.extends(m.extends)]
        nested = self.types(m.nested)
        if nested:
            out.append("\n")
            out += self.typed(nested, nested=True)
        out.append("}\n")
        return "".join(out)

    def split_ranges(self, items, make, by_name: bool = False):
        """Normalized: one value per statement, by number (names last, by name)."""
        if not self.normalize:
            return items
        singles = [make(item, v) for item in items for v in item.values]

        def key(item):
            v = item.values[0]
            start = v.start if isinstance(v, Range) else v if isinstance(v, int) else 2 ** 31 - 1
            return (start, _java_str(v)) if by_name else start
        return sorted(singles, key=key)

    def reserved(self, keyword: str, values) -> str:
        parts = []
        for v in values:
            if isinstance(v, str):
                parts.append(f'"{v}"')
            elif isinstance(v, Range):
                if self.normalize and v.start == v.end:
                    parts.append(str(v.start))
                else:
                    parts.append(f"{v.start} to {v.end if v.end < MAX_TAG else 'max'}")
            else:
                parts.append(str(v))
        return f"{keyword} {', '.join(parts)};\n"

    def extensions(self, e: Extensions) -> str:
        text = self.reserved("extensions", e.values)[:-2]
        options = self.options(e.options)
        if options:
            text += " " + self.bracketed(options)
        return text + ";\n"

    def oneof(self, o: OneOf) -> str:
        out = [f"oneof {o.name} {{"]
        options = self.options(o.options)
        if options:
            out.append("\n")
            out += [indent(self.declaration(opt)) for opt in options]
        if o.fields:
            out.append("\n")
            out += [indent(self.field(f)) for f in o.fields]
        if o.groups:
            out.append("\n")
            groups = sorted(o.groups, key=lambda g: g.tag) if self.normalize else o.groups
            out += [indent(self.group(g)) for g in groups]
        out.append("}\n")
        return "".join(out)

    def group(self, g: Group) -> str:
        out = [f"{g.label + ' ' if g.label else ''}group {g.name} = {g.tag} {{"]
        if g.fields:
            out.append("\n")
            fields = sorted(g.fields, key=lambda f: f.tag) if self.normalize else g.fields
            out += [indent(self.field(f)) for f in fields]
        out.append("}\n")
        return "".join(out)

    def extends(self, extends: list[Extend]) -> list[Extend]:
        if not self.normalize:
            return extends
        grouped: dict[str, list[Field]] = {}
        for e in extends:
            for f in e.fields:
                grouped.setdefault(self.qualify(e.name), []).append(f)
        return [Extend(name, fields) for name, fields in grouped.items()]

    def extend(self, e: Extend) -> str:
        out = [f"extend {e.name} {{"]
        if e.fields:
            out.append("\n")
            fields = sorted(e.fields, key=lambda f: f.tag) if self.normalize else e.fields
            out += [indent(self.field(f)) for f in fields]
        out.append("}\n")
        return "".join(out)

    def qualify(self, name: str) -> str:
        full = self.scope.resolve(name, self.path) if self.scope else None
        if full is None:
            raise UnresolvedType(f"Could not resolve type: {name}")
        return "." + full

    def field(self, f: Field) -> str:
        label, type_ = f.label, f.type
        check_map_key(type_)
        kind_type = type_
        if self.normalize:
            kv = map_types(type_)
            if type_ not in SCALARS and kv is None:
                type_ = self.qualify(type_)
                info = self.scope.type_named(type_)
                kind_type = info.map_type() if info is not None and info.is_map else None
                kind_type = kind_type or type_
                kv = map_types(kind_type)
            if kv is not None:
                value = self.scope.resolve(kv[1], self.path) if self.scope else None
                kind_type = f"map<{kv[0]}, .{value}>" if value is not None else kind_type
                label = None
            type_ = kind_type
        text = f"{label + ' ' if label else ''}{type_} {f.name} = {f.tag}"
        options = list(f.options)
        if f.default is not None:
            options.append(Option("default", _default_kind(kind_type), f.default))
        if f.json_name is not None:
            options.append(Option("json_name", STRING, f.json_name))
        options = self.options(options)
        if options:
            text += " " + self.bracketed(options)
        return text + ";\n"

    # -- enums -------------------------------------------------------------------------------
    def enum(self, e: Enum) -> str:
        out = [f"enum {e.name} {{"]
        if e.reserveds:
            out.append("\n")
            out += [indent(self.reserved("reserved", r.values)) for r in
                    self.split_ranges(e.reserveds, lambda r, v: Reserved([v]), by_name=True)]
        else:
            if e.options or e.constants:
                out.append("\n")
        out += [indent(self.declaration(o)) for o in self.options(e.options)]
        constants = e.constants
        if self.normalize:
            constants = sorted(constants, key=lambda c: (c.tag, _java_str(c.name)))
        out += [indent(self.constant(c)) for c in constants]
        out.append("}\n")
        return "".join(out)

    def constant(self, c: EnumConstant) -> str:
        text = f"{c.name} = {c.tag}"
        options = self.options(c.options)
        if options:
            text += " " + self.bracketed(options)
        return text + ";\n"

    # -- services ----------------------------------------------------------------------------
    def service(self, s: Service) -> str:
        out = [f"service {s.name} {{"]
        options = self.options(s.options)
        if options:
            out.append("\n")
            out += [indent(self.declaration(o)) for o in options]
        if s.rpcs:
            out.append("\n")
            out += [indent(self.rpc(r)) for r in s.rpcs]
        out.append("}\n")
        return "".join(out)

    def rpc(self, r: Rpc) -> str:
        request, response = r.request, r.response
        if self.normalize:
            request, response = self.qualify(request), self.qualify(response)
        text = (f"rpc {r.name} ({'stream ' if r.request_streaming else ''}{request}) returns "
                f"({'stream ' if r.response_streaming else ''}{response})")
        options = self.options(r.options)
        if options:
            text += " {\n" + "".join(indent(self.declaration(o)) for o in options) + "}"
        return text + ";\n"

    # -- options -----------------------------------------------------------------------------
    def declaration(self, option: Option) -> str:
        return f"option {self.option(option)};\n"

    def option(self, o: Option) -> str:
        name = f"({o.name})" if o.parenthesized else o.name
        if o.kind == STRING:
            return f'{name} = "{escape(str(o.value))}"'
        if o.kind in (BOOLEAN, ENUM):
            return f"{name} = {_java_str(o.value)}"
        if o.kind == NUMBER:
            return f"{name} = {self.number(o.value)}"
        if o.kind == OPTION:
            return f"{name}.{self.option(o.value)}"
        if o.kind == MAP:
            return f"{name} = {{\n{self.map_body(o.value)}}}"
        if o.kind == LIST:
            return f"{name} = {self.bracketed(o.value)}"
        return name

    def bracketed(self, items: list) -> str:
        if len(items) == 1:
            return f"[{self.value(items[0])}]"
        last = len(items) - 1
        body = "".join(indent(self.value(v) + ("," if i < last else ""))
                       for i, v in enumerate(items))
        return f"[\n{body}]"

    def map_body(self, values: dict) -> str:
        if self.normalize:
            cleaned = {}
            for key, value in values.items():
                if isinstance(value, list) and not value:
                    continue
                if key.startswith("[") and key.endswith("]") and self.scope is not None:
                    full = self.scope.resolve_extension(key[1:-1], self.path)
                    if full is not None:
                        key = f"[{full}]"
                cleaned.setdefault(key, value)
            values = {k: cleaned[k] for k in sorted(cleaned, key=_java_str)}
        last = len(values) - 1
        return "".join(indent(f"{key}: {self.value(value)}{',' if i < last else ''}")
                       for i, (key, value) in enumerate(values.items()))

    def value(self, value: Any) -> str:
        if isinstance(value, str):
            return f'"{escape(value)}"'
        if isinstance(value, dict):
            return "{\n" + self.map_body(value) + "}"
        if isinstance(value, list):
            if self.normalize and len(value) == 1:
                return self.value(value[0])
            last = len(value) - 1
            return "[\n" + "".join(indent(self.value(v) + ("," if i < last else ""))
                                   for i, v in enumerate(value)) + "]"
        if isinstance(value, Primitive):
            if value.kind in (BOOLEAN, ENUM):
                return _java_str(value.value)
            if value.kind == NUMBER:
                return self.number(value.value)
            return self.value(value.value)
        if isinstance(value, Option):
            return self.option(value)
        return _java_str(value)

    def number(self, value: Any) -> str:
        return plain_number(value) if self.normalize else _java_str(value)

    def options(self, options: list[Option]) -> list[Option]:
        if not options:
            return options
        if self.ignore_extensions:
            options = [o for o in options
                       if not o.parenthesized or o.name.startswith("confluent.")]
        if not self.normalize:
            return options
        scope = self.scope
        qualified = []
        for o in options:
            if o.parenthesized and scope is not None:
                full = scope.resolve_extension(o.name, self.path)
                if full is not None:
                    o = _as_map(Option(full, o.kind, o.value, True))
            qualified.append(o)
        qualified.sort(key=lambda o: _java_str(o.name))
        grouped: dict[str, list[Option]] = {}
        for o in qualified:
            grouped.setdefault(o.name, []).append(o)
        out = []
        for name, group in grouped.items():
            info = scope.extend_named(name) if scope is not None else None
            if info is not None and not info.repeated:
                merged = group[0]
                for o in group[1:]:
                    merged = self._merge(info.field, merged, o)
                out.append(merged)
            else:
                out += group
        return out

    # -- merging repeated settings of one custom option ----------------------------------------
    def _merge(self, field: Field, existing: Option, replacement: Option) -> Option:
        replacement = _as_map(replacement)
        if existing.kind == MAP and replacement.kind == MAP:
            merged = self._merge_maps(field, existing.value, replacement.value)
            return Option(replacement.name, MAP, merged, replacement.parenthesized)
        return replacement

    def _message_of(self, field: Optional[Field]) -> Optional[Message]:
        if field is None or self.scope is None:
            return None
        info = self.scope.lookup(field.type, self.path)
        return info.element if info is not None and isinstance(info.element, Message) else None

    def _merge_maps(self, field: Field, existing: dict, replacement: dict) -> dict:
        container = self._message_of(field)
        merged = dict(existing)
        for key, value in replacement.items():
            nested = None
            if container is not None:
                nested = next((f for f in container.all_fields() if f.name == key), None)
            merged[key] = (self._merge_values(nested, merged[key], value) if key in merged
                           else value)
        return merged

    def _merge_values(self, field: Optional[Field], v1: Any, v2: Any) -> Any:
        singular = field is not None and field.label != "repeated"
        if singular and isinstance(v1, dict) and isinstance(v2, dict) \
                and self._message_of(field) is not None:
            return self._merge_maps(field, v1, v2)
        if singular:
            return v2
        out: list = []
        for v in (v1 if isinstance(v1, list) else [v1]) + (v2 if isinstance(v2, list) else [v2]):
            if v not in out:
                out.append(v)
        return out


def _as_map(o: Option) -> Option:
    """``(opt).a.b = 1`` as ``(opt) = { a: { b: 1 } }``."""
    return Option(o.name, MAP, _option_map(o), o.parenthesized) if o.kind == OPTION else o


def _option_map(o: Option) -> dict:
    inner: Option = o.value
    value = inner.value
    if inner.kind in (BOOLEAN, ENUM, NUMBER):
        value = Primitive(inner.kind, value)
    elif inner.kind == OPTION:
        value = _option_map(inner)
    return {inner.name: value}


def _java_str(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Range):
        return f"{value.start}..{value.end}"
    return str(value)


_NUMBER = re.compile(r"^([-+]?)(0[xX][0-9a-fA-F]+|[0-9]*\.?[0-9]*(?:[eE][-+]?[0-9]+)?)"
                     r"([fFdDlL]?)$")


def plain_number(value: Any) -> str:
    """A number the way Java's default ``DecimalFormat`` (no grouping) writes it: at most three
    decimals, rounded half-even, no exponent; text that is no number stays as it is."""
    text = str(value)
    m = _NUMBER.match(text)
    if not m or m.group(2) in ("", "."):
        return text
    sign, body = m.group(1), m.group(2)
    try:
        number = Decimal(int(body, 16)) if body[:2] in ("0x", "0X") else Decimal(body)
    except (InvalidOperation, ValueError):
        return text
    if sign == "-":
        number = -number
    number = number.quantize(Decimal("0.001"), rounding=ROUND_HALF_EVEN)
    out = format(number, "f")
    if "." in out:
        out = out.rstrip("0").rstrip(".")
    return "0" if out in ("-0", "") else out


def to_text(f: ProtoFile) -> str:
    """Confluent's canonical text of a file."""
    return Printer().file(f)


def to_normalized_text(f: ProtoFile, scope: Scope) -> str:
    """Confluent's normalized text; raises :class:`UnresolvedType`."""
    return Printer(True, scope).file(f)
