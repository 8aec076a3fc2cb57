"""Our codec against a foreign implementation: kafka-python 3.x's own protocol classes.

kafka-python builds its message classes from its copies of Kafka's JSON message specs
(``kafka/protocol/schemas/resources``) and has its own encoder and decoder, written
independently of ours.  For every request and response class it defines and every version both
implementations define, this module checks, with sample values covering every field:

* kafka-python's bytes decode with our codec to the same values, and our re-encoding of what we
  decoded is the same bytes;
* our bytes are kafka-python's bytes, and decode with kafka-python to the same values (which
  kafka-python re-encodes to the same bytes);
* the framing around bodies: kafka-python's request frames (size prefix, header v1/v2,
  correlation id, client id) decode with :func:`wire.decode_request` and equal
  :func:`wire.encode_request`'s; :func:`wire.encode_response`'s frames (header v0/v1, v0 always
  for ApiVersions) decode with kafka-python's response parsing and equal kafka-python's own;
* the consumer protocol's embedded formats, which kafka-python also defines.

Samples are deterministic (every field a non-default value, arrays of two, non-ASCII strings,
extreme and negative numbers; a sparse variant: nullable fields None, arrays of one; a long
variant whose lengths need multi-byte varints) plus a few Hypothesis examples per case, drawn
from a strategy built by walking our field definitions.

Where kafka-python's definitions and ours differ a case is left out only through the named,
reasoned tables below, which the tests keep honest; nothing is skipped silently.

How kafka-python represents values, and how the converters here map them to ours:

* Field names: kafka-python snake-cases Kafka's names with its own rule, and renames a few
  fields with ``json_patch``; fields are matched here by Kafka's original JSON name run through
  our :func:`wire.schema.snake_case`.
* ``uuid``: kafka-python decodes the all-zero UUID as ``None`` and encodes ``None`` as zero.
* Authorized-operations fields: kafka-python patches these int32s into a "bitfield" type, a
  ``set`` of bit positions, with ``None`` for ``{31}`` (INT32_MIN, "not requested").
* Tagged struct fields: kafka-python's default is ``None`` ("absent"); ours is a struct holding
  the field defaults.  Both leave a tagged field out when it has its default, so ours-at-default
  maps to kafka-python's ``None`` (given a default-valued struct instead, kafka-python writes a
  tag that Kafka, and we, leave out).
"""

from __future__ import annotations

import functools
import random
import struct
import uuid
import warnings
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# Importing these packages defines kafka-python's ApiMessage classes: defining a response class
# registers it in ResponseClassRegistry (api key -> class), which is how kafka-python finds the
# class to parse a response with; requests are found as the other ApiMessage subclasses.
# (kafka-python reads its JSON specs with importlib.resources.read_text, deprecated in 3.11.)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import kafka.protocol.admin  # noqa: F401
    import kafka.protocol.consumer  # noqa: F401
    import kafka.protocol.metadata  # noqa: F401
    import kafka.protocol.producer  # noqa: F401
    import kafka.protocol.sasl  # noqa: F401
    from kafka.protocol.api_header import ResponseClassRegistry
    from kafka.protocol.api_key import ApiKey
    from kafka.protocol.api_message import ApiMessage
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, \
        ConsumerProtocolSubscription
    from kafka.protocol.parser import KafkaProtocol
    from kafka.protocol.schemas import load_json
    from kafka.protocol.schemas.fields.codecs import BitField

import wire
from wire import REQUEST, RESPONSE
from wire.builder import EMBEDDED
from wire.definitions import APIS
from wire.model import Struct, message_class
from wire.schema import ZERO_UUID, Field, Message, snake_case

DIRECTIONS = (REQUEST, RESPONSE)

#: The fewest (api, version, direction) cases the cross-check must cover.  Measured: 478 with
#: kafka-python 3.0.12 (52 APIs, both directions) against our Kafka 4.3 and 4.4 definitions.
MIN_CASES = 475

#: (api key, direction, version) that kafka-python defines and we do not, with the reason.
#: Any such case found and not listed here fails test_kafka_python_versions_are_all_covered.
KAFKA_PYTHON_ONLY: dict[tuple[int, str, int], str] = {}

#: (api key, version, direction) where kafka-python's wire layout differs from ours (say a field
#: added or retyped in a Kafka release that kafka-python's JSON copy predates), with the reason.
#: These are left out of the byte-level checks; test_wire_layouts_agree checks that every other
#: case's layout matches, field by field.  (None with kafka-python 3.0.12.)
LAYOUT_DIFFERENCES: dict[tuple[int, int, str], str] = {}

