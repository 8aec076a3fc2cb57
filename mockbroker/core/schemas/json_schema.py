"""The JSON format (JSON Schema) of the Schema Registry, as Confluent's registry treats it.

Three jobs, each following what Confluent's ``JsonSchema`` does (json-schema-provider, 8.x):

* **Reading.**  The text must be JSON (read the way Jackson reads it: floats keep their exact
  decimal text, ``NaN``/``Infinity`` are accepted, anything after the first value is ignored).
  The root must be an object or a boolean.  The keywords the compatibility rules look at are then
  loaded into a small schema model the way the everit loader Confluent uses for drafts 4, 6 and 7
  builds its ``Schema`` objects: ``type`` gives a string/number/object/... schema, ``enum``,
  ``const``, ``not`` and ``allOf``/``anyOf``/``oneOf`` give their own, keywords of a type given
  without ``type`` are "sniffed", several of these on one object become a synthetic ``allOf``,
  and ``$ref`` points at ``#/definitions``/``#/$defs`` (a top-level ``definitions`` entry is
  also found under ``$defs``), at a subschema's ``$id``, or at another registered schema by its
  reference name/URL.  A keyword whose value has the wrong shape is refused.
* **Writing.**  The canonical string is the JSON written back compactly in its own key order, as
  Jackson writes it (numbers as ``BigDecimal.toString()``, control characters escaped with
  upper-case hex, everything else written as is); normalizing sorts object keys by UTF-16 code
  units (Jackson's ``TreeMap``).
* **Compatibility.**  Confluent's JSON Schema diff: it walks the old (writer) and new (reader)
  schemas side by side and records typed differences at JSON paths (``#/properties/foo``); the
  ones outside the policy's compatible set (STRICT, or LENIENT which allows more) are the
  incompatibilities, reported as ``{errorType:"TYPE", description:"...'}`` (Confluent's
  spelling, the odd closing quote included).  Properties are visited in the order Java's
  ``HashSet`` of their names gives, so messages come in Confluent's order.  Recursive schemas
  are compared with memoisation: a pair met again while it is being compared counts as
  compatible, and the whole comparison is repeated, seeded with the pairs found incompatible,
  until that no longer changes the answer.

Drafts 2019-09 and 2020-12 are read with the same model plus their renamed keywords
(``$defs``, ``prefixItems``, ``dependentRequired``/``dependentSchemas``, ``unevaluated*``);
Confluent reads them with another library, so a few corner cases may compare differently.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, localcontext
from typing import Any, Callable, Mapping
from urllib.parse import unquote, urljoin

from mockbroker.core.schemas.formats import LENIENT, STRICT, InvalidSchema, ParsedSchema

__all__ = ["JsonSchema", "parse", "differences", "COMPATIBLE_STRICT", "COMPATIBLE_LENIENT"]


# --------------------------------------------------------------------------------------------
# Reading and writing JSON text the way Jackson does


def _read_json(text: str) -> Any:
    """The first JSON value of ``text``; floats as :class:`Decimal`, ``NaN``/``Infinity`` kept
    as the strings Jackson would write for them.  Raises ValueError when it is not JSON."""
    decoder = json.JSONDecoder(parse_float=Decimal, parse_constant=lambda name: name)
    start = len(text) - len(text.lstrip(" \t\r\n"))
    if start == len(text):
        return _MISSING
    value, _end = decoder.raw_decode(text, start)
    return value


class _Missing:
    """What Jackson reads from an empty text (a ``MissingNode``)."""

    def __repr__(self) -> str:
        return "MISSING"


_MISSING = _Missing()

_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n",
                  "\f": "\\f", "\r": "\\r"}
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f\ud800-\udfff]')


def _escape_char(match: re.Match) -> str:
    char = match.group(0)
    return _SHORT_ESCAPES.get(char) or "\\u%04X" % ord(char)


def _write_string(value: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(_escape_char, value) + '"'


def _write_decimal(value: Decimal) -> str:
    # Java's BigDecimal has no negative zero; otherwise both print the same scientific form
    return str(value.copy_abs() if value.is_zero() else value)


def _sorted_keys(value: Any) -> Any:
    """``value`` with every object's keys in Java's ``String`` order (Jackson's ``TreeMap``)."""
    if isinstance(value, dict):
        return {key: _sorted_keys(value[key]) for key in sorted(value, key=_utf16_key)}
    if isinstance(value, list):
        return [_sorted_keys(item) for item in value]
    return value


def _write_json(value: Any) -> str:
    """Compact JSON as Jackson's ``writeValueAsString`` gives it."""
    parts: list[str] = []

    def write(item: Any) -> None:
        if isinstance(item, dict):
            parts.append("{")
            for index, key in enumerate(item):
                if index:
                    parts.append(",")
                parts.append(_write_string(key))
                parts.append(":")
                write(item[key])
            parts.append("}")
        elif isinstance(item, list):
            parts.append("[")
            for index, element in enumerate(item):
                if index:
                    parts.append(",")
                write(element)
            parts.append("]")
        elif isinstance(item, str):
            parts.append(_write_string(item))
        elif item is True:
            parts.append("true")
        elif item is False:
            parts.append("false")
        elif item is None or item is _MISSING:
            parts.append("null")
        elif isinstance(item, Decimal):
            parts.append(_write_decimal(item))
        else:
            parts.append(str(int(item)))

    write(value)
    return "".join(parts)


def _utf16_key(text: str) -> bytes:
    """Sort key ordering strings as Java's ``String.compareTo`` does (by UTF-16 code unit)."""
    return text.encode("utf-16-be", "surrogatepass")


# --------------------------------------------------------------------------------------------
# Java value semantics the diff depends on


def _java_value(value: Any) -> Any:
    """A hashable stand-in for the Java object everit makes of a JSON value, equal exactly when
    Java's ``equals`` says so (1 and 1.0 differ, as do 1.0 and 1.00; maps compare by content)."""
    if isinstance(value, dict):
        return ("map", frozenset((key, _java_value(item)) for key, item in value.items()))
    if isinstance(value, list):
        return ("list", tuple(_java_value(item) for item in value))
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, Decimal):
        return ("decimal", (value.copy_abs() if value.is_zero() else value).as_tuple())
    return ("other", value)


def _java_default_equal(old: Any, new: Any) -> bool:
    """``Objects.equals`` on two defaults: org.json objects and arrays only equal themselves."""
    if old is _ABSENT or new is _ABSENT:
        return old is new
    if isinstance(old, (dict, list)) or isinstance(new, (dict, list)):
        return False
    return _java_value(old) == _java_value(new)


def _java_string_hash(text: str) -> int:
    result = 0
    data = text.encode("utf-16-be", "surrogatepass")
    for index in range(0, len(data), 2):
        result = (31 * result + (data[index] << 8 | data[index + 1])) & 0xFFFFFFFF
    return result


def _table_size_for(wanted: int) -> int:
    size = 1
    while size < wanted:
        size <<= 1
    return size


def _grow(capacity: int, size: int) -> int:
    while size > int(capacity * 0.75):
        capacity <<= 1
    return capacity


def _bucket_order(keys: list[str], capacity: int) -> list[str]:
    """The iteration order of a Java HashMap of ``capacity`` buckets holding ``keys`` (given in
    insertion order): by bucket, then by insertion within a bucket."""
    def bucket(key: str) -> int:
        hashed = _java_string_hash(key)
        return (hashed ^ (hashed >> 16)) & (capacity - 1)
    return sorted(keys, key=bucket)


def _java_map_keys(json_order: list[str]) -> list[str]:
    """Key order of everit's copy (``new HashMap<>(builderMap)``) of a map filled in JSON order."""
    if not json_order:
        return []
    built = _bucket_order(json_order, _grow(16, len(json_order)))
    return _bucket_order(built, _table_size_for(int(len(built) / 0.75 + 1.0)))


def _java_union_keys(old_keys: list[str], new_keys: list[str]) -> list[str]:
    """Order of ``new HashSet<>(old.keySet())`` after ``addAll(new.keySet())``."""
    capacity = _table_size_for(max(int(len(old_keys) / 0.75) + 1, 16))
    inserted = list(old_keys)
    seen = set(old_keys)
    for key in new_keys:
        if key not in seen:
            seen.add(key)
            inserted.append(key)
    return _bucket_order(inserted, _grow(capacity, len(inserted)))


