"""The injected clock and timers, and a Fetch long-poll driven by them with no sockets."""

from __future__ import annotations

import wire
from mockbroker.core.clock import ManualClock, Timers
from mockbroker.core.deferred import Deferred
from tests.core.harness import make_core, send
from wire import records


def test_timers_fire_in_deadline_order_as_time_passes():
    clock = ManualClock(start_ms=1000)
    timers = Timers(clock)
    fired = []
    timers.call_later(30, lambda: fired.append(("c", clock.now_ms())))
    timers.call_later(10, lambda: fired.append(("a", clock.now_ms())))
    cancelled = timers.call_later(20, lambda: fired.append(("b", clock.now_ms())))
    cancelled.cancel()
    clock.advance(15)
    assert fired == [("a", 1010)]
    clock.advance(100)
    assert fired == [("a", 1010), ("c", 1030)]
    assert clock.now_ms() == 1115
    assert timers.next_deadline() is None


def test_a_timer_scheduled_by_a_timer_fires_within_the_same_advance():
    clock = ManualClock(start_ms=0)
    timers = Timers(clock)
    fired = []
    timers.call_later(5, lambda: timers.call_later(5, lambda: fired.append(clock.now_ms())))
    clock.advance(20)
    assert fired == [10]


def test_deferred_answers_once():
    seen = []
    d = Deferred()
    d.add_callback(seen.append)
    d.resolve(1)
    d.resolve(2)
    d.add_callback(seen.append)
    assert seen == [1, 1] and d.value == 1


def _core():
    clock = ManualClock()
    core = make_core(clock=clock)
    core.cluster.create_topic("t", 1)
    return core, clock


def _retention_check(core):
    """When the first of the periodic checks is due (offset retention, log retention: both
    always scheduled)."""
    return min(core.groups.retention_deadline(), core.cluster.retention.deadline())


def _fetch(core, max_wait_ms=500, min_bytes=1):
    cls = wire.request_class(1)
    body = cls(max_wait_ms=max_wait_ms, min_bytes=min_bytes, max_bytes=1 << 20, topics=[
        cls.FetchTopic(topic="t", partitions=[cls.FetchPartition(
            partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])])
    return send(core, 1, 12, body)


def _produce(core, value: bytes):
    cls = wire.request_class(0)
    body = cls(acks=-1, timeout_ms=1000, topic_data=[cls.TopicProduceData(
        name="t", partition_data=[cls.PartitionProduceData(
            index=0, records=records.encode_batch([(b"k", value, [], 1)]))])])
    return send(core, 0, 9, body)


def test_fetch_long_poll_is_answered_by_a_produce():
    core, clock = _core()
    pending = _fetch(core)
    assert isinstance(pending, Deferred) and not pending.done
    clock.advance(100)
    assert not pending.done
    assert _produce(core, b"hello").responses[0].partition_responses[0].error_code == 0
    assert pending.done
    data = pending.value.responses[0].partitions[0]
    assert data.high_watermark == 1
    assert [r.value for r in records.decode_records(data.records)] == [b"hello"]
    assert not core.cluster.append_listeners  # the waiter is gone
    assert core.timers.next_deadline() == _retention_check(core)  # the only timer left


def test_fetch_long_poll_times_out_empty_at_max_wait():
    core, clock = _core()
    pending = _fetch(core, max_wait_ms=500)
    clock.advance(499)
    assert not pending.done
    clock.advance(1)
    assert pending.done
    assert pending.value.responses[0].partitions[0].records == b""
    assert not core.cluster.append_listeners


def test_fetch_waits_for_min_bytes():
    core, clock = _core()
    pending = _fetch(core, max_wait_ms=1000, min_bytes=200)
    _produce(core, b"x")
    assert not pending.done  # one small batch is fewer than 200 bytes
    _produce(core, b"y" * 300)
    assert pending.done
    assert len(records.decode_records(pending.value.responses[0].partitions[0].records)) == 1


def test_cancelled_fetch_releases_its_listener_and_timer():
    core, _ = _core()
    pending = _fetch(core)
    pending.cancel()
    assert not core.cluster.append_listeners
    assert core.timers.next_deadline() == _retention_check(core)  # the only timer left


class _Held:
    """Something a timer's callback holds (a group, a member)."""


def test_a_cancelled_timer_lets_go_of_what_its_callback_holds_at_once():
    import weakref

    timers = Timers(ManualClock(start_ms=0))
    held = _Held()
    ref = weakref.ref(held)
    timer = timers.call_later(30 * 60_000, lambda held=held: None)
    del held
    assert ref() is not None
    timer.cancel()
    assert ref() is None  # freed now, not in 30 minutes


def test_timers_cancelled_long_before_their_deadline_do_not_pile_up():
    clock = ManualClock(start_ms=0)
    timers = Timers(clock)
    fired = []
    keep = [timers.call_later(1000 + i, lambda i=i: fired.append(i)) for i in range(10)]
    for _ in range(20 * Timers.COMPACT_AT):
        timers.call_later(24 * 3600_000, lambda: fired.append("cancelled")).cancel()
    assert len(timers) < 2 * Timers.COMPACT_AT + len(keep)
    clock.advance(25 * 3600_000)
    assert fired == list(range(10))


def test_a_timer_that_cancels_many_others_as_it_runs_leaves_the_rest_due():
    clock = ManualClock(start_ms=0)
    timers = Timers(clock)
    fired = []
    doomed = [timers.call_later(50, lambda: fired.append("doomed"))
              for _ in range(3 * Timers.COMPACT_AT)]

    def cancel_all() -> None:
        fired.append("first")
        for timer in doomed:
            timer.cancel()

    timers.call_later(10, cancel_all)
    timers.call_later(20, lambda: fired.append("second"))
    clock.advance(100)
    assert fired == ["first", "second"]
    assert timers.next_deadline() is None


def test_members_that_come_and_go_leave_no_timers_behind():
    """A member's session timer (30 minutes here) is cancelled when it leaves; two thousand
    members joining and leaving keep the queue short."""
    from tests.core.test_coordinator import Harness, answer

    h = Harness()
    for i in range(2000):
        member_id, joined = h.join_new(group_id=f"g{i}", session=1_800_000,
                                       rebalance=1_800_000)
        h.advance(1)  # the join phase completes
        assert answer(joined).error_code == 0
        assert h.leave((member_id, None), group_id=f"g{i}")[0] == 0
    assert len(h.core.timers) < 2 * Timers.COMPACT_AT