#: Top-level fields that Kafka renamed after kafka-python copied its JSON specs, keeping their wire
#: place and type: (kafka-python's message name, its JSON field name) -> (our JSON name, reason).
#: Fields are matched by name, so these are matched through this table; the layouts are compared
#: under our name.  test_renamed_fields_are_still_renamed keeps every entry needed.
RENAMED_FIELDS: dict[tuple[str, str], tuple[str, str]] = {
    ("TxnOffsetCommitRequest", "GenerationId"): (
        "GenerationIdOrMemberEpoch",
        "Kafka 4.4 renamed it when TxnOffsetCommit v6 began to carry a consumer-protocol member "
        "epoch there (KIP-1319); the same int32 in versions 3 and up"),
}

#: Known kafka-python bugs that make a case fail: (api key, version, direction) -> what is wrong.
#: Listed cases are left out of the byte-level checks.  (None with kafka-python 3.0.12.)
KAFKA_PYTHON_BUGS: dict[tuple[int, int, str], str] = {}

#: kafka-python bugs worked around in every case (none changes what is compared).
KAFKA_PYTHON_WORKAROUNDS: dict[str, str] = {
    "decoded messages have no _header": (
        "ApiMessage.decode builds objects with object.__new__ and sets the _header slot only "
        "when it read a header, so encode() on a decoded body raises AttributeError; "
        "cross_check sets _header to None before re-encoding"),
}

#: Values pinned in every sample: (message name, field path) -> (value, reason).
SAMPLE_CONSTRAINTS: dict[tuple[str, str], tuple[Any, str]] = {
    ("ApiVersionsResponse", "error_code"): (
        0,
        "kafka-python's ApiVersionsResponse.decode reads any response with a non-zero error code "
        "as version 0 (the client-side fallback of KIP-511), whatever version it was asked for, "
        "so with another code a v1+ body would not be read as what it is"),
}


# --- kafka-python's classes ---------------------------------------------------------------------

