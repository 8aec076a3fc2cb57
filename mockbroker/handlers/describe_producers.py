"""DescribeProducers (key 61): the idempotent and transactional producers a partition's leader
knows (``kafka-transactions.sh describe-producers``, and finding hanging transactions): each
one's epoch, last sequence and timestamp, the coordinator epoch of its last marker, and where
its open transaction starts.

With an authorizer each topic needs READ (KafkaApis' check, after the name's validity): the
partitions of one the principal may not read answer TOPIC_AUTHORIZATION_FAILED with Kafka's
message, whether it exists or not."""

from __future__ import annotations

from mockbroker.core.control.error_responses import PartitionShape
from mockbroker.core.datapath.replica import replica_error
from mockbroker.core.names import topic_name_error
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import MESSAGES, access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 61
RESPONSE = response_class(API_KEY)
#: an error on each partition asked for (by index), as Kafka answers one; a fault fails the
#: partitions it picks and the others are described as usual
ERRORS = PartitionShape("topics", "name", "partition_indexes", None, "topics", "name",
                        "partitions", "partition_index")


def _partition(core, ctx, partition, index: int):
    if partition is None:
        return RESPONSE.PartitionResponse(partition_index=index,
                                          error_code=errors.UNKNOWN_TOPIC_OR_PARTITION,
                                          active_producers=[])
    error = replica_error(partition, ctx.broker_id)
    if error != errors.NONE:
        return RESPONSE.PartitionResponse(partition_index=index, error_code=error,
                                          active_producers=[])
    state = partition.log.producer_state
    return RESPONSE.PartitionResponse(
        partition_index=index, error_code=errors.NONE, active_producers=[
            RESPONSE.ProducerState(
                producer_id=pid, producer_epoch=entry.epoch, last_sequence=entry.last_seq,
                last_timestamp=entry.last_timestamp, coordinator_epoch=entry.coordinator_epoch,
                current_txn_start_offset=state.ongoing.get(pid, -1))
            for pid, entry in sorted(state.producers.items())])


@REGISTRY.handler(API_KEY, errors=ERRORS)
def handle(core, ctx, request):
    acl = access(core, ctx)
    return RESPONSE(throttle_time_ms=0, topics=[
        RESPONSE.TopicResponse(name=t.name, partitions=[
            _partition(core, ctx, core.cluster.partition(t.name, index), index)
            if topic_name_error(t.name) or acl.topic(Op.READ, t.name) else _refused(index)
            for index in t.partition_indexes])
        for t in request.topics])


def _refused(index: int):
    code = errors.TOPIC_AUTHORIZATION_FAILED
    return RESPONSE.PartitionResponse(partition_index=index, error_code=code,
                                      error_message=MESSAGES[code], active_producers=[])
