"""Small pieces several handlers share."""

from __future__ import annotations

from mockbroker.core.cluster import Cluster
from mockbroker.core.config.alter import AlterResource, alter
from mockbroker.core.config.values import OpType, ResourceType as ConfigResource
from mockbroker.core.security.acls import AclOperation
from mockbroker.core.security.authorize import MESSAGES, access
from wire import errors


#: What an int32 authorized-operations field holds when the client did not ask for it.
NO_OPERATIONS = -2147483648
#: With no authorizer Kafka allows, and reports when asked, every operation a resource has.
#: Topic: READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS.
TOPIC_OPERATIONS = sum(1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11))
#: Cluster: CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS,
#: IDEMPOTENT_WRITE.
CLUSTER_OPERATIONS = sum(1 << op for op in (5, 7, 8, 9, 10, 11, 12))


def address(broker, listener: str) -> dict:
    """``host`` and ``port`` of ``broker`` for clients of ``listener``."""
    host, port = broker.address(listener)
    return {"host": host, "port": port}


def node_endpoints(cluster: Cluster, node_ids, endpoint_cls, listener: str) -> list:
    """Endpoints of the given brokers, for responses that point clients at a new leader."""
    out = []
    for node_id in sorted(set(node_ids)):
        broker = cluster.brokers.get(node_id)
        if broker is not None and broker.active:
            out.append(endpoint_cls(node_id=node_id, rack=broker.rack,
                                    **address(broker, listener)))
    return out


def once_each(items, name=lambda item: item.name):
    """Each item of a request once, in order, with whether its name was given more than once
    (Kafka answers a repeated topic once, with INVALID_REQUEST)."""
    names = [name(item) for item in items]
    seen = set()
    for item, key in zip(items, names):
        if key in seen:
            continue
        seen.add(key)
        yield item, names.count(key) > 1


def find_topic(cluster: Cluster, by_id: bool, name: str | None, topic_id):
    """A topic a request names, by id (newer versions) or by name, and the error for a topic
    that is not there: (topic or None, error code to give when it is None)."""
    if by_id:
        return cluster.topics_by_id.get(topic_id), errors.UNKNOWN_TOPIC_ID
    return cluster.topics.get(name), errors.UNKNOWN_TOPIC_OR_PARTITION


def alter_configs(core, ctx, resources: list[AlterResource], *, incremental: bool,
                  validate_only: bool) -> list[tuple[int, str | None]]:
    """(Incremental)AlterConfigs with Kafka's authorization: each resource's (error code,
    message), in request order.

    A resource needs ALTER_CONFIGS (a broker's or a client-metrics one on the cluster, a
    topic's or a group's on itself); one the principal may not alter is refused with
    CLUSTER_/TOPIC_/GROUP_AUTHORIZATION_FAILED and Kafka's message and is left as it was, unless
    the broker's own checks (ConfigAdminManager's, before the request goes to the controller)
    refuse it first: a resource named twice, a config named twice or without a value, and for
    a broker the broker id and the values themselves."""
    acl = access(core, ctx)
    named: dict[tuple[int, str], int] = {}
    for r in resources:
        named[(r.resource_type, r.resource_name)] = named.get((r.resource_type,
                                                               r.resource_name), 0) + 1
    refused: dict[int, tuple[int, str | None]] = {}
    for i, r in enumerate(resources):
        if named[(r.resource_type, r.resource_name)] > 1:
            continue  # alter() refuses both
        denial = acl.config_denial(AclOperation.ALTER_CONFIGS, r.resource_type,
                                   r.resource_name, broker_logger=False)
        if denial is not None:
            refused[i] = _broker_checks(core, ctx, r, incremental) or \
                (denial, MESSAGES[denial])
    allowed = [r for i, r in enumerate(resources) if i not in refused]
    outcome = iter(alter(core.cluster, allowed, ctx.broker_id, incremental=incremental,
                         validate_only=validate_only))
    return [refused[i] if i in refused else next(outcome) for i in range(len(resources))]


def _broker_checks(core, ctx, resource: AlterResource,
                   incremental: bool) -> tuple[int, str | None] | None:
    """What the broker refuses in a resource before it is authorized, or None."""
    names = [c[0] for c in resource.configs]
    if len(set(names)) != len(names):
        return errors.INVALID_REQUEST, "Error due to duplicate config keys"
    nulls = [c[0] for c in resource.configs
             if (c[1] != OpType.DELETE and c[2] is None if incremental else c[1] is None)]
    if nulls:
        return errors.INVALID_REQUEST, "Null value not supported for : " + ", ".join(nulls)
    if resource.resource_type == ConfigResource.BROKER:
        # the broker id and the values: checked without changing anything
        (code, message), = alter(core.cluster, [resource], ctx.broker_id,
                                 incremental=incremental, validate_only=True)
        if code != errors.NONE:
            return code, message
    return None


# -- share requests ------------------------------------------------------------------------------

#: the longest member id KafkaApis takes in a share request (a UUID's text)
SHARE_MEMBER_ID_MAX = 36
#: ShareAcquireMode's record-limit mode (ShareFetch v2)
RECORD_LIMIT = 1


