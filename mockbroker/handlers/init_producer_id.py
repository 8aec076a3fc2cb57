"""InitProducerId (key 22): producer ids and epochs for idempotent (and transactional) producers.

An idempotent producer gets a fresh id at epoch 0 every time, even when it sends its current id
and epoch to have them bumped (KIP-360): Kafka keeps no state for producers without a
transactional id.  A transactional id keeps its producer id and gets the next epoch each time.
Version 6 is unstable in Kafka 4.3, so we stop at 5 as Kafka does by default.
"""

from __future__ import annotations

from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 22
RESPONSE = response_class(API_KEY)
MAX_EPOCH = 32767


@REGISTRY.handler(API_KEY, 0, 5)
def handle(core, ctx, request):
    txn = request.transactional_id
    if (request.producer_id == -1) != (request.producer_epoch == -1):
        return RESPONSE(error_code=errors.INVALID_REQUEST, producer_id=-1, producer_epoch=-1)
    if txn is not None:
        known = core.transactional_producers.get(txn)
        if known is None or known[1] >= MAX_EPOCH - 1:
            producer_id, epoch = core.next_producer_id(), 0
        else:
            producer_id, epoch = known[0], known[1] + 1
        core.transactional_producers[txn] = (producer_id, epoch)
    else:
        producer_id, epoch = core.next_producer_id(), 0
    return RESPONSE(error_code=errors.NONE, producer_id=producer_id, producer_epoch=epoch)
