"""Many idle consumer groups: what a test cluster with many members costs its broker,
mockbroker against any other Kafka measured in the same run.

Each round starts ``--groups`` groups of ``--members`` confluent-kafka consumers (the classic
protocol, librdkafka's defaults: a heartbeat every 3 s, a Fetch long poll of up to 500 ms
whenever a member has nothing to read) on one topic of as many partitions as a group has
members, and measures on each target:

- settle: from the first ``subscribe()`` until every member owns exactly one partition (every
  group's assignment complete), seconds;
- idle CPU: the broker's CPU over ``--idle-s`` seconds in which nothing is produced (the
  members heartbeat and long-poll), in cores (CPU seconds a second);
- RSS: the broker's resident memory at the end of the idle spell.

Every member is polled (``poll(0)``) from a few threads in the bench's own process, as an
application's loop would; the broker runs in a process of its own (``mockbroker serve``), and
the other broker's figures come from its own ``/proc`` counters (its pid is whoever listens on
its port, or ``--compare-pid``).  Rounds alternate which target goes first; medians are printed
with the ratio mockbroker / other (below 1: mockbroker is faster or spends less), and the
lowest and highest ratio of single rounds.

    .venv/bin/python bench/idle_groups.py [--compare HOST:PORT [--compare-pid PID]]
        [--groups 200] [--members 2] [--idle-s 20] [--rounds 3] [--pollers 4]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.procstat import broker_pid, cpu_seconds, rss_bytes  # noqa: E402
from bench.served import make_topic, served  # noqa: E402

#: how long the members may take to settle before the round fails
SETTLE_LIMIT_S = 120
#: how long closing the members may take before the round goes on without them
CLOSE_LIMIT_S = 60


@dataclass
class Target:
    name: str
    bootstrap: str
    pid: int


@dataclass
class Round:
    settle_s: float
    idle_cores: float
    rss_mb: float


class Members:
    """``groups`` x ``members`` consumers subscribed to ``topic``, polled by ``pollers``
    threads until :meth:`close`."""

    def __init__(self, bootstrap: str, topic: str, groups: int, members: int, pollers: int):
        import confluent_kafka

        run = uuid.uuid4().hex[:8]
        self.consumers = [
            confluent_kafka.Consumer({"bootstrap.servers": bootstrap,
                                      "group.id": f"bench-idle-{run}-{g}",
                                      "enable.auto.commit": False,
                                      "auto.offset.reset": "latest"})
            for g in range(groups) for _ in range(members)]
        self._stop = threading.Event()
        self.started = time.perf_counter()
        for consumer in self.consumers:
            consumer.subscribe([topic])
        self._threads = [threading.Thread(target=self._poll, args=(self.consumers[i::pollers],),
                                          daemon=True) for i in range(pollers)]
        for thread in self._threads:
            thread.start()

    def _poll(self, consumers) -> None:
        while not self._stop.is_set():
            for consumer in consumers:
                consumer.poll(0)
            time.sleep(0.02)

    def settled(self) -> bool:
        """Whether every member owns exactly one partition."""
        return all(len(c.assignment()) == 1 for c in self.consumers)

    def close(self) -> None:
        """Stop polling and close every member, side by side; members still closing after
        :data:`CLOSE_LIMIT_S` are named and left behind rather than waited for."""
        self._stop.set()
        for thread in self._threads:
            thread.join()
        closers = [threading.Thread(target=consumer.close, daemon=True)
                   for consumer in self.consumers]
        for closer in closers:
            closer.start()
        deadline = time.monotonic() + CLOSE_LIMIT_S
        for closer in closers:
            closer.join(max(0.0, deadline - time.monotonic()))
        if stuck := sum(closer.is_alive() for closer in closers):
            print(f"warning: {stuck} members had not closed after {CLOSE_LIMIT_S} s",
                  file=sys.stderr, flush=True)


def one_round(target: Target, args: argparse.Namespace) -> Round:
    topic, partitions = make_topic(target.bootstrap, args.members, "bench-idle")
    if partitions != args.members:
        raise SystemExit(f"{target.name}: the topic has {partitions} partitions, not "
                         f"{args.members} (the broker refused CreateTopics?)")
    members = Members(target.bootstrap, topic, args.groups, args.members, args.pollers)
    try:
        deadline = members.started + SETTLE_LIMIT_S
        while not members.settled():
            if time.perf_counter() > deadline:
                raise SystemExit(f"{target.name}: the members did not settle in "
                                 f"{SETTLE_LIMIT_S} s")
            time.sleep(0.05)
        settle = time.perf_counter() - members.started
        cpu, start = cpu_seconds(target.pid), time.perf_counter()
        time.sleep(args.idle_s)
        cores = (cpu_seconds(target.pid) - cpu) / (time.perf_counter() - start)
        rss = rss_bytes(target.pid) / (1 << 20)
    finally:
        members.close()
    return Round(settle, cores, rss)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--compare", metavar="HOST:PORT", help="another Kafka, measured too")
    parser.add_argument("--compare-pid", type=int, metavar="PID",
                        help="the other broker's pid (default: whoever listens on its port)")
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--members", type=int, default=2)
    parser.add_argument("--idle-s", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pollers", type=int, default=4)
    args = parser.parse_args()
    if min(args.groups, args.members, args.rounds, args.pollers) < 1 or args.idle_s <= 0:
        parser.error("--groups, --members, --rounds, --pollers and --idle-s must be positive")

    with served() as broker:
        targets = [Target("mockbroker", broker.bootstrap, broker.pid)]
        if args.compare:
            targets.append(Target("other", args.compare,
                                  broker_pid(parser, args.compare, args.compare_pid)))
        print(f"{args.groups} groups x {args.members} members, idle {args.idle_s:g} s, "
              f"{args.rounds} rounds", flush=True)
        results: dict[str, list[Round]] = {t.name: [] for t in targets}
        for r in range(args.rounds):
            for target in (targets if r % 2 == 0 else targets[::-1]):
                found = one_round(target, args)
                results[target.name].append(found)
                print(f"  round {r + 1} {target.name}: settle {found.settle_s:.2f} s, idle "
                      f"{found.idle_cores:.3f} cores, RSS {found.rss_mb:.0f} MB", flush=True)
        report(targets, results)


def report(targets: list[Target], results: dict[str, list[Round]]) -> None:
    for figure, unit in (("settle_s", "s"), ("idle_cores", "cores"), ("rss_mb", "MB")):
        cells = [f"{t.name} {statistics.median(getattr(r, figure) for r in results[t.name]):.3f}"
                 f" {unit}" for t in targets]
        line = f"{figure:<11} " + "   ".join(cells)
        if len(targets) == 2:
            mine, other = (results[t.name] for t in targets)
            ratios = [getattr(m, figure) / getattr(o, figure) for m, o in zip(mine, other)
                      if getattr(o, figure)]
            medians = [statistics.median(getattr(r, figure) for r in runs)
                       for runs in (mine, other)]
            if medians[1] and ratios:
                line += f"   ratio {medians[0] / medians[1]:.2f} (rounds {min(ratios):.2f}-" \
                        f"{max(ratios):.2f}; below 1: mockbroker is better)"
        print(line, flush=True)


if __name__ == "__main__":
    main()
