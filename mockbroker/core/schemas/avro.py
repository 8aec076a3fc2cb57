"""Avro, the registry's default schema format, as Confluent's registry handles it.

Confluent's registry leans on Apache Avro's Java library (1.12) for everything Avro: the
parser (``Schema.Parser``, with names checked strictly and field defaults checked against
their types when a schema is registered), the text it stores (``Schema.toString()``, compact
JSON with the keys in Avro's own order), and the reader/writer compatibility check
(``SchemaCompatibility``), whose findings it words with its ``Difference`` templates.  This
module does the same work in plain Python so that a client sees the same stored strings, the
same verdicts and the same messages:

* :func:`parse` reads the JSON (comments allowed, as Avro's JSON factory allows them), builds
  the schema tree and raises :class:`InvalidSchema` with Avro's own wording
  (``Undefined schema: ns.Foo``, ``Illegal initial character: 1x``, ``Invalid default for
  field f: "x" not a "int"``, ...).  Named types may be used before they are defined, as
  Avro 1.12 resolves names once the whole text is read.  ``references`` are the texts of
  schemas registered elsewhere; they are read first, so their named types can be used by name.
* :meth:`AvroSchema.canonical` writes the schema the way ``Schema.toString()`` does: a named
  type in full the first time, by name afterwards; a namespace only where it differs from the
  enclosing one; the named types the references define by name only.
* :meth:`AvroSchema.normalized` follows Confluent's ``AvroSchemaUtils.toNormalizedString``
  (full names, sorted properties and aliases, defaults rewritten through their types) and
  parses the result again, as Confluent does, so its canonical text is what gets stored.
* :meth:`AvroSchema.is_backward_compatible` walks reader and writer as Avro's
  ``ReaderWriterCompatibilityChecker`` does (promotions int->long->float->double,
  string<->bytes, unions, enum defaults, aliases, fixed sizes, memoised pairs for recursive
  types) and reports each finding in Confluent's ``{errorType:..}`` form.

Schema nodes are plain objects: a named type occurs once and every use of its name points at
that one object, while any other type is a new object at each place it is written - the
compatibility check remembers pairs by identity, which makes that distinction visible.
"""

from __future__ import annotations

import json
import math
import struct
from decimal import Decimal
from typing import Any, Mapping

from mockbroker.core.schemas.formats import STRICT, InvalidSchema, ParsedSchema

__all__ = ["AvroSchema", "parse"]

PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")
#: every Avro type name; a name equal to one is always written with its namespace
TYPE_NAMES = frozenset(PRIMITIVES + ("record", "enum", "array", "map", "union", "fixed"))
#: attributes that are part of a type's definition and so never kept as custom properties
SCHEMA_RESERVED = frozenset(("doc", "fields", "items", "name", "namespace", "size", "symbols",
                             "values", "type", "aliases"))
ENUM_RESERVED = SCHEMA_RESERVED | {"default"}
FIELD_RESERVED = frozenset(("default", "doc", "name", "order", "type", "aliases"))
ORDERS = ("ASCENDING", "DESCENDING", "IGNORE")
#: Java-specific properties a logical type may not be combined with
_NOT_WITH_LOGICAL = ("avro.java.string", "java-class", "java-key-class", "java-element-class")
#: logical types and the Avro types that may carry them (decimal, uuid, duration: see code)
_LOGICAL_ON = {
    "date": "int", "time-millis": "int", "time-micros": "long", "big-decimal": "bytes",
    "timestamp-millis": "long", "timestamp-micros": "long", "timestamp-nanos": "long",
    "local-timestamp-millis": "long", "local-timestamp-micros": "long",
    "local-timestamp-nanos": "long",
}
_INT_MIN, _INT_MAX = -2 ** 31, 2 ** 31 - 1
_LONG_MIN, _LONG_MAX = -2 ** 63, 2 ** 63 - 1
_MISSING: Any = object()   # an attribute absent from the JSON (JSON null is Python None)
_NO_VALUE: Any = object()  # a default Avro's Java conversion turns into nothing


# -- JSON, read and written as Jackson does it ---------------------------------------------------

class _F32(float):
    """A number Java holds as a 32-bit float (written with ``Float.toString``)."""


def _blank_comments(text: str) -> str:
    """``text`` with its ``//`` and ``/* */`` comments (outside strings) blanked out, every
    other character left where it was."""
    if "/" not in text:  # no comment can start: the usual case, without a walk
        return text
    out, i, n, in_str = [], 0, len(text), False
    while i < n:
        c = text[i]
        if in_str:
            if c == "\\" and i + 1 < n:
                out.append(text[i:i + 2])
                i += 2
                continue
            in_str = c != '"'
        elif c == '"':
            in_str = True
        elif text.startswith("//", i) or text.startswith("/*", i):
            if text[i + 1] == "/":
                end = text.find("\n", i)
                end = n if end < 0 else end
            else:
                end = text.find("*/", i + 2)
                end = n if end < 0 else end + 2
            out.append(" " * (end - i))
            i = end
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _no_constant(name: str) -> Any:
    raise ValueError(f"Non-standard token '{name}'")


_DECODER = json.JSONDecoder(parse_constant=_no_constant)


def _read_json(text: str) -> tuple[Any, str]:
    """The first JSON value of ``text`` and what follows it; ``_MISSING`` when it is empty."""
    body = _blank_comments(text)
    start = len(body) - len(body.lstrip())
    if start == len(body):
        return _MISSING, ""
    try:
        value, end = _DECODER.raw_decode(body, start)
    except ValueError as exc:
        raise InvalidSchema(f"com.fasterxml.jackson.core.JsonParseException: {exc}") from None
    return value, text[end:].strip()


