"""A producer under a ``producer_byte_rate`` quota: the rate it gets on mockbroker and on
another Kafka measured in the same run, against the quota.

mockbroker runs as ``mockbroker serve`` in its own process (``bench.served``); the other target
is a bootstrap given with ``--compare HOST:PORT``.  Each run makes a fresh topic and a fresh
client id, sets the quota on that client id with AlterClientQuotas (waiting until the broker
describes it), and has one confluent-kafka producer (acks=1, records of ``--record-size``)
hand records to the broker as fast as its queue lets it for ``--seconds``, in requests of about
``--batch-size`` bytes (16 KiB, so that a run's rate is not a count of a few large requests).

What is measured is the rate of acknowledged bytes once the quota holds the producer back.  A
broker measures a client over up to eleven one-second samples and never over less than ten
seconds, so a client that starts at full speed is let through for about its first ten seconds'
worth of bytes, then throttled, and when those first samples age out (after eleven seconds) it
is let through once more: the first ``--settle`` seconds (12 by default) are left out, and the
rate is the bytes acknowledged after them over the time after them, over a run long enough
(90 s) for the second burst to weigh little, on either target (each record counted
with its payload, key and header sizes: what the producer asked to send, not the request
bytes the broker counts, which add a few percent of framing on both targets).  It is printed
against the quota (``rate / quota``, to be within 10 % of it: the issue's target), with how
many throttle events librdkafka reported and the longest throttle time, and mockbroker's rate
over the other's.  Rounds alternate which target goes first.

    .venv/bin/python bench/quota.py [--compare HOST:PORT] [--rate 262144] [--seconds 90]
        [--settle 12] [--record-size 1000] [--batch-size 16384] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import confluent_kafka  # noqa: E402

import wire  # noqa: E402
from bench.served import make_topic, read_frame, served  # noqa: E402

ALTER, DESCRIBE = 49, 48
#: what ``purge`` answers for the records left queued or in flight when a run stops
PURGED = (confluent_kafka.KafkaError._PURGE_QUEUE, confluent_kafka.KafkaError._PURGE_INFLIGHT)


@dataclass
class Run:
    target: str
    rate: float | None = None
    throttles: list[int] = field(default_factory=list)
    acknowledged: int = 0
    failed: int = 0
    errors: set[str] = field(default_factory=set)


def ask(bootstrap: str, api: int, version: int, body, client_id: str = "bench-quota"):
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(wire.encode_request(api, version, 1, client_id, body))
        return wire.decode_response(api, version, read_frame(sock))[1]


def set_quota(bootstrap: str, client_id: str, rate: float) -> None:
    """producer_byte_rate on ``client_id``, once the broker describes it."""
    cls = wire.request_class(ALTER)
    answer = ask(bootstrap, ALTER, 1, cls(validate_only=False, entries=[cls.EntryData(
        entity=[cls.EntityData(entity_type="client-id", entity_name=client_id)],
        ops=[cls.OpData(key="producer_byte_rate", value=rate, remove=False)])]))
    if any(e.error_code for e in answer.entries):
        raise SystemExit(f"AlterClientQuotas refused: {answer}")
    described = wire.request_class(DESCRIBE)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        found = ask(bootstrap, DESCRIBE, 1, described(strict=True, components=[
            described.ComponentData(entity_type="client-id", match_type=0, match=client_id)]))
        if [v.value for e in found.entries or () for v in e.values] == [rate]:
            return
        time.sleep(0.05)
    raise SystemExit(f"the quota on {client_id} was never described by {bootstrap}")


def produce_under_quota(args, label: str, bootstrap: str) -> Run:
    topic, _ = make_topic(bootstrap, 1, prefix="bench-quota")
    client_id = f"bench-quota-{uuid.uuid4().hex[:10]}"
    set_quota(bootstrap, client_id, args.rate)
    run = Run(label)
    acked: list[tuple[float, int]] = []  # (when acknowledged, bytes)
    lock = threading.Lock()

    def delivered(err, msg) -> None:
        if err is not None:
            if err.code() not in PURGED:  # what was left at the end is not counted
                run.failed += 1
                run.errors.add(str(err))
            return
        with lock:
            acked.append((time.monotonic(), len(msg.value())))

    # small requests (a batch of 16 KiB, a sixteenth of a second at the default quota), so that
    # a run's rate is not a count of a few megabyte requests; a short queue, so that what is
    # left at the end is little
    producer = confluent_kafka.Producer({
        "bootstrap.servers": bootstrap, "client.id": client_id, "acks": 1, "linger.ms": 5,
        "batch.size": args.batch_size, "queue.buffering.max.kbytes": 1024,
        "throttle_cb": lambda event: run.throttles.append(round(event.throttle_time * 1000))})
    payload = os.urandom(args.record_size)
    started = time.monotonic()
    end = started + args.seconds
    while time.monotonic() < end:
        try:
            producer.produce(topic, payload, partition=0, on_delivery=delivered)
        except BufferError:  # its queue is full: the quota holds it back
            producer.poll(0.01)
            continue
        producer.poll(0)
    stop = time.monotonic()
    producer.purge()  # what is still queued is not measured
    producer.flush(30)
    settled = started + args.settle
    with lock:
        after = [(t, n) for t, n in acked if settled <= t <= stop]
        run.acknowledged = len(acked)
    if after and stop > settled:
        run.rate = sum(n for _, n in after) / (stop - settled)
    return run


def report(args, runs: list[Run], labels: list[str]) -> None:
    print(f"\nproducer_byte_rate {args.rate:.0f} B/s; rate of acknowledged bytes from "
          f"{args.settle:.0f} s to {args.seconds:.0f} s")
    print(f"{'target':<12}{'round':>6}{'B/s':>12}{'/ quota':>9}{'throttles':>11}"
          f"{'max ms':>8}{'acked':>9}{'failed':>8}")
    by_target: dict[str, list[float]] = {label: [] for label in labels}
    for i, run in enumerate(runs):
        ratio = None if run.rate is None else run.rate / args.rate
        if run.rate is not None:
            by_target[run.target].append(run.rate)
        print(f"{run.target:<12}{i // len(labels) + 1:>6}"
              f"{'n/a' if run.rate is None else f'{run.rate:,.0f}':>12}"
              f"{'n/a' if ratio is None else f'{ratio:.3f}':>9}{len(run.throttles):>11}"
              f"{max(run.throttles, default=0):>8}{run.acknowledged:>9}{run.failed:>8}")
    for run in runs:
        if run.errors:
            print(f"{run.target}: {', '.join(sorted(run.errors))}")
    print()
    for label, rates in by_target.items():
        if rates:
            worst = max(abs(r / args.rate - 1) for r in rates)
            print(f"{label}: rate / quota {min(rates) / args.rate:.3f} .. "
                  f"{max(rates) / args.rate:.3f}; within 10 % of the quota: "
                  f"{'yes' if worst <= 0.10 else 'NO'}")
    if len(labels) > 1 and by_target[labels[0]] and by_target[labels[1]]:
        mine = sum(by_target[labels[0]]) / len(by_target[labels[0]])
        other = sum(by_target[labels[1]]) / len(by_target[labels[1]])
        print(f"mockbroker / other (mean rates): {mine / other:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--compare", metavar="HOST:PORT",
                        help="bootstrap of another Kafka to measure in the same run")
    parser.add_argument("--rate", type=float, default=256 * 1024,
                        help="producer_byte_rate, bytes a second (default: %(default)s)")
    parser.add_argument("--seconds", type=float, default=90,
                        help="how long each run produces (default: %(default)s)")
    parser.add_argument("--settle", type=float, default=12,
                        help="seconds left out at the start (default: %(default)s)")
    parser.add_argument("--record-size", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=16384,
                        help="the producer's batch.size (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    if args.rate <= 0 or args.seconds <= args.settle or args.rounds < 1:
        parser.error("--rate must be above 0, --seconds above --settle, --rounds at least 1")
    started, load = time.perf_counter(), os.getloadavg()[0]
    with served() as broker:
        targets = [("mockbroker", broker.bootstrap)]
        if args.compare:
            targets.append(("other", args.compare))
        runs: list[Run] = []
        for turn in range(args.rounds):
            order = targets if turn % 2 == 0 else list(reversed(targets))
            done = {label: produce_under_quota(args, label, bootstrap)
                    for label, bootstrap in order}
            runs += [done[label] for label, _ in targets]
            print(f"round {turn + 1}: " + ", ".join(
                f"{label} {'n/a' if done[label].rate is None else f'{done[label].rate:,.0f}'} B/s"
                for label, _ in targets), file=sys.stderr, flush=True)
    report(args, runs, [label for label, _ in targets])
    print(f"\n{args.rounds} round(s), {time.perf_counter() - started:.0f} s in all; load average "
          f"{load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
