"""DescribeCluster (key 60): brokers, controller and cluster id for admin clients.

Brokers that are stopped count as fenced: they are listed only when the request asks for
fenced brokers (v2).  With no authorizer every operation is allowed, so when asked for the
cluster's authorized operations the answer is all of those Kafka defines for a cluster.
With an authorizer they are the principal's, or 0 when it may not DESCRIBE the cluster
(Kafka's AuthHelper); the request itself is never refused.
"""

from __future__ import annotations

from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from mockbroker.handlers._common import CLUSTER_OPERATIONS, NO_OPERATIONS
from mockbroker.handlers._common import address as _address
from wire import errors, response_class

API_KEY = 60
RESPONSE = response_class(API_KEY)
BROKER_ENDPOINT, CONTROLLER_ENDPOINT = 1, 2


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    cluster = core.cluster
    version = ctx.api_version
    endpoint = request.endpoint_type if version >= 1 else BROKER_ENDPOINT
    if endpoint not in (BROKER_ENDPOINT, CONTROLLER_ENDPOINT):
        return RESPONSE(error_code=errors.INVALID_REQUEST if version == 0 else
                        errors.UNSUPPORTED_ENDPOINT_TYPE,
                        error_message=f"Unsupported endpoint type {endpoint}",
                        cluster_id=cluster.cluster_id)
    if endpoint != BROKER_ENDPOINT:
        return RESPONSE(error_code=errors.INVALID_REQUEST if version == 0 else
                        errors.MISMATCHED_ENDPOINT_TYPE,
                        error_message="The request was sent to an endpoint of type BROKER, but "
                                      "we wanted an endpoint of type CONTROLLER",
                        cluster_id=cluster.cluster_id)
    include_fenced = request.include_fenced_brokers if version >= 2 else False
    brokers = [RESPONSE.DescribeClusterBroker(broker_id=b.node_id, rack=b.rack,
                                              is_fenced=not b.alive, **_address(b, ctx.listener))
               for b in sorted(cluster.brokers.values(), key=lambda b: b.node_id)
               if b.active or (include_fenced and b.registered)]
    controller = cluster.controller_id
    if controller not in {b.broker_id for b in brokers}:
        controller = -1
    operations = NO_OPERATIONS
    if request.include_cluster_authorized_operations:
        acl = access(core, ctx)
        operations = acl.cluster_operations() if acl.enforced else CLUSTER_OPERATIONS
    return RESPONSE(
        throttle_time_ms=0, error_code=errors.NONE, error_message=None,
        endpoint_type=BROKER_ENDPOINT, cluster_id=cluster.cluster_id, controller_id=controller,
        brokers=brokers,
        cluster_authorized_operations=operations)