def _java_number(digits: str, exp: int) -> str:
    """``digits`` (no trailing zeros) times 10**``exp``, the way Java prints a double."""
    if -3 <= exp < 7:
        if exp < 0:
            return "0." + "0" * (-exp - 1) + digits
        whole, frac = digits[:exp + 1].ljust(exp + 1, "0"), digits[exp + 1:]
        return f"{whole}.{frac or '0'}"
    return f"{digits[0]}.{digits[1:] or '0'}E{exp}"


def _java_double(x: float, single: bool = False) -> str:
    """``Double.toString`` (or ``Float.toString`` when ``single``): shortest digits, plain
    between 10^-3 and 10^7, ``1.0E10`` style outside."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    x = abs(x)
    if x == 0:
        return sign + "0.0"
    text = repr(x)
    if single:   # fewest digits that come back to the same 32-bit value
        packed = struct.pack(">f", x)
        for places in range(1, 10):
            text = f"{x:.{places - 1}e}"
            if struct.pack(">f", float(text)) == packed:
                break
    _, tup, exponent = Decimal(text).normalize().as_tuple()
    digits = "".join(map(str, tup))
    return sign + _java_number(digits, len(digits) + int(exponent) - 1)


def _quote(s: str) -> str:
    """A JSON string as Jackson writes it (control characters escaped, the rest as is)."""
    out = ['"']
    for c in s:
        o = ord(c)
        if c == '"' or c == "\\":
            out.append("\\" + c)
        elif o < 0x20:
            short = {8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r"}.get(o)
            out.append(short or f"\\u{o:04X}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def _dump(value: Any) -> str:
    """Compact JSON, as Jackson's ``JsonNode.toString`` writes a parsed value."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = _java_double(value, isinstance(value, _F32))
        return text if math.isfinite(value) else _quote(text)
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, list):
        return "[" + ",".join(_dump(v) for v in value) + "]"
    return "{" + ",".join(_quote(k) + ":" + _dump(v) for k, v in value.items()) + "}"


def _json_equal(a: Any, b: Any) -> bool:
    """Equality of two parsed JSON values as Jackson's nodes compare (1 is not 1.0)."""
    if type(a) is not type(b) and not (isinstance(a, float) and isinstance(b, float)):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    return a == b


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


# -- the schema tree ------------------------------------------------------------------------------

class _Schema:
    """One Avro type: its kind (``type``), custom properties and valid logical type."""

    __slots__ = ("type", "props", "logical")

    def __init__(self, type_: str) -> None:
        self.type = type_
        self.props: dict[str, Any] = {}
        #: (name, precision, scale) of a logical type Avro accepts for this type, else None
        self.logical: tuple[str, int, int] | None = None

    @property
    def full(self) -> str:
        """Avro's ``getFullName``: a named type's full name, else the type's name."""
        return self.type


class _Named(_Schema):
    """A record, enum or fixed: a name in a namespace, a doc and aliases."""

    __slots__ = ("name", "space", "doc", "aliases")

    def __init__(self, type_: str, name: str, space: str | None, doc: str | None) -> None:
        super().__init__(type_)
        self.name, self.space, self.doc = name, space, doc
        self.aliases: list[tuple[str, str | None]] = []

    @property
    def full(self) -> str:
        return self.name if self.space is None else f"{self.space}.{self.name}"

    def alias_names(self) -> list[str]:
        """Avro's ``getAliases``: full names, a namespace-less alias of a namespaced type
        prefixed with a dot."""
        return ["." + n if s is None and self.space is not None else _full(n, s)
                for n, s in self.aliases]


class _Record(_Named):
    __slots__ = ("fields", "is_error")

    def __init__(self, name: str, space: str | None, doc: str | None, is_error: bool) -> None:
        super().__init__("record", name, space, doc)
        self.is_error = is_error
        self.fields: list[_Field] = []

    def field(self, name: str) -> "_Field | None":
        return next((f for f in self.fields if f.name == name), None)


class _Enum(_Named):
    __slots__ = ("symbols", "default")

    def __init__(self, name: str, space: str | None, doc: str | None, symbols: list,
                 default: str | None) -> None:
        super().__init__("enum", name, space, doc)
        self.symbols, self.default = symbols, default


class _Fixed(_Named):
    __slots__ = ("size",)

    def __init__(self, name: str, space: str | None, doc: str | None, size: int) -> None:
        super().__init__("fixed", name, space, doc)
        self.size = size


class _Array(_Schema):
    __slots__ = ("items",)

    def __init__(self, items: _Schema) -> None:
        super().__init__("array")
        self.items = items


class _Map(_Schema):
    __slots__ = ("values",)

    def __init__(self, values: _Schema) -> None:
        super().__init__("map")
        self.values = values


class _Union(_Schema):
    __slots__ = ("branches",)

    def __init__(self, branches: list[_Schema]) -> None:
        super().__init__("union")
        self.branches = branches


class _Unresolved(_Schema):
    """A name used before its type is known; replaced once the whole text is read."""

    __slots__ = ("wanted",)

    def __init__(self, wanted: str) -> None:
        super().__init__("record")   # Avro's placeholder is a record too
        self.wanted = wanted


class _Field:
    __slots__ = ("name", "type", "doc", "default", "order", "aliases", "props", "pos")

    def __init__(self, name: str, type_: _Schema, doc: str | None, default: Any,
                 order: str, aliases: list[str], props: dict[str, Any], pos: int) -> None:
        self.name, self.type, self.doc, self.default = name, type_, doc, default
        self.order, self.aliases, self.props, self.pos = order, aliases, props, pos

    def __str__(self) -> str:   # Avro's Field.toString, used in some messages
        return f"{self.name} type:{self.type.type.upper()} pos:{self.pos}"


def _full(name: str, space: str | None) -> str:
    return name if space is None else f"{space}.{name}"


def _children(s: _Schema) -> list[_Schema]:
    if isinstance(s, _Record):
        return [f.type for f in s.fields]
    if isinstance(s, _Array):
        return [s.items]
    if isinstance(s, _Map):
        return [s.values]
    if isinstance(s, _Union):
        return list(s.branches)
    return []


