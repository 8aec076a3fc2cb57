"""AlterPartitionReassignments (key 45): start, replace or cancel (null replicas) partition
reassignments, each partition on its own, by the replication control
(:meth:`~mockbroker.core.controller.replication.ReplicationControl.reassign`).

The per-partition errors and messages are Kafka's controller's: ``Unable to find a topic named
T.``, ``Unable to find partition T:P.``, NO_REASSIGNMENT_IN_PROGRESS (with a null message) for a
cancel with nothing running, INVALID_REPLICA_ASSIGNMENT for an empty list, an unknown broker or
a duplicate, and (v1, ``allow_replication_factor_change`` false) INVALID_REPLICATION_FACTOR.  A
registered broker that is stopped is accepted: the reassignment waits for it.  Needs ALTER on
the cluster when an authorizer is configured.
"""

from __future__ import annotations

from mockbroker.core.security.acls import AclOperation, authorizer_of, cluster_denial
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 45
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY, names_topics=True)
def handle(core, ctx, request):
    allow = request.allow_replication_factor_change if ctx.api_version >= 1 else True
    authorizer = authorizer_of(core)
    if authorizer is not None and cluster_denial(authorizer, ctx, AclOperation.ALTER):
        return RESPONSE(throttle_time_ms=0, allow_replication_factor_change=allow,
                        error_code=errors.CLUSTER_AUTHORIZATION_FAILED,
                        error_message=None, responses=[])
    replication = core.cluster.replication
    responses = []
    for asked in request.topics:
        outcomes = []
        for wanted in asked.partitions:
            target = None if wanted.replicas is None else list(wanted.replicas)
            code, message = replication.reassign_named(
                asked.name, wanted.partition_index, target,
                allow_replication_factor_change=allow)
            outcomes.append(RESPONSE.ReassignablePartitionResponse(
                partition_index=wanted.partition_index, error_code=code, error_message=message))
        responses.append(RESPONSE.ReassignableTopicResponse(name=asked.name,
                                                             partitions=outcomes))
    return RESPONSE(throttle_time_ms=0, allow_replication_factor_change=allow,
                    error_code=errors.NONE, error_message=None, responses=responses)
