"""Config values as Kafka's ConfigDef types, parses, checks and prints them.

Owns what every config table is built from: the protocol enums (:class:`ConfigType`,
:class:`ConfigSource`, :class:`ResourceType`, :class:`OpType`), Java's way of printing and
parsing values (``Double.toString``, ``String.trim``, list splitting), the validators
(:class:`Range`, :class:`OneOf`, ...), :class:`ConfigKey` (one config: name, type, default,
rule, and whether it is also a setting of the mock, :class:`Setting`), and :class:`ConfigEntry`
(one config as DescribeConfigs and CreateTopics report it).

Nothing here knows about topics, brokers or the cluster.
"""

from __future__ import annotations

import re
from enum import IntEnum
from math import copysign, inf, isnan
from typing import Any

from msgspec import Struct, field

from mockbroker.core.errors import ApiException
from wire import errors


class ConfigType(IntEnum):
    """``DescribeConfigsResponse.ConfigType``."""
    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class ConfigSource(IntEnum):
    """``DescribeConfigsResponse.ConfigSource``."""
    UNKNOWN = 0
    TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8


class ResourceType(IntEnum):
    """``ConfigResource.Type``."""
    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16
    GROUP = 32


def resource_type_name(resource_type: int) -> str:
    """How Kafka names a resource type in an error message (the number when it is unknown)."""
    try:
        return ResourceType(resource_type).name
    except ValueError:
        return str(resource_type)


class OpType(IntEnum):
    """``AlterConfigOp.OpType``."""
    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


def apply_ops(ops, props: dict[str, str], list_op=None) -> dict[str, str]:
    """``props`` after IncrementalAlterConfigs' operations, in order: SET and DELETE, and
    APPEND / SUBTRACT through ``list_op(config, op, value, props)``; without one (a resource
    none of whose configs is a list: groups, client metrics subscriptions) those are refused
    as Kafka refuses them.  An unknown operation fails the resource with
    UNKNOWN_SERVER_ERROR and no message, as Kafka's broker fails it."""
    for config, op, value in ops:
        if op == OpType.SET:
            props[config] = value
        elif op == OpType.DELETE:
            props.pop(config, None)
        elif op in (OpType.APPEND, OpType.SUBTRACT):
            if list_op is None:
                raise ApiException(errors.INVALID_CONFIG, f"Can't {OpType(op).name} to key "
                                   f"{config} because its type is not LIST.")
            props[config] = list_op(config, op, value, props)
        else:
            raise ApiException(errors.UNKNOWN_SERVER_ERROR)
    return props


#: Longest value the controller stores (a ConfigRecord value is a short-length string).
MAX_VALUE_LENGTH = 32767
LONG_MAX = (1 << 63) - 1
INT_MAX = (1 << 31) - 1
_BITS = {ConfigType.SHORT: 16, ConfigType.INT: 32, ConfigType.LONG: 64}


class InvalidValue(ValueError):
    """A value Kafka's ConfigDef would refuse; the message is worded as Kafka words it."""

    def __init__(self, name: str, value: Any, reason: str):
        super().__init__(f"Invalid value {_java_repr(value)} for configuration {name}: {reason}")


# -- values as Java prints them ----------------------------------------------------------------

def _java_double(x: float) -> str:
    """``Double.toString``: plain between 10^-3 and 10^7, computerized scientific otherwise."""
    if isnan(x):
        return "NaN"
    if x in (inf, -inf):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if copysign(1.0, x) < 0 else "0.0"
    # repr gives the shortest digits that read back as x, as Java's Double.toString does
    mantissa, _, exponent = repr(abs(x)).partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    text = digits.strip("0")
    # digits before the decimal point (negative: zeros between the point and the digits)
    point = len(whole) + int(exponent or 0) - (len(digits) - len(digits.lstrip("0")))
    prefix = "-" if x < 0 else ""
    if 1e-3 <= abs(x) < 1e7:
        if point <= 0:
            return f"{prefix}0.{'0' * -point}{text}"
        whole, frac = text[:point].ljust(point, "0"), text[point:]
        return f"{prefix}{whole}.{frac or '0'}"
    return f"{prefix}{text[0]}.{text[1:] or '0'}E{point - 1}"


def _java_repr(value: Any) -> str:
    """How Java's string concatenation prints a parsed config value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _java_double(value)
    if isinstance(value, list):
        return "[" + ", ".join(value) + "]"
    return str(value)


def java_trim(text: str) -> str:
    """``String.trim``: drops every character up to U+0020 at both ends."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


_INTEGER = re.compile(r"[+-]?[0-9]+\Z")
_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)[fFdD]?\Z")
_LIST_SEPARATOR = re.compile(r"\s*,\s*")


# -- validators ----------------------------------------------------------------------------------

class Range(Struct, frozen=True):
    """A number between ``lo`` and ``hi`` (either may be open), as ConfigDef's ``Range``."""

    lo: int | None = None
    hi: int | None = None

    def check(self, name: str, value: Any) -> None:
        if self.lo is not None and value < self.lo:
            raise InvalidValue(name, value, f"Value must be at least {self.lo}")
        if self.hi is not None and value > self.hi:
            raise InvalidValue(name, value, f"Value must be no more than {self.hi}")

    @property
    def requirement(self) -> str:
        """The rule in a few words, for a setting's error message."""
        if self.hi is None:
            return f"at least {self.lo}"
        if self.lo is None:
            return f"at most {self.hi}"
        return f"between {self.lo} and {self.hi}"


