"""AddOffsetsToTxn (key 25): a group's ``__consumer_offsets`` partition joins a producer's
transaction, before the producer commits the group's offsets in it (TxnOffsetCommit).  Before
version 2, PRODUCER_FENCED is said as INVALID_PRODUCER_EPOCH.

With an authorizer (KafkaApis' checks): WRITE on the transactional id (else
TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then READ on the group (else
GROUP_AUTHORIZATION_FAILED)."""

from __future__ import annotations

from mockbroker.core.errors import ApiException
from mockbroker.core.coordinators.placement import OFFSETS_TOPIC
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 25
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    acl = access(core, ctx)
    if not acl.transactional_id(Op.WRITE, request.transactional_id):
        return RESPONSE(throttle_time_ms=0,
                        error_code=errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    if not acl.group(Op.READ, request.group_id):
        return RESPONSE(throttle_time_ms=0, error_code=errors.GROUP_AUTHORIZATION_FAILED)
    try:
        index = core.groups.placement.index(request.group_id)
        core.transactions.add_partitions(ctx.broker_id, request.transactional_id,
                                         request.producer_id, request.producer_epoch,
                                         [(OFFSETS_TOPIC, index)])
        code = errors.NONE
    except ApiException as exc:
        code = exc.error_code
    if code == errors.PRODUCER_FENCED and ctx.api_version < 2:
        code = errors.INVALID_PRODUCER_EPOCH
    return RESPONSE(throttle_time_ms=0, error_code=code)