# --------------------------------------------------------------------------------------------
# The schema model (what everit builds; only what the diff reads)

_ABSENT = object()


class _Node:
    """A loaded (sub)schema: the common keywords plus, per kind, the ones its diff compares."""

    kind = "?"

    def __init__(self) -> None:
        self.id: str | None = None
        self.title: str | None = None
        self.description: str | None = None
        self.default: Any = _ABSENT
        self.unprocessed: dict[str, Any] = {}
        self.source: Any = None          # the JSON this node was loaded from

    @property
    def has_default(self) -> bool:
        return self.default is not _ABSENT

    def dedup_key(self) -> str:
        return _write_json(self.source)


class _Empty(_Node):
    kind = "empty"


class _True(_Empty):
    kind = "true"


class _False(_Node):
    kind = "false"


class _BooleanType(_Node):
    kind = "boolean"


class _NullType(_Node):
    kind = "null"


class _String(_Node):
    kind = "string"

    def __init__(self) -> None:
        super().__init__()
        self.min_length: int | None = None
        self.max_length: int | None = None
        self.pattern: str | None = None


class _Number(_Node):
    kind = "number"

    def __init__(self) -> None:
        super().__init__()
        self.minimum: Any = None
        self.maximum: Any = None
        self.exclusive_minimum: Any = None
        self.exclusive_maximum: Any = None
        self.multiple_of: Any = None
        self.requires_integer = False


class _Object(_Node):
    kind = "object"

    def __init__(self) -> None:
        super().__init__()
        self.properties: dict[str, _Node] = {}
        self.required: list[str] = []
        self.permits_additional = True
        self.additional: _Node | None = None
        self.pattern_properties: list[tuple[str, _Node]] = []
        self.property_dependencies: dict[str, set[str]] = {}
        self.schema_dependencies: dict[str, _Node] = {}
        self.min_properties: int | None = None
        self.max_properties: int | None = None
        self.unevaluated: _Node | None = None


class _Array(_Node):
    kind = "array"

    def __init__(self) -> None:
        super().__init__()
        self.all_items: _Node | None = None
        self.item_list: list[_Node] | None = None
        self.permits_additional = True
        self.additional: _Node | None = None
        self.min_items: int | None = None
        self.max_items: int | None = None
        self.unique_items = False
        self.min_contains: Any = None
        self.max_contains: Any = None
        self.unevaluated: _Node | None = None


class _Enum(_Node):
    kind = "enum"

    def __init__(self, values: list[Any]) -> None:
        super().__init__()
        self.values = {_java_value(value) for value in values}


class _Const(_Node):
    kind = "const"

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = _java_value(value)


class _Not(_Node):
    kind = "not"

    def __init__(self, must_not: _Node) -> None:
        super().__init__()
        self.must_not = must_not


class _Conditional(_Node):
    kind = "conditional"


class _Combined(_Node):
    kind = "combined"

    def __init__(self, criterion: str, subschemas: list[_Node]) -> None:
        super().__init__()
        self.criterion = criterion      # allOf, anyOf or oneOf
        # everit puts combined subschemas first (a stable sort)
        self.subschemas = ([s for s in subschemas if isinstance(s, _Combined)]
                           + [s for s in subschemas if not isinstance(s, _Combined)])


class _Ref(_Node):
    kind = "ref"

    def __init__(self, table: dict[str, _Node | None], key: str) -> None:
        super().__init__()
        self._table = table
        self.key = key

    @property
    def target(self) -> _Node:
        target = self._table.get(self.key)
        if target is None:
            raise RuntimeError(f"unresolved $ref {self.key!r}")
        return target


# --------------------------------------------------------------------------------------------
# Loading


class _SchemaError(Exception):
    """A keyword everit's loader refuses; the text is everit's ``<location>: <message>``."""


