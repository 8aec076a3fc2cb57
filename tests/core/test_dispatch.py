"""The core's front door: frames in, one outcome out; requests the broker does not serve are
logged before their connection is closed, and ApiVersions in an unknown version is answered."""

from __future__ import annotations


import pytest

import wire
from mockbroker.core.context import RequestContext
from mockbroker.core.deferred import NO_RESPONSE, Close
from mockbroker.core.dispatch import Connection
from mockbroker.core.security import ANONYMOUS
from mockbroker.handlers.registry import ApiRegistry
from tests.core.harness import make_core
from wire import errors, records

CONN = Connection(0, 1)


def _frame(api_key: int, version: int, body, correlation_id: int = 5) -> bytes:
    return wire.encode_request(api_key, version, correlation_id, "probe", body,
                               size_prefix=False)


def test_an_api_the_broker_does_not_serve_is_logged_then_closed():
    core = make_core()
    # ReadShareGroupState: defined by the codec, spoken between brokers, not served
    body = wire.request_class(84)()
    outcome = core.receive(_frame(84, 0, body), CONN)
    assert outcome.done and isinstance(outcome.value, Close)
    (logged,) = list(core.requests)
    assert (logged.api_key, logged.api_version, logged.client_id, logged.outcome) == \
        (84, 0, "probe", "unsupported")


def test_a_version_the_codec_does_not_know_is_logged_then_closed():
    core = make_core()
    frame = bytearray(_frame(3, 12, wire.request_class(3)(topics=None)))
    frame[2:4] = (99).to_bytes(2, "big")  # Metadata v99
    outcome = core.receive(bytes(frame), CONN)
    assert isinstance(outcome.value, Close)
    (logged,) = list(core.requests)
    assert (logged.api_key, logged.api_version, logged.outcome) == (3, 99, "unsupported")


def test_api_versions_in_an_unknown_version_is_answered_with_its_own_range():
    core = make_core()
    frame = bytearray(_frame(18, 3, wire.request_class(18)(client_software_name="x",
                                                           client_software_version="1")))
    frame[2:4] = (77).to_bytes(2, "big")
    outcome = core.receive(bytes(frame), CONN)
    _, response = wire.decode_response(18, 0, outcome.value[4:])  # past the size prefix
    assert response.error_code == errors.UNSUPPORTED_VERSION
    (entry,) = response.api_keys
    assert (entry.api_key, entry.min_version) == (18, 0) and entry.max_version >= 3
    assert [r.outcome for r in core.requests] == ["unsupported"]


def test_an_undecodable_frame_closes_and_a_good_one_is_answered_in_bytes():
    core = make_core()
    assert isinstance(core.receive(b"\x00\x03", CONN).value, Close)
    answer = core.receive(_frame(3, 12, wire.request_class(3)(topics=None)), CONN).value
    correlation, response = wire.decode_response(3, 12, answer[4:])
    assert correlation == 5 and [b.node_id for b in response.brokers] == [0]


def test_acks_zero_gets_no_response_and_a_handler_failure_closes_only_that_request():
    core = make_core()
    core.cluster.create_topic("t", 1)
    cls = wire.request_class(0)
    body = cls(acks=0, timeout_ms=1000, topic_data=[cls.TopicProduceData(
        name="t", partition_data=[cls.PartitionProduceData(
            index=0, records=records.encode_batch([(b"k", b"v", [], 1)]))])])
    assert core.receive(_frame(0, 9, body), CONN).value is NO_RESPONSE
    assert core.cluster.topics["t"].partitions[0].log.high_watermark == 1

    def broken(core_, ctx, request):
        raise RuntimeError("a bug")

    registry = ApiRegistry()  # a registry whose Metadata handler has a bug
    registry.register(3, 0, 13, broken)
    core.registry = registry
    outcome = core.receive(_frame(3, 12, wire.request_class(3)(topics=None)), CONN)
    assert isinstance(outcome.value, Close) and "a bug" in outcome.value.reason
    assert list(core.requests)[-1].outcome == "failed"


def test_a_request_context_says_who_sent_it_where_and_when():
    core = make_core()
    conn = Connection(0, 4, "10.0.0.7", listener="SASL_PLAINTEXT")
    header = wire.RequestHeader(api_key=3, api_version=12, correlation_id=9, client_id="app")
    ctx = core.context(header, conn)
    assert ctx == RequestContext(0, 4, "app", 12, core.clock.now_ms(), "10.0.0.7",
                                 principal=ANONYMOUS, listener="SASL_PLAINTEXT")
    assert ctx.injected is None and ctx.session is None and ctx.mechanism is None
    with pytest.raises(AttributeError):
        ctx.now_ms = 0  # handlers share it: nothing may change it


def test_a_fetch_answer_is_its_pieces_with_the_stored_batches_uncopied_where_asked_for():
    core = make_core()
    core.cluster.create_topic("t", 1)
    produce = wire.request_class(0)
    for value in (b"x" * 2000, b"y" * 2000):
        body = produce(acks=1, timeout_ms=1000, topic_data=[produce.TopicProduceData(
            name="t", partition_data=[produce.PartitionProduceData(
                index=0, records=records.encode_batch([(b"k", value, [], 1)]))])])
        core.receive(_frame(0, 9, body), CONN)
    fetch = wire.request_class(1)
    frame = _frame(1, 12, fetch(max_wait_ms=0, min_bytes=1, max_bytes=1 << 20,
                                session_epoch=-1, topics=[fetch.FetchTopic(
                                    topic="t", partitions=[fetch.FetchPartition(
                                        partition=0, fetch_offset=0,
                                        partition_max_bytes=1 << 20)])]))
    joined = core.receive(frame, CONN).value
    pieces = core.receive(frame, Connection(0, 2, pieces=True)).value
    assert type(pieces) is list and b"".join(pieces) == bytes(joined)
    stored = [batch.data for batch in core.cluster.topics["t"].partitions[0].log.batches]
    assert len(stored) == 2
    assert [p for p in pieces if any(p is batch for batch in stored)] == stored
    _, body = wire.decode_response(1, 12, bytes(joined)[4:])
    stored_records = body.responses[0].partitions[0].records
    values = [r.value for _, batch in records.split_batches(stored_records)
              for r in records.decode_records(batch)]
    assert values == [b"x" * 2000, b"y" * 2000]
