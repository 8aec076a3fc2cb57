"""Fetch sessions (KIP-227) as Kafka's FetchManager answers them: a full fetch opens a session,
incremental fetches name only what changed and are answered with only what is new, and every
misuse gets Kafka's session error."""

from __future__ import annotations

import pytest

import wire
from mockbroker.core.datapath.fetch_sessions import EVICTION_MS
from tests.core.harness import make_core, send
from wire import errors, records

FETCH = wire.request_class(1)
VERSION = 12


@pytest.fixture
def core():
    core = make_core()
    core.cluster.create_topic("t", 3)
    return core


def produce(core, partition: int, *values: bytes) -> None:
    cls = wire.request_class(0)
    body = cls(acks=-1, timeout_ms=1000, topic_data=[cls.TopicProduceData(
        name="t", partition_data=[cls.PartitionProduceData(
            index=partition, records=records.encode_batch([(b"k", v, [], 1) for v in values]))])])
    assert send(core, 0, 9, body).responses[0].partition_responses[0].error_code == 0


def fetch(core, session_id: int, epoch: int, positions: dict[int, int], *, forget=(),
          version: int = VERSION):
    body = FETCH(max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, session_id=session_id,
                 session_epoch=epoch, topics=[FETCH.FetchTopic(topic="t", partitions=[
                     FETCH.FetchPartition(partition=p, fetch_offset=o, partition_max_bytes=1 << 20)
                     for p, o in positions.items()])] if positions else [],
                 forgotten_topics_data=[FETCH.ForgottenTopic(topic="t", partitions=list(forget))]
                 if forget else [])
    return send(core, 1, version, body)


def answered(response) -> dict[int, tuple[int, int, list[bytes]]]:
    """partition -> (error, high watermark, values) of every partition the answer carries."""
    out = {}
    for topic in response.responses:
        for p in topic.partitions:
            values = [r.value for r in records.decode_records(p.records)] if p.records else []
            out[p.partition_index] = (p.error_code, p.high_watermark, values)
    return out


def test_a_full_fetch_opens_a_session_and_incremental_fetches_carry_only_what_is_new(core):
    produce(core, 0, b"a")
    first = fetch(core, 0, 0, {0: 0, 1: 0, 2: 0})
    assert first.error_code == 0 and first.session_id != 0
    assert answered(first) == {0: (0, 1, [b"a"]), 1: (0, 0, []), 2: (0, 0, [])}
    session = first.session_id
    # nothing new anywhere: the session's partitions are read, none is sent
    quiet = fetch(core, session, 1, {0: 1})
    assert (quiet.error_code, quiet.session_id, answered(quiet)) == (0, session, {})
    # a record on partition 2, which this request does not even name
    produce(core, 2, b"b", b"c")
    news = fetch(core, session, 2, {})
    assert answered(news) == {2: (0, 2, [b"b", b"c"])}
    # the fetcher moves on in partition 2; partition 0 is fetched from where the session has it
    # (offset 1, from the second fetch), so only the new record comes
    produce(core, 0, b"d")
    both = fetch(core, session, 3, {2: 2})
    assert answered(both) == {0: (0, 2, [b"d"])}


def test_session_errors_are_kafkas(core):
    session = fetch(core, 0, 0, {0: 0}).session_id
    unknown = fetch(core, session + 1, 1, {})
    assert (unknown.error_code, unknown.session_id, unknown.responses) == \
        (errors.FETCH_SESSION_ID_NOT_FOUND, 0, [])
    stale = fetch(core, session, 5, {})
    assert stale.error_code == errors.INVALID_FETCH_SESSION_EPOCH
    assert fetch(core, session, 1, {}).error_code == 0  # the session is still there


def test_forgetting_every_partition_or_a_final_fetch_closes_the_session(core):
    session = fetch(core, 0, 0, {0: 0, 1: 0}).session_id
    closed = fetch(core, session, 1, {}, forget=[0, 1])
    assert closed.session_id == 0
    assert fetch(core, session, 2, {}).error_code == errors.FETCH_SESSION_ID_NOT_FOUND
    again = fetch(core, 0, 0, {0: 0}).session_id
    final = fetch(core, again, -1, {0: 0})
    assert final.session_id == 0 and answered(final) == {0: (0, 0, [])}
    assert fetch(core, again, 1, {}).error_code == errors.FETCH_SESSION_ID_NOT_FOUND


def test_a_partition_in_error_is_always_sent_and_sent_again_once_it_recovers(core):
    session = fetch(core, 0, 0, {0: 0, 1: 0}).session_id
    # an offset past the end is out of range, every time it is asked
    assert answered(fetch(core, session, 1, {1: 5})) == {1: (errors.OFFSET_OUT_OF_RANGE, -1, [])}
    assert answered(fetch(core, session, 2, {})) == {1: (errors.OFFSET_OUT_OF_RANGE, -1, [])}
    assert answered(fetch(core, session, 3, {1: 0})) == {1: (0, 0, [])}
    assert answered(fetch(core, session, 4, {})) == {}


def test_no_sessions_when_the_cache_has_no_slots():
    core = make_core(max_incremental_fetch_session_cache_slots=0)
    core.cluster.create_topic("t", 1)
    full = fetch(core, 0, 0, {0: 0})
    assert full.session_id == 0 and answered(full) == {0: (0, 0, [])}


def test_a_full_cache_evicts_only_a_stale_session():
    core = make_core(max_incremental_fetch_session_cache_slots=1)
    core.cluster.create_topic("t", 1)
    first = fetch(core, 0, 0, {0: 0}).session_id
    assert first != 0
    assert fetch(core, 0, 0, {0: 0}).session_id == 0  # no room, and the first is in use
    core.clock.advance(EVICTION_MS + 1)
    second = fetch(core, 0, 0, {0: 0}).session_id
    assert second not in (0, first)
    assert fetch(core, first, 1, {}).error_code == errors.FETCH_SESSION_ID_NOT_FOUND


def test_before_v7_there_are_no_sessions(core):
    body = FETCH(max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, topics=[FETCH.FetchTopic(
        topic="t", partitions=[FETCH.FetchPartition(partition=0, fetch_offset=0,
                                                    partition_max_bytes=100)])])
    assert answered(send(core, 1, 6, body)) == {0: (0, 0, [])}
    assert len(core.fetch_sessions) == 0


def test_a_fault_on_a_partition_reaches_an_incremental_fetch_that_does_not_name_it(core):
    session = fetch(core, 0, 0, {0: 0, 1: 0}).session_id
    rule = core.control.add({"api": "Fetch", "error": "NOT_LEADER_OR_FOLLOWER", "topic": "t",
                             "partition": 1})
    hit = fetch(core, session, 1, {})
    assert answered(hit) == {1: (errors.NOT_LEADER_OR_FOLLOWER, -1, [])}
    assert rule.fired == 1
    # once the error is gone the partition is sent again, as after a real error
    assert answered(fetch(core, session, 2, {})) == {1: (0, 0, [])}


def test_a_long_poll_that_fails_to_answer_closes_instead_of_hanging(core):
    from mockbroker.core.datapath import fetch as core_fetch
    from mockbroker.core.deferred import Close

    def broken(reads):
        raise RuntimeError("a bug")

    position = core_fetch.FetchPosition(core.cluster.topics["t"].partitions[0], 3, 0, 1 << 20)
    waiting = core_fetch.long_poll(core.cluster, core.timers, [position], 1, 100,
                                   lambda: ([], 0), broken)
    core.clock.advance(100)
    assert waiting.done and isinstance(waiting.value, Close) and "a bug" in waiting.value.reason
