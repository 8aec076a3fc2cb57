"""InitProducerId (key 22): a producer id and epoch for an idempotent producer, or for a
transactional one from its transaction coordinator (:mod:`mockbroker.core.transactions`).
Version 6 (KIP-939's two-phase commit) is unstable in Kafka 4.4, so we stop at 5 as Kafka does
by default.  Before version 4 a fenced producer is told INVALID_PRODUCER_EPOCH, the error
those clients know, rather than PRODUCER_FENCED.

With an authorizer (KafkaApis' checks, before anything else): a transactional producer needs
WRITE on its transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED); an idempotent one
IDEMPOTENT_WRITE on the cluster or WRITE on some topic (else CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from mockbroker.core.errors import ApiException
from mockbroker.core.security.acls import AclOperation as Op, ResourceType
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 22
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    acl = access(core, ctx)
    if request.transactional_id is not None:
        if not acl.transactional_id(Op.WRITE, request.transactional_id):
            return RESPONSE(error_code=errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                            producer_id=-1, producer_epoch=-1)
    elif not acl.cluster(Op.IDEMPOTENT_WRITE) and \
            not acl.any_of_type(Op.WRITE, ResourceType.TOPIC):
        return RESPONSE(error_code=errors.CLUSTER_AUTHORIZATION_FAILED, producer_id=-1,
                        producer_epoch=-1)
    if (request.producer_id == -1) != (request.producer_epoch == -1):
        return RESPONSE(error_code=errors.INVALID_REQUEST, producer_id=-1, producer_epoch=-1)
    if request.transactional_id is None:
        return RESPONSE(error_code=errors.NONE, producer_id=core.producers.next_id(),
                        producer_epoch=0)
    try:
        producer_id, epoch = core.transactions.init_producer_id(
            ctx.broker_id, request.transactional_id, request.transaction_timeout_ms,
            request.producer_id, request.producer_epoch)
    except ApiException as exc:
        code = exc.error_code
        if code == errors.PRODUCER_FENCED and ctx.api_version < 4:
            code = errors.INVALID_PRODUCER_EPOCH
        return RESPONSE(error_code=code, producer_id=-1, producer_epoch=-1)
    return RESPONSE(error_code=errors.NONE, producer_id=producer_id, producer_epoch=epoch)
