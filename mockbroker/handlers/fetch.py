"""Fetch (key 1): read stored batches, long-polling for ``min_bytes`` up to ``max_wait_ms``
(:mod:`mockbroker.core.fetch` reads and waits; this module translates).

Every requested partition is in the response.  Fetch sessions (KIP-227) are answered
sessionless: a client asking for a new session gets session id 0 back and keeps sending full
fetches, which every client handles; an incremental fetch naming a session we never handed out
gets FETCH_SESSION_ID_NOT_FOUND.  A ``last_fetched_epoch`` (from v12) is checked against the
partition's leader epochs; the new leader is named from v16 (KIP-951: the field exists from v12,
but a v12 client told of a leader it has no address for is stuck, as kafka-python's poll raises
UnknownBrokerIdError).
"""

from __future__ import annotations

from mockbroker.core import fetch
from mockbroker.core.error_responses import PartitionShape
from mockbroker.handlers import REGISTRY
from mockbroker.handlers._common import find_topic, node_endpoints
from wire import errors, response_class

API_KEY = 1
RESPONSE = response_class(API_KEY)
READ_COMMITTED = 1


#: an injected error sits on each partition it picks, and answers the fetch at once
ERRORS = PartitionShape("topics", "topic", "partitions", "partition", "responses", "topic",
                        "partitions", "partition_index", answers_at_once=True)


@REGISTRY.handler(API_KEY, 4, 18, errors=ERRORS)
def handle(core, ctx, request):
    if request.session_id != 0:
        return RESPONSE(error_code=errors.FETCH_SESSION_ID_NOT_FOUND, session_id=0, responses=[])
    version = ctx.api_version
    positions = []
    for fetch_topic in request.topics:
        topic, missing = find_topic(core.cluster, version >= 13, fetch_topic.topic,
                                    fetch_topic.topic_id)
        for fp in fetch_topic.partitions:
            partition = None
            if topic is not None and 0 <= fp.partition < len(topic.partitions):
                partition = topic.partitions[fp.partition]
            positions.append(fetch.FetchPosition(
                partition, missing if topic is None else errors.UNKNOWN_TOPIC_OR_PARTITION,
                fp.fetch_offset, fp.partition_max_bytes, fp.current_leader_epoch,
                fp.last_fetched_epoch))

    def read():
        reads, total = fetch.read(
            positions, broker_id=ctx.broker_id, max_bytes=request.max_bytes,
            read_committed=request.isolation_level == READ_COMMITTED,
            check_last_fetched_epoch=version >= 12, name_new_leader=version >= 16)
        return reads, total

    reads, total = read()
    if total >= max(request.min_bytes, 1) or request.max_wait_ms <= 0 or \
            fetch.answer_now(reads):
        return _response(core, request, reads)

    def reread():
        again, size = read()
        return _response(core, request, again), size

    return fetch.long_poll(core.cluster, core.timers, positions, request.min_bytes,
                           request.max_wait_ms, reread)


def _response(core, request, reads):
    leaders = set()
    responses = []
    it = iter(reads)
    for fetch_topic in request.topics:
        partitions = []
        for fp in fetch_topic.partitions:
            read = next(it)
            out = RESPONSE.PartitionData(
                partition_index=fp.partition, error_code=read.error_code,
                high_watermark=read.high_watermark, last_stable_offset=read.last_stable_offset,
                log_start_offset=read.log_start_offset, records=read.records,
                aborted_transactions=None if read.aborted_transactions is None else [
                    RESPONSE.AbortedTransaction(producer_id=pid, first_offset=first)
                    for pid, first in read.aborted_transactions])
            if read.diverging_epoch is not None:
                out.diverging_epoch = RESPONSE.EpochEndOffset(
                    epoch=read.diverging_epoch[0], end_offset=read.diverging_epoch[1])
            if read.current_leader is not None:
                out.current_leader = RESPONSE.LeaderIdAndEpoch(
                    leader_id=read.current_leader[0], leader_epoch=read.current_leader[1])
                leaders.add(read.current_leader[0])
            partitions.append(out)
        responses.append(RESPONSE.FetchableTopicResponse(
            topic=fetch_topic.topic, topic_id=fetch_topic.topic_id, partitions=partitions))
    return RESPONSE(error_code=errors.NONE, session_id=0, responses=responses,
                    node_endpoints=node_endpoints(core.cluster, leaders, RESPONSE.NodeEndpoint))
