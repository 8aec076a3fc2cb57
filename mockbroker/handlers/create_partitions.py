"""CreatePartitions (key 37): add partitions to topics, with optional manual replica
assignments, or only check that they could be added (``validate_only``).

With an authorizer each topic needs ALTER (ControllerApis' check, after the duplicate check):
one the principal may not alter answers TOPIC_AUTHORIZATION_FAILED with no message, whether it
exists or not."""

from __future__ import annotations

from mockbroker.core.errors import ApiException
from mockbroker.core.control.error_responses import KeyedShape
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from mockbroker.handlers._common import once_each
from wire import errors, response_class

API_KEY = 37
RESPONSE = response_class(API_KEY)


ERRORS = (KeyedShape("topics", "name", "results", "name"),)


@REGISTRY.handler(API_KEY, errors=ERRORS, names_topics=True)
def handle(core, ctx, request):
    cluster = core.cluster
    acl = access(core, ctx)
    # the controller mutation quota (KIP-599): refusing from v3, throttling before
    quota = core.quotas.mutations(ctx.principal.name, ctx.client_id or "",
                                  strict=ctx.api_version >= 3)
    results = []
    for topic, repeated in once_each(request.topics):
        if repeated:
            results.append(_result(topic.name, errors.INVALID_REQUEST, "Duplicate topic name."))
            continue
        if not acl.topic(Op.ALTER, topic.name):
            results.append(_result(topic.name, errors.TOPIC_AUTHORIZATION_FAILED, None))
            continue
        assignments = None if topic.assignments is None else \
            [list(a.broker_ids) for a in topic.assignments]
        try:
            if quota.active:
                # the new partitions count once every other check has passed
                cluster.admin_create_partitions(topic.name, topic.count, assignments,
                                                validate_only=True)
                if not quota.admit(topic.count - len(cluster.topics[topic.name].partitions)):
                    results.append(_result(topic.name, errors.THROTTLING_QUOTA_EXCEEDED, None))
                    continue
            cluster.admin_create_partitions(topic.name, topic.count, assignments,
                                            validate_only=request.validate_only)
        except ApiException as exc:
            results.append(_result(topic.name, exc.error_code, exc.message or None))
        else:
            results.append(_result(topic.name, errors.NONE, None))
    core.quotas.mute(ctx.broker_id, ctx.connection_id, quota.throttle_ms)
    return RESPONSE(throttle_time_ms=quota.throttle_ms, results=results)


def _result(name, code, message):
    return RESPONSE.CreatePartitionsTopicResult(name=name, error_code=code, error_message=message)
