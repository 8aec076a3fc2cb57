"""WriteTxnMarkers (key 27): commit or abort markers written to the partitions this broker
leads.  Kafka's transaction coordinators send it to partition leaders; Kafka's Admin sends it
to abort a hanging transaction (``kafka-transactions.sh abort``).  Each partition is answered
on its own: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, or INVALID_PRODUCER_EPOCH for a
marker older than the producer's epoch there.

With an authorizer the sender needs ALTER or CLUSTER_ACTION on the cluster (KafkaApis' check),
else every partition answers CLUSTER_AUTHORIZATION_FAILED and no marker is written."""

from __future__ import annotations

from mockbroker.core.control.error_responses import KeyedShape
from mockbroker.core.errors import ApiException
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 27
RESPONSE = response_class(API_KEY)
#: the error on every partition of every marker, as Kafka answers one
ERRORS = (KeyedShape("markers", "producer_id", "markers", "producer_id", inner=KeyedShape(
    "topics", "name", "topics", "name",
    inner=KeyedShape("partition_indexes", None, "partitions", "partition_index"))),)


def _write(core, ctx, marker, topic: str, index: int) -> int:
    try:
        core.transactions.write_marker(ctx.broker_id, topic, index, marker.producer_id,
                                       marker.producer_epoch, marker.transaction_result,
                                       marker.coordinator_epoch)
    except ApiException as exc:
        return exc.error_code
    return errors.NONE


@REGISTRY.handler(API_KEY, errors=ERRORS)
def handle(core, ctx, request):
    acl = access(core, ctx)
    if acl.cluster(Op.ALTER) or acl.cluster(Op.CLUSTER_ACTION):
        write = _write
    else:
        def write(*_):
            return errors.CLUSTER_AUTHORIZATION_FAILED
    return RESPONSE(markers=[RESPONSE.WritableTxnMarkerResult(
        producer_id=marker.producer_id, topics=[RESPONSE.WritableTxnMarkerTopicResult(
            name=t.name, partitions=[RESPONSE.WritableTxnMarkerPartitionResult(
                partition_index=index, error_code=write(core, ctx, marker, t.name, index))
                for index in t.partition_indexes])
            for t in marker.topics])
        for marker in request.markers])