_DRAFT4, _DRAFT6, _DRAFT7, _DRAFT2019, _DRAFT2020 = 4, 6, 7, 2019, 2020
_SPEC_URLS = {
    _DRAFT4: ("json-schema.org/draft-04/schema", "json-schema.org/schema"),
    _DRAFT6: ("json-schema.org/draft-06/schema",),
    _DRAFT7: ("json-schema.org/draft-07/schema",),
    _DRAFT2019: ("json-schema.org/draft/2019-09/schema",),
    _DRAFT2020: ("json-schema.org/draft/2020-12/schema",),
}
_NUMBER_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_STRING_KEYWORDS = ("minLength", "maxLength", "pattern", "format")
_ARRAY_KEYWORDS = ("items", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains")
_OBJECT_KEYWORDS = ("properties", "required", "minProperties", "maxProperties", "dependencies",
                    "patternProperties", "additionalProperties", "propertyNames")
_MODERN_ARRAY_KEYWORDS = ("prefixItems", "unevaluatedItems", "minContains", "maxContains")
_MODERN_OBJECT_KEYWORDS = ("dependentRequired", "dependentSchemas", "unevaluatedProperties")
_COMBINERS = ("allOf", "anyOf", "oneOf")


def _spec_of(document: Any) -> int:
    declared = document.get("$schema") if isinstance(document, dict) else None
    if isinstance(declared, str):
        url = declared.rstrip("#")
        for spec, suffixes in _SPEC_URLS.items():
            if any(url in ("http://" + s, "https://" + s) for s in suffixes):
                return spec
    return _DRAFT7


def _java_type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "Boolean"
    if isinstance(value, int):
        if -2 ** 31 <= value < 2 ** 31:
            return "Integer"
        return "Long" if -2 ** 63 <= value < 2 ** 63 else "BigInteger"
    if isinstance(value, Decimal):
        return "BigDecimal"
    if isinstance(value, str):
        return "String"
    if isinstance(value, list):
        return "JsonArray"
    return "JsonObject"


def _resolve_uri(base: str | None, ref: str) -> str:
    if not base:
        return ref
    try:
        return urljoin(base, ref) if not ref.startswith("#") else base.split("#")[0] + ref
    except ValueError:
        return ref


class _Document:
    """One JSON document refs can point into: the schema itself or a referenced schema."""

    def __init__(self, root: Any, uri: str | None) -> None:
        self.root = root
        self.uri = uri
        self.ids: dict[str, Any] = {}
        self._index_ids(root, uri)

    def _index_ids(self, value: Any, scope: str | None) -> None:
        if isinstance(value, dict):
            declared = value.get("$id", value.get("id"))
            if isinstance(declared, str) and value is not self.root:
                scope = _resolve_uri(scope, declared)
                self.ids.setdefault(scope, value)
                if declared.startswith("#"):
                    self.ids.setdefault(declared, value)
            for item in value.values():
                self._index_ids(item, scope)
        elif isinstance(value, list):
            for item in value:
                self._index_ids(item, scope)

    def pointer(self, fragment: str) -> Any:
        """The value at JSON pointer ``fragment`` (``#/definitions/x``); a top-level
        ``definitions`` entry also answers under ``$defs``, as Confluent arranges."""
        text = fragment[1:] if fragment.startswith("#") else fragment
        node = self.root
        if not text:
            return node
        tokens = [unquote(t).replace("~1", "/").replace("~0", "~") for t in text.split("/")[1:]]
        for depth, token in enumerate(tokens):
            if isinstance(node, dict):
                if token in node:
                    node = node[token]
                    continue
                if (depth == 0 and token == "$defs" and isinstance(node.get("definitions"), dict)
                        and len(tokens) > 1 and tokens[1] in node["definitions"]):
                    node = {tokens[1]: node["definitions"][tokens[1]]}
                    continue
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
                continue
            raise _SchemaError(f"#: key [{token}] not found")
        return node


class _Loader:
    """Builds the schema model of a document, resolving ``$ref`` on the way."""

    def __init__(self, root: Any, references: Mapping[str, str]) -> None:
        self.spec = _spec_of(root)
        self.modern = self.spec >= _DRAFT2019
        self.id_keyword = "id" if self.spec == _DRAFT4 else "$id"
        root_id = root.get(self.id_keyword) if isinstance(root, dict) else None
        self.root_uri = root_id if isinstance(root_id, str) else None
        self.root_doc = _Document(root, self.root_uri)
        self.referenced: dict[str, _Document] = {}
        for name, text in references.items():
            try:
                value = _read_json(text)
            except ValueError as exc:
                raise _SchemaError(f"{name}: referenced schema is not JSON") from exc
            uri = _resolve_uri(self.root_uri, name)
            self.referenced[uri] = _Document(value, uri)
            self.referenced.setdefault(name, self.referenced[uri])
        self.table: dict[str, _Node | None] = {}

    def load(self) -> _Node:
        return self.schema(self.root_doc.root, "#", self.root_doc, self.root_uri)

    # -- one (sub)schema --

    def schema(self, value: Any, loc: str, doc: _Document, scope: str | None) -> _Node:
        if isinstance(value, bool):
            node: _Node = _True() if value else _False()
            node.source = value
            return node
        if not isinstance(value, dict):
            raise _SchemaError(f"{loc}: expected type is one of Boolean or JsonObject, "
                               f"found: {_java_type_name(value)}")
        declared = value.get(self.id_keyword)
        if isinstance(declared, str) and value is not doc.root:
            scope = _resolve_uri(scope, declared)
        consumed: set[str] = set()
        if "$ref" in value:
            consumed.add("$ref")
            found = [self.reference(value["$ref"], loc, doc, scope)]
        else:
            found = self.extract(value, loc, doc, scope, consumed)
        if not found:
            node = _Empty()
        elif len(found) == 1:
            node = found[0]
        else:
            node = _Combined("allOf", found)
            node.source = {"allOf": [part.source for part in found]}
        self.common(node, value, loc, consumed)
        node.source = value
        node.unprocessed = {k: v for k, v in value.items() if k not in consumed}
        if isinstance(node, _Array) and not self.modern:
            node.min_contains = self._number_or_none(node.unprocessed.get("minContains"))
            node.max_contains = self._number_or_none(node.unprocessed.get("maxContains"))
        return node

    @staticmethod
    def _number_or_none(value: Any) -> Any:
        return value if isinstance(value, (int, Decimal)) and not isinstance(value, bool) else None

    def common(self, node: _Node, value: dict, loc: str, consumed: set[str]) -> None:
        node.id = self.opt(value, self.id_keyword, loc, str, consumed)
        node.title = self.opt(value, "title", loc, str, consumed)
        node.description = self.opt(value, "description", loc, str, consumed)
        if self.spec >= _DRAFT7:
            self.opt(value, "readOnly", loc, bool, consumed)
            self.opt(value, "writeOnly", loc, bool, consumed)
        if "default" in value:
            consumed.add("default")
            node.default = value["default"]

    def extract(self, value: dict, loc: str, doc: _Document, scope: str | None,
                consumed: set[str]) -> list[_Node]:
        found: list[_Node] = []
        if "enum" in value:
            found.append(_Enum(self.req(value, "enum", loc, list, consumed)))
            found[-1].source = {"enum": value["enum"]}
        for keyword in _COMBINERS:
            if keyword in value:
                items = self.req(value, keyword, loc, list, consumed)
                subs = [self.schema(item, f"{loc}/{keyword}/{i}", doc, scope)
                        for i, item in enumerate(items)]
                found.append(_Combined(keyword, subs))
                found[-1].source = {keyword: items}
        if "not" in value:
            consumed.add("not")
            found.append(_Not(self.schema(value["not"], f"{loc}/not", doc, scope)))
            found[-1].source = {"not": value["not"]}
        if self.spec != _DRAFT4 and "const" in value:
            consumed.add("const")
            found.append(_Const(value["const"]))
            found[-1].source = {"const": value["const"]}
        if "type" in value:
            found.append(self.typed(value, loc, doc, scope, consumed))
        remaining = {k: v for k, v in value.items() if k not in consumed}
        array_keywords = _ARRAY_KEYWORDS + (_MODERN_ARRAY_KEYWORDS if self.modern else ())
        object_keywords = _OBJECT_KEYWORDS + (_MODERN_OBJECT_KEYWORDS if self.modern else ())
        if any(k in remaining for k in array_keywords):
            found.append(self.array(value, loc, doc, scope, consumed))
        if any(k in remaining for k in object_keywords):
            found.append(self.object(value, loc, doc, scope, consumed))
        if any(k in remaining for k in _NUMBER_KEYWORDS):
            found.append(self.number(value, loc, consumed))
        if any(k in remaining for k in _STRING_KEYWORDS):
            found.append(self.string(value, loc, consumed))
        if self.spec >= _DRAFT7 and any(k in remaining for k in ("if", "then", "else")):
            for keyword in ("if", "then", "else"):
                if keyword in value:
                    consumed.add(keyword)
                    self.schema(value[keyword], f"{loc}/{keyword}", doc, scope)
            conditional = _Conditional()
            conditional.source = {k: value[k] for k in ("if", "then", "else") if k in value}
            found.append(conditional)
        return found

    def typed(self, value: dict, loc: str, doc: _Document, scope: str | None,
              consumed: set[str]) -> _Node:
        declared = value["type"]
        consumed.add("type")
        if isinstance(declared, list):
            subs = []
            for index, item in enumerate(declared):
                if not isinstance(item, str):
                    raise _SchemaError(f"{loc}/type/{index}: expected type: String, "
                                       f"found: {_java_type_name(item)}")
                subs.append(self.one_type(item, value, loc, doc, scope, consumed))
            node = _Combined("anyOf", subs)
            node.source = {"anyOf": [sub.source for sub in subs]}
            return node
        if isinstance(declared, str):
            return self.one_type(declared, value, loc, doc, scope, consumed)
        raise _SchemaError(f"{loc}/type: expected type is one of JsonArray or String, "
                           f"found: {_java_type_name(declared)}")

    def one_type(self, name: str, value: dict, loc: str, doc: _Document, scope: str | None,
                 consumed: set[str]) -> _Node:
        node: _Node
        if name == "string":
            node = self.string(value, loc, consumed)
        elif name in ("integer", "number"):
            node = self.number(value, loc, consumed)
            node.requires_integer = name == "integer"
        elif name == "boolean":
            node = _BooleanType()
        elif name == "null":
            node = _NullType()
        elif name == "array":
            node = self.array(value, loc, doc, scope, consumed)
        elif name == "object":
            node = self.object(value, loc, doc, scope, consumed)
        else:
            raise _SchemaError(f"{loc}: unknown type: [{name}]")
        node.source = {"type": name}
        return node

    # -- keyword helpers --

    def opt(self, value: dict, key: str, loc: str, kind: type, consumed: set[str]) -> Any:
        if key not in value:
            return None
        return self.req(value, key, loc, kind, consumed)

    def req(self, value: dict, key: str, loc: str, kind: Any, consumed: set[str]) -> Any:
        consumed.add(key)
        item = value[key]
        if kind is int:
            ok = (isinstance(item, int) and not isinstance(item, bool)
                  and -2 ** 31 <= item < 2 ** 31)
            wanted = "Integer"
        elif kind == "number":
            ok = isinstance(item, (int, Decimal)) and not isinstance(item, bool)
            wanted = "Number"
        else:
            ok = isinstance(item, kind) and (kind is bool or not isinstance(item, bool))
            wanted = {str: "String", bool: "Boolean", list: "JsonArray",
                      dict: "JsonObject"}[kind]
        if not ok:
            raise _SchemaError(f"{loc}/{key}: expected type: {wanted}, "
                               f"found: {_java_type_name(item)}")
        return item

    def string(self, value: dict, loc: str, consumed: set[str]) -> _String:
        node = _String()
        node.min_length = self.opt(value, "minLength", loc, int, consumed)
        node.max_length = self.opt(value, "maxLength", loc, int, consumed)
        node.pattern = self.opt(value, "pattern", loc, str, consumed)
        self.opt(value, "format", loc, str, consumed)
        return node

    def number(self, value: dict, loc: str, consumed: set[str]) -> _Number:
        node = _Number()
        node.minimum = self.opt(value, "minimum", loc, "number", consumed)
        node.maximum = self.opt(value, "maximum", loc, "number", consumed)
        node.multiple_of = self.opt(value, "multipleOf", loc, "number", consumed)
        if node.multiple_of is not None and node.multiple_of == 0:
            raise _SchemaError(f"{loc}: multipleOf should not be 0")
        if self.spec == _DRAFT4:
            self.opt(value, "exclusiveMinimum", loc, bool, consumed)
            self.opt(value, "exclusiveMaximum", loc, bool, consumed)
        else:
            node.exclusive_minimum = self.opt(value, "exclusiveMinimum", loc, "number",
                                              consumed)
            node.exclusive_maximum = self.opt(value, "exclusiveMaximum", loc, "number",
                                              consumed)
        return node

    def array(self, value: dict, loc: str, doc: _Document, scope: str | None,
              consumed: set[str]) -> _Array:
        node = _Array()
        consumed.update(_ARRAY_KEYWORDS)
        node.min_items = self.opt(value, "minItems", loc, int, consumed)
        node.max_items = self.opt(value, "maxItems", loc, int, consumed)
        node.unique_items = bool(self.opt(value, "uniqueItems", loc, bool, consumed))
        additional_key = "additionalItems"
        if self.modern and ("prefixItems" in value or isinstance(value.get("items"), bool)):
            # 2020-12: prefixItems is the tuple, items what may follow it
            additional_key = "items"
            if "prefixItems" in value:
                node.item_list = self.schema_list(value, "prefixItems", loc, doc, scope,
                                                  consumed)
        elif "items" in value:
            items = value["items"]
            if isinstance(items, list):
                node.item_list = [self.schema(item, f"{loc}/items/{i}", doc, scope)
                                  for i, item in enumerate(items)]
            elif isinstance(items, (dict, bool)):
                node.all_items = self.schema(items, f"{loc}/items", doc, scope)
            else:
                raise _SchemaError(f"{loc}/items: expected type is one of Boolean or JsonArray "
                                   f"or JsonObject, found: {_java_type_name(items)}")
        if additional_key in value:
            extra = value[additional_key]
            if isinstance(extra, bool):
                node.permits_additional = extra
            elif isinstance(extra, dict):
                node.additional = self.schema(extra, f"{loc}/{additional_key}", doc, scope)
            else:
                raise _SchemaError(f"{loc}/{additional_key}: expected type is one of Boolean "
                                   f"or JsonObject, found: {_java_type_name(extra)}")
        if self.spec != _DRAFT4 and "contains" in value:
            self.schema(value["contains"], f"{loc}/contains", doc, scope)
            if self.modern:       # minContains defaults to 1 there
                node.min_contains = value.get("minContains", 1)
                node.max_contains = value.get("maxContains")
                consumed.update(("minContains", "maxContains"))
        if self.modern:
            node.unevaluated = self.modern_schema(value, "unevaluatedItems", loc, doc, scope,
                                                  consumed)
        return node

    def object(self, value: dict, loc: str, doc: _Document, scope: str | None,
               consumed: set[str]) -> _Object:
        node = _Object()
        consumed.update(_OBJECT_KEYWORDS)
        node.min_properties = self.opt(value, "minProperties", loc, int, consumed)
        node.max_properties = self.opt(value, "maxProperties", loc, int, consumed)
        for key, item in (self.opt(value, "properties", loc, dict, consumed) or {}).items():
            if key == self.id_keyword and not isinstance(item, dict):
                continue
            node.properties[key] = self.schema(item, f"{loc}/properties/{key}", doc, scope)
        if "additionalProperties" in value:
            extra = value["additionalProperties"]
            if isinstance(extra, bool):
                node.permits_additional = extra
            elif isinstance(extra, dict):
                node.additional = self.schema(extra, f"{loc}/additionalProperties", doc, scope)
            else:
                raise _SchemaError(f"{loc}/additionalProperties: expected type is one of "
                                   f"Boolean or JsonObject, found: {_java_type_name(extra)}")
        for index, name in enumerate(self.opt(value, "required", loc, list, consumed) or []):
            if not isinstance(name, str):
                raise _SchemaError(f"{loc}/required/{index}: expected type: String, "
                                   f"found: {_java_type_name(name)}")
            node.required.append(name)
        patterns = self.opt(value, "patternProperties", loc, dict, consumed) or {}
        for pattern, item in patterns.items():
            node.pattern_properties.append(
                (pattern, self.schema(item, f"{loc}/patternProperties/{pattern}", doc, scope)))
        deps = self.opt(value, "dependencies", loc, dict, consumed) or {}
        for name, dep in deps.items():
            self.dependency(node, name, dep, f"{loc}/dependencies/{name}", doc, scope)
        if self.modern:
            for name, dep in (self.opt(value, "dependentRequired", loc, dict, consumed)
                              or {}).items():
                self.dependency(node, name, dep if isinstance(dep, list) else 0,
                                f"{loc}/dependentRequired/{name}", doc, scope)
            for name, dep in (self.opt(value, "dependentSchemas", loc, dict, consumed)
                              or {}).items():
                node.schema_dependencies[name] = self.schema(
                    dep, f"{loc}/dependentSchemas/{name}", doc, scope)
            node.unevaluated = self.modern_schema(value, "unevaluatedProperties", loc, doc,
                                                  scope, consumed)
        if self.spec != _DRAFT4 and "propertyNames" in value:
            self.schema(value["propertyNames"], f"{loc}/propertyNames", doc, scope)
        return node

    def dependency(self, node: _Object, name: str, dep: Any, loc: str, doc: _Document,
                   scope: str | None) -> None:
        if isinstance(dep, list):
            for index, entry in enumerate(dep):
                if not isinstance(entry, str):
                    raise _SchemaError(f"{loc}/{index}: expected type: String, "
                                       f"found: {_java_type_name(entry)}")
            node.property_dependencies.setdefault(name, set()).update(dep)
        elif isinstance(dep, (dict, bool)):
            node.schema_dependencies[name] = self.schema(dep, loc, doc, scope)
        else:
            raise _SchemaError(f"{loc}: expected type is one of Boolean or JsonArray or "
                               f"JsonObject, found: {_java_type_name(dep)}")

    def schema_list(self, value: dict, key: str, loc: str, doc: _Document, scope: str | None,
                    consumed: set[str]) -> list[_Node]:
        items = self.req(value, key, loc, list, consumed)
        return [self.schema(item, f"{loc}/{key}/{i}", doc, scope) for i, item in enumerate(items)]

    def modern_schema(self, value: dict, key: str, loc: str, doc: _Document, scope: str | None,
                      consumed: set[str]) -> _Node | None:
        if key not in value:
            return None
        consumed.add(key)
        return self.schema(value[key], f"{loc}/{key}", doc, scope)

    # -- $ref --

    def reference(self, ref: Any, loc: str, doc: _Document, scope: str | None) -> _Node:
        if not isinstance(ref, str):
            raise _SchemaError(f"{loc}/$ref: expected type: String, "
                               f"found: {_java_type_name(ref)}")
        key = _resolve_uri(scope, ref)
        if key not in self.table:
            target_doc, value, target_scope = self.locate(ref, key, loc, doc, scope)
            self.table[key] = None        # a ref met again while loading points back here
            self.table[key] = self.schema(value, ref, target_doc, target_scope)
        node = _Ref(self.table, key)
        node.source = {"$ref": ref}
        return node

    def locate(self, ref: str, key: str, loc: str, doc: _Document, scope: str | None
               ) -> tuple[_Document, Any, str | None]:
        for candidate in (key, ref):
            if candidate in self.root_doc.ids:
                return self.root_doc, self.root_doc.ids[candidate], scope
            if candidate in doc.ids:
                return doc, doc.ids[candidate], scope
        if ref.startswith("#"):
            return doc, doc.pointer(ref), scope
        address, _, fragment = key.partition("#")
        for name in (key, address, ref.partition("#")[0]):
            found = self.referenced.get(name)
            if found is not None:
                fragment = "#" + fragment if name != key else "#"
                return found, found.pointer(fragment), found.uri
        raise _SchemaError(f"{loc}: $ref '{ref}' cannot be resolved")


# --------------------------------------------------------------------------------------------
# Differences (Confluent's json/diff types, their sets and their messages)


class Difference:
    """One difference found between the old and the new schema, at a JSON path."""

    __slots__ = ("type", "path")

    def __init__(self, type_: str, path: str) -> None:
        self.type = type_
        self.path = path

    def __repr__(self) -> str:
        return f"{self.type} {self.path}"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Difference) and other.type == self.type
                and other.path == self.path)

    def __hash__(self) -> int:
        return hash((self.type, self.path))

    def message(self) -> str:
        """The text Confluent reports for this difference, ``%s`` for reader then writer."""
        return '{errorType:"%s", description:"%s\'}' % (self.type, _describe(self.type,
                                                                             self.path))


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


