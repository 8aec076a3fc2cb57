"""DescribeTransactions (key 65): the state of transactional ids this broker coordinates, as
``kafka-transactions.sh describe`` shows them.  Each id is answered on its own: NOT_COORDINATOR
from the wrong broker, TRANSACTIONAL_ID_NOT_FOUND for an id it does not know.

With an authorizer (KafkaApis' checks): an id the principal may not DESCRIBE answers
TRANSACTIONAL_ID_AUTHORIZATION_FAILED with nothing else; of the others, only the partitions of
topics the principal may DESCRIBE are shown."""

from __future__ import annotations

from mockbroker.core.control.error_responses import KeyedShape
from mockbroker.core.errors import ApiException
from mockbroker.core.security.acls import AclOperation as Op, ResourceType
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 65
RESPONSE = response_class(API_KEY)
#: the error on each transactional id asked about, as Kafka answers one
ERRORS = (KeyedShape("transactional_ids", None, "transaction_states", "transactional_id"),)


def _state(core, ctx, acl, transactional_id: str):
    if not acl.transactional_id(Op.DESCRIBE, transactional_id):
        return RESPONSE.TransactionState(
            transactional_id=transactional_id,
            error_code=errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    try:
        meta = core.transactions.describe(ctx.broker_id, transactional_id)
    except ApiException as exc:
        return RESPONSE.TransactionState(
            error_code=exc.error_code, transactional_id=transactional_id, transaction_state="",
            transaction_timeout_ms=0, transaction_start_time_ms=-1, producer_id=-1,
            producer_epoch=-1, topics=[])
    by_topic: dict[str, list[int]] = {}
    shown = acl.allowed(Op.DESCRIBE, ResourceType.TOPIC, {topic for topic, _ in meta.partitions})
    for topic, index in sorted(meta.partitions):
        if topic in shown:
            by_topic.setdefault(topic, []).append(index)
    return RESPONSE.TransactionState(
        error_code=errors.NONE, transactional_id=transactional_id,
        transaction_state=meta.state.value, transaction_timeout_ms=meta.timeout_ms,
        transaction_start_time_ms=meta.start_ms, producer_id=meta.producer_id,
        producer_epoch=meta.producer_epoch,
        topics=[RESPONSE.TopicData(topic=topic, partitions=partitions)
                for topic, partitions in by_topic.items()])


@REGISTRY.handler(API_KEY, errors=ERRORS)
def handle(core, ctx, request):
    acl = access(core, ctx)
    return RESPONSE(throttle_time_ms=0, transaction_states=[
        _state(core, ctx, acl, tid) for tid in request.transactional_ids])
