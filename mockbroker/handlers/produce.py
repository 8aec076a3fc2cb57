"""Produce (key 0): append record batches (:mod:`mockbroker.core.datapath.produce`); acks=0 gets no
response at all (and a connection closed by the broker when it failed, as Kafka does).

Kafka 4 advertises Produce from version 0 but refuses 0-2 with UNSUPPORTED_VERSION (older
librdkafka stops compressing when a broker's Produce minimum is 3), so we do the same: the
definitions start at 3, ApiVersions says 0, and a v0-2 request closes the connection as it
does on Kafka.

With an authorizer (KafkaApis' checks): a request holding a transactional batch needs WRITE on
its transactional id, or every partition answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED (acks=0:
the connection is closed); each topic needs WRITE, or its partitions answer
TOPIC_AUTHORIZATION_FAILED, whether the topic exists or not.  An idempotent producer needs no
more (Kafka 4 checks IDEMPOTENT_WRITE only in InitProducerId).
"""

from __future__ import annotations

from mockbroker.core.deferred import Close
from mockbroker.core.errors import ApiException
from mockbroker.core.datapath.produce import append_records
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import MESSAGES, access
from mockbroker.core.transactions.coordinator import write_check_error
from mockbroker.core.control.error_responses import PartitionShape
from mockbroker.handlers import REGISTRY
from mockbroker.handlers._common import find_topic, node_endpoints
from wire import CorruptRecordBatchError, errors, records, response_class

API_KEY = 0
RESPONSE = response_class(API_KEY)


#: an injected error sits on each partition it picks; with acks=0 it closes the connection
ERRORS = PartitionShape("topic_data", "name", "partition_data", "index", "responses", "name",
                        "partition_responses", "index", acks_zero_closes=True)


@REGISTRY.handler(API_KEY, errors=ERRORS)
def handle(core, ctx, request):
    cluster = core.cluster
    version = ctx.api_version
    topics = []
    leaders = set()
    acl = access(core, ctx)
    if acl.enforced and _has_transactional_batch(request) and (
            request.transactional_id is None or
            not acl.transactional_id(Op.WRITE, request.transactional_id)):
        return _refused(request, errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    check_transaction = None
    if request.transactional_id is not None:
        def check_write(partition, header):
            try:
                core.transactions.check_write(
                    request.transactional_id, header.producer_id, header.producer_epoch,
                    (partition.topic.name, partition.index), add=version >= 12)
            except ApiException as exc:
                # a coordinator that cannot be reached, or (before v12) one still ending the
                # last transaction, is retriable NOT_ENOUGH_REPLICAS; TRANSACTION_ABORTABLE
                # is known from v11
                raise ApiException(write_check_error(
                    exc.error_code, unreachable=errors.NOT_ENOUGH_REPLICAS,
                    abortable_known=version >= 11, concurrent_retried=version >= 12),
                    str(exc)) from None
        check_transaction = check_write
    for topic_data in request.topic_data:
        topic, missing = find_topic(cluster, version >= 13, topic_data.name, topic_data.topic_id)
        partitions = []
        for pdata in topic_data.partition_data:
            partition = None
            if topic is not None and 0 <= pdata.index < len(topic.partitions):
                partition = topic.partitions[pdata.index]
            out = RESPONSE.PartitionProduceResponse(index=pdata.index, base_offset=-1)
            if acl.enforced and not (topic is None and version >= 13) and \
                    not acl.topic(Op.WRITE, topic.name if topic is not None else topic_data.name):
                out.error_code = errors.TOPIC_AUTHORIZATION_FAILED
            elif partition is None:
                out.error_code = missing if topic is None else errors.UNKNOWN_TOPIC_OR_PARTITION
            else:
                result = append_records(cluster, partition, pdata.records, acks=request.acks,
                                        broker_id=ctx.broker_id, client_id=ctx.client_id,
                                        now_ms=ctx.now_ms, check_transaction=check_transaction)
                out.error_code = result.error_code
                out.base_offset = result.base_offset
                out.log_append_time_ms = result.log_append_time
                out.log_start_offset = result.log_start_offset
                if result.record_errors:
                    out.error_message = result.error_message
                    out.record_errors = [
                        RESPONSE.BatchIndexAndErrorMessage(batch_index=index,
                                                           batch_index_error_message=message)
                        for index, message in result.record_errors]
                if out.error_code == errors.NOT_LEADER_OR_FOLLOWER and version >= 10:
                    out.current_leader = RESPONSE.LeaderIdAndEpoch(
                        leader_id=partition.leader, leader_epoch=partition.leader_epoch)
                    leaders.add(partition.leader)
            partitions.append(out)
        topics.append(RESPONSE.TopicProduceResponse(
            name=topic_data.name, topic_id=topic_data.topic_id, partition_responses=partitions))
    if request.acks == 0:
        failed = sorted({errors.error_by_code(p.error_code).name for t in topics
                         for p in t.partition_responses if p.error_code != errors.NONE})
        if failed:
            return Close(f"produce with acks=0 failed ({', '.join(failed)})")
        return None
    return RESPONSE(responses=topics, throttle_time_ms=0,
                    node_endpoints=node_endpoints(cluster, leaders, RESPONSE.NodeEndpoint,
                                                  ctx.listener))


def _has_transactional_batch(request) -> bool:
    """Whether any batch of the request is transactional (Kafka's
    ``RequestUtils.hasTransactionalRecords``); unreadable records count as none."""
    for topic_data in request.topic_data:
        for pdata in topic_data.partition_data:
            try:
                if any(header.is_transactional for header, _, _ in
                       records.iter_batches(pdata.records or b"", allow_partial_tail=True)):
                    return True
            except CorruptRecordBatchError:
                continue
    return False


def _refused(request, code: int):
    """Kafka's error response to a whole Produce (``ProduceRequest.getErrorResponse``): every
    partition with the error and its message; with acks=0 the connection is closed instead."""
    if request.acks == 0:
        return Close(f"produce with acks=0 failed ({errors.error_by_code(code).name})")
    return RESPONSE(throttle_time_ms=0, node_endpoints=[], responses=[
        RESPONSE.TopicProduceResponse(
            name=t.name, topic_id=t.topic_id, partition_responses=[
                RESPONSE.PartitionProduceResponse(
                    index=p.index, error_code=code, base_offset=-1, log_append_time_ms=-1,
                    log_start_offset=-1, record_errors=[], error_message=MESSAGES[code])
                for p in t.partition_data])
        for t in request.topic_data])