COMPATIBLE_STRICT = _names("""
    ID_CHANGED DESCRIPTION_CHANGED TITLE_CHANGED DEFAULT_CHANGED SCHEMA_REMOVED TYPE_EXTENDED
    MAX_LENGTH_INCREASED MAX_LENGTH_REMOVED MIN_LENGTH_DECREASED MIN_LENGTH_REMOVED
    PATTERN_REMOVED MAXIMUM_INCREASED MAXIMUM_REMOVED MINIMUM_DECREASED MINIMUM_REMOVED
    EXCLUSIVE_MAXIMUM_INCREASED EXCLUSIVE_MAXIMUM_REMOVED EXCLUSIVE_MINIMUM_DECREASED
    EXCLUSIVE_MINIMUM_REMOVED MULTIPLE_OF_REDUCED MULTIPLE_OF_REMOVED
    REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED REQUIRED_ATTRIBUTE_REMOVED DEPENDENCY_ARRAY_NARROWED
    DEPENDENCY_ARRAY_REMOVED DEPENDENCY_SCHEMA_REMOVED MAX_PROPERTIES_INCREASED
    MAX_PROPERTIES_REMOVED MIN_PROPERTIES_DECREASED MIN_PROPERTIES_REMOVED
    ADDITIONAL_PROPERTIES_ADDED ADDITIONAL_PROPERTIES_EXTENDED UNEVALUATED_PROPERTIES_ADDED
    UNEVALUATED_PROPERTIES_EXTENDED PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL
    REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL
    OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL
    PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL
    PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL
    PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
    PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
    MAX_ITEMS_INCREASED MAX_ITEMS_REMOVED MIN_ITEMS_DECREASED MIN_ITEMS_REMOVED
    MAX_CONTAINS_INCREASED MAX_CONTAINS_REMOVED MIN_CONTAINS_DECREASED MIN_CONTAINS_REMOVED
    UNIQUE_ITEMS_REMOVED ADDITIONAL_ITEMS_ADDED ADDITIONAL_ITEMS_EXTENDED UNEVALUATED_ITEMS_ADDED
    UNEVALUATED_ITEMS_EXTENDED ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL
    ITEM_ADDED_TO_CLOSED_CONTENT_MODEL ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL
    ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
    ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL ENUM_ARRAY_EXTENDED
    COMBINED_TYPE_EXTENDED PRODUCT_TYPE_NARROWED SUM_TYPE_EXTENDED NOT_TYPE_NARROWED
""")

