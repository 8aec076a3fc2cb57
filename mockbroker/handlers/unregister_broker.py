"""UnregisterBroker (key 64): the controller forgets a broker (``kafka-cluster.sh unregister``,
``Admin.unregisterBroker``), as :meth:`~mockbroker.core.cluster.Cluster.unregister_broker`
does.  The broker leaves every ISR, its partitions elect other leaders, and Metadata and
DescribeCluster (fenced brokers included) no longer list it.  A broker still running keeps
serving as Kafka's process does, until it is restarted.

An id the controller does not know (never was, or already unregistered) is refused with
BROKER_ID_NOT_REGISTERED and Kafka's message.  A success carries an empty error message, not a
null one, as Kafka 4.4 answers.  With an authorizer the principal needs ALTER on the cluster.
"""

from __future__ import annotations

from mockbroker.core.errors import ApiException
from mockbroker.core.security.acls import AclOperation, authorizer_of, cluster_denial
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 64
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
        core.cluster.unregister_broker(request.broker_id)
    except ApiException as exc:
        return RESPONSE(throttle_time_ms=0, error_code=exc.error_code, error_message=exc.message)
    return RESPONSE(throttle_time_ms=0, error_code=errors.NONE, error_message="")
