"""FindCoordinator (key 10): which broker coordinates a group or a transactional id.

Versions 0-3 ask for one key; 4 and later for a batch.  The coordinator is the leader of the
key's ``__consumer_offsets`` (or ``__transaction_state``) partition, created on first use.

A key whose partition the internal topic does not have (one created by hand with fewer
partitions than the broker's setting) has no coordinator: COORDINATOR_NOT_AVAILABLE.  The empty
group id is a key like any other, as Kafka 4.4 answers it.

With an authorizer (KafkaApis' check, before anything else): a group key needs DESCRIBE on the
group (else GROUP_AUTHORIZATION_FAILED), a transactional id DESCRIBE on it (else
TRANSACTIONAL_ID_AUTHORIZATION_FAILED).

Before v4 the answer carries Kafka's ``Errors.message()`` of its error code, "NONE" included;
from v4 each key's entry has no message.
"""

from __future__ import annotations

from mockbroker.core.errors import ApiException
from mockbroker.core.control.error_responses import KeyedShape
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import MESSAGES, access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 10
RESPONSE = response_class(API_KEY)


def _lookup(core, key: str, key_type: int, listener: str, acl):
    if key_type == 0 and not acl.group(Op.DESCRIBE, key):
        return errors.GROUP_AUTHORIZATION_FAILED, -1, "", -1
    if key_type == 1 and not acl.transactional_id(Op.DESCRIBE, key):
        return errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1, "", -1
    if key_type not in (0, 1):
        return errors.INVALID_REQUEST, -1, "", -1
    try:
        coordinator = core.groups if key_type == 0 else core.transactions
        node_id = coordinator.placement.coordinator_for(key)
    except ApiException as exc:
        return exc.error_code, -1, "", -1
    broker = core.cluster.brokers.get(node_id)
    if broker is None:
        return errors.COORDINATOR_NOT_AVAILABLE, -1, "", -1
    return (errors.NONE, node_id) + broker.address(listener)


#: Kafka's ``Errors.message()`` of each error this API answers, carried before v4
OLD_MESSAGES = {
    errors.NONE: "NONE",
    errors.COORDINATOR_NOT_AVAILABLE: "The coordinator is not available.",
    errors.INVALID_REQUEST: "This most likely occurs because of a request being malformed by "
                            "the client library or the message was sent to an incompatible "
                            "broker. See the broker logs for more details.",
    **MESSAGES,
}

#: from v4 an injected error sits on each key (before, at the top)
ERRORS = (KeyedShape("coordinator_keys", None, "coordinators", "key"),)


@REGISTRY.handler(API_KEY, errors=ERRORS)
def handle(core, ctx, request):
    acl = access(core, ctx)
    if ctx.api_version < 4:
        error, node_id, host, port = _lookup(core, request.key, request.key_type, ctx.listener,
                                             acl)
        return RESPONSE(error_code=error, error_message=OLD_MESSAGES.get(error), node_id=node_id,
                        host=host, port=port)
    coordinators = []
    for key in request.coordinator_keys:
        error, node_id, host, port = _lookup(core, key, request.key_type, ctx.listener, acl)
        coordinators.append(RESPONSE.Coordinator(key=key, node_id=node_id, host=host, port=port,
                                                 error_code=error))
    return RESPONSE(coordinators=coordinators)
