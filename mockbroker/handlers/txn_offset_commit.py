"""TxnOffsetCommit (key 28): a producer commits a group's offsets in its transaction
(consume-transform-produce, KIP-98 and KIP-447).

The offsets are written to the group's ``__consumer_offsets`` partition as a transactional batch
and become the group's committed offsets when the transaction commits (dropped when it aborts);
until then an OffsetFetch with ``require_stable`` is refused for those partitions.  The group's
partition must be in the transaction: added by AddOffsetsToTxn, or, from version 5
(transaction version 2, KIP-890), added here.  Like OffsetCommit, unknown topics are refused
first; from version 3 the member and generation are checked as for a commit (KIP-447), but a
rebalance in progress does not refuse it.  Version 6 names topics by id.

With an authorizer (KafkaApis' checks): WRITE on the transactional id, else every partition
answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED; READ on the group, else GROUP_AUTHORIZATION_FAILED
likewise; then READ on each topic, else its partitions answer TOPIC_AUTHORIZATION_FAILED whether
it exists or not (an unknown topic id is said first).
"""

from __future__ import annotations

from mockbroker.core.control.error_responses import PartitionShape
from mockbroker.core.errors import ApiException
from mockbroker.core.groups.offsets import OffsetEntry
from mockbroker.core.coordinators.placement import OFFSETS_TOPIC
from mockbroker.core.transactions.coordinator import write_check_error
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 28
RESPONSE = response_class(API_KEY)
#: Kafka's error answer has the error on every partition as asked (see :func:`_every`); a
#: fault fails the partitions it picks, and the others are committed as usual
ERRORS = PartitionShape("topics", "name", "partitions", "partition_index", "topics", "name",
                        "partitions", "partition_index")


def _settle(core, ctx, request) -> tuple[object | None, int]:
    """(the group, NONE) once the transaction and the group accept the commit; else (None,
    the error every partition gets)."""
    if not request.group_id:
        return None, errors.INVALID_GROUP_ID
    try:
        index = core.groups.placement.index(request.group_id)
        core.transactions.check_write(request.transactional_id, request.producer_id,
                                      request.producer_epoch, (OFFSETS_TOPIC, index),
                                      add=ctx.api_version >= 5)
    except ApiException as exc:
        # the group coordinator's mapping: an unreachable transaction coordinator is
        # COORDINATOR_NOT_AVAILABLE; TRANSACTION_ABORTABLE is known from v4
        return None, write_check_error(exc.error_code,
                                       unreachable=errors.COORDINATOR_NOT_AVAILABLE,
                                       abortable_known=ctx.api_version >= 4)
    try:
        group = core.groups.validate_offset_commit(
            ctx.broker_id, request.group_id, request.member_id or "",
            request.group_instance_id, request.generation_id_or_member_epoch,
            ctx.api_version, transactional=True)
    except ApiException as exc:
        return None, exc.error_code
    return group, errors.NONE


@REGISTRY.handler(API_KEY, errors=ERRORS)
def handle(core, ctx, request):
    cluster = core.cluster
    by_id = ctx.api_version >= 6
    acl = access(core, ctx)
    if not acl.transactional_id(Op.WRITE, request.transactional_id):
        return _every(request, errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    if not acl.group(Op.READ, request.group_id):
        return _every(request, errors.GROUP_AUTHORIZATION_FAILED)
    checked = []
    for t in request.topics:
        topic = cluster.topics_by_id.get(t.topic_id) if by_id else cluster.topics.get(t.name)
        readable = (by_id and topic is None) or \
            acl.topic(Op.READ, topic.name if topic is not None else t.name)
        for p in t.partitions:
            if not readable:
                code = errors.TOPIC_AUTHORIZATION_FAILED
            elif topic is None:
                code = errors.UNKNOWN_TOPIC_ID if by_id else errors.UNKNOWN_TOPIC_OR_PARTITION
            elif not 0 <= p.partition_index < len(topic.partitions):
                code = errors.UNKNOWN_TOPIC_OR_PARTITION
            else:
                code = None
            checked.append((t, topic, p, code))
    group, group_error = (None, errors.NONE)
    if any(code is None for *_, code in checked):
        group, group_error = _settle(core, ctx, request)
    check = None if group is None else core.groups.offset_partition_check(
        group, request.member_id or "", request.generation_id_or_member_epoch)
    entries = {}
    answer: dict = {}
    for t, topic, p, code in checked:
        if code is None:
            code = group_error
            if code == errors.NONE and check is not None:
                code = check(topic.name, p.partition_index)
            if code == errors.NONE:
                entries[(topic.name, p.partition_index)] = OffsetEntry(
                    p.committed_offset, p.committed_leader_epoch, p.committed_metadata or "",
                    ctx.now_ms)
        key = t.topic_id if by_id else t.name
        out = answer.get(key)
        if out is None:
            out = answer[key] = RESPONSE.TxnOffsetCommitResponseTopic(
                name=t.name, topic_id=t.topic_id, partitions=[])
        out.partitions.append(RESPONSE.TxnOffsetCommitResponsePartition(
            partition_index=p.partition_index, error_code=code))
    if entries:
        core.groups.offsets.store_pending(group, request.producer_id, request.producer_epoch,
                                          entries)
    return RESPONSE(throttle_time_ms=0, topics=list(answer.values()))


def _every(request, code: int):
    """Kafka's error response to a whole TxnOffsetCommit: every partition as asked, with the
    error (``TxnOffsetCommitRequest.getErrorResponse``)."""
    return RESPONSE(throttle_time_ms=0, topics=[RESPONSE.TxnOffsetCommitResponseTopic(
        name=t.name, topic_id=t.topic_id, partitions=[
            RESPONSE.TxnOffsetCommitResponsePartition(partition_index=p.partition_index,
                                                      error_code=code)
            for p in t.partitions]) for t in request.topics])