def _walk(root: _Schema) -> list[_Schema]:
    """Every type reachable from ``root``, each once, depth first in document order."""
    seen: set[int] = set()
    out: list[_Schema] = []
    stack = [root]
    while stack:
        s = stack.pop()
        if id(s) in seen:
            continue
        seen.add(id(s))
        out.append(s)
        stack.extend(reversed(_children(s)))
    return out


def _schema_equal(a: _Schema, b: _Schema, seen: set | None = None) -> bool:
    """Avro Java's ``Schema.equals``: structure, names and properties (not docs, aliases or
    enum defaults)."""
    if a is b:
        return True
    if a.type != b.type or isinstance(a, _Unresolved) or isinstance(b, _Unresolved):
        return False
    if a.props.keys() != b.props.keys() or not all(
            _json_equal(a.props[k], b.props[k]) for k in a.props):
        return False
    seen = set() if seen is None else seen
    if isinstance(a, _Named) and a.full != b.full:  # type: ignore[attr-defined]
        return False
    if isinstance(a, _Record):
        if (id(a), id(b)) in seen:
            return True
        seen.add((id(a), id(b)))
        return len(a.fields) == len(b.fields) and all(
            x.name == y.name and x.order == y.order and _schema_equal(x.type, y.type, seen)
            and (x.default is y.default or (x.default is not _MISSING
                                            and y.default is not _MISSING
                                            and _json_equal(x.default, y.default)))
            and x.props.keys() == y.props.keys()
            and all(_json_equal(x.props[k], y.props[k]) for k in x.props)
            for x, y in zip(a.fields, b.fields))  # type: ignore[attr-defined]
    if isinstance(a, _Enum):
        return a.symbols == b.symbols  # type: ignore[attr-defined]
    if isinstance(a, _Fixed):
        return a.size == b.size  # type: ignore[attr-defined]
    if isinstance(a, (_Array, _Map, _Union)):
        ca, cb = _children(a), _children(b)
        return len(ca) == len(cb) and all(_schema_equal(x, y, seen) for x, y in zip(ca, cb))
    return True


def _logical_type(s: _Schema) -> tuple[str, int, int] | None:
    """The logical type Avro's ``LogicalTypes.fromSchemaIgnoreInvalid`` finds on ``s``: a
    known name on a type that may carry it, else None (the property stays a plain one)."""
    name = s.props.get("logicalType")
    if not isinstance(name, str):
        return None
    precision = scale = 0
    if name == "decimal":
        precision, scale = s.props.get("precision", _MISSING), s.props.get("scale", 0)
        if not (_is_int(precision) and _INT_MIN <= precision <= _INT_MAX
                and _is_int(scale) and _INT_MIN <= scale <= _INT_MAX):
            return None
        if s.type == "bytes":
            limit = _INT_MAX
        elif isinstance(s, _Fixed):
            limit = round(math.floor(math.log10(2) * (8 * s.size - 1)))
        else:
            return None
        if not (0 < precision <= limit and 0 <= scale <= precision):
            return None
    elif name == "uuid":
        if not (s.type == "string" or (isinstance(s, _Fixed) and s.size == 16)):
            return None
    elif name == "duration":
        if not (isinstance(s, _Fixed) and s.size == 12):
            return None
    elif _LOGICAL_ON.get(name) != s.type:
        return None
    if any(isinstance(s.props.get(p), str) for p in _NOT_WITH_LOGICAL):
        return None
    return name, precision, scale


def _valid_default(s: _Schema, value: Any) -> bool:
    """Avro's ``isValidDefault``: does ``value`` (parsed JSON) suit type ``s``?  A union
    accepts a value any of its branches accepts; enum symbols are not checked."""
    if value is _MISSING:
        return False
    t = s.type
    if t in ("string", "bytes", "enum", "fixed"):
        return isinstance(value, str)
    if t == "int":
        return _is_int(value) and _INT_MIN <= value <= _INT_MAX
    if t == "long":
        return _is_int(value) and _LONG_MIN <= value <= _LONG_MAX
    if t in ("float", "double"):
        return _is_int(value) or isinstance(value, float)
    if t == "boolean":
        return isinstance(value, bool)
    if t == "null":
        return value is None
    if isinstance(s, _Array):
        return isinstance(value, list) and all(_valid_default(s.items, v) for v in value)
    if isinstance(s, _Map):
        return isinstance(value, dict) and all(_valid_default(s.values, v)
                                               for v in value.values())
    if isinstance(s, _Union):
        return any(_valid_default(b, value) for b in s.branches)
    if isinstance(s, _Record):
        return isinstance(value, dict) and all(
            _valid_default(f.type, value.get(f.name, f.default)) for f in s.fields)
    return isinstance(s, _Unresolved) and isinstance(value, dict)


# -- the parser -----------------------------------------------------------------------------------

def _strict_name_error(name: Any) -> str | None:
    """Avro's STRICT_VALIDATOR, used for schemas being registered: ASCII letters, digits and
    ``_``, not starting with a digit."""
    if name is None:
        return "Null name"
    if not name:
        return "Empty name"
    if not (name[0].isascii() and (name[0].isalpha() or name[0] == "_")):
        return f"Illegal initial character: {name}"
    if not all(c.isascii() and (c.isalnum() or c == "_") for c in name[1:]):
        return f"Illegal character in: {name}"
    return None


def _utf_name_error(name: Any) -> str | None:
    """Avro's UTF_VALIDATOR (Unicode letters and digits), what Confluent checks the simple
    names of an already registered schema with."""
    if name is None:
        return "Null name"
    if not name:
        return "Empty name"
    if not (name[0].isalpha() or name[0] == "_"):
        return f"Illegal initial character: {name}"
    if not all(c.isalnum() or c == "_" for c in name[1:]):
        return f"Illegal character in: {name}"
    return None


