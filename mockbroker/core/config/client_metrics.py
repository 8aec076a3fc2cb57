"""Client metrics subscriptions (KIP-714): the CLIENT_METRICS config resource, its three configs
(``metrics``, ``interval.ms``, ``match``), Kafka 4.4's checks of them and what DescribeConfigs,
AlterConfigs and IncrementalAlterConfigs do to them.

A subscription is a named set of configs, kept in the broker config state
(:attr:`~mockbroker.core.config.broker.BrokerConfigs.client_metrics`) as the values it was
given, and exists while it has at least one: removing its last config removes it, as Kafka's
controller does.  What a client is subscribed to is worked out from them by
:func:`subscriptions` (the telemetry of :mod:`mockbroker.core.telemetry`).

Kafka's checks, in its order (ClientMetricsConfigs, behind the controller's validator): an empty
name (INVALID_REQUEST); a config it does not know (INVALID_REQUEST, the first in its hash map's
order); each value parsed in definition order, ``metrics``, ``interval.ms``, ``match``
(INVALID_CONFIG, ConfigDef's messages; a list loses its duplicates and may not hold an empty
item); an interval outside 100 ms to an hour (INVALID_REQUEST); then each match pattern, which
must be ``<attribute>=<regex>`` with a known attribute and a regex that compiles
(INVALID_CONFIG).  None of the three is a list for the incremental API: APPEND and SUBTRACT are
refused on every one, as Kafka's controller refuses them.
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping

from msgspec import Struct

from mockbroker.core.config.values import (
    I, LS, ConfigEntry, ConfigKey, ConfigSource, InvalidValue, java_trim, apply_ops,
)
from mockbroker.core.errors import ApiException
from mockbroker.core.javaorder import string_order
from wire import errors

METRICS, INTERVAL_MS, MATCH = "metrics", "interval.ms", "match"
#: what a ``metrics`` prefix list holding this subscribes to: every metric
ALL_METRICS = "*"
#: the push interval of a client no subscription sets one for (5 minutes)
DEFAULT_INTERVAL_MS = 300_000
MIN_INTERVAL_MS, MAX_INTERVAL_MS = 100, 3_600_000

#: the configs, in Kafka's definition order (the order values are parsed in)
CLIENT_METRICS_CONFIGS: dict[str, ConfigKey] = {key.name: key for key in (
    ConfigKey(METRICS, LS, [], None,
              "Prefixes of the metric names the matching clients send; * for every metric."),
    ConfigKey(INTERVAL_MS, I, DEFAULT_INTERVAL_MS, None,
              "How often the matching clients push their metrics, in milliseconds."),
    ConfigKey(MATCH, LS, [], None,
              "Which clients the subscription is for: attribute=regex pairs, all of which "
              "must match; none matches every client."),
)}
#: the order Kafka 4.4 lists a subscription's configs in
DESCRIBE_ORDER = (INTERVAL_MS, MATCH, METRICS)

#: what a match pattern may test, each a fact of the client instance
MATCH_ATTRIBUTES = ("client_instance_id", "client_id", "client_software_name",
                    "client_software_version", "client_source_address", "client_source_port")


class Subscription(Struct, frozen=True):
    """One subscription as telemetry uses it: its metric prefixes (without duplicates, in the
    order given), push interval, and attribute -> compiled regex the client must fully match."""

    name: str
    metrics: tuple[str, ...]
    interval_ms: int
    match: dict[str, re.Pattern]

    def matches(self, attributes: Mapping[str, str | None]) -> bool:
        """Whether a client with these attributes is subscribed (no pattern: every client);
        an attribute the client does not have matches no pattern."""
        for attribute, pattern in self.match.items():
            value = attributes.get(attribute)
            if value is None or pattern.fullmatch(value) is None:
                return False
        return True


def _parse_list(name: str, raw: str) -> list[str]:
    """A list config as ConfigDef parses it (duplicates dropped) and ValidList checks it."""
    items = list(dict.fromkeys(CLIENT_METRICS_CONFIGS[name].parse(raw)))
    if any(item == "" for item in items):
        raise ApiException(errors.INVALID_CONFIG,
                           f"Configuration '{name}' values must not be empty.")
    return items


def _parse(props: Mapping[str, str]) -> dict[str, object]:
    parsed: dict[str, object] = {}
    for name, key in CLIENT_METRICS_CONFIGS.items():
        if name not in props:
            parsed[name] = key.default
        elif key.type is LS:
            parsed[name] = _parse_list(name, props[name])
        else:
            try:
                parsed[name] = key.parse(props[name])
            except InvalidValue as exc:
                raise ApiException(errors.INVALID_CONFIG, str(exc)) from None
    return parsed


def _java_split_on_equals(text: str) -> list[str]:
    """``text.split("=")`` as Java splits: trailing empty strings are dropped."""
    if "=" not in text:
        return [text]
    parts = text.split("=")
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def match_patterns(patterns: Iterable[str]) -> dict[str, re.Pattern]:
    """attribute -> compiled regex of ``attribute=regex`` patterns (a later pattern on the same
    attribute wins); INVALID_CONFIG naming the first that is not one."""
    out: dict[str, re.Pattern] = {}
    for pattern in patterns:
        parts = _java_split_on_equals(pattern)
        illegal = ApiException(errors.INVALID_CONFIG,
                               f"Illegal client matching pattern: {pattern}")
        if len(parts) != 2 or java_trim(parts[0]) not in MATCH_ATTRIBUTES:
            raise illegal
        try:
            out[java_trim(parts[0])] = re.compile(java_trim(parts[1]))
        except re.error:
            raise illegal from None
    return out


def validate(name: str, props: Mapping[str, str]) -> dict[str, object]:
    """A subscription's complete set of configs, checked as Kafka checks them; returns them
    parsed (defaults for those not given).  Raises :class:`ApiException`."""
    if not name:
        raise ApiException(errors.INVALID_REQUEST, "Subscription name can't be empty")
    for config in string_order(props):
        if config not in CLIENT_METRICS_CONFIGS:
            raise ApiException(errors.INVALID_REQUEST,
                               f"Unknown client metrics configuration: {config}")
    parsed = _parse(props)
    interval = parsed[INTERVAL_MS]
    if INTERVAL_MS in props and not MIN_INTERVAL_MS <= interval <= MAX_INTERVAL_MS:
        raise ApiException(errors.INVALID_REQUEST,
                           f"Invalid value {interval} for {INTERVAL_MS}, interval must be "
                           f"between {MIN_INTERVAL_MS} and {MAX_INTERVAL_MS} (1 hour)")
    if MATCH in props:
        match_patterns(parsed[MATCH])
    return parsed


def subscription(name: str, props: Mapping[str, str]) -> Subscription:
    """A stored subscription, as telemetry matches clients against it."""
    parsed = validate(name, props)
    return Subscription(name, tuple(parsed[METRICS]), parsed[INTERVAL_MS],
                        match_patterns(parsed[MATCH]))


def subscriptions(state) -> list[Subscription]:
    """Every subscription of the broker config state ``state``, in the order Kafka's
    broker keeps them (a hash map of their names)."""
    stored = state.client_metrics
    return [subscription(name, stored[name]) for name in string_order(stored)]


def names(state) -> list[str]:
    """The subscriptions' names, as ListConfigResources lists them."""
    return string_order(state.client_metrics)


