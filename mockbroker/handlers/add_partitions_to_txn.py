"""AddPartitionsToTxn (key 24): partitions join a producer's transaction.

Versions 0-3 are a producer's request for its own transaction; 4 and later carry a batch of
transactions, as brokers send them to the coordinator to check (``verify_only``, KIP-890) or
to add partitions on a producer's behalf.  Kafka checks the partitions first: when any names a
topic or partition that does not exist, those get UNKNOWN_TOPIC_OR_PARTITION, the others
OPERATION_NOT_ATTEMPTED, and the transaction is not touched.  A coordinator's refusal is given
to every partition; before version 2, PRODUCER_FENCED is said as INVALID_PRODUCER_EPOCH.

With an authorizer (KafkaApis' checks): a producer's request (v0-3) needs WRITE on the
transactional id, else every partition answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED; then
WRITE on each topic, an internal topic never being allowed: a refused topic's partitions answer
TOPIC_AUTHORIZATION_FAILED (whether it exists or not) and fail the transaction's partitions as an
unknown one does.  A broker's request (v4+) needs CLUSTER_ACTION on the cluster, else the whole
answer is CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from mockbroker.core.control.error_responses import KeyedShape
from mockbroker.core.errors import ApiException
from mockbroker.core.transactions.coordinator import TV_0, TV_2
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import INTERNAL_TOPICS, access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 24
RESPONSE = response_class(API_KEY)
#: v0-3: the error on every partition asked for, as Kafka answers one; v4+ have it at the top
ERRORS = (KeyedShape("v3_and_below_topics", "name", "results_by_topic_v3_and_below", "name",
                     inner=KeyedShape("partitions", None, "results_by_partition",
                                      "partition_index", error="partition_error_code")),)


def _results(core, ctx, transactional_id, producer_id, epoch, topics, verify_only=False):
    """[(topic, [(partition, error code)])] for one transaction."""
    wanted = [(t.name, p) for t in topics for p in t.partitions]
    acl = access(core, ctx)
    refused: set = set()
    if ctx.api_version < 4 and acl.enforced:
        if not acl.transactional_id(Op.WRITE, transactional_id):
            return _every(wanted, errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
        refused = {(name, p) for name, p in wanted
                   if name in INTERNAL_TOPICS or not acl.topic(Op.WRITE, name)}
    unknown = {(name, p) for name, p in wanted
               if (name, p) not in refused and core.cluster.partition(name, p) is None}
    codes: dict[tuple[str, int], int] = {}
    if unknown or refused:
        for key in wanted:
            codes[key] = errors.TOPIC_AUTHORIZATION_FAILED if key in refused else \
                errors.UNKNOWN_TOPIC_OR_PARTITION if key in unknown \
                else errors.OPERATION_NOT_ATTEMPTED
    elif verify_only:
        for key in wanted:
            try:
                core.transactions.verify(ctx.broker_id, transactional_id, producer_id, epoch,
                                         key)
                codes[key] = errors.NONE
            except ApiException as exc:
                codes[key] = exc.error_code
    else:
        try:
            core.transactions.add_partitions(
                ctx.broker_id, transactional_id, producer_id, epoch, wanted,
                client_version=TV_2 if ctx.api_version >= 4 else TV_0)
            code = errors.NONE
        except ApiException as exc:
            code = exc.error_code
        if code == errors.PRODUCER_FENCED and ctx.api_version < 2:
            code = errors.INVALID_PRODUCER_EPOCH
        codes = {key: code for key in wanted}
    return _by_topic(codes)


def _every(wanted, code: int):
    """Every partition of one transaction with ``code``, grouped by topic."""
    return _by_topic({key: code for key in wanted})


def _by_topic(codes: dict):
    """{(topic, partition): error code} as the response's topic results."""
    by_topic: dict[str, list] = {}
    for (name, p), code in codes.items():
        by_topic.setdefault(name, []).append(RESPONSE.AddPartitionsToTxnPartitionResult(
            partition_index=p, partition_error_code=code))
    return [RESPONSE.AddPartitionsToTxnTopicResult(name=name, results_by_partition=results)
            for name, results in by_topic.items()]


@REGISTRY.handler(API_KEY, errors=ERRORS)
def handle(core, ctx, request):
    if ctx.api_version >= 4 and not access(core, ctx).cluster(Op.CLUSTER_ACTION):
        return RESPONSE(throttle_time_ms=0, error_code=errors.CLUSTER_AUTHORIZATION_FAILED,
                        results_by_transaction=[])
    if ctx.api_version < 4:
        return RESPONSE(throttle_time_ms=0, results_by_topic_v3_and_below=_results(
            core, ctx, request.v3_and_below_transactional_id,
            request.v3_and_below_producer_id, request.v3_and_below_producer_epoch,
            request.v3_and_below_topics))
    return RESPONSE(throttle_time_ms=0, error_code=errors.NONE, results_by_transaction=[
        RESPONSE.AddPartitionsToTxnResult(
            transactional_id=txn.transactional_id, topic_results=_results(
                core, ctx, txn.transactional_id, txn.producer_id, txn.producer_epoch,
                txn.topics, txn.verify_only))
        for txn in request.transactions])
