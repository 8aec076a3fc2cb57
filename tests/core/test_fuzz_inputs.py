"""Single frames a fuzzer found harmful, each on a fresh broker: the broker answers them and
stays usable for everyone else."""

from __future__ import annotations

import logging

import wire
from mockbroker.core.clock import ManualClock, Timers
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
