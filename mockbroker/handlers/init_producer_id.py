"""InitProducerId (key 22): producer ids and epochs for idempotent (and transactional)
producers (:mod:`mockbroker.core.producers`).  Version 6 is unstable in Kafka 4.3, so we stop
at 5 as Kafka does by default.
"""

from __future__ import annotations

from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 22
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY, 0, 5)
def handle(core, ctx, request):
    if (request.producer_id == -1) != (request.producer_epoch == -1):
        return RESPONSE(error_code=errors.INVALID_REQUEST, producer_id=-1, producer_epoch=-1)
    producer_id, epoch = core.producers.init(request.transactional_id)
    return RESPONSE(error_code=errors.NONE, producer_id=producer_id, producer_epoch=epoch)
