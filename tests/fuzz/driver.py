"""The fuzzer's clients: many connections sending :class:`~tests.fuzz.frames.Sample` frames to
a running broker, each pipelining a few requests, and checking every answer.

Per connection the broker must answer each decodable request, in order (matched by
correlation id), skip only an acks=0 Produce, and may close the connection only at a frame it
could not decode, does not serve, or chose to refuse by closing (an acks=0 Produce that failed,
and nothing else for a valid frame).  A request that gets no answer within ``deadline_s`` is a
hang unless it may rightly wait (a Fetch long-poll or a rebalance, whose wait the fuzzer may
have set to days: those get ``patience_s``); the connection is then dropped and a new one made.
The deadline bounds the run, it is not a timing assertion: a hang never answers.
"""

from __future__ import annotations

import asyncio
import collections
from dataclasses import dataclass, field

import wire
from tests.fuzz.frames import FrameMaker, Sample

#: requests in flight per connection (the broker reads at most 5 ahead of its answers)
WINDOW = 4


@dataclass
class Report:
    sent: int = 0
    answered: int = 0
    #: acks=0 Produce requests, rightly unanswered
    unanswered: int = 0
    #: connections closed by the broker, by the kind of frame that closed them
    closed: collections.Counter = field(default_factory=collections.Counter)
    #: a patient request (Fetch, JoinGroup, SyncGroup) given up after the deadline
    abandoned: int = 0
    #: what must not happen, each with the frame that caused it
    hangs: list = field(default_factory=list)
    mismatched: list = field(default_factory=list)
    bad_responses: list = field(default_factory=list)
    closed_on_valid: list = field(default_factory=list)
    connections: int = 0
    #: a waiting request (Fetch, JoinGroup, SyncGroup) left unanswered while later ones were
    #: answered: the answers out of order
    skipped_group_waits: list = field(default_factory=list)

    @property
    def problems(self) -> list:
        return self.hangs + self.mismatched + self.bad_responses + self.closed_on_valid + \
            self.skipped_group_waits

    def summary(self) -> str:
        return (f"sent={self.sent} answered={self.answered} unanswered(acks=0)="
                f"{self.unanswered} closed={dict(self.closed)} abandoned={self.abandoned} "
                f"connections={self.connections} hangs={len(self.hangs)} "
                f"mismatched={len(self.mismatched)} bad_responses={len(self.bad_responses)} "
                f"closed_on_valid={len(self.closed_on_valid)} "
                f"skipped_group_waits={len(self.skipped_group_waits)}")


def _describe(s: Sample) -> tuple:
    return (wire.API_NAMES.get(s.api_key, s.api_key), s.api_version, s.kind, s.note,
            s.data[:200])


class _Budget:
    def __init__(self, frames: int):
        self.left = frames

    def take(self) -> bool:
        if self.left <= 0:
            return False
        self.left -= 1
        return True


async def _connection(host: str, port: int, maker: FrameMaker, budget: _Budget,
                      report: Report, deadline_s: float, patience_s: float,
                      check_responses: bool) -> None:
    """One connection after another until the budget is spent."""
    while budget.left > 0:
        reader, writer = await asyncio.open_connection(host, port)
        report.connections += 1
        try:
            await _converse(reader, writer, maker, budget, report, deadline_s, patience_s,
                            check_responses)
        finally:
            writer.transport.abort()


async def _converse(reader, writer, maker, budget, report, deadline_s, patience_s,
                    check_responses):
    outstanding: collections.deque[Sample] = collections.deque()
    may_close = False  # a frame the broker may close on is in flight: send nothing after it
    while True:
        while len(outstanding) < WINDOW and not may_close and budget.take():
            s = maker.sample()
            writer.write(s.data)
            report.sent += 1
            outstanding.append(s)
            may_close = s.answered is None
        if all(o.answered is False for o in outstanding):
            return  # nothing left that gets an answer (the budget is spent)
        head = next((s for s in outstanding if s.answered is not False), outstanding[0])
        wait = patience_s if head.patient or head.answered is False else deadline_s
        try:
            await writer.drain()
            size = int.from_bytes(await asyncio.wait_for(reader.readexactly(4), wait), "big")
            payload = await asyncio.wait_for(reader.readexactly(size), deadline_s)
        except asyncio.TimeoutError:
            if head.patient or head.answered is False:
                report.abandoned += 1
            else:
                report.hangs.append(_describe(head))
            return
        except (asyncio.IncompleteReadError, ConnectionError):
            _closed(outstanding, report)
            return
        cid = int.from_bytes(payload[:4], "big", signed=True)
        while outstanding and outstanding[0].answered is False and \
                outstanding[0].correlation_id != cid:
            outstanding.popleft()
            report.unanswered += 1
        if outstanding and outstanding[0].correlation_id != cid and \
                outstanding[0].patient and \
                any(o.correlation_id == cid for o in outstanding):
            # a waiting request skipped while the ones behind it are answered: once, the
            # broker did this when a later frame closed the connection
            report.skipped_group_waits.append((cid, [(o.correlation_id,) + _describe(o)
                                                     for o in outstanding]))
            return
        if not outstanding or outstanding[0].correlation_id != cid:
            report.mismatched.append((cid, [(s.correlation_id, s.answered) + _describe(s)
                                            for s in outstanding]))
            return
        s = outstanding.popleft()
        report.answered += 1
        may_close = any(o.answered is None for o in outstanding)
        if check_responses and s.answered is True:
            try:
                wire.decode_response(s.api_key, s.api_version, payload)
            except Exception as exc:
                report.bad_responses.append((_describe(s), repr(exc)))
                return


def _closed(outstanding, report: Report) -> None:
    """The broker closed the connection: blame the oldest frame it may rightly close on (an
    acks=0 Produce that failed, an undecodable frame), else the oldest unanswered one."""
    blame = next((s for s in outstanding if s.answered is not True), outstanding[0])
    report.closed[blame.kind] += 1
    if blame.kind == "valid" and blame.answered is True:
        report.closed_on_valid.append(_describe(blame))


async def fuzz(host: str, port: int, *, seed: int, frames: int, connections: int = 16,
               deadline_s: float = 30.0, patience_s: float = 1.0, check_responses: bool = True,
               report: Report | None = None, **maker_options) -> Report:
    """Send ``frames`` frames over ``connections`` concurrent connections; what happened."""
    report = report or Report()
    budget = _Budget(frames)
    await asyncio.gather(*(
        _connection(host, port, FrameMaker(seed * 1000 + i, client_id=f"fuzzer-{i}",
                                           **maker_options),
                    budget, report, deadline_s, patience_s, check_responses)
        for i in range(connections)))
    return report


def run(bootstrap: str, **options) -> Report:
    """:func:`fuzz` against the first broker of ``bootstrap``, on an event loop of its own."""
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    return asyncio.run(fuzz(host, int(port), **options))
