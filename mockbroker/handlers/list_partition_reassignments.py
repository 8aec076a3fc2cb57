"""ListPartitionReassignments (key 46): the reassignments running, of every partition (a null
topic list) or of those named; unknown topics and partitions, and partitions not being
reassigned, are left out, as Kafka's controller leaves them.  Needs DESCRIBE on the cluster
when an authorizer is configured.
"""

from __future__ import annotations

from mockbroker.core.security.acls import AclOperation, authorizer_of, cluster_denial
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 46
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY, names_topics=True)
def handle(core, ctx, request):
    authorizer = authorizer_of(core)
    if authorizer is not None and cluster_denial(authorizer, ctx, AclOperation.DESCRIBE):
        return RESPONSE(throttle_time_ms=0, error_code=errors.CLUSTER_AUTHORIZATION_FAILED,
                        error_message=None, topics=[])
    cluster = core.cluster
    running = cluster.replication.reassignments()
    if request.topics is not None:
        wanted = {(t.name, i) for t in request.topics for i in t.partition_indexes}
        running = [p for p in running if (p.topic.name, p.index) in wanted]
    topics: dict[str, list] = {}
    for p in running:
        topics.setdefault(p.topic.name, []).append(RESPONSE.OngoingPartitionReassignment(
            partition_index=p.index, replicas=list(p.replicas), adding_replicas=list(p.adding),
            removing_replicas=list(p.removing)))
    return RESPONSE(throttle_time_ms=0, error_code=errors.NONE, error_message=None, topics=[
        RESPONSE.OngoingTopicReassignment(name=name, partitions=partitions)
        for name, partitions in topics.items()])
