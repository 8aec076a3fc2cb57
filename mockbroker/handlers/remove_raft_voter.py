"""RemoveRaftVoter (key 81): remove a controller from the KRaft voter set (KIP-853;
``kafka-metadata-quorum.sh remove-controller``, the Admin's ``removeRaftVoter``).

A Kafka broker forwards the request to the active controller; the mock answers for it with the
leader's checks, errors and messages
(:meth:`mockbroker.core.quorum.ControllerQuorum.remove_voter`): another cluster's id is
INCONSISTENT_CLUSTER_ID, a voter without a directory id (as a static voter's is) INVALID_REQUEST,
and on a static quorum (``kraft.version`` 0, the mock's) every other request
UNSUPPORTED_VERSION.

With an authorizer the principal needs ALTER on the cluster (the controller's check), else the
answer is CLUSTER_AUTHORIZATION_FAILED with its message.
"""

from __future__ import annotations

from mockbroker.core.quorum import QuorumError, quorum_of
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import MESSAGES, access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 81
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    if not access(core, ctx).cluster(Op.ALTER):
        code = errors.CLUSTER_AUTHORIZATION_FAILED
        return RESPONSE(throttle_time_ms=0, error_code=code, error_message=MESSAGES[code])
    try:
        quorum_of(core.cluster).remove_voter(request.cluster_id, request.voter_id,
                                             request.voter_directory_id)
    except QuorumError as exc:
        return RESPONSE(throttle_time_ms=0, error_code=exc.error_code,
                        error_message=exc.message)
    return RESPONSE(throttle_time_ms=0, error_code=errors.NONE, error_message=None)