COMPATIBLE_LENIENT = COMPATIBLE_STRICT | _names("""
    ADDITIONAL_PROPERTIES_NARROWED ADDITIONAL_PROPERTIES_REMOVED UNEVALUATED_PROPERTIES_NARROWED
    UNEVALUATED_PROPERTIES_REMOVED REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL
    OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL
    PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL
    PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
    PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
""")

# message families: which description a difference type gets
_KEYWORD_ADDED_OR_REMOVED = _names("""
    MAXIMUM_ADDED MINIMUM_ADDED EXCLUSIVE_MAXIMUM_ADDED EXCLUSIVE_MINIMUM_ADDED MULTIPLE_OF_ADDED
    MAX_LENGTH_ADDED MIN_LENGTH_ADDED PATTERN_ADDED REQUIRED_ATTRIBUTE_ADDED MAX_PROPERTIES_ADDED
    MIN_PROPERTIES_ADDED DEPENDENCY_ARRAY_ADDED DEPENDENCY_SCHEMA_ADDED MAX_ITEMS_ADDED
    MIN_ITEMS_ADDED MAX_CONTAINS_ADDED MIN_CONTAINS_ADDED UNIQUE_ITEMS_ADDED
    ADDITIONAL_ITEMS_REMOVED ADDITIONAL_PROPERTIES_REMOVED UNEVALUATED_PROPERTIES_REMOVED
    UNEVALUATED_ITEMS_REMOVED
""")
_VALUE_INCREASED = _names("""
    MIN_LENGTH_INCREASED MINIMUM_INCREASED EXCLUSIVE_MINIMUM_INCREASED MIN_PROPERTIES_INCREASED
    MULTIPLE_OF_EXPANDED MIN_ITEMS_INCREASED MIN_CONTAINS_INCREASED
""")
_VALUE_DECREASED = _names("""
    MAX_LENGTH_DECREASED MAXIMUM_DECREASED MAX_ITEMS_DECREASED MAX_CONTAINS_DECREASED
    EXCLUSIVE_MAXIMUM_DECREASED MAX_PROPERTIES_DECREASED
""")
_TYPE_NARROWED = _names("""
    ADDITIONAL_ITEMS_NARROWED ENUM_ARRAY_NARROWED SUM_TYPE_NARROWED ADDITIONAL_PROPERTIES_NARROWED
    UNEVALUATED_PROPERTIES_NARROWED UNEVALUATED_ITEMS_NARROWED
""")
_VALUE_CHANGED = _names("PATTERN_CHANGED MULTIPLE_OF_CHANGED DEPENDENCY_ARRAY_CHANGED")
_TYPE_CHANGED = _names("""
    TYPE_CHANGED TYPE_NARROWED COMBINED_TYPE_CHANGED COMBINED_TYPE_SUBSCHEMAS_CHANGED
    ENUM_ARRAY_CHANGED
""")
_TYPE_EXTENDED = _names("""
    DEPENDENCY_ARRAY_EXTENDED PRODUCT_TYPE_EXTENDED SUM_TYPE_EXTENDED NOT_TYPE_EXTENDED
""")
_ADDED_TO_OPEN = _names("""
    REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL
    REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL
    OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL ITEM_ADDED_TO_OPEN_CONTENT_MODEL
""")


def _describe(kind: str, path: str) -> str:
    """Confluent's description of a difference (reworded nowhere: clients may match on it)."""
    at = f"'{path}'"
    if kind in _KEYWORD_ADDED_OR_REMOVED:
        return f"The keyword at path {at} in the %s schema is not present in the %s schema"
    if kind in _VALUE_INCREASED:
        return f"The value at path {at} in the %s schema is more than its value in the %s schema"
    if kind in _VALUE_DECREASED:
        return f"The value at path {at} in the %s schema is less than its value in the %s schema"
    if kind in _VALUE_CHANGED:
        return f"The value at path {at} is different between the %s and %s schema"
    if kind in _TYPE_NARROWED:
        return (f"An array or combined type at path {at} has fewer elements in the %s schema "
                "than the %s schema")
    if kind in _TYPE_EXTENDED:
        return (f"An array or combined type at path {at} has more elements in the %s schema "
                "than the %s schema")
    if kind in _TYPE_CHANGED:
        return f"A type at path {at} is different between the %s schema and the %s schema"
    if kind in _ADDED_TO_OPEN:
        return (f"The %s schema has an open content model and has a property or item at path "
                f"{at} which is missing in the %s schema")
    if kind == "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL":
        return (f"The %s schema has an unopen content model and has a required property at "
                f"path {at} which is missing in the %s schema")
    if kind in ("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL",
                "ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL"):
        return (f"The %s has a closed content model and is missing a property or item present "
                f"at path {at} in the %s schema")
    if kind in ("PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
                "ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"):
        return (f"A property or item is missing in the %s schema but present at path {at} in "
                "the %s schema and is not covered by its partially open content model")
    if kind in ("PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
                "ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"):
        return (f"The %s schema has a property or item at path {at} which is missing in the %s "
                "schema and is not covered by its partially open content model")
    return ""      # e.g. SCHEMA_ADDED: Confluent has no description for it either


# --------------------------------------------------------------------------------------------
# The diff

Path = tuple[str, ...]
Found = list[tuple[str, Path]]           # (difference type, path) in the order found


def _unwrap(node: _Node) -> _Node:
    return node.target if isinstance(node, _Ref) else node


def _same_kind(a: _Node, b: _Node) -> bool:
    return type(a) is type(b) or (isinstance(a, _Combined) and isinstance(b, _Combined))


