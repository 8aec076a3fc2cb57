"""StreamsGroupHeartbeat (key 88): a Kafka Streams member of a KIP-1071 streams group joins with
its topology (epoch 0), heartbeats with the tasks it owns, and leaves (-1, or -2 for a static
member that will come back) (:mod:`mockbroker.core.groups.streams`).

Before the coordinator sees a topology, the broker checks its topic names as KafkaApis does:
Kafka's internal topics and invalid names are STREAMS_INVALID_TOPOLOGY, and with an authorizer
the member needs READ on the group (else GROUP_AUTHORIZATION_FAILED) and DESCRIBE on every topic
the topology names (else TOPIC_AUTHORIZATION_FAILED, without a message).  After it, the broker
creates the internal topics the topology needs and the cluster lacks, with the partition counts
and configs the coordinator worked out, when the principal may CREATE them; otherwise the
MISSING_INTERNAL_TOPICS status says which it may not.  A creation that fails is told in that
status on a later heartbeat, as Kafka tells it.
"""

from __future__ import annotations

from mockbroker.core.errors import ApiException
from mockbroker.core.groups.streams.protocol import Heartbeat
from mockbroker.core.groups.streams.topology import MISSING_INTERNAL_TOPICS, all_topic_names
from mockbroker.core.names import topic_name_error
from mockbroker.core.security.acls import AclOperation as Op, ResourceType
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from mockbroker.handlers._common import refusal_message
from wire import errors, response_class

API_KEY = 88
RESPONSE = response_class(API_KEY)
#: Kafka's internal topics, which no topology may use
INTERNAL_TOPICS = ("__consumer_offsets", "__transaction_state", "__share_group_state")
#: at most this many failed creations are named in a status
SHOWN_FAILURES = 3


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    acl = access(core, ctx)
    if not acl.group(Op.READ, request.group_id):
        return _refused(errors.GROUP_AUTHORIZATION_FAILED)
    if request.topology is not None:
        names = all_topic_names(request.topology)
        internal = [n for n in names if n in INTERNAL_TOPICS]
        if internal:
            return _refused(errors.STREAMS_INVALID_TOPOLOGY, (
                f"Use of Kafka internal topics {','.join(internal)} in a Kafka Streams "
                f"topology is prohibited."))
        invalid = [n for n in names if topic_name_error(n) is not None]
        if invalid:
            return _refused(errors.STREAMS_INVALID_TOPOLOGY,
                            f"Topic names {','.join(invalid)} are not valid topic names.")
        if names and len(acl.allowed(Op.DESCRIBE, ResourceType.TOPIC, set(names))) < \
                len(set(names)):
            return _refused(errors.TOPIC_AUTHORIZATION_FAILED)
    heartbeat = Heartbeat(
        request.group_id, request.member_id, request.member_epoch,
        request.endpoint_information_epoch, request.instance_id, request.rack_id,
        request.rebalance_timeout_ms, request.topology, _tasks(request.active_tasks),
        _tasks(request.standby_tasks), _tasks(request.warmup_tasks), request.process_id,
        None if request.user_endpoint is None
        else (request.user_endpoint.host, request.user_endpoint.port),
        None if request.client_tags is None
        else {t.key: t.value for t in request.client_tags},
        _offsets(request.task_offsets), _offsets(request.task_end_offsets),
        request.shutdown_application, ctx.client_id or "", "/" + ctx.client_host,
        ctx.api_version)
    try:
        result = core.groups.streams.heartbeat(ctx.broker_id, heartbeat)
    except ApiException as exc:
        return _refused(exc.error_code, refusal_message(exc))
    status = list(result.status)
    if result.to_create:
        status = _create(core, ctx, acl, request.group_id, result.to_create, status)
    return RESPONSE(
        throttle_time_ms=0, error_code=errors.NONE, error_message=None,
        member_id=result.member_id, member_epoch=result.member_epoch,
        heartbeat_interval_ms=result.heartbeat_interval_ms,
        acceptable_recovery_lag_legacy=min(result.acceptable_recovery_lag, 2**31 - 1),
        task_offset_interval_ms=result.task_offset_interval_ms,
        acceptable_recovery_lag=result.acceptable_recovery_lag,
        status=[RESPONSE.Status(status_code=c, status_detail=d) for c, d in status],
        active_tasks=_task_ids(result.active), standby_tasks=_task_ids(result.standby),
        warmup_tasks=_task_ids(result.warmup), topology_description_required=False,
        endpoint_information_epoch=result.endpoint_information_epoch,
        partitions_by_user_endpoint=None if result.partitions_by_user_endpoint is None else [
            RESPONSE.EndpointToPartitions(
                user_endpoint=RESPONSE.Endpoint(host=e.host, port=e.port),
                active_partitions=[RESPONSE.TopicPartition(topic=t, partitions=ps)
                                   for t, ps in e.active],
                standby_partitions=[RESPONSE.TopicPartition(topic=t, partitions=ps)
                                    for t, ps in e.standby])
            for e in result.partitions_by_user_endpoint])