def _kafka_python_classes() -> tuple[dict[int, type], dict[int, type]]:
    """kafka-python's primary (unversioned) ApiMessage classes: (requests, responses) by key."""
    requests: dict[int, type] = {}
    responses: dict[int, type] = {}
    seen: set[type] = set()
    stack = list(ApiMessage.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        # cls[version] makes "versioned" wrapper subclasses; only primary classes count.
        if cls in seen or cls._class_version is not None or "_json" not in vars(cls):
            continue
        seen.add(cls)
        table = requests if cls.is_request() else responses
        assert cls.API_KEY not in table, f"two kafka-python classes for API {cls.API_KEY}: " \
            f"{table[cls.API_KEY].__name__}, {cls.__name__}"
        table[cls.API_KEY] = cls
    return requests, responses


KP_REQUESTS, KP_RESPONSES = _kafka_python_classes()

#: kafka-python's embedded formats (ApiData) with ours of the same name.
KP_EMBEDDED = {cls.__name__: cls for cls in (ConsumerProtocolSubscription,
                                             ConsumerProtocolAssignment)}


def kp_class(api_key: int, direction: str) -> type:
    return (KP_REQUESTS if direction == REQUEST else KP_RESPONSES)[api_key]


def ours_message(api_key: int, direction: str) -> Message:
    spec = APIS[api_key]
    return spec.request if direction == REQUEST else spec.response


def _kp_versions(cls) -> range:
    # valid_versions is the JSON's validVersions; kafka-python lowers only its struct's minimum
    # to 0 (letting the broker's ApiVersions answer decide), so this is the range it defines.
    lo, hi = cls.valid_versions
    return range(lo, hi + 1)


def _all_cases() -> list[tuple[int, int, str]]:
    cases = []
    for direction, table in ((REQUEST, KP_REQUESTS), (RESPONSE, KP_RESPONSES)):
        for api_key, cls in table.items():
            if api_key not in APIS:
                continue
            ours = ours_message(api_key, direction)
            cases += [(api_key, v, direction) for v in _kp_versions(cls) if v in ours.valid]
    return sorted(cases, key=lambda c: (c[0], c[2], c[1]))


ALL_CASES = _all_cases()
CASES = [c for c in ALL_CASES if c not in LAYOUT_DIFFERENCES and c not in KAFKA_PYTHON_BUGS]

EMBEDDED_CASES = [(name, v) for name, cls in KP_EMBEDDED.items() for v in _kp_versions(cls)
                  if v in EMBEDDED[name].valid]


def case_id(case: tuple[int, int, str]) -> str:
    api_key, version, direction = case
    return f"{APIS[api_key].name}-v{version}-{direction}"


def _params(cases, direction: str | None = None) -> list:
    return [pytest.param(*c, id=case_id(c)) for c in cases if direction in (None, c[2])]


@dataclass(frozen=True, eq=False)
class Pair:
    """One message as both implementations define it."""

    ours: Message
    kp: type

    def __eq__(self, other) -> bool:
        return isinstance(other, Pair) and (self.ours.name, self.kp) == (other.ours.name, other.kp)

    def __hash__(self) -> int:
        return hash((self.ours.name, self.kp))

    @property
    def our_cls(self) -> type[Struct]:
        return message_class(self.ours)


def api_pair(api_key: int, direction: str) -> Pair:
    return Pair(ours_message(api_key, direction), kp_class(api_key, direction))


def embedded_pair(name: str) -> Pair:
    return Pair(EMBEDDED[name], KP_EMBEDDED[name])


@functools.cache
def raw_json(name: str) -> dict:
    """kafka-python's JSON spec for a class, unpatched (json_patch works on its own copy)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return load_json(name)


# --- matching kafka-python's fields with ours ---------------------------------------------------

@dataclass(frozen=True)
class Node:
    """One field both implementations define: our Field and kafka-python's, and for struct
    fields our struct class and the matched fields inside."""

    ours: Field
    kp: Any
    children: tuple["Node", ...]
    struct_cls: type | None
    bitfield: bool


def _our_name(message: str | None, raw: dict) -> str:
    """Our (snake-cased) name for a field of kafka-python's JSON; ``message`` names the message
    for its top-level fields (see RENAMED_FIELDS), None inside structs."""
    renamed = RENAMED_FIELDS.get((message, raw["name"]))
    return snake_case(renamed[0] if renamed else raw["name"])


def _match(our_fields, owner: type, kp_fields, raw_fields,
           message: str | None = None) -> tuple[Node, ...]:
    """Pair fields by Kafka's JSON name; ``raw_fields`` is the unpatched JSON, in the same order
    as ``kp_fields``."""
    ours_by_name = {f.name: f for f in our_fields}
    nodes = []
    for kp_field, raw in zip(kp_fields or (), raw_fields, strict=True):
        ours = ours_by_name.get(_our_name(message, raw))
        if ours is None:
            continue  # only in versions we do not define (the layout check covers the rest)
        struct_cls = children = None
        if ours.is_struct:
            struct_cls = owner._struct_classes[ours.element_type]
            inner = kp_field.array_of if kp_field.is_struct_array() else kp_field
            children = _match(ours.fields, struct_cls, inner._fields, raw["fields"])
        nodes.append(Node(ours, kp_field, children or (), struct_cls,
                          getattr(kp_field, "_type", None) is BitField))
    return tuple(nodes)


@functools.cache
def matched_fields(pair: Pair) -> tuple[Node, ...]:
    return _match(pair.ours.fields, pair.our_cls, pair.kp._struct._fields,
                  raw_json(pair.kp.__name__)["fields"], pair.kp.__name__)


# --- wire layouts, from each side's definitions ----------------------------------------------

def _our_layout(fields, version: int) -> list:
    out = []
    for f in fields:
        if not f.present(version):
            continue
        kind = ("[]" if f.is_array else "") + ("struct" if f.is_struct else f.element_type)
        out.append((f.name, kind.replace("records", "bytes"), f.is_nullable(version),
                    f.tag if f.is_tagged(version) else None,
                    _our_layout(f.fields, version) if f.is_struct else None))
    return out


def _kp_layout(kp_fields, raw_fields, version: int, message: str | None = None) -> list:
    out = []
    for f, raw in zip(kp_fields or (), raw_fields, strict=True):
        if not f.for_version_q(version):
            continue
        sub = None
        if f.is_struct_array():
            kind, sub = "[]struct", _kp_layout(f.array_of._fields, raw["fields"], version)
        elif f.is_struct():
            kind, sub = "struct", _kp_layout(f._fields, raw["fields"], version)
        elif f.is_array():
            kind = "[]" + f.array_of.type_str
        else:
            kind = "int32" if f.type_str == "bitfield" else f.type_str
        out.append((_our_name(message, raw), kind.replace("records", "bytes"),
                    f.nullable_for_version_q(version),
                    f.tag if f.tagged_field_q(version) else None, sub))
    return out


def layouts(pair: Pair, version: int) -> tuple[tuple, tuple]:
    """(ours, kafka-python's): flexibility and, per field, name, type, nullability and tag."""
    return ((pair.ours.is_flexible(version), _our_layout(pair.ours.fields, version)),
            (pair.kp.flexible_version_q(version),
             _kp_layout(pair.kp._struct._fields, raw_json(pair.kp.__name__)["fields"], version,
                        pair.kp.__name__)))


# --- converters ------------------------------------------------------------------------------

_INT32 = struct.Struct(">i")
_UINT32 = struct.Struct(">I")


def _bits_to_int32(bits) -> int:
    return _INT32.unpack(_UINT32.pack(BitField.to_32_bit_field({31} if bits is None else bits)))[0]


def _int32_to_bits(value: int) -> set[int]:
    return BitField.from_32_bit_field(value & 0xFFFFFFFF)


def to_kafka_python(pair: Pair, version: int, obj) -> Any:
    """An instance of kafka-python's class with the values of our ``obj``."""
    return _to_kp(matched_fields(pair), obj, version, pair.kp)


def _to_kp(nodes, obj, version: int, data_class) -> Any:
    values = {n.kp.name: _value_to_kp(n, getattr(obj, n.ours.name), version)
              for n in nodes if n.ours.present(version)}
    return data_class(version=version, **values)


def _value_to_kp(n: Node, value, version: int) -> Any:
    f = n.ours
    if value is None:
        return None
    if f.is_struct:
        if f.is_array:
            return [_to_kp(n.children, item, version, n.kp.data_class) for item in value]
        if f.is_tagged(version) and not f.default_is_null and value == n.struct_cls():
            return None  # absent, in kafka-python's terms
        return _to_kp(n.children, value, version, n.kp.data_class)
    if f.is_array:
        return [_scalar_to_kp(n, item) for item in value]
    return _scalar_to_kp(n, value)


def _scalar_to_kp(n: Node, value) -> Any:
    if n.bitfield:
        return _int32_to_bits(value)
    if n.ours.element_type == "uuid" and value == ZERO_UUID:
        return None
    return value


def ours_plain(nodes, obj, version: int) -> dict:
    """The fields of our ``obj`` present in ``version``, as comparable plain data."""
    return {n.ours.name: _our_value_plain(n, getattr(obj, n.ours.name), version)
            for n in nodes if n.ours.present(version)}


def _our_value_plain(n: Node, value, version: int) -> Any:
    f = n.ours
    if value is None:
        return None
    if f.is_struct:
        if f.is_array:
            return [ours_plain(n.children, item, version) for item in value]
        return ours_plain(n.children, value, version)
    if f.is_array:
        return [_scalar_plain(f, item) for item in value]
    return _scalar_plain(f, value)


def _scalar_plain(f: Field, value) -> Any:
    if f.element_type in ("bytes", "records"):
        return bytes(value)
    return value


def kp_plain(nodes, obj, version: int) -> dict:
    """The same plain data, read from a kafka-python object."""
    return {n.ours.name: _kp_value_plain(n, getattr(obj, n.kp.name), version)
            for n in nodes if n.ours.present(version)}


def _kp_value_plain(n: Node, value, version: int) -> Any:
    f = n.ours
    if n.bitfield and not f.is_array:
        return _bits_to_int32(value)  # None stands for {31}
    if value is None:
        if f.is_struct and f.is_tagged(version) and not f.is_array and not f.default_is_null:
            return ours_plain(n.children, n.struct_cls(), version)  # absent: the default
        if f.element_type == "uuid" and not f.is_array:
            return ZERO_UUID
        return None
    if f.is_struct:
        if f.is_array:
            return [kp_plain(n.children, item, version) for item in value]
        return kp_plain(n.children, value, version)
    if f.is_array:
        return [_kp_scalar_plain(n, item) for item in value]
    return _kp_scalar_plain(n, value)


def _kp_scalar_plain(n: Node, value) -> Any:
    if n.bitfield:
        return _bits_to_int32(value)
    if n.ours.element_type == "uuid" and value is None:
        return ZERO_UUID
    return _scalar_plain(n.ours, value)


def our_unknown_tags(obj, path: str = "") -> list[str]:
    found = [f"{path or '<top>'}: {obj._unknown_tags!r}"] if obj._unknown_tags else []
    for name in obj._field_names:
        value = getattr(obj, name)
        for i, item in enumerate(value if isinstance(value, list) else [value]):
            if isinstance(item, Struct):
                found += our_unknown_tags(item, f"{path}.{name}[{i}]")
    return found


def kp_unknown_tags(obj, path: str = "") -> list[str]:
    found = [f"{path or '<top>'}: {obj.unknown_tags!r}"] if obj.unknown_tags else []
    for name in obj._struct.fields:
        value = getattr(obj, name, None)
        for i, item in enumerate(value if isinstance(value, list) else [value]):
            if hasattr(item, "_struct") and hasattr(item, "unknown_tags"):
                found += kp_unknown_tags(item, f"{path}.{name}[{i}]")
    return found


def differences(expected, actual, path: str = "") -> list[str]:
    """Where two plain values differ, as readable paths."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        out = []
        for key in sorted(expected.keys() | actual.keys()):
            if key not in expected or key not in actual:
                out.append(f"{path}.{key}: only on one side")
            else:
                out += differences(expected[key], actual[key], f"{path}.{key}")
        return out
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [f"{path}: {len(expected)} elements != {len(actual)}"]
        out = []
        for i, (a, b) in enumerate(zip(expected, actual)):
            out += differences(a, b, f"{path}[{i}]")
        return out
    if type(expected) is not type(actual) or expected != actual:
        return [f"{path or '<top>'}: {expected!r} ({type(expected).__name__}) != "
                f"{actual!r} ({type(actual).__name__})"]
    return []


def bytes_diff(theirs: bytes, ours: bytes) -> str:
    """Where two encodings part, with some bytes of context."""
    at = next((i for i, (a, b) in enumerate(zip(theirs, ours)) if a != b),
              min(len(theirs), len(ours)))
    lo = max(0, at - 24)
    return (f"lengths {len(theirs)} (kafka-python) and {len(ours)} (ours), first difference at "
            f"offset {at}\n  kafka-python [{lo}:]: {theirs[lo:at + 40].hex(' ')}"
            f"\n  ours         [{lo}:]: {ours[lo:at + 40].hex(' ')}")


# --- sample values ---------------------------------------------------------------------------

_INT_RANGES = {
    "int8": (-(1 << 7), (1 << 7) - 1), "int16": (-(1 << 15), (1 << 15) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1),
    "uint16": (0, (1 << 16) - 1), "uint32": (0, (1 << 32) - 1),
}

_WORDS = ("tópico", "grüße", "日本語", "ünïcødé", "Ελληνικά", "emoji-🦄", "naïve", "кафка")


class _Filler:
    """Deterministic samples.  ``rich``: every field a non-default value, arrays of two, nullable
    fields set.  Not ``rich``: nullable fields None, arrays of one, some strings empty.  ``long``:
    strings, bytes and arrays of numbers or strings past 127 bytes or elements, so that compact
    lengths (and the sizes of tagged fields holding them) take multi-byte varints."""

    def __init__(self, message: Message, version: int, rich: bool, seed: int,
                 long: bool = False):
        self.message = message
        self.version = version
        self.rich = rich
        self.long = long
        self.rng = random.Random(seed)
        self.counter = 0

    def struct(self, fields, cls, path: str = ""):
        return cls(**{f.name: self.field(f, cls, path + f.name)
                      for f in fields if f.present(self.version)})

    def field(self, f: Field, owner, path: str):
        pinned = SAMPLE_CONSTRAINTS.get((self.message.name, path))
        if pinned is not None:
            return pinned[0]
        if f.is_nullable(self.version) and not self.rich:
            return None
        if f.is_array:
            count = 2 if self.rich else 1
            if self.long and not f.is_struct:
                count = 130
            return [self.element(f, owner, path) for _ in range(count)]
        return self.element(f, owner, path)

    def element(self, f: Field, owner, path: str):
        if f.is_struct:
            return self.struct(f.fields, owner._struct_classes[f.element_type], path + ".")
        self.counter += 1
        kind = f.element_type
        default = None if f.is_array else f.default
        if kind == "bool":
            return (not default) if self.rich else bool(self.counter % 2)
        if kind in _INT_RANGES:
            lo, hi = _INT_RANGES[kind]
            choices = (lo, hi, -1 if lo < 0 else 1, self.rng.randint(lo, hi), min(self.counter, hi))
            value = choices[self.counter % len(choices)]
            return value if value != default else (hi if value != hi else lo)
        if kind == "float64":
            value = self.rng.choice((-1.5e300, 3.25, float("inf"), self.rng.uniform(-1e9, 1e9)))
            return value if value != default else 7.5
        if kind == "string":
            if not self.rich and self.counter % 3 == 0:
                return ""
            word = f"{_WORDS[self.counter % len(_WORDS)]}-{self.counter}"
            return word * (150 // len(word) + 1) if self.long else word
        if kind in ("bytes", "records"):
            return self.rng.randbytes(self.rng.randint(200, 300) if self.long
                                      else self.rng.randint(1, 9))
        if kind == "uuid":
            return uuid.UUID(int=self.rng.getrandbits(128) | 1)
        raise AssertionError(f"no sample for {kind}")


def deterministic_samples(message: Message, version: int) -> list:
    cls = message_class(message)
    return [_Filler(message, version, rich, seed, long).struct(message.fields, cls)
            for rich, seed, long in ((True, 1, False), (False, 2, False), (True, 3, True))]


_TEXT = st.text(st.characters(codec="utf-8"), max_size=6)  # no lone surrogates


def _scalar_strategy(kind: str) -> st.SearchStrategy:
    if kind == "bool":
        return st.booleans()
    if kind in _INT_RANGES:
        return st.integers(*_INT_RANGES[kind])
    if kind == "float64":
        return st.floats(allow_nan=False)
    if kind == "string":
        return _TEXT
    if kind in ("bytes", "records"):
        return st.binary(max_size=8)
    if kind == "uuid":
        return st.just(ZERO_UUID) | st.uuids()
    raise AssertionError(f"no strategy for {kind}")


def _struct_strategy(message: Message, version: int, fields, cls, path="") -> st.SearchStrategy:
    parts = {}
    for f in fields:
        if not f.present(version):
            continue
        pinned = SAMPLE_CONSTRAINTS.get((message.name, path + f.name))
        if pinned is not None:
            parts[f.name] = st.just(pinned[0])
            continue
        if f.is_struct:
            elem = _struct_strategy(message, version, f.fields,
                                    cls._struct_classes[f.element_type], f"{path}{f.name}.")
        else:
            elem = _scalar_strategy(f.element_type)
        s = st.lists(elem, max_size=2) if f.is_array else elem
        parts[f.name] = st.none() | s if f.is_nullable(version) else s
    return st.fixed_dictionaries(parts).map(lambda values: cls(**values))


_STRATEGIES: dict[tuple[str, int], st.SearchStrategy] = {}


def sample_strategy(message: Message, version: int) -> st.SearchStrategy:
    key = (message.name, version)
    if key not in _STRATEGIES:
        _STRATEGIES[key] = _struct_strategy(message, version, message.fields,
                                            message_class(message))
    return _STRATEGIES[key]


# --- the checks ------------------------------------------------------------------------------

def cross_check(pair: Pair, version: int, sample, where: str) -> None:
    """Encode ``sample`` with both implementations and decode each one's bytes with the other."""
    codec = wire.message_struct(pair.ours.api_key, version, pair.ours.kind)
    nodes = matched_fields(pair)
    expected = ours_plain(nodes, sample, version)

    # (a) kafka-python encodes; we decode, and re-encode the same bytes.
    kp_bytes = bytes(to_kafka_python(pair, version, sample).encode(version=version))
    decoded = codec.decode_exact(kp_bytes)
    diff = differences(expected, ours_plain(nodes, decoded, version))
    assert not diff, f"{where}: our decoding of kafka-python's bytes differs:\n  " + \
        "\n  ".join(diff) + f"\nbytes: {kp_bytes.hex(' ')}"
    assert not our_unknown_tags(decoded), f"{where}: we saw unknown tags in kafka-python's " \
        f"bytes: {our_unknown_tags(decoded)}"
    reencoded = bytes(codec.encode(decoded))
    assert reencoded == kp_bytes, f"{where}: re-encoding what we decoded gives other bytes: " + \
        bytes_diff(kp_bytes, reencoded)

    # (b) we encode the same bytes; kafka-python decodes them (and re-encodes them).
    our_bytes = bytes(codec.encode(sample))
    assert our_bytes == kp_bytes, f"{where}: the encodings differ: " + \
        bytes_diff(kp_bytes, our_bytes)
    kp_decoded = pair.kp.decode(our_bytes, version=version)
    diff = differences(expected, kp_plain(nodes, kp_decoded, version))
    assert not diff, f"{where}: kafka-python's decoding of our bytes differs:\n  " + \
        "\n  ".join(diff) + f"\nbytes: {our_bytes.hex(' ')}"
    assert not kp_unknown_tags(kp_decoded), f"{where}: kafka-python saw unknown tags in our " \
        f"bytes: {kp_unknown_tags(kp_decoded)}"
    kp_decoded._header = None  # KAFKA_PYTHON_WORKAROUNDS["decoded messages have no _header"]
    kp_again = bytes(kp_decoded.encode(version=version))
    assert kp_again == our_bytes, f"{where}: kafka-python re-encodes our bytes differently: " + \
        bytes_diff(kp_again, our_bytes)


def test_kafka_python_registry() -> None:
    """Every kafka-python request class has its response class, both named for Kafka's API,
    and the response classes are those kafka-python's registry resolves responses with."""
    assert KP_REQUESTS.keys() == KP_RESPONSES.keys()
    registry = ResponseClassRegistry._response_class_registry
    # A versioned class (cls[version], which kafka-python's own client makes when it reads a
    # response) registers itself in place of its primary class; cls[None] is the primary.
    assert {key: cls[None].__name__ for key, cls in registry.items()} == \
        {key: cls.__name__ for key, cls in KP_RESPONSES.items()}
    for api_key, cls in KP_REQUESTS.items():
        assert cls.__name__ == f"{ApiKey(api_key).name}Request"
        assert KP_RESPONSES[api_key].__name__ == f"{ApiKey(api_key).name}Response"
        assert cls.valid_versions == KP_RESPONSES[api_key].valid_versions
        if api_key in APIS:
            assert APIS[api_key].name == ApiKey(api_key).name
    assert len(KP_REQUESTS) >= 52


def test_kafka_python_versions_are_all_covered() -> None:
    """Every (api, version, direction) kafka-python defines is one we define too, or listed."""
    missing = {}
    for direction, table in ((REQUEST, KP_REQUESTS), (RESPONSE, KP_RESPONSES)):
        for api_key, cls in table.items():
            for version in _kp_versions(cls):
                if api_key not in APIS or version not in ours_message(api_key, direction).valid:
                    missing[(api_key, direction, version)] = cls.__name__
    assert missing.keys() == KAFKA_PYTHON_ONLY.keys(), missing


def test_enough_cases_are_covered() -> None:
    assert len(CASES) >= MIN_CASES, f"only {len(CASES)} cross-checked cases"
    assert set(LAYOUT_DIFFERENCES) <= set(ALL_CASES)
    assert set(KAFKA_PYTHON_BUGS) <= set(ALL_CASES)
    assert len(EMBEDDED_CASES) == 8


@pytest.mark.parametrize("kp_message, kp_name", sorted(RENAMED_FIELDS))
def test_renamed_fields_are_still_renamed(kp_message: str, kp_name: str) -> None:
    """kafka-python's JSON still has the old name and ours the new one, not the old."""
    ours_name = snake_case(RENAMED_FIELDS[(kp_message, kp_name)][0])
    cls = next(c for c in (*KP_REQUESTS.values(), *KP_RESPONSES.values())
               if c.__name__ == kp_message)
    assert kp_name in [raw["name"] for raw in raw_json(kp_message)["fields"]]
    ours = {f.name for f in ours_message(cls.API_KEY, REQUEST if cls.is_request() else
                                         RESPONSE).fields}
    assert ours_name in ours and snake_case(kp_name) not in ours


@pytest.mark.parametrize("api_key, version, direction", _params(ALL_CASES))
def test_wire_layouts_agree(api_key: int, version: int, direction: str) -> None:
    """Both definitions give the same layout; a listed difference must still be there."""
    ours, theirs = layouts(api_pair(api_key, direction), version)
    if (api_key, version, direction) in LAYOUT_DIFFERENCES:
        assert ours != theirs, "listed in LAYOUT_DIFFERENCES but the layouts now agree"
    else:
        assert ours == theirs


@pytest.mark.parametrize("api_key, version, direction", _params(CASES))
def test_samples_cover_every_field(api_key: int, version: int, direction: str) -> None:
    """The rich sample gives every field a value other than its default (so every tagged field
    is written), nullable fields a value and arrays two elements; the sparse one has nulls."""
    message = ours_message(api_key, direction)
    rich, sparse, _ = deterministic_samples(message, version)

    def walk(obj, fields, path=""):
        for f in fields:
            if not f.present(version) or (message.name, path + f.name) in SAMPLE_CONSTRAINTS:
                continue
            value = getattr(obj, f.name)
            assert value is not None, path + f.name
            items = value if f.is_array else [value]
            assert not f.is_array or len(value) == 2, path + f.name
            for item in items:
                if f.is_struct:
                    walk(item, f.fields, f"{path}{f.name}.")
                elif not f.is_array:
                    assert item != f.default_value(), path + f.name

    walk(rich, message.fields)
    nullable = [f for f in message.fields if f.present(version) and f.is_nullable(version)]
    assert all(getattr(sparse, f.name) is None for f in nullable)


@pytest.mark.parametrize("api_key, version, direction", _params(CASES))
def test_cross_encode_decode(api_key: int, version: int, direction: str) -> None:
    pair = api_pair(api_key, direction)
    for i, sample in enumerate(deterministic_samples(pair.ours, version)):
        cross_check(pair, version, sample, f"{case_id((api_key, version, direction))} sample {i}")


@pytest.mark.parametrize("api_key, version, direction", _params(CASES))
@settings(max_examples=6, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_cross_encode_decode_generated(api_key: int, version: int, direction: str,
                                       data: st.DataObject) -> None:
    pair = api_pair(api_key, direction)
    sample = data.draw(sample_strategy(pair.ours, version), label="sample")
    cross_check(pair, version, sample, case_id((api_key, version, direction)))


_FRAMES = ((-7, "kafka-python-ünïcødé"), (0, None), (2**31 - 1, ""), (123456, "c" * 300))


def _kp_request(api_key: int, version: int, correlation_id: int, client_id: str | None):
    """kafka-python's client side: (its KafkaProtocol with the request in flight, the request
    frame it sends, the request in our terms)."""
    pair = api_pair(api_key, REQUEST)
    sample = deterministic_samples(pair.ours, version)[0]
    request = to_kafka_python(pair, version, sample)
    assert request.expect_response()  # (Produce with acks=0 expects none)
    protocol = KafkaProtocol(client_id=client_id)
    assert protocol.send_request(request, correlation_id=correlation_id) == correlation_id
    return protocol, bytes(protocol.send_bytes()), sample


@pytest.mark.parametrize("api_key, version, direction", _params(CASES, REQUEST))
def test_request_framing(api_key: int, version: int, direction: str) -> None:
    """The request frame kafka-python's client sends (size, header v1/v2, body) decodes with
    ours, and is the frame we encode."""
    nodes = matched_fields(api_pair(api_key, direction))
    flexible = ours_message(api_key, REQUEST).is_flexible(version)
    assert wire.request_header_version(api_key, version) == (2 if flexible else 1)
    for correlation_id, client_id in _FRAMES:
        _, frame, sample = _kp_request(api_key, version, correlation_id, client_id)
        assert struct.unpack_from(">i", frame)[0] == len(frame) - 4
        request = wire.decode_request(frame[4:])
        assert (request.api_key, request.api_version, request.header.correlation_id,
                request.header.client_id) == (api_key, version, correlation_id, client_id)
        assert request.header.unknown_tags is None
        diff = differences(ours_plain(nodes, sample, version),
                           ours_plain(nodes, request.body, version))
        assert not diff, diff
        ours = wire.encode_request(api_key, version, correlation_id, client_id, sample)
        assert ours == frame, bytes_diff(frame, ours)


@pytest.mark.parametrize("api_key, version, direction", _params(CASES, RESPONSE))
def test_response_framing(api_key: int, version: int, direction: str) -> None:
    """Our response frame (size, header v0/v1, body) is the one kafka-python's broker-side
    encoding gives, and kafka-python's client reads it as the answer to its request."""
    pair = api_pair(api_key, direction)
    sample = deterministic_samples(pair.ours, version)[0]
    nodes = matched_fields(pair)
    expected = ours_plain(nodes, sample, version)
    # header v1 (a tag section after the correlation id) for flexible versions, except that
    # ApiVersions always answers with v0
    header_version = 1 if pair.ours.is_flexible(version) and api_key != 18 else 0
    assert wire.response_header_version(api_key, version) == header_version
    body = bytes(wire.message_struct(api_key, version, RESPONSE).encode(sample))
    for correlation_id, client_id in _FRAMES:
        frame = wire.encode_response(api_key, version, correlation_id, sample)
        assert frame == struct.pack(">ii", len(frame) - 4, correlation_id) + \
            (b"\x00" if header_version else b"") + body
        kp_value = to_kafka_python(pair, version, sample)
        kp_value.with_header(correlation_id=correlation_id)
        kp_frame = bytes(kp_value.encode(header=True, framed=True))
        assert kp_frame == frame, bytes_diff(kp_frame, frame)
        # kafka-python's client: it sent the request, and receives our frame in two pieces.
        protocol, _, _ = _kp_request(api_key, version, correlation_id, client_id)
        cut = len(frame) // 2 + 1
        assert protocol.receive_bytes(frame[:cut]) == []
        ((got_id, response),) = protocol.receive_bytes(frame[cut:])
        assert got_id == correlation_id
        assert type(response) is pair.kp
        diff = differences(expected, kp_plain(nodes, response, version))
        assert not diff, diff
        got_id, got = wire.decode_response(api_key, version, frame[4:])
        assert got_id == correlation_id
        assert not differences(expected, ours_plain(nodes, got, version))


@pytest.mark.parametrize("name, version", [pytest.param(n, v, id=f"{n}-v{v}")
                                           for n, v in EMBEDDED_CASES])
def test_embedded_formats(name: str, version: int) -> None:
    """The consumer protocol (JoinGroup/SyncGroup metadata and assignments) with its int16
    version prefix, through kafka-python's ApiData classes."""
    pair = embedded_pair(name)
    assert layouts(pair, version)[0] == layouts(pair, version)[1]
    nodes = matched_fields(pair)
    for sample in deterministic_samples(pair.ours, version):
        expected = ours_plain(nodes, sample, version)
        kp_bytes = bytes(to_kafka_python(pair, version, sample).encode())
        ours = wire.encode_embedded(name, version, sample)
        assert ours == kp_bytes, bytes_diff(kp_bytes, ours)
        got_version, decoded = wire.decode_embedded(name, kp_bytes, exact=True)
        assert got_version == version
        assert not differences(expected, ours_plain(nodes, decoded, version))
        kp_decoded = pair.kp.decode(ours)
        assert kp_decoded.version == version
        assert not differences(expected, kp_plain(nodes, kp_decoded, version))
