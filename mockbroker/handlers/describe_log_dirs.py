"""DescribeLogDirs (key 35): the broker's log directories (:mod:`mockbroker.core.log_dirs`: the
``log_dirs`` setting, or Kafka's ``/tmp/kafka-logs`` alone), each with the replicas it holds
and each replica's partition size in bytes.

Directories come in ``log.dirs`` order, topics by name, partitions by index; a request naming
topics (not null) gets only the partitions it names.  Total and usable bytes (v4+) are those of
the file system holding the host's temporary directory, where Kafka's default log dir lives:
Kafka reports its log dir's file store (``getTotalSpace`` and ``getUsableSpace``), and tools
show them as the disk's size and free space.  No replica lags (offset lag 0), and none is a
future replica: AlterReplicaLogDirs moves a replica at once.  An offline directory is reported
with KAFKA_STORAGE_ERROR alone, as Kafka reports one.

With an authorizer the principal needs DESCRIBE on the cluster (KafkaApis' check), else the
answer is CLUSTER_AUTHORIZATION_FAILED with no log dirs.
"""

from __future__ import annotations

import shutil
import tempfile

from mockbroker.core.control.error_responses import OwnAnswer
from mockbroker.core.log_dirs import DEFAULT_LOG_DIR, log_dirs_of
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 35
RESPONSE = response_class(API_KEY)
#: Kafka's log.dir default, the broker's only log dir unless ``log_dirs`` says otherwise
LOG_DIR = DEFAULT_LOG_DIR


def _error_answer(version: int, request, code: int):
    """Kafka answers an error at the top alone, with no log dirs; v1-2 have no top-level error
    (Kafka's would be lost on the wire), so there the broker's log dir carries it."""
    results = [] if version >= 3 else [RESPONSE.DescribeLogDirsResult(
        error_code=code, log_dir=LOG_DIR, topics=[], total_bytes=-1, usable_bytes=-1,
        is_cordoned=False)]
    return RESPONSE(throttle_time_ms=0, error_code=code, results=results)


@REGISTRY.handler(API_KEY, errors=OwnAnswer(_error_answer), names_topics=True)
def handle(core, ctx, request):
    if not access(core, ctx).cluster(Op.DESCRIBE):
        return RESPONSE(throttle_time_ms=0, error_code=errors.CLUSTER_AUTHORIZATION_FAILED,
                        results=[])
    wanted = None
    if request.topics is not None:
        wanted = {(t.topic, p) for t in request.topics for p in t.partitions}
    model = log_dirs_of(core.cluster)
    disk = shutil.disk_usage(tempfile.gettempdir())
    results = []
    for path, replicas in model.replicas(ctx.broker_id).items():
        if model.is_offline(ctx.broker_id, path):
            results.append(RESPONSE.DescribeLogDirsResult(
                error_code=errors.KAFKA_STORAGE_ERROR, log_dir=path, topics=[],
                total_bytes=-1, usable_bytes=-1, is_cordoned=False))
            continue
        topics: dict[str, list] = {}
        for p in replicas:
            name = p.topic.name
            if wanted is None or (name, p.index) in wanted:
                topics.setdefault(name, []).append(RESPONSE.DescribeLogDirsPartition(
                    partition_index=p.index, partition_size=p.log.size_bytes, offset_lag=0,
                    is_future_key=False))
        results.append(RESPONSE.DescribeLogDirsResult(
            error_code=errors.NONE, log_dir=path, topics=[
                RESPONSE.DescribeLogDirsTopic(name=name, partitions=partitions)
                for name, partitions in topics.items()],
            total_bytes=disk.total, usable_bytes=disk.free, is_cordoned=False))
    return RESPONSE(throttle_time_ms=0, error_code=errors.NONE, results=results)