class OneOf(Struct, frozen=True):
    """A string (or each item of a list) among ``choices``, as ConfigDef's ``ValidString``."""

    choices: tuple[str, ...]

    def check(self, name: str, value: Any) -> None:
        items = value if isinstance(value, list) else [value]
        for item in items:
            if item not in self.choices:
                raise InvalidValue(name, item, "String must be one of: " + ", ".join(self.choices))

    @property
    def requirement(self) -> str:
        """The rule in a few words, for a setting's error message."""
        if len(self.choices) == 1:
            return self.choices[0]
        return ", ".join(self.choices[:-1]) + " or " + self.choices[-1]


class GzipLevel(Struct, frozen=True):
    """1 to 9, or -1 for zlib's default."""

    def check(self, name: str, value: Any) -> None:
        if value > 9 or (value < 1 and value != -1):
            raise InvalidValue(name, value, "Value must be between 1 and 9 or equal to -1")


class ThrottledReplicas(Struct, frozen=True):
    """``*`` or a list of ``partition:broker`` pairs."""

    def check(self, name: str, value: Any) -> None:
        items = [item.strip() for item in value]
        if "".join(items) == "*":
            return
        if not all(re.fullmatch(r"([0-9]+:[0-9]+)?", item) for item in items):
            raise InvalidValue(name, value, f"{name} must be '*' or a list of "
                                            "[partitionId]:[brokerId] pairs")


#: :attr:`Setting.default` when the mock's default is Kafka's.
KAFKA_DEFAULT: Any = object()


class Setting(Struct, frozen=True):
    """Marks a broker config as a setting of the mock as well: something ``MockCluster(...)``,
    ``mockbroker serve --flag`` and ``MOCKBROKER_*`` take (with dots as underscores).

    ``default`` is the mock's own default where it differs from Kafka's;
    ``validator`` a check of the mock's own where Kafka's definition has none; ``kafka`` is
    False for a setting that is not one of Kafka's broker configs (it is then never described
    nor altered as one)."""

    default: Any = KAFKA_DEFAULT
    validator: Any = None
    kafka: bool = True


class ConfigKey(Struct, frozen=True):
    """One config: Kafka's name, type and default (parsed; None for a null default)."""

    name: str
    type: ConfigType
    default: Any
    validator: Any = None
    #: None for a config Kafka documents nowhere (DescribeConfigs then sends none)
    doc: str | None = ""
    #: broker configs only: can be changed at runtime (Kafka's DynamicBrokerConfig)
    dynamic: bool = False
    #: broker configs only: dynamic per broker, never as a cluster-wide default
    per_broker: bool = False
    #: broker configs only: also a setting of the mock (see :class:`Setting`)
    setting: Setting | None = None

    def parse(self, raw: str) -> Any:
        """The value of ``raw`` as Kafka's ConfigDef parses and validates it."""
        trimmed = java_trim(raw)
        t = self.type
        if t is ConfigType.BOOLEAN:
            if trimmed.lower() not in ("true", "false"):
                raise InvalidValue(self.name, raw, "Expected value to be either true or false")
            value: Any = trimmed.lower() == "true"
        elif t in _BITS:
            bits = _BITS[t]
            value = int(trimmed) if _INTEGER.match(trimmed) else None
            if value is None or not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
                raise InvalidValue(self.name, raw, f"Not a number of type {t.name}")
        elif t is ConfigType.DOUBLE:
            if not _DOUBLE.match(trimmed):
                raise InvalidValue(self.name, raw, "Not a number of type DOUBLE")
            value = float(trimmed.rstrip("fFdD"))
        elif t is ConfigType.LIST:
            value = _LIST_SEPARATOR.split(trimmed) if trimmed else []
        else:
            value = trimmed
        if self.validator is not None:
            self.validator.check(self.name, value)
        return value

    def to_string(self, value: Any) -> str | None:
        """``ConfigDef.convertToString``."""
        if value is None:
            return None
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float):
            return _java_double(value)
        if isinstance(value, list):
            return ",".join(value)
        return str(value)

    def normalise(self, raw: str) -> str:
        return self.to_string(self.parse(raw))

    @property
    def default_string(self) -> str | None:
        return self.to_string(self.default)

    @property
    def python_name(self) -> str:
        """The name as a setting of the mock: dots as underscores."""
        return self.name.replace(".", "_")


#: Shorthands for the definition tables.
B, S, I, L, D, LS, SH = (ConfigType.BOOLEAN, ConfigType.STRING, ConfigType.INT, ConfigType.LONG,
                         ConfigType.DOUBLE, ConfigType.LIST, ConfigType.SHORT)


# -- results -----------------------------------------------------------------------------------

class ConfigEntry(Struct):
    """One config as DescribeConfigs (and CreateTopics v5+) report it."""

    name: str
    value: str | None
    source: ConfigSource
    type: ConfigType
    read_only: bool = False
    sensitive: bool = False
    synonyms: list[tuple[str, str | None, ConfigSource]] = field(default_factory=list)
    documentation: str | None = None

