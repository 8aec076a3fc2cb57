"""InitProducerId (key 22): a producer id and epoch for an idempotent producer, or for a
transactional one from its transaction coordinator (:mod:`mockbroker.core.transactions`).
Version 6 (KIP-939's two-phase commit) is unstable in Kafka 4.4, so we stop at 5 as Kafka does
by default.  Before version 4 a fenced producer is told INVALID_PRODUCER_EPOCH, the error
those clients know, rather than PRODUCER_FENCED.
"""

from __future__ import annotations

from mockbroker.core.errors import ApiException
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 22
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY, 0, 5)
def handle(core, ctx, request):
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
