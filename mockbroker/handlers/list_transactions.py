"""ListTransactions (key 66): the transactions this broker coordinates, filtered by state,
producer id, how long they have run (v1) and a regular expression over the id (v2), as
``kafka-transactions.sh list`` asks every broker.  State names that are no state are echoed in
``unknown_state_filters`` (and match nothing).

With an authorizer only the transactional ids the principal may DESCRIBE are listed
(KafkaApis' filter)."""

from __future__ import annotations

from mockbroker.core.errors import ApiException
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 66
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    try:
        found, unknown = core.transactions.list(
            ctx.broker_id, states=request.state_filters,
            producer_ids=request.producer_id_filters,
            min_duration_ms=request.duration_filter if ctx.api_version >= 1 else -1,
            pattern=request.transactional_id_pattern if ctx.api_version >= 2 else None)
    except ApiException as exc:
        return RESPONSE(throttle_time_ms=0, error_code=exc.error_code, unknown_state_filters=[],
                        transaction_states=[])
    acl = access(core, ctx)
    found = [meta for meta in found if acl.transactional_id(Op.DESCRIBE, meta.transactional_id)]
    return RESPONSE(throttle_time_ms=0, error_code=errors.NONE, unknown_state_filters=unknown,
                    transaction_states=[RESPONSE.TransactionState(
                        transactional_id=meta.transactional_id, producer_id=meta.producer_id,
                        transaction_state=meta.state.value) for meta in found])
