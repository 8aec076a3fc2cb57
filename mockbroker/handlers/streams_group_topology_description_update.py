"""StreamsGroupTopologyDescriptionUpdate (key 93, KIP-1331): a streams member hands the broker
a full description of its topology, for a topology description plugin to store.  Kafka 4.4
configures no such plugin by default, and neither does mockbroker: the request is answered
UNSUPPORTED_VERSION with Kafka's message (after the group ACL check, READ with an authorizer),
which the Streams client takes as "not stored", as it does against Kafka."""

from __future__ import annotations

from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 93
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    if not access(core, ctx).group(Op.READ, request.group_id):
        return RESPONSE(throttle_time_ms=0, error_code=errors.GROUP_AUTHORIZATION_FAILED,
                        error_message=None)
    return RESPONSE(throttle_time_ms=0, error_code=errors.UNSUPPORTED_VERSION,
                    error_message="The broker has no streams group topology description "
                                  "plugin configured.")
