"""The long fuzz run: mutated and random frames of every served (API, version) against
``mockbroker serve`` in its own process, from several fuzzer processes with many connections
each, with a stock producer and consumer beside them.

    PYTHONPATH=. python bench/fuzz.py [--frames 1000000] [--procs 2] [--connections 16]
        [--retention-bytes 2097152]

Prints frames/s, the broker's RSS before and after (and at each tenth), the requests the broker
logged as "failed", and what the fuzzers saw go wrong (hangs, answers out of order, undecodable
answers, a valid frame closing its connection).  Exits 1 if anything went wrong.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import confluent_kafka as ck  # noqa: E402

from bench.served import ready_fields  # noqa: E402
from tests.fuzz import driver  # noqa: E402
from tests.fuzz.frames import TOPICS  # noqa: E402


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _get(url: str):
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.load(response)


def _post(url: str, body: dict) -> None:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=30).close()


def _fuzz_proc(bootstrap: str, seed: int, frames: int, connections: int, queue) -> None:
    report = driver.run(bootstrap, seed=seed, frames=frames, connections=connections,
                        deadline_s=60, check_responses=True)
    queue.put((report.summary(), len(report.problems), report.problems[:5],
               report.skipped_group_waits[:3], report.sent))


class _Clients:
    """A confluent-kafka producer (a record every few ms) and a consumer, throughout."""

    def __init__(self, bootstrap: str):
        self.bootstrap, self.sent, self.received, self.errors = bootstrap, 0, set(), []
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._produce, daemon=True),
                        threading.Thread(target=self._consume, daemon=True)]
        for t in self.threads:
            t.start()

    def _produce(self) -> None:
        producer = ck.Producer({"bootstrap.servers": self.bootstrap, "acks": "all",
                                "enable.idempotence": True})
        while not self.stop.is_set():
            producer.produce("clients", value=b"%d" % self.sent,
                             on_delivery=lambda err, msg: err and self.errors.append(err))
            self.sent += 1
            producer.poll(0.005)
        producer.flush(60)

    def _consume(self) -> None:
        consumer = ck.Consumer({"bootstrap.servers": self.bootstrap, "group.id": "clients-g",
                                "auto.offset.reset": "earliest"})
        consumer.subscribe(["clients"])
        while not self.stop.is_set() or len(self.received) < self.sent:
            msg = consumer.poll(0.2)
            if msg is not None and not msg.error():
                self.received.add(int(msg.value()))
            if self.stop.is_set() and time.monotonic() > self.deadline:
                break
        consumer.close()

    def finish(self) -> None:
        self.deadline = time.monotonic() + 60
        self.stop.set()
        for t in self.threads:
            t.join(90)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--retention-bytes", type=int, default=None, metavar="N",
                        help="give the fuzzed topics (not the stock clients' topic) "
                             "retention.bytes=N with 1 MiB segments, checked every second, "
                             "so the records they pile up are bounded and the broker's RSS "
                             "shows what else it keeps")
    parser.add_argument("--serve-flag", action="append", default=[], metavar="FLAG",
                        help="a mockbroker serve flag for the broker, e.g. "
                             "--serve-flag=--log-retention-bytes=1048576 (repeatable)")
    args = parser.parse_args()

    fuzzed = [] if args.retention_bytes is not None else list(TOPICS)
    retention_flags = [] if args.retention_bytes is None else \
        ["--log-retention-check-interval-ms", "1000"]
    broker = subprocess.Popen([sys.executable, "-m", "mockbroker.cli", "serve", "--port", "0",
                               "--http-port", "0", *sum((["--topic", f"{t}:3"] for t in
                                                         fuzzed + ["clients"]), []),
                               *retention_flags, *args.serve_flag],
                              stdout=subprocess.PIPE, text=True)
    try:
        try:
            ready = ready_fields(broker.stdout.readline())
        except RuntimeError as exc:
            raise SystemExit(f"{exc} (exit {broker.wait()})") from None
        bootstrap, admin = ready["bootstrap"], ready["admin"]
        if args.retention_bytes is not None:
            for topic in TOPICS:
                _post(f"{admin}/topics", {"name": topic, "partitions": 3, "configs": {
                    "retention.bytes": str(args.retention_bytes),
                    "segment.bytes": str(1 << 20)}})
        clients = _Clients(bootstrap)
        time.sleep(2)  # the stock clients settle before the fuzzers start (not measured)
        rss_before = _rss_mb(broker.pid)
        queue = multiprocessing.Queue()
        per_proc = args.frames // args.procs
        procs = [multiprocessing.Process(target=_fuzz_proc, args=(
            bootstrap, args.seed * 100 + i, per_proc, args.connections, queue))
            for i in range(args.procs)]
        started = time.monotonic()
        for p in procs:
            p.start()
        failed_seen: dict[int, dict] = {}
        samples = []
        while any(p.is_alive() for p in procs):
            time.sleep(5)
            for entry in _get(f"{admin}/requests"):
                if entry.get("outcome") == "failed":
                    failed_seen[entry["seq"]] = entry
            samples.append(round(_rss_mb(broker.pid)))
        elapsed = time.monotonic() - started
        results = [queue.get(timeout=30) for _ in procs]
        for p in procs:
            p.join()
        for entry in _get(f"{admin}/requests"):
            if entry.get("outcome") == "failed":
                failed_seen[entry["seq"]] = entry
        rss_after = _rss_mb(broker.pid)
        clients.finish()
        sent = sum(r[4] for r in results)
        problems = sum(r[1] for r in results)
        lost = clients.sent - len(clients.received)
        print(f"frames: {sent} in {elapsed:.0f} s = {sent / elapsed:,.0f} frames/s "
              f"({args.procs} fuzzer processes x {args.connections} connections)")
        print(f"broker RSS: before {rss_before:.0f} MB, after {rss_after:.0f} MB; "
              f"every 5 s: {samples}")
        print(f"requests logged as failed: {len(failed_seen)} "
              f"{list(failed_seen.values())[:5]}")
        print(f"fuzzer problems: {problems}")
        for summary, _, first, skipped, _ in results:
            print("  ", summary)
            for p in first + skipped:
                print("     ", str(p)[:300])
        print(f"stock clients: produced {clients.sent}, consumed {len(clients.received)}, "
              f"delivery errors {len(clients.errors)}, lost {lost}")
        alive = broker.poll() is None
        print(f"broker alive at the end: {alive}")
        return 0 if alive and not failed_seen and not problems and not lost and \
            not clients.errors else 1
    finally:
        broker.terminate()
        broker.wait(30)


if __name__ == "__main__":
    sys.exit(main())
