"""CreateTopics (key 19): create topics with the controller's checks, or only check them.

Each topic is checked on its own (name, existence, configs, partitions and replicas, in the
controller's order) and answered with its own error.  Versions 5+ also return the topic's
partition count, replication factor and every config with its source; version 7 its id.

As Kafka does: a topic named twice in one request, or named ``__cluster_metadata``, is refused
with INVALID_REQUEST, and a request that would create more than 10,000 partitions in all with
POLICY_VIOLATION for every topic.

With an authorizer (ControllerApis' checks): CREATE on the cluster allows every topic, else each
topic needs CREATE on itself or answers TOPIC_AUTHORIZATION_FAILED ("Authorization failed."),
after the duplicate and ``__cluster_metadata`` refusals; only the topics allowed count towards
the partition limit.  A topic created without DESCRIBE_CONFIGS on it shows no configs, partition
count or replication factor, and ``topic_config_error_code`` TOPIC_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from mockbroker.core.config.topic import created_topic_configs
from mockbroker.core.errors import ApiException
from mockbroker.core.control.error_responses import KeyedShape
from mockbroker.core.security.acls import AclOperation as Op, ResourceType
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from mockbroker.handlers._common import once_each
from wire import errors, response_class

API_KEY = 19
RESPONSE = response_class(API_KEY)
#: The controller refuses a request that would create more partitions than this.
MAX_PARTITIONS_PER_REQUEST = 10_000
#: KRaft's own log, which no client may create
CLUSTER_METADATA_TOPIC = "__cluster_metadata"


ERRORS = (KeyedShape("topics", "name", "topics", "name"),)


@REGISTRY.handler(API_KEY, errors=ERRORS, names_topics=True)
def handle(core, ctx, request):
    cluster = core.cluster
    names = [t.name for t in request.topics]
    acl = access(core, ctx)
    creatable = set(names) if acl.cluster(Op.CREATE) else \
        acl.allowed(Op.CREATE, ResourceType.TOPIC, names)
    total = sum(len(t.assignments) if t.assignments else
                (cluster.settings["num_partitions"] if t.num_partitions == -1 else
                 max(t.num_partitions, 0)) for t in request.topics if t.name in creatable)
    if total > MAX_PARTITIONS_PER_REQUEST:
        return RESPONSE(throttle_time_ms=0, topics=[_failed(
            name, errors.POLICY_VIOLATION, "Excessively large number of partitions per request.")
            for name in dict.fromkeys(names)])
    # the controller mutation quota (KIP-599): refusing from v6, throttling before
    quota = core.quotas.mutations(ctx.principal.name, ctx.client_id or "",
                                  strict=ctx.api_version >= 6)
    results = []
    for topic, repeated in once_each(request.topics):
        if repeated:
            results.append(_failed(topic.name, errors.INVALID_REQUEST, "Duplicate topic name."))
            continue
        if topic.name == CLUSTER_METADATA_TOPIC:
            results.append(_failed(topic.name, errors.INVALID_REQUEST, "Creation of internal "
                                   f"topic {CLUSTER_METADATA_TOPIC} is prohibited."))
            continue
        if topic.name not in creatable:
            results.append(_failed(topic.name, errors.TOPIC_AUTHORIZATION_FAILED,
                                   "Authorization failed."))
            continue
        try:
            if quota.active:
                # its partitions count once every other check has passed
                checked = cluster.create_topic(
                    topic.name, topic.num_partitions, topic.replication_factor,
                    [(c.name, c.value) for c in topic.configs],
                    [(a.partition_index, a.broker_ids) for a in topic.assignments],
                    validate_only=True)
                if not quota.admit(len(checked.partitions)):
                    # Kafka leaves the message out: it is the error's own
                    results.append(_failed(topic.name, errors.THROTTLING_QUOTA_EXCEEDED, None))
                    continue
            created = cluster.create_topic(
                topic.name, topic.num_partitions, topic.replication_factor,
                [(c.name, c.value) for c in topic.configs],
                [(a.partition_index, a.broker_ids) for a in topic.assignments],
                validate_only=request.validate_only)
        except ApiException as exc:
            results.append(_failed(topic.name, exc.error_code, exc.message or None))
            continue
        if not acl.topic(Op.DESCRIBE_CONFIGS, topic.name):
            results.append(RESPONSE.CreatableTopicResult(
                name=topic.name, topic_id=created.topic_id, error_code=errors.NONE,
                error_message=None, topic_config_error_code=errors.TOPIC_AUTHORIZATION_FAILED,
                num_partitions=-1, replication_factor=-1, configs=[]))
            continue
        results.append(RESPONSE.CreatableTopicResult(
            name=topic.name, topic_id=created.topic_id, error_code=errors.NONE,
            error_message=None, topic_config_error_code=errors.NONE,
            num_partitions=len(created.partitions),
            replication_factor=len(created.partitions[0].replicas),
            configs=[RESPONSE.CreatableTopicConfigs(
                name=e.name, value=e.value, read_only=e.read_only, config_source=e.source,
                is_sensitive=e.sensitive)
                for e in created_topic_configs(cluster, created.configs)]))
    core.quotas.mute(ctx.broker_id, ctx.connection_id, quota.throttle_ms)
    return RESPONSE(throttle_time_ms=quota.throttle_ms, topics=results)


def _failed(name: str, code: int, message: str | None):
    return RESPONSE.CreatableTopicResult(name=name, error_code=code, error_message=message,
                                         num_partitions=-1, replication_factor=-1, configs=[])