def _compare_limits(out: Found, path: Path, keyword: str, old: Any, new: Any, stem: str,
                    increased: str = "INCREASED", decreased: str = "DECREASED") -> None:
    """The ADDED/REMOVED/INCREASED/DECREASED family of one numeric keyword."""
    if old is None and new is None:
        return
    if old is None:
        out.append((f"{stem}_ADDED", path + (keyword,)))
    elif new is None:
        out.append((f"{stem}_REMOVED", path + (keyword,)))
    elif float(old) < float(new):
        out.append((f"{stem}_{increased}", path + (keyword,)))
    elif float(old) > float(new):
        out.append((f"{stem}_{decreased}", path + (keyword,)))


def _pattern_matches(pattern: str, name: str) -> bool:
    try:
        return re.search(pattern, name) is not None
    except re.error:
        return False


class _Differ:
    """One comparison of an old (original) and a new (update) schema."""

    def __init__(self, compatible: frozenset[str],
                 seed: dict[tuple[int, int], tuple] | None = None) -> None:
        self.compatible = compatible
        self.memo: dict[tuple[int, int], tuple] = {}
        self.in_progress: set[tuple[int, int]] = set()
        self.seed = seed or {}
        self.optimistic = False

    def compatible_list(self, found: Found) -> bool:
        return all(kind in self.compatible for kind, _ in found)

    # -- the hub --

    def compare(self, old: _Node | None, new: _Node | None, path: Path, out: Found) -> None:
        if old is None and new is None:
            return
        if old is None:
            out.append(("SCHEMA_ADDED", path))
            return
        if new is None:
            out.append(("SCHEMA_REMOVED", path))
            return
        old, new = _unwrap(old), _unwrap(new)
        out.extend((kind, path + rel) for kind, rel in self.pair(old, new))

    def pair(self, old: _Node, new: _Node) -> tuple:
        key = (id(old), id(new))
        if key in self.memo:
            return self.memo[key]
        if key in self.in_progress:
            if key in self.seed:
                return self.seed[key]
            self.optimistic = True
            return ()
        self.in_progress.add(key)
        try:
            found: Found = []
            self.compare_types(old, new, (), found)
            self.memo[key] = tuple(found)
            return self.memo[key]
        finally:
            self.in_progress.discard(key)

    def trial(self, old: _Node | None, new: _Node | None, path: Path) -> Found:
        found: Found = []
        self.compare(old, new, path, found)
        return found

    def compare_types(self, old: _Node, new: _Node, path: Path, out: Found) -> None:
        if not isinstance(old, _Combined) and isinstance(new, _Combined):
            if len(new.subschemas) == 1:
                found = self.trial(old, new.subschemas[0], path)
                if self.compatible_list(found):
                    out.extend(found)
                    return
            elif new.criterion in ("anyOf", "oneOf"):
                for sub in new.subschemas:
                    found = self.trial(old, sub, path)
                    if self.compatible_list(found):
                        out.extend(found)
                        out.append(("SUM_TYPE_EXTENDED", path))
                        return
        elif isinstance(old, _Combined) and not isinstance(new, _Combined):
            if len(old.subschemas) == 1:
                found = self.trial(old.subschemas[0], new, path)
                if self.compatible_list(found):
                    out.extend(found)
                    return
            elif old.criterion == "allOf":
                for sub in old.subschemas:
                    found = self.trial(sub, new, path)
                    if self.compatible_list(found):
                        out.extend(found)
                        out.append(("PRODUCT_TYPE_NARROWED", path))
                        return

        if not _same_kind(old, new):
            if isinstance(old, _False) or isinstance(new, _Empty):
                return
            if (old.unprocessed.get("connect.type") == "bytes"
                    and new.unprocessed.get("connect.type") == "bytes"):
                return
            out.append(("TYPE_CHANGED", path))
            return

        if old.id != new.id:
            out.append(("ID_CHANGED", path))
        if old.title != new.title:
            out.append(("TITLE_CHANGED", path))
        if old.description != new.description:
            out.append(("DESCRIPTION_CHANGED", path))
        if not _java_default_equal(old.default, new.default):
            out.append(("DEFAULT_CHANGED", path))

        handler = self._HANDLERS.get(type(old))
        if handler is not None:
            handler(self, old, new, path, out)

    # -- per kind --

    def strings(self, old: _String, new: _String, path: Path, out: Found) -> None:
        _compare_limits(out, path, "maxLength", old.max_length, new.max_length, "MAX_LENGTH")
        _compare_limits(out, path, "minLength", old.min_length, new.min_length, "MIN_LENGTH")
        if old.pattern is None and new.pattern is not None:
            out.append(("PATTERN_ADDED", path + ("pattern",)))
        elif old.pattern is not None and new.pattern is None:
            out.append(("PATTERN_REMOVED", path + ("pattern",)))
        elif old.pattern != new.pattern:
            out.append(("PATTERN_CHANGED", path + ("pattern",)))

    def numbers(self, old: _Number, new: _Number, path: Path, out: Found) -> None:
        _compare_limits(out, path, "maximum", old.maximum, new.maximum, "MAXIMUM")
        _compare_limits(out, path, "minimum", old.minimum, new.minimum, "MINIMUM")
        # Confluent weighs a lowered exclusiveMaximum against the new plain maximum (sic)
        old_max, new_max = old.exclusive_maximum, new.exclusive_maximum
        if old_max is not None and new_max is not None and float(old_max) > float(new_max):
            limit = new.maximum if new.maximum is not None else new_max
            if float(old_max) > float(limit):
                out.append(("EXCLUSIVE_MAXIMUM_DECREASED", path + ("exclusiveMaximum",)))
        else:
            _compare_limits(out, path, "exclusiveMaximum", old_max, new_max,
                            "EXCLUSIVE_MAXIMUM")
        _compare_limits(out, path, "exclusiveMinimum", old.exclusive_minimum,
                        new.exclusive_minimum, "EXCLUSIVE_MINIMUM")
        self.multiple_of(old.multiple_of, new.multiple_of, path, out)
        if old.requires_integer != new.requires_integer:
            out.append(("TYPE_EXTENDED" if old.requires_integer else "TYPE_NARROWED", path))

    @staticmethod
    def multiple_of(old: Any, new: Any, path: Path, out: Found) -> None:
        at = path + ("multipleOf",)
        if old is None and new is None:
            return
        if old is None:
            out.append(("MULTIPLE_OF_ADDED", at))
            return
        if new is None:
            out.append(("MULTIPLE_OF_REMOVED", at))
            return
        old_d, new_d = Decimal(old), Decimal(new)
        if old_d == new_d:
            return
        with localcontext() as ctx:
            ctx.prec = 1000
            if old_d != 0 and new_d % old_d == 0:
                out.append(("MULTIPLE_OF_EXPANDED", at))
            elif new_d != 0 and old_d % new_d == 0:
                out.append(("MULTIPLE_OF_REDUCED", at))
            else:
                out.append(("MULTIPLE_OF_CHANGED", at))

    def enums(self, old: _Enum, new: _Enum, path: Path, out: Found) -> None:
        if old.values != new.values:
            if new.values >= old.values:
                out.append(("ENUM_ARRAY_EXTENDED", path + ("enum",)))
            elif old.values >= new.values:
                out.append(("ENUM_ARRAY_NARROWED", path + ("enum",)))
            else:
                out.append(("ENUM_ARRAY_CHANGED", path + ("enum",)))

    def consts(self, old: _Const, new: _Const, path: Path, out: Found) -> None:
        if old.value != new.value:
            out.append(("ENUM_ARRAY_CHANGED", path + ("const",)))

    def nots(self, old: _Not, new: _Not, path: Path, out: Found) -> None:
        at = path + ("not",)
        # what the new schema refuses must be no more than what the old one refused
        found = self.trial(new.must_not, old.must_not, at)
        out.append(("NOT_TYPE_NARROWED" if self.compatible_list(found) else "NOT_TYPE_EXTENDED",
                    at))

    def combined(self, old: _Combined, new: _Combined, path: Path, out: Found) -> None:
        if old.criterion != new.criterion:
            one_old, one_new = len(old.subschemas) == 1, len(new.subschemas) == 1
            if (new.criterion == "anyOf" or (one_old and one_new)
                    or (one_old and new.criterion == "oneOf")
                    or (one_new and old.criterion == "allOf")):
                out.append(("COMBINED_TYPE_EXTENDED", path))
            else:
                out.append(("COMBINED_TYPE_CHANGED", path))
                return
        old_subs, new_subs = _distinct(old.subschemas), _distinct(new.subschemas)
        if len(old_subs) < len(new_subs):
            out.append(("PRODUCT_TYPE_EXTENDED" if new.criterion == "allOf"
                        else "SUM_TYPE_EXTENDED", path))
        elif len(old_subs) > len(new_subs):
            out.append(("SUM_TYPE_NARROWED" if old.criterion in ("anyOf", "oneOf")
                        else "PRODUCT_TYPE_NARROWED", path))
        edges: dict[int, dict[int, Found]] = {}
        for i, old_sub in enumerate(old_subs):
            at = path + (f"{old.criterion}/{i}",)
            for j, new_sub in enumerate(new_subs):
                found = self.trial(old_sub, new_sub, at)
                if self.compatible_list(found):
                    edges.setdefault(i, {})[j] = found
        matching = _maximum_matching(edges)
        for i, j in sorted(matching.items()):
            out.extend(edges[i][j])
        if len(matching) < min(len(old_subs), len(new_subs)):
            out.append(("COMBINED_TYPE_SUBSCHEMAS_CHANGED", path))

    def objects(self, old: _Object, new: _Object, path: Path, out: Found) -> None:
        self.required(old, new, path, out)
        self.properties(old, new, path, out)
        self.dependencies(old, new, path, out)
        self.additional_properties(old, new, path, out)
        self.unevaluated(old.unevaluated, new.unevaluated, path + ("unevaluatedProperties",),
                         "UNEVALUATED_PROPERTIES", out)
        _compare_limits(out, path, "maxProperties", old.max_properties, new.max_properties,
                        "MAX_PROPERTIES")
        _compare_limits(out, path, "minProperties", old.min_properties, new.min_properties,
                        "MIN_PROPERTIES")

    def required(self, old: _Object, new: _Object, path: Path, out: Found) -> None:
        for name in _java_map_keys(list(old.properties)):
            if name not in new.properties:
                continue
            was, now = name in old.required, name in new.required
            if was and not now:
                out.append(("REQUIRED_ATTRIBUTE_REMOVED", path + ("required", name)))
            elif now and not was:
                kind = ("REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED"
                        if new.properties[name].has_default else "REQUIRED_ATTRIBUTE_ADDED")
                out.append((kind, path + ("required", name)))

    def properties(self, old: _Object, new: _Object, path: Path, out: Found) -> None:
        names = _java_union_keys(_java_map_keys(list(old.properties)),
                                 _java_map_keys(list(new.properties)))
        for name in names:
            at = path + ("properties", name)
            old_prop, new_prop = old.properties.get(name), new.properties.get(name)
            if new_prop is None:
                self.property_removed(old_prop, new, name, at, out)
            elif old_prop is None:
                self.property_added(old, new, new_prop, name, at, out)
            else:
                self.compare(old_prop, new_prop, at, out)

    def property_removed(self, old_prop: _Node, new: _Object, name: str, at: Path,
                         out: Found) -> None:
        if _open_object(new):
            out.append(("PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL", at))
            return
        partial = _partial_object_schema(new, name)
        if partial is not None:
            found = self.trial(old_prop, partial, at)
            out.extend(found)
            out.append(("PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
                        if self.compatible_list(found)
                        else "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", at))
        elif isinstance(old_prop, _False):
            out.append(("PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL", at))
        else:
            out.append(("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", at))

    def property_added(self, old: _Object, new: _Object, new_prop: _Node, name: str,
                       at: Path, out: Found) -> None:
        required = name in new.required
        if _open_object(old):
            if isinstance(new_prop, _Empty):
                kind = "PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL"
            elif required:
                kind = ("REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL"
                        if new_prop.has_default
                        else "REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL")
            else:
                kind = "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"
            out.append((kind, at))
            return
        partial = _partial_object_schema(old, name)
        if partial is not None:
            found = self.trial(partial, new_prop, at)
            out.extend(found)
            out.append(("PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
                        if self.compatible_list(found)
                        else "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", at))
        if required:
            out.append(("REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL"
                        if new_prop.has_default
                        else "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", at))
        else:
            out.append(("OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", at))

    def dependencies(self, old: _Object, new: _Object, path: Path, out: Found) -> None:
        base = path + ("dependencies",)
        old_deps, new_deps = old.property_dependencies, new.property_dependencies
        for name in _java_union_keys(_java_map_keys(list(old_deps)),
                                     _java_map_keys(list(new_deps))):
            at = base + (name,)
            was, now = old_deps.get(name), new_deps.get(name)
            if now is None:
                out.append(("DEPENDENCY_ARRAY_REMOVED", at))
            elif was is None:
                out.append(("DEPENDENCY_ARRAY_ADDED", at))
            elif was != now:
                out.append(("DEPENDENCY_ARRAY_EXTENDED" if now >= was
                            else "DEPENDENCY_ARRAY_NARROWED" if was >= now
                            else "DEPENDENCY_ARRAY_CHANGED", at))
        old_schemas, new_schemas = old.schema_dependencies, new.schema_dependencies
        for name in _java_union_keys(_java_map_keys(list(old_schemas)),
                                     _java_map_keys(list(new_schemas))):
            at = base + (name,)
            was_schema, now_schema = old_schemas.get(name), new_schemas.get(name)
            if now_schema is None:
                out.append(("DEPENDENCY_SCHEMA_REMOVED", at))
            elif was_schema is None:
                out.append(("DEPENDENCY_SCHEMA_ADDED", at))
            else:
                self.compare(was_schema, now_schema, at, out)

    def additional_properties(self, old: _Object, new: _Object, path: Path,
                              out: Found) -> None:
        at = path + ("additionalProperties",)
        if old.permits_additional != new.permits_additional:
            out.append(("ADDITIONAL_PROPERTIES_ADDED" if new.permits_additional
                        else "ADDITIONAL_PROPERTIES_REMOVED", at))
        elif old.additional is None and new.additional is not None:
            out.append(("ADDITIONAL_PROPERTIES_NARROWED", at))
        elif new.additional is None and old.additional is not None:
            out.append(("ADDITIONAL_PROPERTIES_EXTENDED", at))
        else:
            self.compare(old.additional, new.additional, at, out)

    def unevaluated(self, old: _Node | None, new: _Node | None, at: Path, stem: str,
                    out: Found) -> None:
        if old is None and new is None:
            return
        if old is None:
            out.append((f"{stem}_REMOVED" if isinstance(new, _False) else f"{stem}_NARROWED",
                        at))
        elif new is None:
            out.append((f"{stem}_ADDED" if isinstance(old, _False) else f"{stem}_EXTENDED", at))
        elif isinstance(old, _False) and not isinstance(new, _False):
            out.append((f"{stem}_ADDED", at))
        elif not isinstance(old, _False) and isinstance(new, _False):
            out.append((f"{stem}_REMOVED", at))
        elif isinstance(old, _Empty) and not isinstance(new, _Empty):
            out.append((f"{stem}_NARROWED", at))
        elif not isinstance(old, _Empty) and isinstance(new, _Empty):
            out.append((f"{stem}_EXTENDED", at))
        else:
            self.compare(old, new, at, out)

    def arrays(self, old: _Array, new: _Array, path: Path, out: Found) -> None:
        self.compare(old.all_items, new.all_items, path + ("items",), out)
        self.tuple_items(old, new, path, out)
        at = path + ("additionalItems",)
        if old.permits_additional != new.permits_additional:
            out.append(("ADDITIONAL_ITEMS_REMOVED" if old.permits_additional
                        else "ADDITIONAL_ITEMS_ADDED", at))
        elif old.additional is None and new.additional is not None:
            out.append(("ADDITIONAL_ITEMS_NARROWED", at))
        elif new.additional is None and old.additional is not None:
            out.append(("ADDITIONAL_ITEMS_EXTENDED", at))
        else:
            self.compare(old.additional, new.additional, at, out)
        self.unevaluated(old.unevaluated, new.unevaluated, path + ("unevaluatedItems",),
                         "UNEVALUATED_ITEMS", out)
        _compare_limits(out, path, "maxItems", old.max_items, new.max_items, "MAX_ITEMS")
        _compare_limits(out, path, "minItems", old.min_items, new.min_items, "MIN_ITEMS")
        if old.unique_items != new.unique_items:
            out.append(("UNIQUE_ITEMS_REMOVED" if old.unique_items else "UNIQUE_ITEMS_ADDED",
                        path + ("uniqueItems",)))
        _compare_limits(out, path, "maxContains", _int_or_none(old.max_contains),
                        _int_or_none(new.max_contains), "MAX_CONTAINS")
        _compare_limits(out, path, "minContains", _int_or_none(old.min_contains),
                        _int_or_none(new.min_contains), "MIN_CONTAINS")

    def tuple_items(self, old: _Array, new: _Array, path: Path, out: Found) -> None:
        old_items, new_items = old.item_list or [], new.item_list or []
        for index in range(min(len(old_items), len(new_items))):
            self.compare(old_items[index], new_items[index], path + (f"items/{index}",), out)
        for index in range(len(new_items), len(old_items)):
            at, item = path + (f"items/{index}",), old_items[index]
            if _open_array(new):
                out.append(("ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL", at))
                continue
            partial = _partial_array_schema(new)
            if partial is not None:
                found = self.trial(item, partial, at)
                out.extend(found)
                out.append(("ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
                            if self.compatible_list(found)
                            else "ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", at))
            elif isinstance(item, _False):
                out.append(("ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL", at))
            else:
                out.append(("ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL", at))
        for index in range(len(old_items), len(new_items)):
            at, item = path + (f"items/{index}",), new_items[index]
            if _open_array(old):
                out.append(("ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL"
                            if isinstance(item, _Empty) else "ITEM_ADDED_TO_OPEN_CONTENT_MODEL",
                            at))
                continue
            partial = _partial_array_schema(old)
            if partial is not None:
                found = self.trial(partial, item, at)
                out.extend(found)
                out.append(("ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
                            if self.compatible_list(found)
                            else "ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", at))
            else:
                out.append(("ITEM_ADDED_TO_CLOSED_CONTENT_MODEL", at))

    _HANDLERS: dict[type, Callable[..., None]] = {
        _String: strings, _Number: numbers, _Const: consts, _Enum: enums,
        _Combined: combined, _Not: nots, _Object: objects, _Array: arrays,
    }


