"""Topic and broker configs under Kafka's own names: types, defaults, validation, sources, and
the config APIs (DescribeConfigs, AlterConfigs, IncrementalAlterConfigs, the configs of
CreateTopics).  One concern per module:

- :mod:`~mockbroker.core.config.values`: Kafka's config types, Java's printing and parsing of
  values, the validators, :class:`ConfigKey` and :class:`ConfigEntry`;
- :mod:`~mockbroker.core.config.topic`: the topic config definitions, their broker synonyms,
  and the checks and result of a new topic's configs (CreateTopics);
- :mod:`~mockbroker.core.config.group`: the group configs (a GROUP resource's), their broker
  synonyms and bounds, and the checks of a group's overrides;
- :mod:`~mockbroker.core.config.broker`: the broker config definitions (which are also the
  mock's settings) and a broker's config layers (:class:`BrokerConfigs`);
- :mod:`~mockbroker.core.config.describe`: DescribeConfigs;
- :mod:`~mockbroker.core.config.alter`: AlterConfigs and IncrementalAlterConfigs.

The dependencies go one way: values <- topic, group <- broker <- describe, alter.  The operations take
the cluster as an argument (:class:`ConfigCluster` says what they use of it); nothing here
imports the cluster module, which imports this package to own its :class:`BrokerConfigs`.
"""

from mockbroker.core.config.alter import (
    AlterResource, alter, alter_broker, alter_topic, incremental_alter_broker,
    incremental_alter_topic,
)
from mockbroker.core.config.broker import (
    BROKER_CONFIGS, BROKER_DEFAULTS, SETTING_CONFIGS, BrokerConfigs, broker_synonyms,
)
from mockbroker.core.config.describe import describe, describe_broker, describe_topic
from mockbroker.core.config.topic import (
    TOPIC_CONFIGS, TOPIC_SYNONYMS, ConfigCluster, created_topic_configs, new_topic_configs,
    topic_value_from_broker, validate_topic_overrides,
)
from mockbroker.core.config.values import (
    ConfigEntry, ConfigKey, ConfigSource, ConfigType, InvalidValue, OpType, ResourceType, Setting,
)

__all__ = [
    "AlterResource", "BROKER_CONFIGS", "BROKER_DEFAULTS", "BrokerConfigs", "ConfigCluster",
    "ConfigEntry", "ConfigKey", "ConfigSource", "ConfigType", "InvalidValue", "OpType",
    "ResourceType", "SETTING_CONFIGS", "Setting", "TOPIC_CONFIGS", "TOPIC_SYNONYMS", "alter",
    "alter_broker", "alter_topic", "broker_synonyms", "created_topic_configs", "describe",
    "describe_broker", "describe_topic", "incremental_alter_broker", "incremental_alter_topic",
    "new_topic_configs", "topic_value_from_broker", "validate_topic_overrides",
]
