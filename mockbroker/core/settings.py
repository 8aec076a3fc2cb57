"""The mock's settings: a view of the broker config definitions.

``MockCluster(**settings)``, ``mockbroker serve --flag`` and ``MOCKBROKER_*`` take the broker
configs marked as settings in :data:`mockbroker.core.config.broker.BROKER_CONFIG_KEYS`, under
Kafka's names with dots as underscores (``group_initial_rebalance_delay_ms``).  Their type,
default and rule are the config's own, except where the entry gives the mock a default of its
own (``group.initial.rebalance.delay.ms`` is 0 so tests are fast) or a rule Kafka's definition
lacks.  An unknown name or a bad value is a ``ValueError`` that names the setting.

:func:`resolve_settings` gives the dict the core reads (``settings["message_max_bytes"]``):
every setting under its python name, defaults filled in.
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct

from mockbroker.core.config.broker import SETTING_CONFIGS
from mockbroker.core.config.values import KAFKA_DEFAULT, ConfigKey, ConfigType, InvalidValue

#: the Python type a setting takes, by config type
_PYTHON_TYPES = {ConfigType.BOOLEAN: bool, ConfigType.STRING: str, ConfigType.INT: int,
                 ConfigType.SHORT: int, ConfigType.LONG: int, ConfigType.LIST: str,
                 ConfigType.PASSWORD: str}
#: settings Kafka 4 has dropped, with the name that replaced them
_RENAMED = {"delegation_token_master_key": "delegation_token_secret_key"}


class MockSetting(Struct, frozen=True):
    """One setting, as the broker config ``key`` defines it."""

    key: ConfigKey

    @property
    def name(self) -> str:  # Kafka's dotted name
        return self.key.name

    @property
    def python_name(self) -> str:
        return self.key.python_name

    @property
    def type(self) -> type:
        return _PYTHON_TYPES[self.key.type]

    @property
    def default(self) -> Any:
        default = self.key.setting.default
        return self.key.default if default is KAFKA_DEFAULT else default

    @property
    def validator(self) -> Any:
        return self.key.setting.validator or self.key.validator


#: Every setting, by python name, in the order of the broker config table.
SETTINGS: dict[str, MockSetting] = {
    key.python_name: MockSetting(key) for key in SETTING_CONFIGS.values()}


def resolve_settings(values: dict[str, Any]) -> dict[str, Any]:
    """Kafka settings from Python names, with defaults filled in and every value checked."""
    resolved = {name: s.default for name, s in SETTINGS.items()}
    for key, value in values.items():
        python_name = key.replace(".", "_").replace("-", "_")
        setting = SETTINGS.get(python_name)
        if setting is None:
            renamed = _RENAMED.get(python_name)
            raise ValueError(f"unknown setting {key!r}" + (
                f" (Kafka 4 calls it {renamed})" if renamed else ""))
        resolved[setting.python_name] = coerce(setting, value)
    if resolved["group_min_session_timeout_ms"] > resolved["group_max_session_timeout_ms"]:
        raise ValueError("group_min_session_timeout_ms is larger than "
                         "group_max_session_timeout_ms")
    return resolved


def coerce(setting: MockSetting, value: Any) -> Any:
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
    validator = setting.validator
    if validator is not None:
        try:
            validator.check(setting.name, value)
        except InvalidValue:
            raise ValueError(f"{name}: must be {validator.requirement}, got {value!r}") from None
    return value
