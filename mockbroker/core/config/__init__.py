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

The dependencies go one way: values <- topic, group <- broker <- describe, alter.  The
operations take the cluster as an argument (:class:`ConfigCluster` says what they use of it);
nothing here imports the cluster module, which imports this package to own its
:class:`BrokerConfigs`.

Import from the module that holds a name: this package imports none of them, so a broker that
never answers a config API never loads DescribeConfigs and the alter operations.
"""
