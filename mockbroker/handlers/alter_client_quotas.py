"""AlterClientQuotas (key 49): set and remove quota values of entities, each entity checked and
changed on its own, as Kafka's controller does.  Needs ALTER_CONFIGS on the cluster when an
authorizer is configured."""

from __future__ import annotations

from mockbroker.core.control.error_responses import OwnAnswer
from mockbroker.core.quotas.entities import AlterOp, entity
from mockbroker.core.security.acls import AclOperation, authorizer_of, cluster_denial
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 49
RESPONSE = response_class(API_KEY)


def _entity_data(e):
    return [RESPONSE.EntityData(entity_type=kind, entity_name=name) for kind, name in e]


def _error_answer(version: int, request, code: int):
    """Kafka's error answer: every entity of the request echoed with the error
    (``AlterClientQuotasRequest.getErrorResponse``)."""
    return RESPONSE(throttle_time_ms=0, entries=[
        RESPONSE.EntryData(error_code=code, error_message=None, entity=[
            RESPONSE.EntityData(entity_type=c.entity_type, entity_name=c.entity_name)
            for c in e.entity]) for e in request.entries])


@REGISTRY.handler(API_KEY, errors=OwnAnswer(_error_answer))
def handle(core, ctx, request):
    entries = [(entity((c.entity_type, c.entity_name) for c in e.entity),
                [AlterOp(op.key, op.value, op.remove) for op in e.ops])
               for e in request.entries]
    authorizer = authorizer_of(core)
    if authorizer is not None and cluster_denial(authorizer, ctx, AclOperation.ALTER_CONFIGS):
        return RESPONSE(throttle_time_ms=0, entries=[RESPONSE.EntryData(
            error_code=errors.CLUSTER_AUTHORIZATION_FAILED,
            error_message="Cluster authorization failed.", entity=_entity_data(e))
            for e, _ in entries])
    results = core.quotas.entities.alter(entries, request.validate_only)
    if not request.validate_only and any(code == errors.NONE for _, code, _ in results):
        core.events.emit("client_quotas_altered", entities=[
            {kind: name for kind, name in e} for e, code, _ in results if code == errors.NONE])
    return RESPONSE(throttle_time_ms=0, entries=[
        RESPONSE.EntryData(error_code=code, error_message=message, entity=_entity_data(e))
        for e, code, message in results])