def _distinct(subschemas: list[_Node]) -> list[_Node]:
    """Subschemas without repeats (Confluent collects them in a LinkedHashSet)."""
    kept: dict[str, _Node] = {}
    for sub in subschemas:
        kept.setdefault(sub.dedup_key(), sub)
    return list(kept.values())


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


def _open_object(node: _Object) -> bool:
    return (node.permits_additional and node.additional is None
            and not node.pattern_properties
            and (node.unevaluated is None or isinstance(node.unevaluated, _Empty)))


def _partial_object_schema(node: _Object, name: str) -> _Node | None:
    for pattern, schema in node.pattern_properties:
        if _pattern_matches(pattern, name):
            return schema
    if node.additional is not None:
        return node.additional
    if (node.permits_additional and node.unevaluated is not None
            and not isinstance(node.unevaluated, (_False, _Empty))):
        return node.unevaluated
    return None


def _open_array(node: _Array) -> bool:
    return (node.permits_additional and node.additional is None
            and (node.unevaluated is None or isinstance(node.unevaluated, _Empty)))


def _partial_array_schema(node: _Array) -> _Node | None:
    if node.additional is not None:
        return node.additional
    if (node.permits_additional and node.unevaluated is not None
            and not isinstance(node.unevaluated, (_False, _Empty))):
        return node.unevaluated
    return None


