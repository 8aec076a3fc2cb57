"""Single frames a fuzzer found harmful, each on a fresh broker: the broker answers them and
stays usable for everyone else."""

from __future__ import annotations

import logging

import wire
from mockbroker.core.clock import ManualClock, Timers
from mockbroker.core.deferred import Close
from mockbroker.core.dispatch import Connection
from tests.core.harness import answer, make_core, send
from wire import errors

JOIN, DESCRIBE = 11, 15
J = wire.request_class(JOIN)


def _join(core, member_id: str, names: list[str], client: str, version: int = 5):
    return send(core, JOIN, version, J(
        group_id="g", session_timeout_ms=10_000, rebalance_timeout_ms=10_000,
        member_id=member_id, protocol_type="consumer",
        protocols=[J.JoinGroupRequestProtocol(name=n, metadata=n.encode()) for n in names]),
        client_id=client)


def _joined(core, names: list[str], client: str, version: int = 5):
    """A dynamic member's join, again with its member id when the broker asks for one (v4+)."""
    first = _join(core, "", names, client, version)
    if getattr(first, "error_code", None) != errors.MEMBER_ID_REQUIRED:
        return first
    return _join(core, first.member_id, names, client, version)


def _state(core) -> str:
    return send(core, DESCRIBE, 5, groups=["g"]).groups[0].group_state


def test_a_join_naming_a_protocol_twice_is_refused_and_the_group_stays_usable():
    core = make_core(group_initial_rebalance_delay_ms=0)
    for version in (0, 5, 9):
        refused = answer(_joined(core, ["range", "range"], f"bad-v{version}", version))
        assert refused.error_code == errors.INCONSISTENT_GROUP_PROTOCOL
    assert _state(core) in ("Empty", "Dead")
    good = _joined(core, ["roundrobin", "range"], "good")
    core.clock.advance(1)
    good = answer(good)
    assert (good.error_code, good.generation_id, good.protocol_name) == \
        (errors.NONE, 1, "roundrobin")
    # a malformed member cannot join the formed group either, and the group is untouched
    assert answer(_joined(core, ["roundrobin", "roundrobin"], "bad")).error_code == \
        errors.INCONSISTENT_GROUP_PROTOCOL
    assert _state(core) == "CompletingRebalance"


def test_a_raising_timer_does_not_stop_the_timers_due_with_it(caplog):
    clock = ManualClock(0)
    timers = Timers(clock)
    ran = []

    def broken():
        raise RuntimeError("boom")

    timers.call_at(10, lambda: ran.append("first"))
    timers.call_at(10, broken)
    timers.call_at(10, lambda: ran.append("second"))
    timers.call_at(20, lambda: ran.append("later"))
    with caplog.at_level(logging.ERROR, logger="mockbroker.core"):
        clock.advance(30)
    assert ran == ["first", "second", "later"]
    assert timers.failures == 1
    assert "boom" in caplog.text


# -- found by the frame fuzzer (tests/fuzz) ------------------------------------------------------

CREATE_TOPICS, DESCRIBE_CONFIGS = 19, 32
C, D = wire.request_class(CREATE_TOPICS), wire.request_class(DESCRIBE_CONFIGS)
#: the longest string a non-flexible version can carry
LONGEST = "y" * 32767


def _receive(core, api_key: int, version: int, body, client_id: str | None = "fuzzer"):
    """A frame through the front door, as the listener hands it over: the bytes answered."""
    frame = wire.encode_request(api_key, version, 7, client_id, body, size_prefix=False)
    outcome = core.receive(frame, Connection(0, 1))
    assert outcome.done
    return outcome.value


def test_a_name_as_long_as_a_string_allows_is_refused_with_an_answer_that_fits():
    # The error message quoted the whole name, so it outgrew what CreateTopics v2-v4 and
    # DescribeConfigs v0-v3 can carry; the response failed to encode and the connection closed.
    core = make_core()
    for version in (2, 4, 5):
        answered = _receive(core, CREATE_TOPICS, version, C(
            topics=[C.CreatableTopic(name=LONGEST, num_partitions=1, replication_factor=1)],
            timeout_ms=10))
        _, response = wire.decode_response(CREATE_TOPICS, version, answered[4:])
        (topic,) = response.topics
        assert (topic.error_code, topic.name) == (errors.INVALID_TOPIC_EXCEPTION, LONGEST)
        assert topic.error_message.startswith("Topic name is invalid: the length of 'yyy")
    for version in (1, 3, 4):
        answered = _receive(core, DESCRIBE_CONFIGS, version, D(resources=[
            D.DescribeConfigsResource(resource_type=kind, resource_name=LONGEST)
            for kind in (2, 4, 8)]))  # topic, broker, broker logger
        _, response = wire.decode_response(DESCRIBE_CONFIGS, version, answered[4:])
        assert [r.error_code for r in response.results] == [
            errors.INVALID_TOPIC_EXCEPTION, errors.INVALID_REQUEST, errors.INVALID_REQUEST]
    assert not [r for r in core.requests if r.outcome == "failed"]


def test_a_member_id_too_long_to_write_is_refused_and_the_group_stays_usable():
    # The member id is the group instance id (or the client id) and a UUID: from a 32767-byte
    # id it was too long for any JoinGroup response, and the member stayed in the group, so
    # the leader's answer (which lists every member) failed too.  Kafka 4.4 answers
    # UNKNOWN_SERVER_ERROR and adds no member.
    core = make_core(group_initial_rebalance_delay_ms=0)
    for version, instance, client in ((5, LONGEST, "bad"), (4, None, LONGEST),
                                      (9, LONGEST, "bad")):
        answered = _receive(core, JOIN, version, J(
            group_id="g", session_timeout_ms=10_000, rebalance_timeout_ms=10_000,
            member_id="", group_instance_id=instance, protocol_type="consumer",
            protocols=[J.JoinGroupRequestProtocol(name="range", metadata=b"")]), client)
        _, response = wire.decode_response(JOIN, version, answered[4:])
        assert (response.error_code, response.member_id) == (errors.UNKNOWN_SERVER_ERROR, "")
    assert _state(core) in ("Empty", "Dead")
    good = _joined(core, ["range"], "good")
    core.clock.advance(1)
    good = answer(good)
    assert (good.error_code, good.generation_id) == (errors.NONE, 1)
    assert [m.member_id for m in good.members] == [good.member_id]


def test_a_response_that_fails_to_encode_is_logged_as_failed(monkeypatch):
    core = make_core()
    monkeypatch.setattr(wire, "encode_response", lambda *a, **k: 1 / 0)
    body = wire.request_class(DESCRIBE)(groups=["g"])
    assert isinstance(_receive(core, DESCRIBE, 5, body), Close)
    assert [r.outcome for r in core.requests] == ["failed"]