def _text(node: Any, key: str) -> str | None:
    """Jackson's ``get(key).textValue()``: the attribute when it is a string, else None."""
    value = node.get(key) if isinstance(node, dict) else None
    return value if isinstance(value, str) else None


def _java_parse_double(text: str) -> float:
    """``Double.parseDouble``, for a float field whose default is written as a string."""
    body = text.strip()
    core = body[:-1] if body[-1:] in ("f", "F", "d", "D") else body
    unsigned = core.lstrip("+-")
    if unsigned in ("NaN", "Infinity"):
        return float(core.replace("Infinity", "inf"))
    if unsigned and unsigned.lower() not in ("nan", "inf", "infinity") and "_" not in core:
        try:
            return float(core)
        except ValueError:
            pass
    raise InvalidSchema("empty String" if not body else f'For input string: "{text}"')


class _Parser:
    """Reads schema texts one after the other, as one ``Schema.Parser`` does: the named
    types of each text become known to the texts read after it."""

    def __init__(self, strict: bool) -> None:
        #: names of types and field names checked strictly, defaults checked (a new schema)
        self.strict = strict
        self.names: dict[str, _Named] = {}

    def _check_name(self, name: Any) -> None:
        if self.strict:
            error = _strict_name_error(name)
            if error:
                raise InvalidSchema(error)

    def parse(self, text: str) -> _Schema:
        value, rest = _read_json(text)
        if value is _MISSING:
            raise InvalidSchema("Cannot parse <null> schema")
        known = dict(self.names)
        try:
            root = self._resolve(self._parse(value, None))
            if self.strict:
                for s in _walk(root):
                    if isinstance(s, _Record):
                        for f in s.fields:
                            self._check_default(f)
            if rest:
                raise InvalidSchema(f"dangling content after end of schema: {rest}")
        except InvalidSchema:
            self.names = known
            raise
        return root

    # one JSON value -> one type

    def _parse(self, node: Any, space: str | None) -> _Schema:
        if isinstance(node, str):
            return self._find(node, space)
        if isinstance(node, list):
            return self._union([self._parse(b, space) for b in node])
        if not isinstance(node, dict):
            raise InvalidSchema(f"Schema not yet supported: {_dump(node)}")
        kind = _text(node, "type")
        if kind is None:
            raise InvalidSchema(f"No type: {_dump(node)}")
        if kind in PRIMITIVES:
            return self._props(_Schema(kind), node, SCHEMA_RESERVED)
        if kind in ("record", "error"):
            return self._record(node, space, kind == "error")
        if kind == "enum":
            return self._enum(node, space)
        if kind in ("array", "map"):
            inner = node.get("items" if kind == "array" else "values", _MISSING)
            if inner is _MISSING:
                what = "Array has no items" if kind == "array" else "Map has no values"
                raise InvalidSchema(f"{what} type: {_dump(node)}")
            parsed = self._parse(inner, space)
            made = _Array(parsed) if kind == "array" else _Map(parsed)
            return self._props(made, node, SCHEMA_RESERVED)
        if kind == "fixed":
            return self._fixed(node, space)
        return self._find(kind, space)

    def _find(self, name: str, space: str | None) -> _Schema:
        """A type by name: a primitive, a known named type (in ``space`` first, then as
        written), or a placeholder for a type defined later."""
        if name in PRIMITIVES:
            return _Schema(name)
        full = f"{space}.{name}" if space is not None and "." not in name else name
        return self.names.get(full) or self.names.get(name) or _Unresolved(full)

    def _props(self, s: _Schema, node: dict, reserved: frozenset) -> _Schema:
        s.props = {k: v for k, v in node.items() if k not in reserved}
        s.logical = _logical_type(s)
        return s

    def _name(self, node: dict, space: str | None) -> tuple[str, str | None]:
        given = _text(node, "namespace")
        if given is not None:
            space = given
        name = _text(node, "name")
        if name is None:
            raise InvalidSchema(f"No name in schema: {_dump(node)}")
        return self._split(name, space)

    def _split(self, name: str, space: str | None) -> tuple[str, str | None]:
        """Avro's ``Name``: a dotted name carries its own namespace; "" means none."""
        if "." in name:
            space, name = name.rsplit(".", 1)
        self._check_name(name)
        return name, (space or None)

    def _define(self, s: _Named, node: dict, reserved: frozenset) -> _Named:
        """Properties, aliases and the name's registration, as each named type ends."""
        self._props(s, node, reserved)
        for alias in _aliases(node) or []:
            entry = self._split(alias, s.space)
            if entry not in s.aliases:
                s.aliases.append(entry)
        if self.strict and s.space is not None:
            for part in s.space.split("."):
                error = _strict_name_error(part)
                if error:
                    raise InvalidSchema(f'Namespace part "{part}" is invalid: {error}')
        known = self.names.get(s.full)
        if known is None:
            self.names[s.full] = s
        elif not _schema_equal(known, s):
            raise InvalidSchema(f"Can't redefine: {s.full}")
        return s

    @staticmethod
    def _not_primitive(full: str) -> None:
        if full in PRIMITIVES:
            raise InvalidSchema(f"Schemas may not be named after primitives: {full}")

    def _record(self, node: dict, space: str | None, is_error: bool) -> _Schema:
        name, space = self._name(node, space)
        record = _Record(name, space, _text(node, "doc"), is_error)
        self._not_primitive(record.full)
        fields = node.get("fields")
        if not isinstance(fields, list):
            raise InvalidSchema(f"Record has no fields: {_dump(node)}")
        record.fields = [self._field(f, record.space, pos) for pos, f in enumerate(fields)]
        by_name: dict[str, _Field] = {}
        for f in record.fields:   # checked once all are read, as Avro's setFields does
            if f.name in by_name:
                raise InvalidSchema(f"Duplicate field {f.name} in record {record.full}: {f} "
                                    f"and {by_name[f.name]}.")
            by_name[f.name] = f
        return self._define(record, node, SCHEMA_RESERVED)

    def _field(self, node: Any, space: str | None, pos: int) -> _Field:
        name = _text(node, "name")
        if name is None:
            raise InvalidSchema(f"No field name: {_dump(node)}")
        type_node = node.get("type", _MISSING)
        if type_node is _MISSING:
            raise InvalidSchema(f"No field type: {_dump(node)}")
        type_ = self._parse(type_node, space)
        order = "ASCENDING"
        if "order" in node:
            given = node["order"]
            if not isinstance(given, str):
                raise InvalidSchema('Cannot invoke "String.toUpperCase(java.util.Locale)" '
                                    'because the return value of "com.fasterxml.jackson.'
                                    'databind.JsonNode.textValue()" is null')
            order = given.upper()
            if order not in ORDERS:
                raise InvalidSchema("No enum constant org.apache.avro.Schema.Field.Order."
                                    + order)
        default = node.get("default", _MISSING)
        if type_.type in ("float", "double") and isinstance(default, str):
            default = _java_parse_double(default)
        self._check_name(name)
        f = _Field(name, type_, _text(node, "doc"), default, order, [],
                   {k: v for k, v in node.items() if k not in FIELD_RESERVED}, pos)
        if not any(isinstance(s, _Unresolved) for s in _walk(type_)):
            self._check_default(f)
        f.aliases = _aliases(node) or []
        return f

    def _check_default(self, f: _Field) -> None:
        if self.strict and f.default is not _MISSING and not _valid_default(f.type, f.default):
            raise InvalidSchema(f"Invalid default for field {f.name}: {_dump(f.default)} "
                                f"not a {_write(f.type, set(), None)}")

    def _enum(self, node: dict, space: str | None) -> _Schema:
        name, space = self._name(node, space)
        doc = _text(node, "doc")
        symbols_node = node.get("symbols")
        if not isinstance(symbols_node, list):
            raise InvalidSchema(f"Enum has no symbols: {_dump(node)}")
        symbols = [s if isinstance(s, str) else None for s in symbols_node]
        default = _text(node, "default")
        enum = _Enum(name, space, doc, symbols, default)
        self._not_primitive(enum.full)
        seen: set = set()
        for symbol in symbols:
            self._check_name(symbol)
            if symbol in seen:
                raise InvalidSchema(f"Duplicate enum symbol: {symbol}")
            seen.add(symbol)
        if default is not None and default not in seen:
            shown = ", ".join("null" if s is None else s for s in symbols)
            raise InvalidSchema(f"The Enum Default: {default} is not in the enum symbol set: "
                                f"[{shown}]")
        return self._define(enum, node, ENUM_RESERVED)

    def _fixed(self, node: dict, space: str | None) -> _Schema:
        name, space = self._name(node, space)
        doc = _text(node, "doc")
        size = node.get("size")
        if not (_is_int(size) and _INT_MIN <= size <= _INT_MAX):
            raise InvalidSchema(f"Invalid or no size: {_dump(node)}")
        fixed = _Fixed(name, space, doc, size)
        self._not_primitive(fixed.full)
        if size < 0:
            raise InvalidSchema(f"Malformed data. Length is negative: {size}")
        if size > _INT_MAX - 8:
            raise InvalidSchema(f"Cannot read arrays longer than {_INT_MAX - 8} bytes in Java "
                                "library")
        return self._define(fixed, node, SCHEMA_RESERVED)

    @staticmethod
    def _union(branches: list[_Schema]) -> _Union:
        union = _Union(branches)
        _check_union(union)
        return union

    def _resolve(self, root: _Schema) -> _Schema:
        """Replace every placeholder by the type its name now denotes (``Undefined schema``
        when there is none), then check the unions again, as Avro rebuilds them."""
        def resolved(s: _Schema) -> _Schema:
            if not isinstance(s, _Unresolved):
                return s
            found = self.names.get(s.wanted)
            if found is None:
                raise InvalidSchema(f"Undefined schema: {s.wanted}")
            return found

        root = resolved(root)
        for s in _walk(root):
            if isinstance(s, _Record):
                for f in s.fields:
                    f.type = resolved(f.type)
            elif isinstance(s, _Array):
                s.items = resolved(s.items)
            elif isinstance(s, _Map):
                s.values = resolved(s.values)
            elif isinstance(s, _Union):
                s.branches = [resolved(b) for b in s.branches]
                _check_union(s)
        return root


