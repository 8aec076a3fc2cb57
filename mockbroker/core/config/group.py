"""Group configs (DescribeConfigs and (Incremental)AlterConfigs on a GROUP resource): Kafka
4.4's definitions, the broker configs they fall back to and are bounded by, and the checks a
group's set of overrides must pass.

A group's overrides are kept per group id in the broker config state
(:attr:`~mockbroker.core.config.broker.BrokerConfigs.group_configs`), apart from the group
itself, so they outlive an empty or deleted group and may be set before the group exists, as in
Kafka (whose controller keeps them as config records).  A config without an override takes its
broker synonym's value (``consumer.session.timeout.ms`` from
``group.consumer.session.timeout.ms``); a few have no synonym and take their own default.

The checks follow Kafka's GroupConfig: names first, then every value parsed in definition
order (ConfigDef's messages), then the values against the broker's ``group.*`` bounds.
"""

from __future__ import annotations

import re
from typing import Any

from msgspec import Struct

from mockbroker.core.config.values import (
    B, I, LS, S, ConfigKey, ConfigSource, InvalidValue, OneOf, Range, Setting,
)
from mockbroker.core.errors import ApiException
from wire import errors

_key = ConfigKey
_DURATION = re.compile(r"P(?=\d|T\d)(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+([.,]\d{0,9})?S)?)?\Z",
                       re.IGNORECASE)


class ShareAutoOffsetReset(Struct, frozen=True):
    """earliest, latest or ``by_duration:`` and a non-negative ISO-8601 duration."""

    def check(self, name: str, value: Any) -> None:
        if value in ("earliest", "latest"):
            return
        if value.startswith("by_duration:") and _DURATION.match(value[len("by_duration:"):]):
            return
        raise InvalidValue(name, value, f"Invalid value `{value}` for configuration {name}. "
                           "The value must be either 'earliest', 'latest' or of the format "
                           "'by_duration:<PnDTnHnMn.nS>'.")


#: group coordinator configs that are also settings of the mock, with Kafka's defaults: what
#: the consumer and share protocols read, and the bounds of the groups' own configs (a test
#: that lowers a timeout lowers its bound too, as on Kafka)
_SETTINGS = frozenset(
    f"group.{kind}.{bound}{name}"
    for kind, names in (("consumer", ("session.timeout.ms", "heartbeat.interval.ms",
                                      "assignment.interval.ms")),
                        ("share", ("session.timeout.ms", "heartbeat.interval.ms",
                                   "assignment.interval.ms", "record.lock.duration.ms",
                                   "delivery.count.limit", "partition.max.record.locks")),
                        ("streams", ("session.timeout.ms", "heartbeat.interval.ms",
                                     "assignment.interval.ms")))
    for name in names for bound in ("", "min.", "max.")) | {
    "group.streams.num.standby.replicas", "group.streams.max.standby.replicas",
    "group.streams.initial.rebalance.delay.ms"}


def _broker(name: str, type_, default, doc: str, dynamic: bool = False) -> ConfigKey:
    return _key(name, type_, default, Range(0) if name in _SETTINGS else None, doc,
                dynamic=dynamic, **({"setting": Setting()} if name in _SETTINGS else {}))