def _maximum_matching(edges: dict[int, dict[int, Found]]) -> dict[int, int]:
    """A maximum-cardinality matching of old to new subschemas (augmenting paths)."""
    owner: dict[int, int] = {}

    def augment(left: int, visited: set[int]) -> bool:
        for right in edges.get(left, {}):
            if right in visited:
                continue
            visited.add(right)
            if right not in owner or augment(owner[right], visited):
                owner[right] = left
                return True
        return False

    for left in sorted(edges):
        augment(left, set())
    return {left: right for right, left in owner.items()}


def _run_diff(compatible: frozenset[str], old: _Node, new: _Node) -> Found:
    """Confluent's fixpoint around the memoised comparison (see the module docstring)."""
    seed: dict[tuple[int, int], tuple] = {}
    while True:
        differ = _Differ(compatible, seed)
        found: Found = []
        differ.compare(old, new, (), found)
        incompatible = {key: value for key, value in differ.memo.items()
                        if not all(kind in compatible for kind, _ in value)}
        if not differ.optimistic or incompatible.keys() == seed.keys():
            return found
        seed = incompatible


# --------------------------------------------------------------------------------------------
# The parsed schema


class JsonSchema(ParsedSchema):
    """A parsed JSON Schema: its JSON value, the schemas its references name, and (built on
    first use) the loaded schema model the compatibility check walks."""

    schema_type = "JSON"

    def __init__(self, value: Any, references: Mapping[str, str]) -> None:
        self.value = value
        self.references = dict(references)
        self._model: _Node | None = None

    def canonical(self) -> str:
        return _write_json(self.value)

    def normalized(self) -> "JsonSchema":
        return JsonSchema(_sorted_keys(self.value), self.references)

    def model(self) -> _Node:
        if self._model is None:
            self._model = _load(self.value, self.references)
        return self._model

    def is_backward_compatible(self, writer: ParsedSchema, policy: str = STRICT) -> list[str]:
        if not isinstance(writer, JsonSchema):
            return ["Incompatible because of different schema type"]
        return [difference.message() for difference in differences(writer, self, policy)
                if difference.type not in _compatible_set(policy)]

    def __repr__(self) -> str:
        return f"JsonSchema({self.canonical()})"


def _compatible_set(policy: str) -> frozenset[str]:
    return COMPATIBLE_LENIENT if policy == LENIENT else COMPATIBLE_STRICT


def differences(old: JsonSchema, new: JsonSchema, policy: str = STRICT) -> list[Difference]:
    """Every difference (compatible or not) Confluent's diff finds from ``old`` to ``new``,
    in its order, with ``#/...`` paths."""
    found = _run_diff(_compatible_set(policy), old.model(), new.model())
    return [Difference(kind, "#/" + "/".join(path)) for kind, path in found]


def _invalid(message: str, stage: str, detail: str | None = None) -> InvalidSchema:
    error = InvalidSchema(message)
    error.stage = stage          # "parse": Confluent's provider refused the text;
    error.detail = detail or message  # "validate": its loader refused the schema
    return error


def _load(value: Any, references: Mapping[str, str]) -> _Node:
    if not isinstance(value, (dict, bool)):
        kind = {list: "ARRAY", str: "STRING", bool: "BOOLEAN", type(None): "NULL",
                _Missing: "MISSING"}.get(type(value), "NUMBER")
        raise _invalid("Invalid JSON schema: expected an object or boolean at the root, "
                       f"found {kind}", "validate")
    try:
        return _Loader(value, references).load()
    except (_SchemaError, RecursionError) as exc:
        # Confluent wraps whatever its loader throws as IllegalArgumentException("Invalid JSON")
        raise _invalid("Invalid JSON", "validate", str(exc)) from exc


def parse(text: str, references: Mapping[str, str]) -> JsonSchema:
    """Parse a JSON Schema; ``references`` maps a reference name (``customer.json``) to the
    text of the schema it names, which a ``$ref`` to that name reaches.

    Raises :class:`InvalidSchema` with Confluent's text: for text that is not JSON, what its
    parser says (``Invalid JSON schema``, which the registry wraps in its provider's and its
    own ``Invalid schema of type JSON, details:``); for a JSON
    value that is no schema, what its validation says (``Invalid JSON``, the loader's own
    words being only in the exception's ``detail``).  The exception's ``stage`` tells the two
    apart ("parse" or "validate"), as Confluent words its 42201 message differently for them.
    """
    try:
        value = _read_json(text)
    except (ValueError, RecursionError) as exc:
        raise _invalid("Invalid JSON schema", "parse", str(exc)) from exc
    schema = JsonSchema(value, references)
    schema.model()
    return schema
