"""Fetch (key 1): read stored batches, long-polling for ``min_bytes`` up to ``max_wait_ms``.

Every requested partition is in the response.  The first partition with data gets at least one
whole batch even past ``max_bytes`` (as Kafka does, so a large batch cannot stall a consumer).
Fetch sessions (KIP-227) are answered sessionless: a client asking for a new session gets
session id 0 back and keeps sending full fetches, which every client handles; an incremental
fetch naming a session we never handed out gets FETCH_SESSION_ID_NOT_FOUND.  A
``last_fetched_epoch`` (from v12; followers send it, consumers do not) is checked against the
partition's leader epochs as Kafka checks it: an unknown epoch is OFFSET_OUT_OF_RANGE, a fetch
position past that epoch's end gets the diverging epoch back instead of records.
"""

from __future__ import annotations

from mockbroker.core.deferred import Deferred
from mockbroker.handlers import REGISTRY
from mockbroker.handlers._common import find_topic, node_endpoints, replica_error
from wire import errors, response_class

API_KEY = 1
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY, 4, 18)
def handle(core, ctx, request):
    if request.session_id != 0:
        return RESPONSE(error_code=errors.FETCH_SESSION_ID_NOT_FOUND, session_id=0, responses=[])
    response, total = _read(core, ctx, request)
    if total >= max(request.min_bytes, 1) or request.max_wait_ms <= 0 or _answer_now(response):
        return response
    # Long poll: answer when enough data has arrived, or at the deadline with what there is.
    deferred = Deferred()
    cluster = core.cluster
    by_id = ctx.api_version >= 13
    wanted = {t.topic_id if by_id else t.topic for t in request.topics}

    def finish() -> None:
        cluster.append_listeners.discard(on_append)
        timer.cancel()
        deferred.resolve(_read(core, ctx, request)[0])

    def on_append(partition) -> None:
        topic = partition.topic
        if (topic.topic_id if by_id else topic.name) not in wanted:
            return
        if _read(core, ctx, request)[1] >= request.min_bytes:
            finish()

    cluster.append_listeners.add(on_append)
    timer = core.timers.call_later(request.max_wait_ms, finish)
    deferred.on_cancel = lambda: (cluster.append_listeners.discard(on_append), timer.cancel())
    return deferred


def _check_last_fetched_epoch(partition, fp):
    """Kafka's check of a fetcher's ``last_fetched_epoch`` (followers send it; KIP-595):
    (OFFSET_OUT_OF_RANGE, None) when that epoch is unknown here or the offset is below the log
    start; (NONE, where the epoch ends) when the fetch position lies past its end, so the fetcher
    must truncate; (NONE, None) to read as usual."""
    log = partition.log
    epoch, end = log.end_offset_for_epoch(fp.last_fetched_epoch, partition.leader_epoch)
    if epoch < 0 or end < 0 or fp.fetch_offset < log.log_start_offset:
        return errors.OFFSET_OUT_OF_RANGE, None
    if epoch < fp.last_fetched_epoch or end < fp.fetch_offset:
        return errors.NONE, RESPONSE.EpochEndOffset(epoch=epoch, end_offset=end)
    return errors.NONE, None


def _answer_now(response) -> bool:
    """An error or a diverging epoch in any partition ends a long poll at once, as in Kafka."""
    return any(p.error_code != errors.NONE or p.diverging_epoch.epoch >= 0
               for t in response.responses for p in t.partitions)


def _read(core, ctx, request):
    cluster = core.cluster
    version = ctx.api_version
    budget = request.max_bytes if version >= 3 else 2**31 - 1
    total = 0
    leaders = set()
    responses = []
    for fetch_topic in request.topics:
        topic, missing = find_topic(cluster, version >= 13, fetch_topic.topic,
                                    fetch_topic.topic_id)
        partitions = []
        for fp in fetch_topic.partitions:
            out = RESPONSE.PartitionData(partition_index=fp.partition, high_watermark=-1,
                                         last_stable_offset=-1, log_start_offset=-1,
                                         aborted_transactions=None, records=b"")
            partitions.append(out)
            if topic is None or not 0 <= fp.partition < len(topic.partitions):
                out.error_code = missing if topic is None else errors.UNKNOWN_TOPIC_OR_PARTITION
                continue
            partition = topic.partitions[fp.partition]
            out.error_code = replica_error(partition, ctx.broker_id, fp.current_leader_epoch)
            if out.error_code != errors.NONE:
                # KIP-951: Kafka names the new leader only from v16, where node endpoints come
                # with it (the field exists from v12, but a v12 client told of a leader it has
                # no address for is stuck: kafka-python raises UnknownBrokerIdError from poll)
                if out.error_code in (errors.NOT_LEADER_OR_FOLLOWER, errors.FENCED_LEADER_EPOCH) \
                        and version >= 16:
                    out.current_leader = RESPONSE.LeaderIdAndEpoch(
                        leader_id=partition.leader, leader_epoch=partition.leader_epoch)
                    leaders.add(partition.leader)
                continue
            log = partition.log
            diverging = None
            if version >= 12 and fp.last_fetched_epoch >= 0:
                out.error_code, diverging = _check_last_fetched_epoch(partition, fp)
                if out.error_code != errors.NONE:
                    continue
            if fp.fetch_offset < log.log_start_offset or fp.fetch_offset > log.log_end_offset:
                # Kafka reports no offsets with this error; the consumer asks ListOffsets
                out.error_code = errors.OFFSET_OUT_OF_RANGE
                continue
            out.high_watermark = log.high_watermark
            out.last_stable_offset = log.high_watermark
            out.log_start_offset = log.log_start_offset
            out.aborted_transactions = [] if request.isolation_level == 1 else None
            if diverging is not None:
                out.diverging_epoch = diverging
                continue
            limit = min(fp.partition_max_bytes, max(budget - total, 0))
            data = log.read(fp.fetch_offset, limit, at_least_one=(total == 0))
            out.records = data
            total += len(data)
        responses.append(RESPONSE.FetchableTopicResponse(
            topic=fetch_topic.topic, topic_id=fetch_topic.topic_id, partitions=partitions))
    response = RESPONSE(error_code=errors.NONE, session_id=0, responses=responses,
                        node_endpoints=node_endpoints(cluster, leaders, RESPONSE.NodeEndpoint))
    return response, total