#: The group coordinator's broker configs: the defaults and the bounds of the group configs.
GROUP_BROKER_KEYS: tuple[ConfigKey, ...] = tuple(
    _broker(name, type_, default, doc, dynamic) for name, type_, default, doc, dynamic in (
        ("group.consumer.session.timeout.ms", I, 45000, "Session timeout of consumer groups.",
         False),
        ("group.consumer.min.session.timeout.ms", I, 45000,
         "Shortest session timeout a consumer group may use.", False),
        ("group.consumer.max.session.timeout.ms", I, 60000,
         "Longest session timeout a consumer group may use.", False),
        ("group.consumer.heartbeat.interval.ms", I, 5000,
         "Heartbeat interval of consumer group members.", False),
        ("group.consumer.min.heartbeat.interval.ms", I, 5000,
         "Shortest heartbeat interval a consumer group may use.", False),
        ("group.consumer.max.heartbeat.interval.ms", I, 15000,
         "Longest heartbeat interval a consumer group may use.", False),
        ("group.consumer.assignment.interval.ms", I, 1000,
         "Time between assignment updates of a consumer group.", True),
        ("group.consumer.min.assignment.interval.ms", I, 0,
         "Shortest assignment interval a consumer group may use.", False),
        ("group.consumer.max.assignment.interval.ms", I, 15000,
         "Longest assignment interval a consumer group may use.", False),
        ("group.share.session.timeout.ms", I, 45000, "Session timeout of share groups.", False),
        ("group.share.min.session.timeout.ms", I, 45000,
         "Shortest session timeout a share group may use.", False),
        ("group.share.max.session.timeout.ms", I, 60000,
         "Longest session timeout a share group may use.", False),
        ("group.share.heartbeat.interval.ms", I, 5000,
         "Heartbeat interval of share group members.", False),
        ("group.share.min.heartbeat.interval.ms", I, 5000,
         "Shortest heartbeat interval a share group may use.", False),
        ("group.share.max.heartbeat.interval.ms", I, 15000,
         "Longest heartbeat interval a share group may use.", False),
        ("group.share.record.lock.duration.ms", I, 30000,
         "How long a share group holds an acquired record.", False),
        ("group.share.min.record.lock.duration.ms", I, 15000,
         "Shortest record lock duration a share group may use.", False),
        ("group.share.max.record.lock.duration.ms", I, 60000,
         "Longest record lock duration a share group may use.", False),
        ("group.share.delivery.count.limit", I, 5,
         "Delivery attempts of a record in a share group.", False),
        ("group.share.min.delivery.count.limit", I, 2,
         "Fewest delivery attempts a share group may allow.", False),
        ("group.share.max.delivery.count.limit", I, 10,
         "Most delivery attempts a share group may allow.", False),
        ("group.share.partition.max.record.locks", I, 2000,
         "Records a share partition may hold locked at once.", False),
        ("group.share.min.partition.max.record.locks", I, 100,
         "Lowest per-partition record lock limit a share group may use.", False),
        ("group.share.max.partition.max.record.locks", I, 4000,
         "Highest per-partition record lock limit a share group may use.", False),
        ("group.share.assignment.interval.ms", I, 1000,
         "Time between assignment updates of a share group.", True),
        ("group.share.min.assignment.interval.ms", I, 0,
         "Shortest assignment interval a share group may use.", False),
        ("group.share.max.assignment.interval.ms", I, 15000,
         "Longest assignment interval a share group may use.", False),
        ("group.streams.session.timeout.ms", I, 45000, "Session timeout of streams groups.",
         False),
        ("group.streams.min.session.timeout.ms", I, 45000,
         "Shortest session timeout a streams group may use.", False),
        ("group.streams.max.session.timeout.ms", I, 60000,
         "Longest session timeout a streams group may use.", False),
        ("group.streams.heartbeat.interval.ms", I, 5000,
         "Heartbeat interval of streams group members.", False),
        ("group.streams.min.heartbeat.interval.ms", I, 5000,
         "Shortest heartbeat interval a streams group may use.", False),
        ("group.streams.max.heartbeat.interval.ms", I, 15000,
         "Longest heartbeat interval a streams group may use.", False),
        ("group.streams.num.standby.replicas", I, 0, "Standby replicas of each streams task.",
         False),
        ("group.streams.max.standby.replicas", I, 2,
         "Most standby replicas a streams group may ask for.", False),
        ("group.streams.initial.rebalance.delay.ms", I, 3000,
         "How long a new streams group waits for more members before its first assignment.",
         False),
        ("group.streams.assignment.interval.ms", I, 1000,
         "Time between assignment updates of a streams group.", True),
        ("group.streams.min.assignment.interval.ms", I, 0,
         "Shortest assignment interval a streams group may use.", False),
        ("group.streams.max.assignment.interval.ms", I, 15000,
         "Longest assignment interval a streams group may use.", False),
        ("group.streams.assignors", LS, ["sticky"],
         "The task assignors streams groups may use, the first being the default.", False),
        ("group.streams.rack.aware.assignment.tags", LS, [],
         "Client tags standby tasks are spread over by default.", False),
        ("errors.deadletterqueue.auto.create.topics.enable", B, False,
         "Whether a share group's dead-letter queue topic is created when it does not exist.",
         True),
        ("errors.deadletterqueue.topic.name.prefix", S, "dlq.",
         "The prefix every share group's dead-letter queue topic must have; empty for any "
         "name.", True),
    ))


class GroupConfigKey(Struct, frozen=True):
    """One group config: its definition, the broker config it falls back to (None: its own
    default), and the broker configs bounding it (``only_if_set``: checked only when the
    group overrides it, as Kafka does for the assignment intervals)."""

    key: ConfigKey
    synonym: str | None
    low: str | None = None
    high: str | None = None
    only_if_set: bool = False


def _group(name, type_, default, validator, doc, synonym, low=None, high=None,
           only_if_set=False) -> GroupConfigKey:
    return GroupConfigKey(_key(name, type_, default, validator, doc), synonym, low, high,
                          only_if_set)


_C, _SH, _ST = "group.consumer.", "group.share.", "group.streams."

