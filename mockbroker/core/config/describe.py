"""DescribeConfigs: every config of a topic, a broker, a group or a client metrics
subscription with its value, source, type, synonyms and documentation, as Kafka 4.1's
ConfigHelper reports them.

A topic's value comes from its override, else from its broker synonym in the highest layer
(see :mod:`mockbroker.core.config.topic`); a broker's from its layers (see
:class:`mockbroker.core.config.broker.BrokerConfigs`).  The cluster comes in as an argument
(anything with what :class:`~mockbroker.core.config.topic.ConfigCluster` names).
"""

from __future__ import annotations

from mockbroker.core.config.broker import (
    BROKER_CONFIGS, BROKER_QUOTA_CONFIGS, broker_resource,
)
from mockbroker.core.config.group import DESCRIBE_ORDER, GROUP_CONFIGS, group_default
from mockbroker.core.config.topic import (
    TOPIC_CONFIGS, TOPIC_SYNONYMS, ConfigCluster, topic_value_from_broker,
)
from mockbroker.core.config.values import (
    ConfigEntry, ConfigSource, ConfigType, InvalidValue, ResourceType, resource_type_name,
)
from mockbroker.core.errors import ApiException
from mockbroker.core.names import topic_name_error
from wire import errors


def describe(cluster: ConfigCluster, resource_type: int, resource_name: str, broker_id: int,
             keys: list[str] | None, include_synonyms: bool, include_documentation: bool
             ) -> list[ConfigEntry]:
    """One resource of a DescribeConfigs request; raises :class:`ApiException`."""
    if resource_type == ResourceType.TOPIC:
        entries = describe_topic(cluster, resource_name, broker_id, include_synonyms,
                                 include_documentation)
    elif resource_type == ResourceType.BROKER:
        entries = describe_broker(cluster, resource_name, broker_id, include_synonyms,
                                  include_documentation)
    elif resource_type == ResourceType.GROUP:
        entries = describe_group(cluster, resource_name, broker_id, include_synonyms,
                                 include_documentation)
    elif resource_type == ResourceType.CLIENT_METRICS:
        from mockbroker.core.config import client_metrics

        entries = client_metrics.describe(cluster.broker_configs, resource_name,
                                          include_synonyms, include_documentation)
    elif resource_type == ResourceType.BROKER_LOGGER:
        if not resource_name:
            raise ApiException(errors.INVALID_REQUEST, "Broker id must not be empty")
        broker_resource(resource_name, broker_id)
        entries = [ConfigEntry("root", "INFO", ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG,
                               ConfigType.UNKNOWN)]
    else:
        raise ApiException(errors.INVALID_REQUEST,
                           f"Unsupported resource type: {resource_type_name(resource_type)}")
    if keys:
        wanted = set(keys)
        entries = [e for e in entries if e.name in wanted]
    return entries


def describe_topic(cluster: ConfigCluster, name: str, broker_id: int,
                   include_synonyms: bool = False, include_documentation: bool = False
                   ) -> list[ConfigEntry]:
    """Every config of a topic, as DescribeConfigs reports it on ``broker_id``."""
    problem = topic_name_error(name)
    if problem:
        raise ApiException(errors.INVALID_TOPIC_EXCEPTION, problem)
    topic = cluster.topics.get(name)
    if topic is None:
        raise ApiException(errors.UNKNOWN_TOPIC_OR_PARTITION)
    state = cluster.broker_configs
    broker = state.effective(broker_id)
    out = []
    for key in TOPIC_CONFIGS.values():
        override = topic.configs.get(key.name)
        if override is None:
            value = topic_value_from_broker(key.name, broker)
        else:
            try:
                value = key.normalise(override)
            except InvalidValue:  # set by something that skipped validation: show it as is
                value = override
        synonyms = []
        if key.name in TOPIC_SYNONYMS:
            primary = TOPIC_SYNONYMS[key.name][0].name
            synonyms = state.synonyms(primary, broker_id)
        if override is not None:
            synonyms.insert(0, (key.name, value, ConfigSource.TOPIC_CONFIG))
        source = synonyms[0][2] if synonyms else ConfigSource.DEFAULT_CONFIG
        out.append(ConfigEntry(key.name, value, source, key.type, False, False,
                               synonyms if include_synonyms else [],
                               key.doc if include_documentation else None))
    return out


def describe_broker(cluster: ConfigCluster, name: str, broker_id: int,
                    include_synonyms: bool = False, include_documentation: bool = False
                    ) -> list[ConfigEntry]:
    """A broker's configs (``name`` is this broker's id) or the cluster-wide dynamic defaults
    (``name`` is empty), as DescribeConfigs reports them."""
    if name != "":
        try:
            wanted = int(name)
        except ValueError:
            raise ApiException(errors.INVALID_REQUEST,
                               f"Broker id must be an integer, but it is: {name}") from None
        if wanted != broker_id:
            raise ApiException(errors.INVALID_REQUEST, "Unexpected broker id, expected "
                               f"{broker_id} or empty string, but received {name}")
    state = cluster.broker_configs
    if name == "":
        values = dict(state.dynamic_default)
    else:
        effective = state.effective(broker_id)
        values = {n: effective.get(n) for n in BROKER_CONFIGS}
        for layer, _ in state.layers(broker_id)[:2]:
            values.update({n: v for n, v in layer.items() if n not in BROKER_CONFIGS})
    out = []
    for config in sorted(values):
        key = BROKER_CONFIGS.get(config) or BROKER_QUOTA_CONFIGS.get(config)
        # Kafka hides a password's value, and that of a config it cannot type in case it is one
        sensitive = key is None or key.type is ConfigType.PASSWORD
        synonyms = state.synonyms(config, broker_id)
        if name == "":
            synonyms = [s for s in synonyms if s[2] == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]
        if sensitive:
            synonyms = [(n, None, s) for n, _, s in synonyms]
        out.append(ConfigEntry(
            config, None if sensitive else values[config],
            synonyms[0][2] if synonyms else ConfigSource.DEFAULT_CONFIG,
            key.type if key else ConfigType.UNKNOWN,
            read_only=key is None or not key.dynamic, sensitive=sensitive,
            synonyms=synonyms if include_synonyms else [],
            documentation=(key.doc if key else "") if include_documentation else None))
    return out


def describe_group(cluster: ConfigCluster, name: str, broker_id: int,
                   include_synonyms: bool = False, include_documentation: bool = False
                   ) -> list[ConfigEntry]:
    """Every config of a group (known to the coordinator or not), as DescribeConfigs reports
    it: the group's override, else its broker synonym's value."""
    if name == "":
        raise ApiException(errors.INVALID_REQUEST, "Group name must not be empty")
    state = cluster.broker_configs
    broker = state.effective(broker_id)
    overrides = state.group_configs.get(name, {})
    out = []
    for config in DESCRIBE_ORDER:
        group_key = GROUP_CONFIGS[config]
        key = group_key.key
        if group_key.synonym is not None:
            synonyms = state.synonyms(group_key.synonym, broker_id)
        else:
            synonyms = [(config, key.default_string, ConfigSource.DEFAULT_CONFIG)]
        value = group_default(config, broker)
        if config in overrides:
            value = overrides[config]
            synonyms.insert(0, (config, value, ConfigSource.GROUP_CONFIG))
        source = synonyms[0][2] if synonyms else ConfigSource.DEFAULT_CONFIG
        out.append(ConfigEntry(config, value, source, key.type, False, False,
                               synonyms if include_synonyms else [],
                               key.doc if include_documentation else None))
    return out