def _create(core, ctx, acl, group_id: str, wanted: dict, status: list) -> list:
    """The broker creates the internal topics the topology lacks (those the principal may
    create), and the MISSING_INTERNAL_TOPICS status says what it may not or could not."""
    names = list(wanted)
    if not acl.cluster(Op.CREATE):
        allowed = acl.allowed(Op.CREATE, ResourceType.TOPIC, set(names))
        refused = [n for n in names if n not in allowed]
        if refused:
            status = _add_detail(status, f"Unauthorized to CREATE on topics "
                                         f"{', '.join(refused)}.")
        names = [n for n in names if n in allowed]
    failures = core.groups.streams.creation_failures.setdefault(group_id, {})
    if failures and any(code == MISSING_INTERNAL_TOPICS for code, _ in status):
        shown = list(failures.items())
        more = f" and {len(shown) - SHOWN_FAILURES} more" if len(shown) > SHOWN_FAILURES else ""
        status = _add_detail(status, "Creation failed: " + ", ".join(
            f"{name} ({error})" for name, error in shown[:SHOWN_FAILURES]) + more + ".")
    for name in names:
        info = wanted[name]
        if name in core.cluster.topics:
            continue
        try:
            core.cluster.create_topic(name, info.partitions,
                                      info.replication_factor or -1, list(info.configs))
            failures.pop(name, None)
        except ApiException as exc:
            failures[name] = exc.message or errors.error_by_code(exc.error_code).name
    return status


def _add_detail(status: list, text: str) -> list:
    """``text`` appended to the MISSING_INTERNAL_TOPICS status (after "; "), or as one."""
    out, done = [], False
    for code, detail in status:
        if code == MISSING_INTERNAL_TOPICS and not done:
            detail, done = f"{detail}; {text}", True
        out.append((code, detail))
    if not done:
        out.append((MISSING_INTERNAL_TOPICS, text))
    return out


def _tasks(entries) -> dict[str, set[int]] | None:
    if entries is None:
        return None
    out: dict[str, set[int]] = {}
    for entry in entries:
        out.setdefault(entry.subtopology_id, set()).update(entry.partitions)
    return out


def _offsets(entries) -> list[tuple[str, int, int]] | None:
    if entries is None:
        return None
    return [(e.subtopology_id, e.partition, e.offset) for e in entries]


def _task_ids(tasks) -> list | None:
    if tasks is None:
        return None
    return [RESPONSE.TaskIds(subtopology_id=s, partitions=sorted(ps))
            for s, ps in tasks.items() if ps]


def _refused(code: int, message: str | None = None):
    return RESPONSE(throttle_time_ms=0, error_code=code, error_message=message, member_id="",
                    member_epoch=0, heartbeat_interval_ms=0, acceptable_recovery_lag_legacy=0,
                    task_offset_interval_ms=0, acceptable_recovery_lag=-1, status=[],
                    active_tasks=None, standby_tasks=None, warmup_tasks=None,
                    topology_description_required=False, endpoint_information_epoch=0,
                    partitions_by_user_endpoint=None)
