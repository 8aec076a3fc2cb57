"""DeleteTopics (key 20): delete topics by name, or (version 6) by topic id.

As in Kafka 4 (KRaft), the controller does not refuse internal topics: deleting
``__consumer_offsets`` succeeds.  With ``delete.topic.enable=false`` every topic is refused
(TOPIC_DELETION_DISABLED, or INVALID_REQUEST before version 3).

With an authorizer (ControllerApis' checks): DELETE on the cluster allows every topic; else a
topic named needs DESCRIBE, or it answers TOPIC_AUTHORIZATION_FAILED before its existence is
looked at (one it may describe but that does not exist is unknown), and DELETE, or it answers
the same.  A topic id that names a topic the principal may
not delete answers TOPIC_AUTHORIZATION_FAILED with the topic's name only if it may DESCRIBE it
(an unknown id is said as such).
"""

from __future__ import annotations

import uuid

from mockbroker.core.errors import ApiException
from mockbroker.core.control.error_responses import KeyedShape
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import MESSAGES, access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 20
RESPONSE = response_class(API_KEY)
ZERO_UUID = uuid.UUID(int=0)


#: by name before v6, by name or id from v6
ERRORS = (KeyedShape("topics", "name", "responses", "name"),
          KeyedShape("topic_names", None, "responses", "name"))


@REGISTRY.handler(API_KEY, errors=ERRORS, names_topics=True)
def handle(core, ctx, request):
    cluster = core.cluster
    version = ctx.api_version
    # (name, topic id) as asked; a name or an id, never both
    wanted = [(t.name, t.topic_id) for t in request.topics] if version >= 6 else \
        [(name, ZERO_UUID) for name in request.topic_names]
    if not cluster.settings["delete_topic_enable"]:
        code = errors.TOPIC_DELETION_DISABLED if version >= 3 else errors.INVALID_REQUEST
        return RESPONSE(throttle_time_ms=0, responses=[
            _result(name, topic_id, code, "Topic deletion is disabled.")
            for name, topic_id in wanted])
    acl = access(core, ctx)
    # the controller mutation quota (KIP-599): refusing from v5, throttling before
    quota = core.quotas.mutations(ctx.principal.name, ctx.client_id or "",
                                  strict=version >= 5)
    every_topic = acl.cluster(Op.DELETE)
    refused = errors.TOPIC_AUTHORIZATION_FAILED
    results = []
    names = [name for name, topic_id in wanted if name is not None and topic_id == ZERO_UUID]
    ids = [topic_id for name, topic_id in wanted if name is None and topic_id != ZERO_UUID]
    answered: set = set()
    for name, topic_id in wanted:
        if name is None and topic_id == ZERO_UUID:
            results.append(_result(None, ZERO_UUID, errors.INVALID_REQUEST,
                                   "Neither topic name nor id were specified."))
        elif name is not None and topic_id != ZERO_UUID:
            results.append(_result(name, topic_id, errors.INVALID_REQUEST,
                                   "You may not specify both topic name and topic id."))
        elif (name, topic_id) in answered:
            continue
        elif (name is not None and names.count(name) > 1) or \
                (name is None and ids.count(topic_id) > 1):
            answered.add((name, topic_id))
            message = "Duplicate topic name." if name is not None else "Duplicate topic id."
            results.append(_result(name, topic_id, errors.INVALID_REQUEST, message))
        else:
            answered.add((name, topic_id))
            if not every_topic and name is not None:
                # by name: DESCRIBE first (else nothing is said of the topic), then DELETE
                if not acl.topic(Op.DESCRIBE, name) or \
                        (name in cluster.topics and not acl.topic(Op.DELETE, name)):
                    results.append(_result(name, topic_id, refused, MESSAGES[refused]))
                    continue
            elif not every_topic:
                # by id: DELETE, and the name is shown only to who may DESCRIBE the topic
                topic = cluster.topics_by_id.get(topic_id)
                if topic is not None and not acl.topic(Op.DELETE, topic.name):
                    shown = topic.name if acl.topic(Op.DESCRIBE, topic.name) else None
                    results.append(_result(shown, topic_id, refused, MESSAGES[refused]))
                    continue
            try:
                if quota.active:
                    doomed = cluster.topics.get(name) if name is not None else \
                        cluster.topics_by_id.get(topic_id)
                    if doomed is not None and not quota.admit(len(doomed.partitions)):
                        results.append(_result(name, topic_id,
                                               errors.THROTTLING_QUOTA_EXCEEDED, None))
                        continue
                if name is not None:
                    topic = cluster.delete_topic(name)
                else:
                    topic = cluster.delete_topic_by_id(topic_id)
            except ApiException as exc:
                # Kafka gives an unknown topic or id no message
                results.append(_result(name, topic_id, exc.error_code, None))
            else:
                results.append(_result(topic.name, topic.topic_id, errors.NONE, None))
    core.quotas.mute(ctx.broker_id, ctx.connection_id, quota.throttle_ms)
    return RESPONSE(throttle_time_ms=quota.throttle_ms, responses=results)


def _result(name, topic_id, code, message):
    return RESPONSE.DeletableTopicResult(name=name, topic_id=topic_id, error_code=code,
                                         error_message=message)