def _check_union(union: _Union) -> None:
    seen: set[str] = set()
    for branch in union.branches:
        if isinstance(branch, _Union):
            raise InvalidSchema(f"Nested union: {_write(union, set(), None)}")
        if isinstance(branch, _Unresolved):
            continue
        if branch.full in seen:
            raise InvalidSchema(f"Duplicate in union:{branch.full}")
        seen.add(branch.full)


def _aliases(node: dict) -> list[str] | None:
    """The ``aliases`` attribute: a list of strings, duplicates dropped."""
    given = node.get("aliases", _MISSING)
    if given is _MISSING:
        return None
    if not isinstance(given, list):
        raise InvalidSchema(f"aliases not an array: {_dump(node)}")
    out: list[str] = []
    for alias in given:
        if not isinstance(alias, str):
            raise InvalidSchema(f"alias not a string: {_dump(alias)}")
        if alias not in out:
            out.append(alias)
    return out


def _check_utf_names(root: _Schema) -> None:
    """Confluent's ``validateNames`` for an already registered schema: simple names of
    types, fields and enum symbols (not namespaces or aliases), Unicode letters allowed."""
    def check(name: Any) -> None:
        error = _utf_name_error(name)
        if error:
            raise InvalidSchema(error)

    def visit(s: _Schema, seen: set[int]) -> None:
        if id(s) in seen:
            return
        seen.add(id(s))
        if isinstance(s, _Named):
            check(s.name)
        if isinstance(s, _Record):
            for f in s.fields:
                check(f.name)
                visit(f.type, seen)
        elif isinstance(s, _Enum):
            for symbol in s.symbols:
                check(symbol)
        else:
            for child in _children(s):
                visit(child, seen)

    visit(root, set())


