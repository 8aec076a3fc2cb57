"""AlterReplicaLogDirs (key 34): move replicas of the broker asked between its log
directories (:mod:`mockbroker.core.log_dirs`; ``kafka-reassign-partitions.sh`` with
``log_dirs``, the Admin's ``alterReplicaLogDirs``, which sends each broker the moves of its own
replicas).

Each partition gets Kafka's error code for its move: NONE once moved (at once: the mock has no
future replica to copy), LOG_DIR_NOT_FOUND for a path that is not exactly one of the broker's
directories, KAFKA_STORAGE_ERROR for an offline directory, REPLICA_NOT_AVAILABLE for a
partition the broker has no replica of, UNKNOWN_TOPIC_OR_PARTITION for one that does not exist,
INVALID_TOPIC_EXCEPTION for a name too long to name a future replica's directory.  A partition
named twice is moved once, to the last directory naming it, and answered once, as Kafka reads
the request into a map; the answer lists topics and partitions in the order the request first
names them (Kafka's follows its hash maps).

With an authorizer the principal needs ALTER on the cluster (KafkaApis' check), else every
partition answers CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from mockbroker.core.control.error_responses import OwnAnswer
from mockbroker.core.log_dirs import log_dirs_of
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 34
RESPONSE = response_class(API_KEY)


def _every_partition(request, code: int):
    """Kafka's error answer (``AlterReplicaLogDirsRequest.getErrorResponse``): each topic of
    each directory, with ``code`` on each of its partitions."""
    return RESPONSE(throttle_time_ms=0, results=[
        RESPONSE.AlterReplicaLogDirTopicResult(topic_name=topic.name, partitions=[
            RESPONSE.AlterReplicaLogDirPartitionResult(partition_index=index, error_code=code)
            for index in topic.partitions])
        for log_dir in request.dirs for topic in log_dir.topics])


def _named(core, broker_id: int, body) -> set[tuple[str, int | None]]:
    """The partitions a request names, for control rules that pick a topic or partition."""
    return {(topic.name, index) for log_dir in body.dirs for topic in log_dir.topics
            for index in topic.partitions}


@REGISTRY.handler(API_KEY, errors=OwnAnswer(lambda version, request, code:
                                            _every_partition(request, code)),
                  names_topics=True, names_partitions=True, names=_named)
def handle(core, ctx, request):
    if not access(core, ctx).cluster(Op.ALTER):
        return _every_partition(request, errors.CLUSTER_AUTHORIZATION_FAILED)
    moves: dict[tuple[str, int], str] = {}
    for log_dir in request.dirs:
        for topic in log_dir.topics:
            for index in topic.partitions:
                moves[(topic.name, index)] = log_dir.path  # the last one wins
    model = log_dirs_of(core.cluster)
    by_topic: dict[str, list] = {}
    for (name, index), path in moves.items():
        code = model.alter(ctx.broker_id, name, index, path)
        by_topic.setdefault(name, []).append(
            RESPONSE.AlterReplicaLogDirPartitionResult(partition_index=index, error_code=code))
    return RESPONSE(throttle_time_ms=0, results=[
        RESPONSE.AlterReplicaLogDirTopicResult(topic_name=name, partitions=partitions)
        for name, partitions in by_topic.items()])