def share_ask(core, ctx, request, *, fetch: bool):
    """A ShareFetch or ShareAcknowledge as the share partitions read it
    (:class:`~mockbroker.core.share.manager.FetchAsk`), with the topics the principal may not
    READ."""
    from mockbroker.core.share.manager import FetchAsk, PartitionAsk
    from mockbroker.core.share.state import AckType

    acl = access(core, ctx)
    by_id = core.cluster.topics_by_id
    named = {t.topic_id for t in request.topics}
    denied = frozenset(t for t in named if t in by_id and not acl.topic(AclOperation.READ, by_id[t].name))
    renew = ctx.api_version >= 2 and request.is_renew_ack
    return FetchAsk(
        request.group_id, request.member_id, request.share_session_epoch,
        [PartitionAsk(t.topic_id, p.partition_index,
                      [(b.first_offset, b.last_offset, list(b.acknowledge_types))
                       for b in p.acknowledgement_batches])
         for t in request.topics for p in t.partitions],
        max_ack_type=AckType.RENEW if ctx.api_version >= 2 else AckType.REJECT,
        renew=renew, fetch=fetch, denied=denied,
        **({} if not fetch else dict(
            forget=[(t.topic_id, i) for t in request.forgotten_topics_data
                    for i in t.partitions],
            max_wait_ms=request.max_wait_ms, min_bytes=request.min_bytes,
            max_records=request.max_records, batch_size=request.batch_size,
            record_limit=ctx.api_version >= 2 and request.share_acquire_mode == RECORD_LIMIT)))


def share_refusal(core, ctx, request) -> tuple[int, str | None] | None:
    """The top-level refusals of a ShareFetch or ShareAcknowledge before its session is looked
    at, in KafkaApis' order, or None."""
    if request.group_id is None:
        return errors.INVALID_REQUEST, "Invalid group id in the request."
    if not access(core, ctx).group(AclOperation.READ, request.group_id):
        return errors.GROUP_AUTHORIZATION_FAILED, None
    if not request.member_id or len(request.member_id) > SHARE_MEMBER_ID_MAX:
        return errors.INVALID_REQUEST, "Invalid member id in the request."
    return None


# -- the describe APIs of the new-style groups -------------------------------------------------

#: KafkaApis' message for a group that shows topics the principal may not describe
HIDDEN_TOPICS = "The group has described topic(s) that the client is not authorized to describe."


def described_groups(core, ctx, request, describe, described_cls, topics_of) -> list:
    """ConsumerGroupDescribe's and ShareGroupDescribe's groups as KafkaApis answers them:
    ``describe(core, ctx, group_id)`` each; with an authorizer, a group without DESCRIBE first
    as GROUP_AUTHORIZATION_FAILED, the authorized operations asked for, and a group showing a
    topic (``topics_of(described)``) the principal may not DESCRIBE answered
    TOPIC_AUTHORIZATION_FAILED with Kafka's message and no members."""
    from mockbroker.core.security.acls import ResourceType

    acl = access(core, ctx)
    if not acl.enforced:  # every operation is allowed, and said so when asked
        groups = [describe(core, ctx, group_id) for group_id in request.group_ids]
        for g in groups:
            if request.include_authorized_operations and g.error_code == errors.NONE:
                g.authorized_operations = acl.operations(ResourceType.GROUP, g.group_id)
        return groups
    refused, groups = [], []
    for group_id in request.group_ids:
        if not acl.group(AclOperation.DESCRIBE, group_id):
            refused.append(described_cls(group_id=group_id,
                                         error_code=errors.GROUP_AUTHORIZATION_FAILED))
            continue
        described = describe(core, ctx, group_id)
        if request.include_authorized_operations and described.error_code == errors.NONE:
            described.authorized_operations = acl.operations(ResourceType.GROUP, group_id)
        groups.append(described)
    groups = refused + groups
    shown = {name for g in groups for name in topics_of(g)}
    allowed = acl.allowed(AclOperation.DESCRIBE, ResourceType.TOPIC, shown)
    return [g if all(name in allowed for name in topics_of(g))
            else described_cls(group_id=g.group_id, error_code=errors.TOPIC_AUTHORIZATION_FAILED,
                               error_message=HIDDEN_TOPICS, members=[])
            for g in groups]


def refusal_message(exc) -> str | None:
    """The message a heartbeat's refusal carries: Kafka's, but none for the coordinator errors
    (a client finds the coordinator again)."""
    if exc.error_code in (errors.NOT_COORDINATOR, errors.COORDINATOR_NOT_AVAILABLE,
                          errors.COORDINATOR_LOAD_IN_PROGRESS):
        return None
    return str(exc) or None


def heartbeat_assignment(response_cls, assignment) -> object | None:
    """A heartbeat answer's Assignment of {topic id: partitions}, topics by id order."""
    if assignment is None:
        return None
    return response_cls.Assignment(topic_partitions=[
        response_cls.TopicPartitions(topic_id=topic_id, partitions=partitions)
        for topic_id, partitions in sorted(assignment.items(), key=lambda kv: kv[0].int)])
