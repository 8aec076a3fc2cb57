"""What watching costs the brokers: produce throughput with the dashboard open and streaming,
against the same run with nobody watching.

One ``mockbroker serve`` in its own process.  Each round produces ``--messages`` records of
100 bytes (acks=all, confluent-kafka) to a 6-partition topic while a group of ``--consumers``
confluent-kafka consumers reads it with auto-commit every 100 ms, so the event log has offset
commits to stream the whole time.  Rounds alternate: nobody watching; headless Chromium (Debian's,
driven by Playwright) open on a blank page of its own; the dashboard open in it (the page holds
the live event stream and re-reads what the events touch); and so on, ``--rounds`` of each.
The medians and their ratios are printed (watched / unwatched: 1.00 means watching costs
nothing; watched / blank page: what the page costs beyond a browser running beside).  On a machine
with few cores the browser competes with the broker and the producer for CPU, so the broker's
own CPU time per 100,000 records (from ``/proc``) is printed beside the throughput: that is
what serving the page and its stream costs the broker itself.

    .venv/bin/python bench/dashboard.py [--messages 100000] [--rounds 3] [--consumers 2]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import threading
import time
import urllib.request
from pathlib import Path

import confluent_kafka

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.procstat import cpu_seconds  # noqa: E402
from bench.served import make_topic, produce_all, served  # noqa: E402

PAYLOAD = b"x" * 100
PARTITIONS = 6


class Readers:
    """A consumer group reading the topic on a thread, committing every 100 ms."""

    def __init__(self, bootstrap: str, topic: str, count: int, group: str):
        self._stop = threading.Event()
        self.consumers = [confluent_kafka.Consumer({
            "bootstrap.servers": bootstrap, "group.id": group, "client.id": f"reader-{i}",
            "auto.offset.reset": "earliest", "auto.commit.interval.ms": 100,
            "fetch.wait.max.ms": 100}) for i in range(count)]
        for consumer in self.consumers:
            consumer.subscribe([topic])
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            for consumer in self.consumers:
                consumer.consume(num_messages=1000, timeout=0.05)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        for consumer in self.consumers:
            consumer.close()


def produce_rate(bootstrap: str, topic: str, messages: int) -> float:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 5,
                                         "acks": "all"})
    producer.list_topics(timeout=10)
    start = time.perf_counter()
    produce_all(producer, topic, PAYLOAD, messages, PARTITIONS)
    if producer.flush(120):
        raise SystemExit("records still unacknowledged after 120 s")
    return messages / (time.perf_counter() - start)


def last_seq(admin: str) -> int:
    with urllib.request.urlopen(admin + "/events?type=offsets_committed", timeout=10) as r:
        events = json.load(r)
    return events[-1]["seq"] if events else 0


def events_since(admin: str, seq: int) -> int:
    with urllib.request.urlopen(f"{admin}/events?since={seq}", timeout=30) as r:
        return len(json.load(r))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--consumers", type=int, default=2)
    args = parser.parse_args()
    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("needs Debian's chromium (bash ci/dev.sh setup installs it as root)")
    from playwright.sync_api import expect, sync_playwright

    with served() as broker, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        topic, _ = make_topic(broker.bootstrap, PARTITIONS, "bench-dashboard")
        readers = Readers(broker.bootstrap, topic, args.consumers, "bench-readers")
        rates: dict[str, list[float]] = {"unwatched": [], "blank page": [], "watched": []}
        cpu: dict[str, list[float]] = {name: [] for name in rates}
        streamed: list[int] = []
        try:
            produce_rate(broker.bootstrap, topic, args.messages // 10)  # warm up
            def measure(arm: str) -> None:
                before = cpu_seconds(broker.pid)
                rates[arm].append(produce_rate(broker.bootstrap, topic, args.messages))
                cpu[arm].append(cpu_seconds(broker.pid) - before)

            for _ in range(args.rounds):
                measure("unwatched")
                page = browser.new_page()  # the browser busy with a page of its own
                page.set_content("<p>" + "x" * 1000)
                measure("blank page")
                page.goto(broker.admin + "/")
                expect(page.locator("#live")).to_have_text("live", timeout=30_000)
                mark = last_seq(broker.admin)
                measure("watched")
                streamed.append(events_since(broker.admin, mark))
                page.close()
        finally:
            readers.close()
            browser.close()
    rate = {name: statistics.median(values) for name, values in rates.items()}
    per = {name: statistics.median(values) * 100_000 / args.messages
           for name, values in cpu.items()}
    for name, values in rates.items():
        print(f"{name:<11} " + "  ".join(f"{v:>9,.0f}" for v in values) + "  msg/s   broker "
              f"CPU {per[name]:.2f} s per 100,000 records (median)")
    print(f"events streamed to the page per watched round: {streamed}")
    print(f"produce, watched / unwatched = {rate['watched'] / rate['unwatched']:.2f}; "
          f"watched / blank page = {rate['watched'] / rate['blank page']:.2f}")
    print(f"broker CPU per record, watched / unwatched = "
          f"{per['watched'] / per['unwatched']:.2f}; watched / blank page = "
          f"{per['watched'] / per['blank page']:.2f}")


if __name__ == "__main__":
    main()
