"""Broker settings, under Kafka's own config names.

``MockCluster`` and ``mockbroker serve`` take them with dots as underscores
(``group_initial_rebalance_delay_ms``); an unknown name or a bad value is a ``ValueError`` that
names the setting.  Defaults are Kafka's, except ``group.initial.rebalance.delay.ms``, which is 0
so tests are fast.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True, slots=True)
class Setting:
    name: str  # Kafka's dotted name
    type: type
    default: Any
    check: Callable[[Any], bool] = lambda value: True
    requirement: str = ""

    @property
    def python_name(self) -> str:
        return self.name.replace(".", "_")


def _at_least(n: int):
    return (lambda value: value >= n), f"at least {n}"


def _s(name: str, type_: type, default: Any, rule=None) -> Setting:
    check, requirement = rule if rule else ((lambda value: True), "")
    return Setting(name, type_, default, check, requirement)


SETTINGS: dict[str, Setting] = {s.python_name: s for s in (
    _s("auto.create.topics.enable", bool, True),
    _s("num.partitions", int, 1, _at_least(1)),
    _s("default.replication.factor", int, 1, _at_least(1)),
    _s("offsets.topic.num.partitions", int, 50, _at_least(1)),
    _s("offsets.topic.replication.factor", int, 3, _at_least(1)),
    _s("offsets.retention.minutes", int, 10080, _at_least(1)),
    _s("offsets.retention.check.interval.ms", int, 600000, _at_least(1)),
    _s("group.initial.rebalance.delay.ms", int, 0, _at_least(0)),
    _s("group.min.session.timeout.ms", int, 6000, _at_least(0)),
    _s("group.max.session.timeout.ms", int, 1800000, _at_least(0)),
    _s("group.max.size", int, 2147483647, _at_least(1)),
    _s("message.max.bytes", int, 1048588, _at_least(0)),
    _s("socket.request.max.bytes", int, 104857600, _at_least(1)),
    _s("log.message.timestamp.type", str, "CreateTime",
       ((lambda v: v in ("CreateTime", "LogAppendTime")), "CreateTime or LogAppendTime")),
    _s("delete.topic.enable", bool, True),
    _s("broker.rack", str, ""),
    _s("cluster.id", str, "mockbroker-cluster-0000"),
)}


def resolve_settings(values: dict[str, Any]) -> dict[str, Any]:
    """Kafka settings from Python names, with defaults filled in and every value checked."""
    resolved = {name: s.default for name, s in SETTINGS.items()}
    for key, value in values.items():
        setting = SETTINGS.get(key.replace(".", "_").replace("-", "_"))
        if setting is None:
            raise ValueError(f"unknown setting {key!r}")
        resolved[setting.python_name] = coerce(setting, value)
    if resolved["group_min_session_timeout_ms"] > resolved["group_max_session_timeout_ms"]:
        raise ValueError("group_min_session_timeout_ms is larger than "
                         "group_max_session_timeout_ms")
    return resolved


def coerce(setting: Setting, value: Any) -> Any:
    """A setting's value from Python or from text (a flag or environment variable)."""
    name = setting.python_name
    if setting.type is bool:
        if isinstance(value, str):
            lowered = value.strip().lower()
            if lowered not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(f"{name}: expected true or false, got {value!r}")
            value = lowered in ("true", "1", "yes")
        elif not isinstance(value, bool):
            raise ValueError(f"{name}: expected a bool, got {value!r}")
    elif setting.type is int:
        if isinstance(value, bool):
            raise ValueError(f"{name}: expected an integer, got {value!r}")
        try:
            value = int(value)
        except (TypeError, ValueError):
            raise ValueError(f"{name}: expected an integer, got {value!r}") from None
    elif not isinstance(value, str):
        raise ValueError(f"{name}: expected a string, got {value!r}")
    if not setting.check(value):
        raise ValueError(f"{name}: must be {setting.requirement}, got {value!r}")
    return value
