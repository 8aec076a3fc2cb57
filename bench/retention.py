"""What retention buys: the resident memory of a ``mockbroker serve`` process after N records.

Two runs of the same load, each against its own broker process: N records of 1 KiB produced
with confluent-kafka (linger 5 ms, acks=all) to a one-partition topic, first with Kafka's
defaults (a week of retention, 1 GiB segments: nothing goes), then with ``segment.bytes`` 1 MiB
and ``retention.bytes`` 16 MiB on the topic and a 1 s retention check.  After the load, and
once the retained run's log start offset has moved, the broker's VmRSS is read from
/proc/PID/status.  Printed: RSS of both, the retained log size, and the ratio kept / retained.

    .venv/bin/python bench/retention.py [--records 500000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import confluent_kafka
from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

# the benches run as scripts: make the repository importable for their shared helper
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.served import produce_all, served  # noqa: E402

VALUE = b"x" * 1024
TOPIC = "bench-retention"


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def offsets(bootstrap: str) -> tuple[int, int]:
    consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": "bench"})
    try:
        return consumer.get_watermark_offsets(TopicPartition(TOPIC, 0), timeout=10)
    finally:
        consumer.close()


def run(records: int, configs: dict[str, str]) -> tuple[float, int, float]:
    """(RSS MiB after the load, log start offset, seconds the load took)."""
    with served() as broker:
        bootstrap, pid = broker.bootstrap, broker.pid
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic(TOPIC, 1, 1, config=configs)])[TOPIC].result(10)
        producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 5,
                                             "acks": "all", "enable.idempotence": True,
                                             "log_level": 3})
        start = time.perf_counter()
        produce_all(producer, TOPIC, VALUE, records)
        if producer.flush(120):
            raise SystemExit("records left undelivered")
        took = time.perf_counter() - start
        low, high = offsets(bootstrap)
        if configs:  # a check or two after the last records, so the excess is gone
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                low, high = offsets(bootstrap)
                if high - low < 20 * 1024:  # under ~20 MiB of 1 KiB records left
                    break
                time.sleep(0.5)
        assert high == records, (high, records)
        return rss_mib(pid), low, took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=500_000)
    args = parser.parse_args()
    kept_rss, kept_low, kept_s = run(args.records, {})
    retained = {"segment.bytes": str(1024 * 1024), "retention.bytes": str(16 * 1024 * 1024)}
    ret_rss, ret_low, ret_s = run(args.records, retained)
    print(f"records: {args.records} x 1 KiB")
    print(f"no retention:        RSS {kept_rss:8.1f} MiB  log start {kept_low:>8}  "
          f"load {kept_s:5.1f} s")
    print(f"retention.bytes 16M: RSS {ret_rss:8.1f} MiB  log start {ret_low:>8}  "
          f"load {ret_s:5.1f} s")
    print(f"ratio (no retention / retention): {kept_rss / ret_rss:.2f}")


if __name__ == "__main__":
    main()