# -- writing: Schema.toString() and Confluent's normalized form -----------------------------------

def _qualified(name: str, space: str | None, current: str | None) -> str:
    """A name as written where ``current`` is the namespace in force: short only in the same
    namespace, and never when the short name is a type's name."""
    if space is not None and space == current and name not in TYPE_NAMES:
        return name
    return _full(name, space)


def _props_json(props: dict[str, Any]) -> list[str]:
    return [f"{_quote(k)}:{_dump(v)}" for k, v in props.items()]


def _write(s: _Schema, known: set[str], space: str | None) -> str:
    """Avro's ``toJson``: ``known`` collects the named types already written in full."""
    if isinstance(s, _Union):
        return "[" + ",".join(_write(b, known, space) for b in s.branches) + "]"
    if isinstance(s, _Array):
        parts = ['"type":"array"', '"items":' + _write(s.items, known, space)]
    elif isinstance(s, _Map):
        parts = ['"type":"map"', '"values":' + _write(s.values, known, space)]
    elif isinstance(s, _Named):
        if s.full in known:
            return _quote(_qualified(s.name, s.space, space))
        known.add(s.full)
        kind = "error" if isinstance(s, _Record) and s.is_error else s.type
        parts = [f'"type":"{kind}"', '"name":' + _quote(s.name)]
        if s.space is not None and s.space != space:
            parts.append('"namespace":' + _quote(s.space))
        elif s.space is None and space is not None:
            parts.append('"namespace":""')
        if s.doc is not None:
            parts.append('"doc":' + _quote(s.doc))
        if isinstance(s, _Record):
            parts.append('"fields":[' + ",".join(_write_field(f, known, s.space)
                                                 for f in s.fields) + "]")
        elif isinstance(s, _Enum):
            parts.append('"symbols":' + _dump(s.symbols))
            if s.default is not None:
                parts.append('"default":' + _quote(s.default))
        elif isinstance(s, _Fixed):
            parts.append(f'"size":{s.size}')
        parts += _props_json(s.props)
        if s.aliases:
            parts.append('"aliases":' + _dump([_qualified(n, sp, s.space)
                                               for n, sp in s.aliases]))
        return "{" + ",".join(parts) + "}"
    elif not s.props:
        return f'"{s.type}"'
    else:
        parts = [f'"type":"{s.type}"']
    return "{" + ",".join(parts + _props_json(s.props)) + "}"


def _write_field(f: _Field, known: set[str], space: str | None) -> str:
    parts = ['"name":' + _quote(f.name), '"type":' + _write(f.type, known, space)]
    if f.doc is not None:
        parts.append('"doc":' + _quote(f.doc))
    if f.default is not _MISSING:
        parts.append('"default":' + _dump(f.default))
    if f.order != "ASCENDING":
        parts.append(f'"order":"{f.order.lower()}"')
    if f.aliases:
        parts.append('"aliases":' + _dump(f.aliases))
    return "{" + ",".join(parts + _props_json(f.props)) + "}"


def _as_object(value: Any, s: _Schema | None) -> Any:
    """A JSON value converted through Avro's ``JacksonUtils.toObject`` (a union uses its first
    branch) and back: ints become floats for float types, strings of bytes lose what
    ISO-8859-1 cannot hold, and a value that does not suit the type becomes ``_NO_VALUE``."""
    if isinstance(s, _Union):
        return _as_object(value, s.branches[0])
    t = s.type if s is not None else None
    if value is None or isinstance(value, bool):
        return value
    if _is_int(value):
        if not _LONG_MIN <= value <= _LONG_MAX:
            return _NO_VALUE
        if t in (None, "int", "long"):
            return value
        if t == "float":
            return _F32(struct.unpack(">f", struct.pack(">f", float(value)))[0])
        return float(value) if t == "double" else _NO_VALUE
    if isinstance(value, float):
        if t in (None, "double"):
            return float(value)
        if t == "float":
            return _F32(struct.unpack(">f", struct.pack(">f", value))[0])
        return _NO_VALUE
    if isinstance(value, str):
        if t in (None, "string", "enum"):
            return value
        if t in ("bytes", "fixed"):
            return value.encode("latin-1", "replace").decode("latin-1")
        return _NO_VALUE
    if isinstance(value, list):
        inner = s.items if isinstance(s, _Array) else None
        return [_as_object(v, inner) for v in value]
    out = {}
    for key, v in value.items():
        inner = None
        if isinstance(s, _Map):
            inner = s.values
        elif isinstance(s, _Record):
            found = s.field(key)
            inner = found.type if found else None
        out[key] = _as_object(v, inner)
    return out


def _sorted_json(value: Any) -> str:
    """JSON with every object's keys in order, as Confluent's sorting node factory writes."""
    if value is _NO_VALUE:
        return "null"
    if isinstance(value, dict):
        return "{" + ",".join(_quote(k) + ":" + _sorted_json(value[k])
                              for k in sorted(value)) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_sorted_json(v) for v in value) + "]"
    return _dump(value)


def _norm_props(props: dict[str, Any]) -> str:
    return "".join(f',"{k}":{_sorted_json(_as_object(props[k], None))}' for k in sorted(props))


def _norm_logical(s: _Schema) -> str:
    if s.logical is None:
        return ""
    name, precision, scale = s.logical
    out = f',"logicalType":"{name}"'
    if name == "decimal":
        out += f',"precision":{precision}' + (f',"scale":{scale}' if scale else "")
    return out


