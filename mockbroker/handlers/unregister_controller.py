"""UnregisterController (key 94): remove a controller's registration from the metadata log, as
Kafka 4.4's active controller does (:meth:`mockbroker.core.quorum.ControllerQuorum.
unregister_controller`).  The active controller will not unregister itself (INVALID_REQUEST), an
id with no registration is CONTROLLER_ID_NOT_REGISTERED, each with Kafka's message; a controller
still running registers again at once.  A Kafka broker forwards the request to the active
controller; the mock answers for it.

With an authorizer the principal needs ALTER on the cluster.
"""

from __future__ import annotations

from mockbroker.core.quorum import QuorumError, quorum_of
from mockbroker.core.security.acls import AclOperation, authorizer_of, cluster_denial
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 94
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    authorizer = authorizer_of(core)
    if authorizer is not None:
        denial = cluster_denial(authorizer, ctx, AclOperation.ALTER)
        if denial is not None:
            return RESPONSE(throttle_time_ms=0, error_code=errors.CLUSTER_AUTHORIZATION_FAILED,
                            error_message=denial)
    try:
        quorum_of(core.cluster).unregister_controller(request.controller_id)
    except QuorumError as exc:
        return RESPONSE(throttle_time_ms=0, error_code=exc.error_code, error_message=exc.message)
    return RESPONSE(throttle_time_ms=0, error_code=errors.NONE, error_message="")
