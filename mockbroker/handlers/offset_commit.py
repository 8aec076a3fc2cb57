"""OffsetCommit (key 8): store committed offsets in the group's ``__consumer_offsets``
partition.

Kafka's broker checks the topics before it asks the coordinator: an unknown topic or partition
is answered UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID by id) whatever the group's state, and
only the partitions that exist go to the coordinator, whose group-level refusal (unknown member,
fenced instance, old generation, rebalance in progress) is given to each of them; then the
metadata size.  The answer lists the refused topics first, in request order, then the
coordinator's, a topic named twice being answered once (Kafka's OffsetCommitResponse builder).

With an authorizer (KafkaApis' checks): without READ on the group every partition answers
GROUP_AUTHORIZATION_FAILED; then each topic needs READ, or its partitions answer
TOPIC_AUTHORIZATION_FAILED whether it exists or not (an unknown topic id is said first).
"""

from __future__ import annotations

from mockbroker.core.groups.offsets import OffsetEntry
from mockbroker.core.errors import ApiException
from mockbroker.core.javaorder import java_length
from mockbroker.core.control.error_responses import PartitionShape
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 8
RESPONSE = response_class(API_KEY)
#: Kafka's offset.metadata.max.bytes, which Kafka compares with the metadata's length in Java
#: chars (UTF-16 code units), not bytes
MAX_METADATA_CHARS = 4096


ERRORS = PartitionShape("topics", "name", "partitions", "partition_index", "topics", "name",
                        "partitions", "partition_index")


def java_string(text: str | None) -> str | None:
    """The string as Kafka reads it off the wire: invalid UTF-8 (which the codec keeps as
    surrogate escapes) becomes U+FFFD, as Java's UTF-8 decoder replaces it."""
    if text is None:
        return None
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


@REGISTRY.handler(API_KEY, errors=ERRORS)
def handle(core, ctx, request):
    cluster = core.cluster
    by_id = ctx.api_version >= 10
    acl = access(core, ctx)
    if not acl.group(Op.READ, request.group_id):
        # OffsetCommitRequest.getErrorResponse: every partition as asked, with the error
        return RESPONSE(topics=[RESPONSE.OffsetCommitResponseTopic(
            name=t.name, topic_id=t.topic_id, partitions=[
                RESPONSE.OffsetCommitResponsePartition(
                    partition_index=p.partition_index,
                    error_code=errors.GROUP_AUTHORIZATION_FAILED) for p in t.partitions])
            for t in request.topics])
    answer: dict = {}  # topic key -> response topic, in the order Kafka's builder adds them

    def add(t, partition_index: int, code: int) -> None:
        key = t.topic_id if by_id else t.name
        out = answer.get(key)
        if out is None:
            out = answer[key] = RESPONSE.OffsetCommitResponseTopic(
                name=t.name, topic_id=t.topic_id, partitions=[])
        out.partitions.append(RESPONSE.OffsetCommitResponsePartition(
            partition_index=partition_index, error_code=code))

    valid = []
    for t in request.topics:
        topic = cluster.topics_by_id.get(t.topic_id) if by_id else cluster.topics.get(t.name)
        readable = (by_id and topic is None) or \
            acl.topic(Op.READ, topic.name if topic is not None else t.name)
        for p in t.partitions:
            if not readable:
                add(t, p.partition_index, errors.TOPIC_AUTHORIZATION_FAILED)
            elif topic is None:
                add(t, p.partition_index, errors.UNKNOWN_TOPIC_ID if by_id
                    else errors.UNKNOWN_TOPIC_OR_PARTITION)
            elif not 0 <= p.partition_index < len(topic.partitions):
                add(t, p.partition_index, errors.UNKNOWN_TOPIC_OR_PARTITION)
            else:
                valid.append((t, topic, p))
    if not valid:
        return RESPONSE(topics=list(answer.values()))
    try:
        group = core.groups.validate_offset_commit(
            ctx.broker_id, request.group_id, request.member_id, request.group_instance_id,
            request.generation_id_or_member_epoch, ctx.api_version)
        group_error = errors.NONE
    except ApiException as exc:
        group, group_error = None, exc.error_code
    check = None if group is None else core.groups.offset_partition_check(
        group, request.member_id, request.generation_id_or_member_epoch)
    entries = {}
    for t, topic, p in valid:
        metadata = java_string(p.committed_metadata)
        if group_error != errors.NONE:
            code = group_error
        elif check is not None and check(topic.name, p.partition_index) != errors.NONE:
            code = check(topic.name, p.partition_index)
        elif metadata is not None and java_length(metadata) > MAX_METADATA_CHARS:
            code = errors.OFFSET_METADATA_TOO_LARGE
        else:
            code = errors.NONE
            entries[(topic.name, p.partition_index)] = OffsetEntry(
                p.committed_offset, p.committed_leader_epoch, metadata or "", ctx.now_ms)
        add(t, p.partition_index, code)
    if entries:
        core.groups.offsets.store(group, entries)
    return RESPONSE(topics=list(answer.values()))