#: Group configs in Kafka's definition order (the order values are parsed in).
GROUP_CONFIGS: dict[str, GroupConfigKey] = {g.key.name: g for g in (
    _group("consumer.session.timeout.ms", I, 45000, Range(1),
           "Time without a heartbeat after which a consumer group member is removed.",
           _C + "session.timeout.ms", _C + "min.session.timeout.ms",
           _C + "max.session.timeout.ms"),
    _group("consumer.heartbeat.interval.ms", I, 5000, Range(1),
           "How often consumer group members are told to heartbeat.",
           _C + "heartbeat.interval.ms", _C + "min.heartbeat.interval.ms",
           _C + "max.heartbeat.interval.ms"),
    _group("consumer.assignment.interval.ms", I, 1000, Range(0),
           "Time between assignment updates of this consumer group.",
           _C + "assignment.interval.ms", _C + "min.assignment.interval.ms",
           _C + "max.assignment.interval.ms", True),
    _group("share.session.timeout.ms", I, 45000, Range(1),
           "Time without a heartbeat after which a share group member is removed.",
           _SH + "session.timeout.ms", _SH + "min.session.timeout.ms",
           _SH + "max.session.timeout.ms"),
    _group("share.heartbeat.interval.ms", I, 5000, Range(1),
           "How often share group members are told to heartbeat.",
           _SH + "heartbeat.interval.ms", _SH + "min.heartbeat.interval.ms",
           _SH + "max.heartbeat.interval.ms"),
    _group("share.record.lock.duration.ms", I, 30000, Range(1000),
           "How long this share group holds a record it delivered.",
           _SH + "record.lock.duration.ms", _SH + "min.record.lock.duration.ms",
           _SH + "max.record.lock.duration.ms"),
    _group("share.delivery.count.limit", I, 5, Range(2),
           "Delivery attempts of a record before this share group gives up on it.",
           _SH + "delivery.count.limit", _SH + "min.delivery.count.limit",
           _SH + "max.delivery.count.limit"),
    _group("share.partition.max.record.locks", I, 2000, Range(100),
           "Records a share partition of this group may hold locked at once.",
           _SH + "partition.max.record.locks", _SH + "min.partition.max.record.locks",
           _SH + "max.partition.max.record.locks"),
    _group("share.auto.offset.reset", S, "latest", ShareAutoOffsetReset(),
           "Where a share partition starts: earliest, latest, or by_duration:<ISO-8601 "
           "duration> before now.", None),
    _group("share.isolation.level", S, "read_uncommitted",
           OneOf(("read_committed", "read_uncommitted")),
           "Whether this share group delivers only committed transactional records.", None),
    _group("share.renew.acknowledge.enable", B, True, None,
           "Whether members of this share group may renew their record locks.", None),
    _group("share.assignment.interval.ms", I, 1000, Range(0),
           "Time between assignment updates of this share group.",
           _SH + "assignment.interval.ms", _SH + "min.assignment.interval.ms",
           _SH + "max.assignment.interval.ms", True),
    _group("streams.session.timeout.ms", I, 45000, Range(1),
           "Time without a heartbeat after which a streams group member is removed.",
           _ST + "session.timeout.ms", _ST + "min.session.timeout.ms",
           _ST + "max.session.timeout.ms"),
    _group("streams.heartbeat.interval.ms", I, 5000, Range(1),
           "How often streams group members are told to heartbeat.",
           _ST + "heartbeat.interval.ms", _ST + "min.heartbeat.interval.ms",
           _ST + "max.heartbeat.interval.ms"),
    _group("streams.num.standby.replicas", I, 0, Range(0),
           "Standby replicas of each task of this streams group.",
           _ST + "num.standby.replicas", None, _ST + "max.standby.replicas"),
    _group("streams.initial.rebalance.delay.ms", I, 3000, Range(0),
           "How long this new streams group waits for more members before its first "
           "assignment.", _ST + "initial.rebalance.delay.ms"),
    _group("streams.assignment.interval.ms", I, 1000, Range(0),
           "Time between assignment updates of this streams group.",
           _ST + "assignment.interval.ms", _ST + "min.assignment.interval.ms",
           _ST + "max.assignment.interval.ms", True),
    _group("streams.assignor.name", S, "sticky", None,
           "The task assignor of this streams group, one of the broker's "
           "group.streams.assignors.", _ST + "assignors"),
    _group("streams.rack.aware.assignment.tags", LS, [], None,
           "Client tags the standby tasks of this streams group are spread over.",
           _ST + "rack.aware.assignment.tags"),
    _group("errors.deadletterqueue.topic.name", S, "", None,
           "The dead-letter queue topic of this share group; empty for none.", None),
    _group("errors.deadletterqueue.copy.record.enable", B, False, None,
           "Whether the dead-letter queue gets a copy of the record or only its context.",
           None),
)}