def _normalize(s: _Schema, env: dict[str, str]) -> str:
    """Confluent's ``toNormalizedString`` (its adaptation of Avro's parsing canonical form
    that keeps docs, aliases, defaults and properties).  ``env`` holds the full names of
    the named types already written (and those the references define)."""
    if isinstance(s, _Union):
        return "[" + ",".join(_normalize(b, env) for b in s.branches) + "]"
    if isinstance(s, (_Array, _Map)):
        inner = (',"items":' + _normalize(s.items, env) if isinstance(s, _Array)
                 else ',"values":' + _normalize(s.values, env))
        return f'{{"type":"{s.type}"{inner}{_norm_logical(s)}{_norm_props(s.props)}}}'
    if isinstance(s, _Named):
        if s.full in env:
            return env[s.full]
        env[s.full] = f'"{s.full}"'
        out = f'{{"name":"{s.full}","type":"{s.type}"'
        if isinstance(s, _Enum):
            out += ',"symbols":[' + ",".join(f'"{x}"' for x in s.symbols) + "]"
        elif isinstance(s, _Fixed):
            out += f',"size":{s.size}'
        elif isinstance(s, _Record):
            out += ',"fields":[' + ",".join(_normalize_field(f, env) for f in s.fields) + "]"
        out += _norm_logical(s)
        if s.doc:
            out += ',"doc":' + _quote(s.doc)
        if s.aliases:
            out += ',"aliases":' + _dump(sorted(s.alias_names()))
        if isinstance(s, _Enum) and s.default is not None:
            out += ',"default":' + _quote(s.default)
        return out + _norm_props(s.props) + "}"
    if s.logical is None and not s.props:
        return f'"{s.type}"'
    return f'{{"type":"{s.type}"{_norm_logical(s)}{_norm_props(s.props)}}}'


def _normalize_field(f: _Field, env: dict[str, str]) -> str:
    out = f'{{"name":"{f.name}","type":{_normalize(f.type, env)},"order":"{f.order}"'
    if f.doc is not None:
        out += ',"doc":' + _quote(f.doc)
    if f.aliases:
        out += ',"aliases":' + _dump(sorted(f.aliases))
    if f.default is not _MISSING:
        value = _as_object(f.default, f.type)
        if value is not _NO_VALUE:
            out += ',"default":' + _sorted_json(value)
    return out + _norm_props(f.props) + "}"


# -- compatibility: Avro's reader/writer check, Confluent's messages ------------------------------

#: Confluent's description of each kind of incompatibility; ``{path}`` is the JSON pointer of
#: the place, ``{info}`` Avro's message, and the two ``%s`` are the reader then the writer
_DESCRIPTIONS = {
    "FIXED_SIZE_MISMATCH": "The size of FIXED type field at path '{path}' in the %s schema "
                           "does not match with the %s schema",
    "TYPE_MISMATCH": "The type (path '{path}') of a field in the %s schema does not match "
                     "with the %s schema",
    "NAME_MISMATCH": "The name of the schema has changed (path '{path}')",
    "MISSING_ENUM_SYMBOLS": "The %s schema is missing enum symbols '{info}' at path '{path}' "
                            "in the %s schema",
    "MISSING_UNION_BRANCH": "The %s schema is missing a type inside a union field at path "
                            "'{path}' in the %s schema",
    "READER_FIELD_MISSING_DEFAULT_VALUE": "The field '{info}' at path '{path}' in the %s "
                                          "schema has no default value and is missing in "
                                          "the %s schema",
}
_OK, _BAD, _BUSY = "compatible", "incompatible", "recursion in progress"
_PROMOTIONS = {"long": ("int",), "float": ("int", "long"), "double": ("int", "long", "float"),
               "bytes": ("string",), "string": ("bytes",)}


class _Result:
    """A verdict and its findings, each (kind, message, path tokens from the root)."""

    __slots__ = ("state", "found")

    def __init__(self, state: str, found: tuple = ()) -> None:
        self.state, self.found = state, found

    def merged(self, other: "_Result") -> "_Result":
        return _Result(other.state if self.state == _OK else _BAD, self.found + other.found)


_COMPATIBLE = _Result(_OK)


def _incompatible(kind: str, message: str, location: list[str]) -> _Result:
    return _Result(_BAD, ((kind, message, tuple(location)),))


class _TooManyMatches(Exception):
    """A reader field whose name and aliases match more than one writer field."""


