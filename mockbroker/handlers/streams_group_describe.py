"""StreamsGroupDescribe (key 89): KIP-1071 streams groups as ``Admin.describeStreamsGroups`` and
``kafka-streams-groups.sh --describe`` see them: state, group and target assignment epochs, the
topology (configured: its internal topics' partition counts worked out, once it is ready), the
``sticky`` assignor, and each member's process, client, endpoint, tags, task offsets, and
current and target tasks.  A group this coordinator does not have, or one of another type, is
GROUP_ID_NOT_FOUND with Kafka's message.  No topology description plugin is configured, so one
asked for (v1) is NOT_STORED.

With an authorizer (KafkaApis' checks): each group needs DESCRIBE, else it comes first as
GROUP_AUTHORIZATION_FAILED; the authorized operations asked for are the principal's; and a
group whose topology names a topic the principal may not DESCRIBE is answered
TOPIC_AUTHORIZATION_FAILED with Kafka's message and no members.
"""

from __future__ import annotations

from mockbroker.core.control.error_responses import KeyedShape
from mockbroker.core.errors import ApiException
from mockbroker.core.groups.streams.assignor import NAME as ASSIGNOR
from mockbroker.handlers import REGISTRY
from mockbroker.handlers._common import described_groups
from wire import errors, response_class

API_KEY = 89
RESPONSE = response_class(API_KEY)
ERRORS = (KeyedShape("group_ids", None, "groups", "group_id"),)
NO_OPERATIONS = -(1 << 31)
#: TopologyDescriptionStatus: not asked for, or asked for and not stored (no plugin)
NOT_REQUESTED, NOT_STORED = 0, 1


def _task_ids(tasks) -> list:
    return [RESPONSE.TaskIds(subtopology_id=s, partitions=sorted(ps))
            for s, ps in sorted(tasks.items()) if ps]


def _assignment(roles) -> object:
    active, standby, warmup = roles.keys()
    return RESPONSE.Assignment(active_tasks=_task_ids(active), standby_tasks=_task_ids(standby),
                               warmup_tasks=_task_ids(warmup))


def _topic_info(info) -> object:
    return RESPONSE.TopicInfo(name=info.name, partitions=info.partitions,
                              replication_factor=info.replication_factor,
                              topic_configs=[RESPONSE.KeyValue(key=k, value=v)
                                             for k, v in info.configs])


def _topology(topology) -> object | None:
    if topology is None:
        return None
    return RESPONSE.Topology(epoch=topology.epoch, subtopologies=[
        RESPONSE.Subtopology(
            subtopology_id=s.subtopology_id, source_topics=sorted(s.source_topics),
            repartition_sink_topics=sorted(s.repartition_sink_topics),
            state_changelog_topics=[_topic_info(t) for t in sorted(
                s.state_changelog_topics, key=lambda t: t.name)],
            repartition_source_topics=[_topic_info(t) for t in sorted(
                s.repartition_source_topics, key=lambda t: t.name)])
        for s in sorted(topology.subtopologies, key=lambda s: s.subtopology_id)])


def _offsets(table: dict) -> list:
    return [RESPONSE.TaskOffset(subtopology_id=s, partition=p, offset=o)
            for (s, p), o in sorted(table.items())]


def _describe(core, ctx, group_id: str, include_description: bool):
    from mockbroker.core.groups.streams.group import TaskRoles

    status = NOT_STORED if include_description and ctx.api_version >= 1 else NOT_REQUESTED
    empty = dict(group_state="", group_epoch=0, assignment_epoch=0, topology=None, members=[],
                 authorized_operations=NO_OPERATIONS, topology_description=None,
                 topology_description_status=NOT_REQUESTED, assignor_name=None)
    if not group_id:
        return RESPONSE.DescribedGroup(error_code=errors.INVALID_GROUP_ID, group_id=group_id,
                                       error_message=None, **empty)
    try:
        group = core.groups.describe_as("streams", ctx.broker_id, group_id)
    except ApiException as exc:
        message = exc.message if exc.error_code == errors.GROUP_ID_NOT_FOUND else None
        return RESPONSE.DescribedGroup(error_code=exc.error_code, group_id=group_id,
                                       error_message=message, **empty)
    protocol = core.groups.streams
    return RESPONSE.DescribedGroup(
        error_code=errors.NONE, error_message=None, group_id=group_id,
        group_state=group.state.value, group_epoch=group.group_epoch,
        assignment_epoch=group.assignment_epoch,
        topology=_topology(protocol.described_topology(group)),
        authorized_operations=NO_OPERATIONS, topology_description=None,
        topology_description_status=status, assignor_name=ASSIGNOR, members=[
            RESPONSE.Member(
                member_id=m.member_id, member_epoch=m.member_epoch, instance_id=m.instance_id,
                rack_id=m.rack_id, client_id=m.client_id, client_host=m.client_host,
                topology_epoch=m.topology_epoch, process_id=m.process_id,
                user_endpoint=None if m.user_endpoint is None else RESPONSE.Endpoint(
                    host=m.user_endpoint[0], port=m.user_endpoint[1]),
                client_tags=[RESPONSE.KeyValue(key=k, value=v)
                             for k, v in sorted(m.client_tags.items())],
                task_offsets=_offsets(group.task_offsets.get(m.member_id, {})),
                task_end_offsets=_offsets(group.task_end_offsets.get(m.member_id, {})),
                assignment=_assignment(m.tasks),
                target_assignment=_assignment(group.target.get(m.member_id, TaskRoles())),
                is_classic=False)
            for m in group.members.values()])


def _topics_of(described) -> set[str]:
    topology = described.topology
    if topology is None:
        return set()
    return {name for s in topology.subtopologies or ()
            for name in (*s.source_topics, *s.repartition_sink_topics,
                         *(t.name for t in s.state_changelog_topics),
                         *(t.name for t in s.repartition_source_topics))}


@REGISTRY.handler(API_KEY, errors=ERRORS)
def handle(core, ctx, request):
    include = bool(getattr(request, "include_topology_description", False))
    return RESPONSE(throttle_time_ms=0, groups=described_groups(
        core, ctx, request, lambda c, x, g: _describe(c, x, g, include),
        RESPONSE.DescribedGroup, _topics_of))
