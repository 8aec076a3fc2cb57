"""ShareAcknowledge (key 79): a share consumer acknowledges records it acquired, in its share
session (:mod:`mockbroker.core.share`), without fetching.

Checked as ShareFetch is (group id, READ on the group, member id), then the session: epoch 0 is
INVALID_SHARE_SESSION_EPOCH (a session is opened by a ShareFetch), an unknown session
SHARE_SESSION_NOT_FOUND, -1 closes the session once its acknowledgements are taken (what the
member still holds goes back), any other epoch must be the one expected.  Each partition
answers its acknowledgements' outcome: INVALID_RECORD_STATE or INVALID_REQUEST with Kafka's
message, UNKNOWN_TOPIC_OR_PARTITION for a partition this broker serves no share state of.
"""

from __future__ import annotations

from mockbroker.core.errors import ApiException
from mockbroker.core.share.sessions import FINAL
from mockbroker.handlers import REGISTRY
from mockbroker.handlers._common import node_endpoints, share_ask as ask_of, \
    share_refusal as check
from wire import errors, response_class

API_KEY = 79
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY, names_partitions=True)
def handle(core, ctx, request):
    refused = check(core, ctx, request)
    if refused is not None:
        return RESPONSE(throttle_time_ms=0, error_code=refused[0], error_message=refused[1],
                        responses=[], node_endpoints=[])
    shares = core.share_partitions
    ask = ask_of(core, ctx, request, fetch=False)
    try:
        session = shares.session_for(ctx.broker_id, ctx.connection_id, ask)
    except ApiException as exc:
        return RESPONSE(throttle_time_ms=0, error_code=exc.error_code, responses=[],
                        node_endpoints=[])
    acked = shares.acknowledge(ctx.broker_id, ask)
    if ask.epoch == FINAL:
        shares.release(session)
    leaders = set()
    topics: dict = {}
    for (topic_id, index), p in acked.items():
        out = RESPONSE.PartitionData(
            partition_index=index, error_code=p.ack_error_code,
            error_message=p.ack_error_message,
            current_leader=RESPONSE.LeaderIdAndEpoch(leader_id=-1, leader_epoch=-1))
        if p.ack_error_code == errors.NOT_LEADER_OR_FOLLOWER:
            topic = core.cluster.topics_by_id[topic_id]
            partition = topic.partitions[index]
            out.current_leader = RESPONSE.LeaderIdAndEpoch(
                leader_id=partition.leader, leader_epoch=partition.leader_epoch)
            leaders.add(partition.leader)
        topics.setdefault(topic_id, RESPONSE.ShareAcknowledgeTopicResponse(
            topic_id=topic_id, partitions=[])).partitions.append(out)
    return RESPONSE(
        throttle_time_ms=0, error_code=errors.NONE, error_message=None,
        acquisition_lock_timeout_ms=shares.config(request.group_id,
                                                  ctx.broker_id).lock_duration_ms,
        responses=list(topics.values()),
        node_endpoints=node_endpoints(core.cluster, leaders, RESPONSE.NodeEndpoint,
                                      ctx.listener))
