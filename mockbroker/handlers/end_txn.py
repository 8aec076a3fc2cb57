"""EndTxn (key 26): commit or abort a producer's transaction.

Version 5 is transaction version 2 (KIP-890): the coordinator bumps the producer's epoch as the
transaction ends and answers with the producer id and epoch to use next.  Before version 2,
PRODUCER_FENCED is said as INVALID_PRODUCER_EPOCH.

With an authorizer the producer needs WRITE on its transactional id (KafkaApis' check), else
TRANSACTIONAL_ID_AUTHORIZATION_FAILED."""

from __future__ import annotations

from mockbroker.core.errors import ApiException
from mockbroker.core.transactions.coordinator import TV_0, TV_2
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 26
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    if not access(core, ctx).transactional_id(Op.WRITE, request.transactional_id):
        return RESPONSE(throttle_time_ms=0, producer_id=-1, producer_epoch=-1,
                        error_code=errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    try:
        producer_id, epoch = core.transactions.end_txn(
            ctx.broker_id, request.transactional_id, request.producer_id,
            request.producer_epoch, request.committed,
            client_version=TV_2 if ctx.api_version >= 5 else TV_0)
    except ApiException as exc:
        code = exc.error_code
        if code == errors.PRODUCER_FENCED and ctx.api_version < 2:
            code = errors.INVALID_PRODUCER_EPOCH
        return RESPONSE(throttle_time_ms=0, error_code=code, producer_id=-1, producer_epoch=-1)
    return RESPONSE(throttle_time_ms=0, error_code=errors.NONE, producer_id=producer_id,
                    producer_epoch=epoch)