#: The order Kafka 4.4 lists a group's configs in.
DESCRIBE_ORDER = (
    "consumer.session.timeout.ms", "streams.assignor.name", "consumer.assignment.interval.ms",
    "errors.deadletterqueue.copy.record.enable", "share.auto.offset.reset",
    "streams.rack.aware.assignment.tags", "share.renew.acknowledge.enable",
    "streams.initial.rebalance.delay.ms", "share.session.timeout.ms",
    "streams.assignment.interval.ms", "share.heartbeat.interval.ms",
    "streams.heartbeat.interval.ms", "share.delivery.count.limit",
    "errors.deadletterqueue.topic.name", "consumer.heartbeat.interval.ms",
    "share.record.lock.duration.ms", "share.assignment.interval.ms", "share.isolation.level",
    "streams.session.timeout.ms", "share.partition.max.record.locks",
    "streams.num.standby.replicas",
)
assert sorted(DESCRIBE_ORDER) == sorted(GROUP_CONFIGS)

#: The order Kafka checks the values against the broker's bounds (GroupConfig).
_BOUNDS_ORDER = (
    "consumer.heartbeat.interval.ms", "consumer.session.timeout.ms",
    "consumer.assignment.interval.ms", "share.heartbeat.interval.ms",
    "share.session.timeout.ms", "share.record.lock.duration.ms", "share.delivery.count.limit",
    "share.partition.max.record.locks", "share.assignment.interval.ms",
    "streams.heartbeat.interval.ms", "streams.session.timeout.ms",
    "streams.num.standby.replicas", "streams.assignment.interval.ms",
)


def group_default(name: str, broker: dict[str, str]) -> str | None:
    """A group config's value without an override: its broker synonym's, else its own
    default."""
    group_key = GROUP_CONFIGS[name]
    key = group_key.key
    if group_key.synonym is not None and group_key.synonym in broker:
        raw = broker[group_key.synonym]
        if key.type is not LS and group_key.synonym.endswith(".assignors"):
            raw = raw.split(",")[0].strip()
        return raw
    return key.default_string


def validate_group_overrides(overrides: dict[str, str], broker: dict[str, str]
                             ) -> dict[str, str]:
    """A group's complete set of overrides, checked as Kafka checks them against the broker's
    effective configs ``broker``; returns them normalised.  Raises :class:`ApiException`
    with INVALID_CONFIG."""
    for name in overrides:
        if name not in GROUP_CONFIGS:
            raise ApiException(errors.INVALID_CONFIG, f"Unknown group config name: {name}")
    parsed: dict[str, Any] = {}
    for name, group_key in GROUP_CONFIGS.items():
        raw = overrides[name] if name in overrides else group_default(name, broker)
        try:
            parsed[name] = group_key.key.parse(raw)
        except InvalidValue as exc:
            raise ApiException(errors.INVALID_CONFIG, str(exc)) from None
    for name in _BOUNDS_ORDER:
        group_key = GROUP_CONFIGS[name]
        if group_key.only_if_set and name not in overrides:
            continue
        if name not in overrides and group_key.synonym is not None:
            # the broker's own value: Kafka's broker keeps it within its bounds; the mock's
            # settings may go below them (short timeouts for tests), which is no group's fault
            continue
        value = parsed[name]
        high = int(broker[group_key.high])
        if group_key.low is None:
            if value > high:
                raise ApiException(errors.INVALID_CONFIG,
                                   f"{name} must be less than or equal to {high}")
            continue
        low = int(broker[group_key.low])
        if not low <= value <= high:
            raise ApiException(errors.INVALID_CONFIG,
                               f"{name} must be in the range {low} to {high} inclusive.")
    assignors = [a.strip() for a in broker[_ST + "assignors"].split(",") if a.strip()]
    if parsed["streams.assignor.name"] not in assignors:
        raise ApiException(errors.INVALID_CONFIG, "streams.assignor.name "
                           f"'{parsed['streams.assignor.name']}' is not a registered task "
                           f"assignor. Registered assignors are: [{', '.join(assignors)}].")
    dead_letter = parsed["errors.deadletterqueue.topic.name"]
    if dead_letter.startswith("__"):
        raise ApiException(errors.INVALID_CONFIG, "errors.deadletterqueue.topic.name: DLQ "
                           "topic name must not start with '__'")
    return {name: GROUP_CONFIGS[name].key.to_string(parsed[name]) for name in overrides}


#: a group config without a broker synonym reports itself, at its default, as its synonym
SELF_SYNONYM_SOURCE = ConfigSource.DEFAULT_CONFIG


def group_value(state, group_id: str, name: str, broker_id: int) -> Any:
    """Group config ``name`` of ``group_id`` as the group works by it now, parsed: its
    override, else its broker synonym's value on ``broker_id``, else its default."""
    overrides = state.group_configs.get(group_id, {})
    raw = overrides[name] if name in overrides else \
        group_default(name, state.effective(broker_id))
    return GROUP_CONFIGS[name].key.parse(raw)
