"""Fetch (key 1): read stored batches, long-polling for ``min_bytes`` up to ``max_wait_ms``
(:mod:`mockbroker.core.datapath.fetch` reads and waits,
:mod:`mockbroker.core.datapath.fetch_sessions` keeps the KIP-227 sessions; this module
translates).

A full fetch answers every partition it names; an incremental one (a session's epoch above 0)
answers only those with something new.  A ``last_fetched_epoch`` (from v12) is checked against
the partition's leader epochs; the new leader is named from v16 (KIP-951: the field exists from
v12, but a v12 client told of a leader it has no address for is stuck, as kafka-python's poll
raises UnknownBrokerIdError).  Before v7 there are no sessions: every fetch is full.

A consumer's fetch from v11 (the version that tells the broker the client's rack) may go to
any replica of a partition, as KIP-392 lets it: a follower answers it as the leader would
(records up to the high watermark); an older fetch, or one from a replica, is answered by the
leader alone.

With an authorizer a consumer needs READ on each topic (KafkaApis' check): the partitions of a
topic it may not read answer TOPIC_AUTHORIZATION_FAILED, whether the topic exists or not (an
unknown topic id still answers UNKNOWN_TOPIC_ID).
"""

from __future__ import annotations

from mockbroker.core.datapath import fetch
from mockbroker.core.control.error_responses import PartitionShape
from mockbroker.core.datapath.fetch_sessions import FINAL_EPOCH, SessionPartition
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import access
from mockbroker.handlers import REGISTRY
from mockbroker.handlers._common import find_topic, node_endpoints
from wire import encode_response_body, errors, response_class

API_KEY = 1
RESPONSE = response_class(API_KEY)
READ_COMMITTED = 1
#: the first version that names topics by id
TOPIC_IDS = 13

#: an injected error sits on each partition it picks, and answers the fetch at once
ERRORS = PartitionShape("topics", "topic", "partitions", "partition", "responses", "topic",
                        "partitions", "partition_index", handler_injects=True)


def _session_names(core, broker_id: int, request) -> set:
    """The partitions an incremental fetch reads without naming them: its session's."""
    session = core.fetch_sessions.get(broker_id, request.session_id) \
        if getattr(request, "session_epoch", -1) > 0 else None
    if session is None:
        return set()
    names = set()
    for p in session.partitions.values():
        topic = p.topic or getattr(core.cluster.topics_by_id.get(p.topic_id), "name", None)
        names.add((topic, p.partition))
    return names


@REGISTRY.handler(API_KEY, errors=ERRORS, names=_session_names)
def handle(core, ctx, request):
    version = ctx.api_version
    by_id = version >= TOPIC_IDS
    wanted = [SessionPartition((t.topic_id if by_id else t.topic, fp.partition), t.topic,
                               t.topic_id, fp.partition, fp.fetch_offset,
                               fp.partition_max_bytes, fp.current_leader_epoch,
                               fp.last_fetched_epoch)
              for t in request.topics for fp in t.partitions]
    if version >= 7:
        forgotten = [(t.topic_id if by_id else t.topic, index)
                     for t in request.forgotten_topics_data for index in t.partitions]
        context = core.fetch_sessions.context(ctx.broker_id, request.session_id,
                                              request.session_epoch, wanted, forgotten,
                                              ctx.now_ms)
    else:
        context = core.fetch_sessions.context(ctx.broker_id, 0, FINAL_EPOCH, wanted, [],
                                              ctx.now_ms)
    if context.error_code != errors.NONE:
        return RESPONSE(error_code=context.error_code, session_id=0, responses=[])
    acl = access(core, ctx)
    positions = [_position(core, by_id, p, acl) for p in context.partitions]

    def read():
        return fetch.read(
            positions, broker_id=ctx.broker_id, max_bytes=request.max_bytes,
            read_committed=request.isolation_level == READ_COMMITTED,
            check_last_fetched_epoch=version >= 12, name_new_leader=version >= 16,
            injected=ctx.injected,
            leader_only=version < 11 or _replica_id(request, version) >= 0)

    def respond(reads):
        session_id, sent = context.respond(reads, core.clock.now_ms())
        return _response(core, session_id, sent, ctx.listener, version)

    reads, total = read()
    if total >= max(request.min_bytes, 1) or request.max_wait_ms <= 0 or \
            fetch.answer_now(reads):
        return respond(reads)
    return fetch.long_poll(core.cluster, core.timers, positions, request.min_bytes,
                           request.max_wait_ms, read, respond)


def _replica_id(request, version: int) -> int:
    """The fetching replica's broker id (-1: a consumer), in a structure of its own from
    v15."""
    return request.replica_state.replica_id if version >= 15 else request.replica_id


def _position(core, by_id: bool, wanted: SessionPartition, acl) -> fetch.FetchPosition:
    topic, missing = find_topic(core.cluster, by_id, wanted.topic, wanted.topic_id)
    partition = None
    if not (by_id and topic is None) and \
            not acl.topic(Op.READ, topic.name if topic is not None else wanted.topic):
        # READ on the topic, checked before it is known to exist (an unknown id is said first)
        topic, missing = None, errors.TOPIC_AUTHORIZATION_FAILED
    elif topic is not None and 0 <= wanted.partition < len(topic.partitions):
        partition = topic.partitions[wanted.partition]
    return fetch.FetchPosition(
        partition, missing if topic is None else errors.UNKNOWN_TOPIC_OR_PARTITION,
        wanted.fetch_offset, wanted.max_bytes, wanted.current_leader_epoch,
        wanted.last_fetched_epoch, topic.name if topic is not None else wanted.topic,
        wanted.partition)


def _response(core, session_id: int, sent, listener: str, version: int):
    """The answer of a Fetch whose reads are done.  One that carries no records, aborted
    transactions, diverging epoch or new leader (an idle consumer's long poll, as it ends) is
    said again and again in the same words: the cluster keeps it encoded, by what it says."""
    key = _empty_answer_key(session_id, sent, version)
    if key is None:
        return _built(core, session_id, sent, listener)
    return core.cluster.fetch_answers.get(key, lambda: encode_response_body(
        API_KEY, version, _built(core, session_id, sent, listener)))


def _empty_answer_key(session_id: int, sent, version: int) -> tuple | None:
    parts = []
    for wanted, read in sent:
        if read.records or read.aborted_transactions or read.diverging_epoch is not None or \
                read.current_leader is not None:
            return None
        parts.append((wanted.topic, wanted.topic_id, wanted.partition, read.error_code,
                      read.high_watermark, read.last_stable_offset, read.log_start_offset,
                      read.aborted_transactions is None))
    return version, session_id, tuple(parts)


def _built(core, session_id: int, sent, listener: str):
    leaders = set()
    topics: dict = {}
    for wanted, read in sent:
        out = RESPONSE.PartitionData(
            partition_index=wanted.partition, error_code=read.error_code,
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
        topic = topics.get(wanted.key[0])
        if topic is None:
            topic = topics[wanted.key[0]] = RESPONSE.FetchableTopicResponse(
                topic=wanted.topic, topic_id=wanted.topic_id, partitions=[])
        topic.partitions.append(out)
    return RESPONSE(error_code=errors.NONE, session_id=session_id,
                    responses=list(topics.values()),
                    node_endpoints=node_endpoints(core.cluster, leaders,
                                                  RESPONSE.NodeEndpoint, listener)
                    if leaders else [])
