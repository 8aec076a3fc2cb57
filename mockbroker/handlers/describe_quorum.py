"""DescribeQuorum (key 55): the KRaft controller quorum of ``__cluster_metadata``, as
``kafka-metadata-quorum.sh describe`` and the Admin's ``describeMetadataQuorum`` ask for it:
the leader, its epoch, the high watermark, and each voter's and observer's log end offset and
fetch times (:mod:`mockbroker.core.quorum`).

A Kafka broker forwards the request to the active controller, which answers it as the leader of
the metadata log; the mock answers for it.  The request must name exactly the one partition
``__cluster_metadata``-0; anything else gets every partition it names echoed with
UNKNOWN_TOPIC_OR_PARTITION (``This server does not host this topic-partition.`` from v2) and
zeros, as Kafka's raft client answers.  v1 adds the fetch timestamps (the leader's are now);
v2 adds each replica's directory id (zero for a static voter), the error messages (null on
success) and ``nodes``: each voter's controller endpoint.

With an authorizer the principal needs DESCRIBE on the cluster (the controller's check), else
the answer is CLUSTER_AUTHORIZATION_FAILED at the top, with its message from v2.
"""

from __future__ import annotations

from mockbroker.core.quorum import METADATA_PARTITION, METADATA_TOPIC, quorum_of
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import MESSAGES, access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 55
RESPONSE = response_class(API_KEY)
#: ``Errors.UNKNOWN_TOPIC_OR_PARTITION.message()``
NOT_HOSTED = "This server does not host this topic-partition."


def _names_the_metadata_partition(request) -> bool:
    return len(request.topics) == 1 and request.topics[0].topic_name == METADATA_TOPIC and \
        len(request.topics[0].partitions) == 1 and \
        request.topics[0].partitions[0].partition_index == METADATA_PARTITION


def _not_hosted(request):
    return RESPONSE(error_code=errors.NONE, error_message=None, nodes=[], topics=[
        RESPONSE.TopicData(topic_name=topic.topic_name, partitions=[
            RESPONSE.PartitionData(partition_index=p.partition_index,
                                   error_code=errors.UNKNOWN_TOPIC_OR_PARTITION,
                                   error_message=NOT_HOSTED, leader_id=0, leader_epoch=0,
                                   high_watermark=0, current_voters=[], observers=[])
            for p in topic.partitions])
        for topic in request.topics])


def _replica(state):
    return RESPONSE.ReplicaState(
        replica_id=state.node_id, replica_directory_id=state.directory_id,
        log_end_offset=state.log_end_offset, last_fetch_timestamp=state.last_fetch_timestamp,
        last_caught_up_timestamp=state.last_caught_up_timestamp)


@REGISTRY.handler(API_KEY, names_topics=True)
def handle(core, ctx, request):
    if not access(core, ctx).cluster(Op.DESCRIBE):
        code = errors.CLUSTER_AUTHORIZATION_FAILED
        return RESPONSE(error_code=code, error_message=MESSAGES[code], topics=[], nodes=[])
    if not _names_the_metadata_partition(request):
        return _not_hosted(request)
    quorum = quorum_of(core.cluster)
    voters = quorum.voter_states()
    observers = quorum.observer_states()
    nodes = []
    for state in voters:
        name, host, port = quorum.endpoint(state.node_id)
        nodes.append(RESPONSE.Node(node_id=state.node_id, listeners=[
            RESPONSE.Listener(name=name, host=host, port=port)]))
    partition = RESPONSE.PartitionData(
        partition_index=METADATA_PARTITION, error_code=errors.NONE, error_message=None,
        leader_id=quorum.leader_id, leader_epoch=quorum.leader_epoch,
        high_watermark=quorum.high_watermark, current_voters=[_replica(s) for s in voters],
        observers=[_replica(s) for s in observers])
    return RESPONSE(error_code=errors.NONE, error_message=None, nodes=nodes, topics=[
        RESPONSE.TopicData(topic_name=METADATA_TOPIC, partitions=[partition])])
