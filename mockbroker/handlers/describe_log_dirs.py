"""DescribeLogDirs (key 35): one log directory per broker, holding every replica the broker
has, each with its partition's size in bytes.

Total and usable bytes (v4+) are those of the file system holding the host's temporary
directory, where Kafka's default log dir lives: Kafka reports its log dir's file store
(``getTotalSpace`` and ``getUsableSpace``), and tools show them as the disk's size and free
space.  No replica lags (offset lag 0, never a future replica).

With an authorizer the principal needs DESCRIBE on the cluster (KafkaApis' check), else the
answer is CLUSTER_AUTHORIZATION_FAILED with no log dirs.
"""

from __future__ import annotations

import shutil
import tempfile

from mockbroker.core.control.error_responses import OwnAnswer
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 35
RESPONSE = response_class(API_KEY)
#: Kafka's log.dir default
LOG_DIR = "/tmp/kafka-logs"


def _error_answer(version: int, request, code: int):
    """Kafka answers an error at the top alone, with no log dirs; v1-2 have no top-level error
    (Kafka's would be lost on the wire), so there the broker's log dir carries it."""
    results = [] if version >= 3 else [RESPONSE.DescribeLogDirsResult(
        error_code=code, log_dir=LOG_DIR, topics=[], total_bytes=-1, usable_bytes=-1,
        is_cordoned=False)]
    return RESPONSE(throttle_time_ms=0, error_code=code, results=results)


@REGISTRY.handler(API_KEY, errors=OwnAnswer(_error_answer), names_topics=True)
def handle(core, ctx, request):
    cluster = core.cluster
    if not access(core, ctx).cluster(Op.DESCRIBE):
        return RESPONSE(throttle_time_ms=0, error_code=errors.CLUSTER_AUTHORIZATION_FAILED,
                        results=[])
    wanted = None
    if request.topics is not None:
        wanted = {(t.topic, p) for t in request.topics for p in t.partitions}
    topics = []
    for name in sorted(cluster.topics):
        topic = cluster.topics[name]
        partitions = [
            RESPONSE.DescribeLogDirsPartition(partition_index=p.index,
                                              partition_size=p.log.size_bytes,
                                              offset_lag=0, is_future_key=False)
            for p in topic.partitions
            if ctx.broker_id in p.replicas and (wanted is None or (name, p.index) in wanted)]
        if partitions:
            topics.append(RESPONSE.DescribeLogDirsTopic(name=name, partitions=partitions))
    disk = shutil.disk_usage(tempfile.gettempdir())
    result = RESPONSE.DescribeLogDirsResult(error_code=errors.NONE, log_dir=LOG_DIR,
                                            topics=topics, total_bytes=disk.total,
                                            usable_bytes=disk.free, is_cordoned=False)
    return RESPONSE(throttle_time_ms=0, error_code=errors.NONE, results=[result])