# -- DescribeConfigs ---------------------------------------------------------------------------

def describe(state, name: str, include_synonyms: bool, include_documentation: bool
             ) -> list[ConfigEntry]:
    """A subscription's configs, as DescribeConfigs reports them: each value set, else its
    default (a subscription that does not exist shows every default)."""
    if not name:
        raise ApiException(errors.INVALID_REQUEST,
                           "Client metrics subscription name must not be empty")
    props = state.client_metrics.get(name, {})
    parsed = _parse(props)
    out = []
    for config in DESCRIBE_ORDER:
        key = CLIENT_METRICS_CONFIGS[config]
        value = key.to_string(parsed[config])
        synonyms = [(config, value, ConfigSource.CLIENT_METRICS_CONFIG)] if config in props \
            else []
        out.append(ConfigEntry(
            config, value, synonyms[0][2] if synonyms else ConfigSource.DEFAULT_CONFIG, key.type,
            synonyms=synonyms if include_synonyms else [],
            documentation=key.doc if include_documentation else None))
    return out


# -- AlterConfigs and IncrementalAlterConfigs ----------------------------------------------------

def alter(state, name: str, new: dict[str, str], *, validate_only: bool) -> None:
    """Give a subscription exactly these configs (the legacy AlterConfigs)."""
    _store(state, name, dict(new), validate_only)


def incremental_alter(state, name: str, ops: Iterable[tuple[str, int, str | None]], *,
                      validate_only: bool) -> None:
    """Apply SET and DELETE to a subscription's configs, all or nothing."""
    _store(state, name, apply_ops(ops, dict(state.client_metrics.get(name, {}))),
           validate_only)


def _store(state, name: str, props: dict[str, str], validate_only: bool) -> None:
    validate(name, props)
    if validate_only or state.client_metrics.get(name, {}) == props:
        return  # nothing changes: Kafka writes no config record, its clients see no update
    if props:
        state.client_metrics[name] = props
    else:
        state.client_metrics.pop(name, None)
    state.client_metrics_version += 1
