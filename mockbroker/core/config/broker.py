"""Broker configs: Kafka's definitions (which are also the mock's settings), the four config
layers of a broker, and what DescribeConfigs and (Incremental)AlterConfigs do to them.

One table, :data:`BROKER_CONFIG_KEYS`, defines every broker config the mock knows.  An entry
with a :class:`~mockbroker.core.config.values.Setting` is also a setting of the mock (what
``MockCluster(**settings)``, ``mockbroker serve --flag`` and ``MOCKBROKER_*`` take; see
:mod:`mockbroker.core.settings`), with the mock's own default where it differs from Kafka's, so
adding a setting is one edit here.

A broker's configs come in four layers, as on a KRaft broker (:class:`BrokerConfigs`): Kafka's
defaults, the static settings the cluster was started with (what ``server.properties`` would
say), dynamic cluster-wide defaults, and dynamic per-broker values.  The cluster owns one
:class:`BrokerConfigs`; it is built from the cluster's settings dict and broker map, never from
the cluster itself, so this package does not import the cluster module.

``message.max.bytes`` and ``log.message.timestamp.type`` change what the data path does: they
are dynamic settings, and a dynamic cluster-wide value of either is copied into the cluster's
settings, where the data path reads it.  Retention (:mod:`mockbroker.core.log.retention`) reads
``log.retention.check.interval.ms`` from the settings and the topic configs' broker defaults
(``log.retention.*``, ``log.segment.bytes``, ``log.roll.*``) through the layers;
``log.retention.bytes`` and ``log.segment.bytes`` are settings too (``log.retention.ms`` has
no default to give a setting: set it per topic, or as a dynamic cluster-wide default).  Everything
else is stored and described faithfully but has no effect (there is no compaction or flushing
in a mock).  The tables and checks follow Apache Kafka 4.1's broker config definitions,
DynamicBrokerConfig, ConfigHelper and ConfigAdminManager.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from mockbroker.core.config.group import GROUP_BROKER_KEYS
from mockbroker.core.config.topic import TOPIC_CONFIGS, TOPIC_SYNONYMS
from mockbroker.core.config.values import (
    B, I, INT_MAX, L, LONG_MAX, LS, S, SH, ConfigKey, ConfigSource, ConfigType, InvalidValue,
    OneOf, Range, Setting,
)
from mockbroker.core.errors import ApiException
from mockbroker.core.kept import Kept
from mockbroker.core.kafka_version import LATEST, KafkaVersionSetting
from mockbroker.core.log_dirs import DEFAULT_LOG_DIR, LogDirsSetting
from wire import errors

_key = ConfigKey
#: the mock's ``socket.listen.backlog.size``: Kafka accepts on a thread of its own, but one
#: event loop, busy answering while many clients connect at once, needs the queue of pending
#: connections Go's kfake has (the usual somaxconn, to which the kernel caps it anyway), or
#: the connects beyond it wait for a SYN retry
LISTEN_BACKLOG = 4096
#: a setting of the mock with Kafka's default and rule
_MOCK = Setting()


class _Assignors:
    """``group.consumer.assignors``: names of the server-side assignors the mock has."""

    requirement = "a comma-separated list of uniform, range"

    def check(self, name: str, value) -> None:
        names = [n.strip() for n in str(value).split(",") if n.strip()]
        if not names or any(n not in ("uniform", "range") for n in names):
            raise InvalidValue(name, value, f"{name} must be {self.requirement}")


def _topic_default_synonym(topic_name: str, **flags) -> ConfigKey:
    """The broker config backing a topic config: same type, default and rule."""
    topic_key = TOPIC_CONFIGS[topic_name]
    return ConfigKey(TOPIC_SYNONYMS[topic_name][0].name, topic_key.type, topic_key.default,
                     topic_key.validator, f"Broker default for the topic config {topic_name}.",
                     dynamic=True, **flags)


#: Topic configs whose broker synonym is defined by hand below.
_OWN_SYNONYMS = ("segment.ms", "segment.jitter.ms", "flush.ms", "retention.ms",
                 "max.message.bytes", "message.timestamp.type")

#: Topic configs whose broker default is also a setting (retention, bounded memory, and the
#: replication the controller checks).
_RETENTION_SETTINGS = ("retention.bytes", "segment.bytes", "min.insync.replicas",
                       "unclean.leader.election.enable")

#: Every broker config the mock knows: its settings, the broker defaults of every topic config,
#: and the usual identity configs.  ``dynamic`` marks what Kafka lets an admin change at
#: runtime; the rest is read-only.  ``setting`` marks the mock's settings.
BROKER_CONFIG_KEYS: tuple[ConfigKey, ...] = (
    _key("cluster.id", S, None, None, "The id the cluster reports (Kafka keeps it in "
                                      "meta.properties, not among the broker configs).",
         setting=Setting(default="mockbroker-cluster-0000", kafka=False)),
    _key("broker.id", I, -1, None, "This broker's id (the node id in KRaft mode)."),
    _key("node.id", I, None, Range(0), "This node's id."),
    _key("process.roles", LS, None, OneOf(("broker", "controller")),
         "The roles this node plays: broker, controller or both."),
    _key("listeners", S, "PLAINTEXT://:9092", None, "Addresses the broker listens on.",
         dynamic=True, per_broker=True),
    _key("advertised.listeners", S, None, None, "Addresses clients are told to use.",
         dynamic=True, per_broker=True),
    _key("broker.rack", S, None, None, "The rack this broker is in.",
         setting=Setting(default="")),
    _key("log.dir", S, "/tmp/kafka-logs", None, "Directory the broker keeps its logs in."),
    # set, as every broker's server.properties sets it: to log.dir's default unless given
    _key("log.dirs", S, None, None, "Directories the broker keeps its logs in.",
         setting=Setting(default=DEFAULT_LOG_DIR, validator=LogDirsSetting())),
    _key("auto.create.topics.enable", B, True, None,
         "Whether a Metadata request for an unknown topic creates it.", setting=_MOCK),
    _key("num.partitions", I, 1, Range(1), "Partitions of a topic created with the default.",
         setting=_MOCK),
    # accepted and checked as a setting; the mock creates topics with min(3, brokers) replicas
    # when asked for the default, and reports that as the static value
    _key("default.replication.factor", I, 1, None,
         "Replication factor of a topic created with the default.",
         setting=Setting(validator=Range(1))),
    _key("delete.topic.enable", B, True, None, "Whether topics may be deleted.", setting=_MOCK),
    _key("offsets.topic.num.partitions", I, 50, Range(1),
         "Partitions of the __consumer_offsets topic.", setting=_MOCK),
    _key("offsets.topic.replication.factor", SH, 3, Range(1),
         "Replication factor of the __consumer_offsets topic.", setting=_MOCK),
    _key("offsets.retention.minutes", I, 7 * 24 * 60, Range(1),
         "How long committed offsets of an empty group are kept.", setting=_MOCK),
    _key("offsets.retention.check.interval.ms", L, 600000, Range(1),
         "How often the coordinator looks for expired offsets.", setting=_MOCK),
    # 0 rather than Kafka's 3000 so that tests are fast
    _key("group.initial.rebalance.delay.ms", I, 3000, None,
         "How long the coordinator waits for more members before the first rebalance.",
         setting=Setting(default=0, validator=Range(0))),
    _key("group.min.session.timeout.ms", I, 6000, None, "Shortest session timeout allowed.",
         setting=Setting(validator=Range(0))),
    _key("group.max.session.timeout.ms", I, 1800000, None, "Longest session timeout allowed.",
         setting=Setting(validator=Range(0))),
    _key("group.max.size", I, INT_MAX, Range(1), "Most members a classic group may have.",
         setting=_MOCK),
    # Kafka checks every producer.id.expiration.check.interval.ms (10 minutes); the mock
    # expires producers at each retention check
    _key("producer.id.expiration.ms", I, 86400000, Range(1),
         "How long a partition keeps the state of a producer that has stopped writing (and "
         "has no open transaction).", dynamic=True, setting=_MOCK),
    _key("group.consumer.max.size", I, 2147483647, Range(1),
         "Most members a consumer group may have.", setting=_MOCK),
    _key("group.consumer.assignors", LS, "uniform,range", None,
         "The server-side assignors consumer groups may use; the first is the default.",
         setting=Setting(validator=_Assignors())),
    _key("group.consumer.migration.policy", S, "bidirectional",
         OneOf(("disabled", "upgrade", "downgrade", "bidirectional")),
         "Whether a classic group with members becomes a consumer group when a member of the "
         "consumer protocol joins it (upgrade), and a consumer group left with only classic "
         "members becomes a classic group (downgrade).", setting=_MOCK),
    _key("group.streams.max.size", I, 2147483647, Range(1),
         "Most members a streams group may have.", setting=_MOCK),
    _key("group.share.max.size", I, 200, Range(1, 1000),
         "Most members a share group may have.", setting=_MOCK),
    _key("group.share.max.share.sessions", I, 2000, Range(1),
         "Most share sessions a broker holds at once.", setting=_MOCK),
    _key("share.coordinator.state.topic.num.partitions", I, 50, Range(1),
         "Partitions of the __share_group_state topic.", setting=_MOCK),
    _key("share.coordinator.state.topic.replication.factor", SH, 3, Range(1),
         "Replication factor of the __share_group_state topic.", setting=_MOCK),
    _key("share.coordinator.snapshot.update.records.per.snapshot", I, 500, Range(0, 500),
         "Share updates written between two snapshots of a share partition's state.",
         setting=_MOCK),
    _key("transaction.state.log.num.partitions", I, 50, Range(1),
         "Partitions of the __transaction_state topic.", setting=_MOCK),
    _key("transaction.state.log.replication.factor", SH, 3, Range(1),
         "Replication factor of the __transaction_state topic.", setting=_MOCK),
    _key("transaction.max.timeout.ms", I, 900000, Range(1),
         "Longest transaction timeout a producer may ask for.", setting=_MOCK),
    _key("transaction.abort.timed.out.transaction.cleanup.interval.ms", I, 10000, Range(1),
         "How often the coordinator aborts transactions past their timeout.", setting=_MOCK),
    _key("transactional.id.expiration.ms", I, 604800000, Range(1),
         "How long an unused transactional id is kept.", setting=_MOCK),
    _key("transaction.remove.expired.transaction.cleanup.interval.ms", I, 3600000, Range(1),
         "How often the coordinator removes expired transactional ids.", setting=_MOCK),
    _key("socket.request.max.bytes", I, 100 * 1024 * 1024, Range(1),
         "Largest request the broker reads.", setting=_MOCK),
    _key("socket.listen.backlog.size", I, 50, Range(1),
         "Most connections a listener holds pending until it accepts them.",
         setting=Setting(default=LISTEN_BACKLOG)),
    _key("max.incremental.fetch.session.cache.slots", I, 1000, Range(0),
         "Most fetch sessions (KIP-227) a broker keeps; 0 answers every fetch sessionless.",
         setting=_MOCK),
    # Kafka advertises the client telemetry APIs (KIP-714) only with a metrics reporter that
    # receives what clients push: this setting stands for one, the mock's own receiver
    _key("telemetry.receiver", B, False, None,
         "Whether the brokers receive client telemetry: GetTelemetrySubscriptions and "
         "PushTelemetry are advertised, and what clients push is kept (GET /clients).",
         setting=Setting(kafka=False)),
    # the Kafka release the brokers behave as (mockbroker.core.kafka_version)
    _key("kafka.version", S, LATEST, None,
         "The Apache Kafka release the brokers behave as: its API versions, features and "
         "defaults.", setting=Setting(validator=KafkaVersionSetting(), kafka=False)),
    _key("telemetry.max.bytes", I, 1024 * 1024, Range(1),
         "Largest telemetry push a broker takes (after compression), and largest it "
         "decompresses.", setting=_MOCK),
    # delegation tokens (mockbroker.core.security.tokens): on when the secret key is set; as
    # a setting, unset is the empty string, which Kafka reads as unset too
    _key("delegation.token.secret.key", ConfigType.PASSWORD, None, None,
         "The key delegation tokens' HMACs are made with; unset or empty turns delegation "
         "tokens off.", setting=Setting(default="")),
    _key("delegation.token.max.lifetime.ms", L, 7 * 24 * 3600 * 1000, Range(1),
         "The longest a delegation token lives, renewals included.", setting=_MOCK),
    _key("delegation.token.expiry.time.ms", L, 24 * 3600 * 1000, Range(1),
         "How long a delegation token stays valid after its creation or renewal.",
         setting=_MOCK),
    _key("delegation.token.expiry.check.interval.ms", L, 3600 * 1000, Range(1),
         "How often tokens past their expiry are removed.", setting=_MOCK),
    # the controller's elections (mockbroker.core.controller.replication)
    _key("auto.leader.rebalance.enable", B, True, None,
         "Whether the controller moves leadership back to preferred replicas periodically.",
         setting=_MOCK),
    _key("leader.imbalance.check.interval.seconds", L, 300, Range(1),
         "How often the controller runs the preferred-leader election.", setting=_MOCK),
    _key("unclean.leader.election.interval.ms", L, 300000, Range(1),
         "How often the controller elects leaders uncleanly for leaderless partitions whose "
         "topic allows it (internal in Kafka: not reported).",
         setting=Setting(kafka=False)),
    _key("replica.catch.up.ms", L, 0, Range(0),
         "How long a replica that follows again takes to catch up with its leader and join "
         "the ISR (the mock's own: a Kafka replica takes as long as copying takes); 0 is at "
         "once.", setting=Setting(kafka=False)),
    _key("log.roll.hours", I, 168, Range(1), "Segment roll time in hours, if log.roll.ms is "
                                             "not set."),
    _key("log.roll.jitter.hours", I, 0, Range(0), "Segment roll jitter in hours, if "
                                                  "log.roll.jitter.ms is not set."),
    _key("log.retention.minutes", I, None, None, "Retention in minutes, if log.retention.ms is "
                                                 "not set."),
    _key("log.retention.hours", I, 168, None, "Retention in hours, if neither log.retention.ms "
                                              "nor log.retention.minutes is set."),
    _key("log.retention.check.interval.ms", L, 300000, Range(1),
         "How often the log cleaner looks for segments past their retention.", setting=_MOCK),
    _key("log.flush.scheduler.interval.ms", L, LONG_MAX, None,
         "How often the flusher checks whether a log needs flushing."),
    # message.max.bytes and log.message.timestamp.type: the settings the data path reads
    _topic_default_synonym("max.message.bytes", setting=_MOCK),
    _topic_default_synonym("message.timestamp.type", setting=_MOCK),
    *(_topic_default_synonym(name, **({"setting": _MOCK} if name in _RETENTION_SETTINGS else {}))
      for name in TOPIC_SYNONYMS if name not in _OWN_SYNONYMS),
    # the broker defaults that fall back to another config have no default of their own
    _key("log.roll.ms", L, None, None, "Segment roll time.", dynamic=True),
    _key("log.roll.jitter.ms", L, None, None, "Segment roll jitter.", dynamic=True),
    _key("log.flush.interval.ms", L, None, None, "Time after which a log is flushed.",
         dynamic=True),
    _key("log.retention.ms", L, None, None, "How long logs are kept; -1 for ever.",
         dynamic=True),
    # the group coordinator's: defaults and bounds of the group configs
    *GROUP_BROKER_KEYS,
)

#: The broker configs Kafka has (what DescribeConfigs reports and AlterConfigs knows).
BROKER_CONFIGS: dict[str, ConfigKey] = {
    k.name: k for k in BROKER_CONFIG_KEYS if k.setting is None or k.setting.kafka}

#: The broker's replication quotas (Kafka's ``DynamicConfig.Broker``), which
#: ``kafka-reassign-partitions.sh --throttle`` sets and ``--verify`` removes: typed and checked
#: when set, listed by DescribeConfigs only while set (without documentation), as Kafka lists
#: them.  The mock copies no data between brokers, so nothing reads them.
BROKER_QUOTA_CONFIGS: dict[str, ConfigKey] = {k.name: k for k in (
    _key(name, L, LONG_MAX, Range(0), None, dynamic=True)
    for name in ("leader.replication.throttled.rate", "follower.replication.throttled.rate",
                 "replica.alter.log.dirs.io.max.bytes.per.second"))}

#: The configs that are settings of the mock, by Kafka name (:mod:`mockbroker.core.settings`).
SETTING_CONFIGS: dict[str, ConfigKey] = {k.name: k for k in BROKER_CONFIG_KEYS if k.setting}

#: Kafka's default broker configs with a non-null default, as Kafka prints them.
BROKER_DEFAULTS: dict[str, str] = {
    k.name: k.default_string for k in BROKER_CONFIGS.values() if k.default is not None}

#: Dynamic broker configs that are settings: the data path reads them from the settings.
_MIRRORED = {k.name: k.python_name for k in SETTING_CONFIGS.values() if k.dynamic}

_SYNONYM_GROUPS = (("log.roll.ms", "log.roll.hours"),
                   ("log.roll.jitter.ms", "log.roll.jitter.hours"),
                   ("log.retention.ms", "log.retention.minutes", "log.retention.hours"))


def broker_synonyms(name: str) -> list[str]:
    """Broker configs that set the same thing, in priority order (DynamicBrokerConfig)."""
    for group in _SYNONYM_GROUPS:
        if name in group:
            return list(group)
    if name == "log.flush.interval.ms":
        return [name, "log.flush.scheduler.interval.ms"]
    return [name]


def broker_resource(name: str, broker_id: int) -> int | None:
    """The broker a BROKER (or BROKER_LOGGER) resource names (None for the cluster-wide
    default ``""``); any other broker than ``broker_id`` is refused, as Kafka does."""
    if name == "":
        return None
    try:
        wanted = int(name)
    except ValueError:
        raise ApiException(errors.INVALID_REQUEST,
                           f"Node id must be an integer, but it is: {name}") from None
    if wanted != broker_id:
        raise ApiException(errors.INVALID_REQUEST,
                           f"Unexpected broker id, expected {broker_id}, but received {name}")
    return wanted


class BrokerConfigs:
    """The broker config layers: defaults, static settings, dynamic defaults, dynamic
    per-broker values.

    ``settings`` is the cluster's settings dict (python names), kept by reference: the
    cluster-wide dynamic values of the dynamic settings are written into it.  ``brokers`` maps
    node ids to brokers (``host``, ``port``, ``rack``), read when the static layer is built, so
    a listener's port is current.  ``default_replication_factor`` is what the cluster uses
    when a topic asks for the default."""

    def __init__(self, settings: dict[str, Any], brokers: Mapping[int, Any],
                 default_replication_factor: int):
        self._settings = settings
        self._brokers = brokers
        # Dynamic values of some configs are copied into the settings; keep what they were.
        self._static_settings = dict(settings)
        self._static_replication_factor = default_replication_factor
        self.dynamic_default: dict[str, str] = {}
        #: values worked out from configs (:meth:`kept`), until a dynamic broker config or a
        #: topic's overrides change
        self._kept = Kept()
        self.dynamic_per_broker: dict[int, dict[str, str]] = {}
        #: group id -> that group's config overrides (kept apart from the group, which may
        #: not exist)
        self.group_configs: dict[str, dict[str, str]] = {}
        #: client metrics subscription name -> its configs as given (KIP-714), and a count
        #: of their changes (a client's subscription is worked out again after one)
        self.client_metrics: dict[str, dict[str, str]] = {}
        self.client_metrics_version = 0

    def static(self, broker_id: int) -> dict[str, str]:
        """What ``server.properties`` would hold: identity, listener, and every setting the
        mock runs with that differs from Kafka's default."""
        broker = self._brokers[broker_id]
        endpoints = broker.endpoints or {"PLAINTEXT": (broker.host, broker.port)}
        listener = ",".join(f"{name}://{host}:{port}"
                            for name, (host, port) in endpoints.items())
        out = {"broker.id": str(broker_id), "node.id": str(broker_id),
               "process.roles": "broker,controller", "listeners": listener,
               "advertised.listeners": listener}
        for key in SETTING_CONFIGS.values():
            if not key.setting.kafka:
                continue
            value = self._static_settings[key.python_name]
            if key.name == "broker.rack":
                value = broker.rack or value or None
            elif key.name == "default.replication.factor":
                value = self._static_replication_factor
            text = key.to_string(value)
            if text == "" and key.default is None:
                continue  # an empty setting stands for a config left unset
            if text is not None and text != BROKER_DEFAULTS.get(key.name):
                out[key.name] = text
        return out

    def static_setting(self, python_name: str) -> Any:
        """A setting as the cluster started with it (a dynamic value aside)."""
        return self._static_settings[python_name]

    def per_broker(self, broker_id: int) -> dict[str, str]:
        return self.dynamic_per_broker.get(broker_id, {})

    def layers(self, broker_id: int) -> list[tuple[dict[str, str], ConfigSource]]:
        """Highest priority first."""
        return [(self.per_broker(broker_id), ConfigSource.DYNAMIC_BROKER_CONFIG),
                (self.dynamic_default, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
                (self.static(broker_id), ConfigSource.STATIC_BROKER_CONFIG),
                (BROKER_DEFAULTS, ConfigSource.DEFAULT_CONFIG)]

    def effective(self, broker_id: int) -> dict[str, str]:
        """The broker's current config: every layer merged."""
        merged: dict[str, str] = {}
        for layer, _ in reversed(self.layers(broker_id)):
            merged.update(layer)
        return merged

    def synonyms(self, name: str, broker_id: int) -> list[tuple[str, str | None, ConfigSource]]:
        """ConfigHelper's synonym list for broker config ``name``: each layer in priority
        order, within it each synonym in priority order; anything before ``name`` itself is
        dropped."""
        names = broker_synonyms(name)
        found = []
        for layer, source in self.layers(broker_id):
            for synonym in names:
                if synonym in layer:
                    found.append((synonym, layer[synonym], source))
        while found and found[0][0] != name:
            found.pop(0)
        return found

    def changed(self) -> None:
        """A config changed: values kept from the old ones are stale."""
        self._kept.changed()

    def kept(self, key: Any, compute: Callable[[], Any]) -> Any:
        """A value worked out from configs (``compute()``), kept under ``key`` until a config
        changes: the data path asks for the same topic's configs on every append, and
        resolving and parsing them anew took a tenth of a small produce's time."""
        return self._kept.get(key, compute)

    def sync_settings(self) -> None:
        """Copy cluster-wide dynamic values the data path reads into the settings."""
        self.changed()
        for name, setting in _MIRRORED.items():
            value = self.dynamic_default.get(name)
            if value is None:
                self._settings[setting] = self._static_settings[setting]
            else:
                self._settings[setting] = BROKER_CONFIGS[name].parse(value)

    def reset(self) -> None:
        """Forget every dynamic broker config, group config and client metrics subscription
        (for a cluster reset)."""
        self.dynamic_default.clear()
        self.dynamic_per_broker.clear()
        self.group_configs.clear()
        self.client_metrics.clear()
        self.client_metrics_version += 1
        self.sync_settings()
