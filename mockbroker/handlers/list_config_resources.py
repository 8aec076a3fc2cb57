"""ListConfigResources (key 74; ListClientMetricsResources before Kafka 4.1): the resources that
have configs, by type, in Kafka's order of types: groups with configs of their own, client
metrics subscriptions, broker loggers, brokers, then every topic (the internal ones included).
v0 lists client metrics subscriptions alone; a type v1 does not know (or v0's request asking for
any but client metrics, which the Java client refuses to send) is answered UNSUPPORTED_VERSION
with nothing listed.  Needs DESCRIBE_CONFIGS on the cluster when an authorizer is configured.

Client metrics subscriptions (KIP-714) are listed whether or not the telemetry receiver is on,
as Kafka lists them without one, in the order of Kafka's hash map of their names; topics are
listed in the order they were made, where Kafka lists them in the order of its metadata image's
hash map.
"""

from __future__ import annotations

from mockbroker.core.security.acls import AclOperation, authorizer_of, cluster_denial
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 74
RESPONSE = response_class(API_KEY)
TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32
#: the types each version lists, in the order Kafka answers them
_TYPES = {0: (CLIENT_METRICS,), 1: (GROUP, CLIENT_METRICS, BROKER_LOGGER, BROKER, TOPIC)}


def _names(core, kind: int) -> list[str]:
    cluster = core.cluster
    if kind == GROUP:
        return [group for group, overrides in cluster.broker_configs.group_configs.items()
                if overrides]
    if kind in (BROKER, BROKER_LOGGER):
        return [str(node_id) for node_id in sorted(cluster.brokers)]
    if kind == TOPIC:
        return list(cluster.topics)
    from mockbroker.core.config import client_metrics

    return client_metrics.names(cluster.broker_configs)


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    authorizer = authorizer_of(core)
    if authorizer is not None and cluster_denial(authorizer, ctx, AclOperation.DESCRIBE_CONFIGS):
        return RESPONSE(throttle_time_ms=0, error_code=errors.CLUSTER_AUTHORIZATION_FAILED,
                        config_resources=[])
    served = _TYPES[min(ctx.api_version, 1)]
    asked = set(request.resource_types or ()) if ctx.api_version >= 1 else set()
    if asked - set(served):
        return RESPONSE(throttle_time_ms=0, error_code=errors.UNSUPPORTED_VERSION,
                        config_resources=[])
    return RESPONSE(throttle_time_ms=0, error_code=errors.NONE, config_resources=[
        RESPONSE.ConfigResource(resource_name=name, resource_type=kind)
        for kind in served if not asked or kind in asked for name in _names(core, kind)])