class _Checker:
    """Avro's ``ReaderWriterCompatibilityChecker``: one per question, remembering each
    (reader, writer) pair of nodes it has answered, and answering "compatible" for a pair it
    is still working on (recursive types)."""

    def __init__(self) -> None:
        self.memo: dict[tuple[int, int], _Result] = {}

    def check(self, token: str, reader: _Schema, writer: _Schema,
              location: list[str]) -> _Result:
        location.append(token)
        key = (id(reader), id(writer))
        result = self.memo.get(key)
        if result is None:
            self.memo[key] = _Result(_BUSY)
            result = self._calculate(reader, writer, location)
            self.memo[key] = result
        elif result.state == _BUSY:
            result = _COMPATIBLE
        location.pop()
        return result

    def _calculate(self, reader: _Schema, writer: _Schema, location: list[str]) -> _Result:
        result = _COMPATIBLE
        if reader.type == writer.type:
            if isinstance(reader, _Array):
                return result.merged(self.check("items", reader.items, writer.items, location))
            if isinstance(reader, _Map):
                return result.merged(self.check("values", reader.values, writer.values,
                                                location))
            if isinstance(reader, _Named):
                result = result.merged(self._names(reader, writer, location))
                if isinstance(reader, _Fixed):
                    return result.merged(self._size(reader, writer, location))
                if isinstance(reader, _Enum):
                    return result.merged(self._symbols(reader, writer, location))
                return result.merged(self._fields(reader, writer, location))
            if isinstance(reader, _Union):
                for i, branch in enumerate(writer.branches):  # type: ignore[attr-defined]
                    location.append(str(i))
                    if self.check("", reader, branch, []).state == _BAD:
                        result = result.merged(_incompatible(
                            "MISSING_UNION_BRANCH", "reader union lacking writer type: "
                            + branch.type.upper(), location))
                    location.pop()
            return result
        if isinstance(writer, _Union):
            for i, branch in enumerate(writer.branches):
                result = result.merged(self.check(str(i), reader, branch, location))
            return result
        if isinstance(reader, _Union):
            for branch in reader.branches:
                if self.check("", branch, writer, []).state == _OK:
                    return result
            return result.merged(_incompatible(
                "MISSING_UNION_BRANCH", "reader union lacking writer type: "
                + writer.type.upper(), location))
        if writer.type in _PROMOTIONS.get(reader.type, ()):
            return result
        return result.merged(_incompatible(
            "TYPE_MISMATCH", f"reader type: {reader.type.upper()} not compatible with writer "
            f"type: {writer.type.upper()}", location))

    def _fields(self, reader: _Record, writer: _Record, location: list[str]) -> _Result:
        result = _COMPATIBLE
        location.append("fields")
        for field in reader.fields:
            location.append(str(field.pos))
            matches = [f for f in [writer.field(field.name)]
                       + [writer.field(a) for a in field.aliases] if f is not None]
            if len(matches) > 1:
                raise _TooManyMatches(
                    f"Reader record field {field} matches multiple fields in writer record "
                    f"schema {_write(writer, set(), None)}")
            if matches:
                result = result.merged(self.check("type", field.type, matches[0].type,
                                                  location))
            elif field.default is _MISSING:
                if isinstance(field.type, _Enum) and field.type.default is not None:
                    result = result.merged(self.check("type", field.type, writer, location))
                else:
                    result = result.merged(_incompatible(
                        "READER_FIELD_MISSING_DEFAULT_VALUE", field.name, location))
            location.pop()
        location.pop()
        return result

    @staticmethod
    def _names(reader: _Named, writer: _Named, location: list[str]) -> _Result:
        if reader.name == writer.name or writer.full in reader.alias_names():
            return _COMPATIBLE
        return _incompatible("NAME_MISMATCH", f"expected: {writer.full}", location + ["name"])

    @staticmethod
    def _size(reader: _Fixed, writer: _Fixed, location: list[str]) -> _Result:
        if reader.size == writer.size:
            return _COMPATIBLE
        return _incompatible("FIXED_SIZE_MISMATCH",
                             f"expected: {writer.size}, found: {reader.size}",
                             location + ["size"])

    @staticmethod
    def _symbols(reader: _Enum, writer: _Enum, location: list[str]) -> _Result:
        missing = sorted(set(writer.symbols) - set(reader.symbols))
        if not missing or reader.default is not None:
            return _COMPATIBLE
        return _incompatible("MISSING_ENUM_SYMBOLS", "[" + ", ".join(missing) + "]",
                             location + ["symbols"])


def _difference(kind: str, message: str, location: tuple[str, ...]) -> str:
    """Confluent's ``Difference``: the kind, a description with ``%s`` for the reader and the
    writer, and Avro's own message."""
    path = "/" + "/".join(t.replace("~", "~0").replace("/", "~1") for t in location[1:])
    description = _DESCRIPTIONS[kind].format(path=path, info=message)
    return f"{{errorType:'{kind}', description:'{description}', additionalInfo:'{message}'}}"


# -- the format -----------------------------------------------------------------------------------

class AvroSchema(ParsedSchema):
    """One parsed Avro schema, with the referenced schemas it was parsed with."""

    schema_type = "AVRO"

    def __init__(self, root: _Schema, references: dict[str, str], ref_roots: list[_Schema],
                 new: bool) -> None:
        self.root = root
        self.references = references
        self._ref_roots = ref_roots
        self._new = new
        self._canonical: str | None = None

    @property
    def name(self) -> str | None:
        """The record's full name (what the record-name subject strategies use), else None."""
        return self.root.full if isinstance(self.root, _Record) else None

    def canonical(self) -> str:
        if self._canonical is None:
            known = {r.full for r in self._ref_roots}
            self._canonical = _write(self.root, known, None)
        return self._canonical

    def resolved(self) -> str:
        """The schema with the referenced types written in full (``format=resolved``)."""
        return _write(self.root, set(), None)

    def formatted(self, fmt: str | None) -> str:
        if fmt and fmt.strip().lower() == "resolved":
            return self.resolved()
        return self.canonical()

    def normalized(self) -> "AvroSchema":
        env = {r.full: f'"{r.full}"' for r in self._ref_roots}
        return parse(_normalize(self.root, env), self.references, new=self._new)

    def is_backward_compatible(self, writer: ParsedSchema, policy: str = STRICT) -> list[str]:
        if not isinstance(writer, AvroSchema):
            return ["Incompatible because of different schema type"]
        try:
            result = _Checker().check("", self.root, writer.root, [])
        except _TooManyMatches as exc:
            return [f"Unexpected exception during compatibility check: {exc}"]
        return [_difference(*found) for found in result.found]

    def __repr__(self) -> str:
        return f"AvroSchema({self.canonical()})"


def parse(text: str, references: Mapping[str, str] | None = None, *,
          new: bool = True) -> AvroSchema:
    """Parse ``text`` as Confluent's registry does; ``references`` maps each reference's name
    to the text of the schema it names, read first (in an order where each one's own
    dependencies come before it).  ``new`` (a schema being registered) checks names strictly
    and defaults against their types; otherwise only the simple names are checked, as
    Confluent re-reads schemas already stored."""
    refs = dict(references or {})
    parser = _Parser(strict=new)
    ref_roots: list[_Schema] = []
    waiting = list(refs.values())
    while waiting:
        failed: list[tuple[str, InvalidSchema]] = []
        for ref_text in waiting:
            try:
                ref_roots.append(parser.parse(ref_text))
            except InvalidSchema as exc:
                failed.append((ref_text, exc))
        if len(failed) == len(waiting):
            raise failed[0][1]
        waiting = [t for t, _ in failed]
    root = parser.parse(text)
    if not new:
        _check_utf_names(root)
    return AvroSchema(root, refs, ref_roots, new)
