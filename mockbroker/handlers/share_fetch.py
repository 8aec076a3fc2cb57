"""ShareFetch (key 78): a share consumer's fetch (KIP-932), which acquires records for its
member and may carry acknowledgements of records it acquired before
(:mod:`mockbroker.core.share`).

Checked in KafkaApis' order: a group id (INVALID_REQUEST "Invalid group id in the request."),
READ on the group (GROUP_AUTHORIZATION_FAILED), a member id of 1 to 36 characters, the v2
renew-only request's zeroed limits, then the share session (epoch 0 opens one and may carry no
acknowledgements; -1 closes it after its acknowledgements; any other must be the epoch
expected: INVALID_SHARE_SESSION_EPOCH, SHARE_SESSION_NOT_FOUND; a broker with no room for
another session answers SHARE_SESSION_LIMIT_REACHED after ``max_wait_ms``).  Then per partition:
READ on the topic, acknowledgements first, then records acquired.  With nothing to acquire yet
the fetch waits, as a Fetch does, up to ``max_wait_ms``.

The answer of a session's first request names every partition it fetched; later ones name a
partition only when it has records, an error, or an acknowledgement result, or is new to the
session.  Every answer carries the group's record lock duration.
"""

from __future__ import annotations

from mockbroker.core.deferred import Deferred
from mockbroker.core.errors import ApiException
from mockbroker.core.share.manager import FetchAsk
from mockbroker.core.share.sessions import FINAL, INITIAL
from mockbroker.handlers import REGISTRY
from mockbroker.handlers._common import node_endpoints, share_ask as ask_of, \
    share_refusal as check
from wire import errors, response_class

API_KEY = 78
RESPONSE = response_class(API_KEY)


def _refused(code: int, message: str | None = None):
    return RESPONSE(throttle_time_ms=0, error_code=code, error_message=message,
                    acquisition_lock_timeout_ms=0, responses=[], node_endpoints=[])


def _renew_limits(request) -> str | None:
    """KafkaApis' message for a renew-only ShareFetch whose limits are not all zero."""
    clauses = [f"{name} must be set to 0" for name, value in (
        ("maxBytes", request.max_bytes), ("minBytes", request.min_bytes),
        ("maxRecords", request.max_records), ("maxWaitMs", request.max_wait_ms)) if value]
    return ", ".join(clauses) + ", if isRenewAck is true." if clauses else None


def _session_names(core, broker_id: int, request) -> set:
    """The partitions a later ShareFetch of a session fetches without naming them."""
    shares = core.__dict__.get("share_partitions")
    if shares is None or request.share_session_epoch <= 0:
        return set()
    session = shares.sessions.sessions.get((broker_id, request.group_id, request.member_id))
    by_id = core.cluster.topics_by_id
    return set() if session is None else {
        (by_id[t].name, p) for t, p in session.partitions if t in by_id}


@REGISTRY.handler(API_KEY, names_partitions=True, names=_session_names)
def handle(core, ctx, request):
    refused = check(core, ctx, request)
    if refused is not None:
        return _refused(*refused)
    if ctx.api_version >= 2 and request.is_renew_ack:
        message = _renew_limits(request)
        if message is not None:
            return _refused(errors.INVALID_REQUEST, message)
    shares = core.share_partitions
    ask = ask_of(core, ctx, request, fetch=True)
    try:
        session = shares.session_for(ctx.broker_id, ctx.connection_id, ask)
    except ApiException as exc:
        if exc.error_code == errors.SHARE_SESSION_LIMIT_REACHED and request.max_wait_ms > 0:
            deferred = Deferred()
            timer = core.timers.call_later(request.max_wait_ms, lambda: deferred.resolve(
                _refused(errors.SHARE_SESSION_LIMIT_REACHED)))
            deferred.on_cancel = timer.cancel
            return deferred
        return _refused(exc.error_code)
    lock_ms = shares.config(request.group_id, ctx.broker_id).lock_duration_ms
    acked = shares.acknowledge(ctx.broker_id, ask)
    new = {(p.topic_id, p.index) for p in ask.partitions}

    def answer(fetched):
        if ask.epoch == FINAL:
            shares.release(session)
        return _response(core, ctx, ask, fetched, acked, new, lock_ms)

    if ask.epoch == FINAL or ask.renew or request.max_records <= 0 or request.max_bytes <= 0:
        return answer([])
    budget = [request.max_records]
    fetched, taken = shares.fetch(ctx.broker_id, ask, session, budget)
    waits = request.max_wait_ms > 0 and request.min_bytes > 0 and taken == 0 and \
        not any(p.error_code != errors.NONE for p in fetched)
    if not waits:
        return answer(fetched)

    def attempt():
        again, got = shares.fetch(ctx.broker_id, ask, session, [request.max_records])
        return answer(again) if got else None

    topics = {topic_id for topic_id, _ in session.partitions}
    return shares.long_poll(ask, topics, attempt,
                            lambda: answer(shares.fetch(ctx.broker_id, ask, session,
                                                        [request.max_records])[0]))


def _response(core, ctx, ask: FetchAsk, fetched, acked, new, lock_ms: int):
    initial = ask.epoch == INITIAL
    leaders = set()
    topics: dict = {}
    shown = []
    for p in fetched:
        ack = acked.pop((p.topic_id, p.index), None)
        if ack is not None:
            p.ack_error_code, p.ack_error_message = ack.ack_error_code, ack.ack_error_message
        if initial or p.records or p.error_code != errors.NONE or ack is not None or \
                (p.topic_id, p.index) in new:
            shown.append(p)
    shown += acked.values()  # acknowledged, not fetched
    for p in shown:
        out = RESPONSE.PartitionData(
            partition_index=p.index, error_code=p.error_code, error_message=None,
            acknowledge_error_code=p.ack_error_code,
            acknowledge_error_message=p.ack_error_message,
            current_leader=RESPONSE.LeaderIdAndEpoch(leader_id=-1, leader_epoch=-1),
            records=p.records if len(p.records) != 1 else p.records[0],
            acquired_records=[RESPONSE.AcquiredRecords(
                first_offset=a.first_offset, last_offset=a.last_offset,
                delivery_count=a.delivery_count) for a in p.acquired])
        if not p.records:
            out.records = b""
        if p.leader is not None:
            out.current_leader = RESPONSE.LeaderIdAndEpoch(leader_id=p.leader[0],
                                                           leader_epoch=p.leader[1])
            leaders.add(p.leader[0])
        topic = topics.get(p.topic_id)
        if topic is None:
            topic = topics[p.topic_id] = RESPONSE.ShareFetchableTopicResponse(
                topic_id=p.topic_id, partitions=[])
        topic.partitions.append(out)
    return RESPONSE(throttle_time_ms=0, error_code=errors.NONE, error_message=None,
                    acquisition_lock_timeout_ms=lock_ms, responses=list(topics.values()),
                    node_endpoints=node_endpoints(core.cluster, leaders,
                                                  RESPONSE.NodeEndpoint, ctx.listener))
