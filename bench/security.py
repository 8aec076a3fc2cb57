"""What security costs: connection set-up per listener, and produce throughput over SASL_SSL
against PLAINTEXT, with confluent-kafka (librdkafka).

One ``mockbroker serve`` in its own process runs four listeners: PLAINTEXT, SSL, SASL_PLAINTEXT
and SASL_SSL (SCRAM-SHA-256 for the SASL ones).  Set-up is the time from a new client to its
first answered Metadata (TCP, TLS handshake, ApiVersions, SASL exchange, Metadata), the median
of ``--connections`` fresh clients; each listener's is printed with its ratio to PLAINTEXT.
Throughput is ``--messages`` records of 100 bytes produced with acks=all, per second.

With ``--compare HOST:PORT`` (another Kafka's PLAINTEXT bootstrap) its set-up time and
PLAINTEXT throughput are measured in the same run, and two ratios printed, each above 1 when
mockbroker is the faster: set-up other / mockbroker, throughput mockbroker / other.

    .venv/bin/python bench/security.py [--connections 30] [--messages 50000]
                                       [--compare localhost:9092]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import confluent_kafka

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.served import make_topic, produce_all, served  # noqa: E402

USER, PASSWORD, MECHANISM = "bench", "bench-secret", "SCRAM-SHA-256"
LISTENERS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
PAYLOAD = b"x" * 100


def client_config(protocol: str, bootstrap: str, ca: str | None) -> dict:
    conf = {"bootstrap.servers": bootstrap, "security.protocol": protocol}
    if protocol.endswith("SSL"):
        conf["ssl.ca.location"] = ca
    if protocol.startswith("SASL"):
        conf.update({"sasl.mechanism": MECHANISM, "sasl.username": USER,
                     "sasl.password": PASSWORD})
    return conf


def setup_ms(conf: dict, connections: int) -> float:
    """Median ms from a new client to its first answered Metadata."""
    times = []
    for _ in range(connections):
        start = time.perf_counter()
        producer = confluent_kafka.Producer(conf)
        producer.list_topics(timeout=10)
        times.append((time.perf_counter() - start) * 1000)
        del producer
    return statistics.median(times)


def produce_rate(conf: dict, messages: int, admin_bootstrap: str) -> float:
    """Records per second produced with ``conf`` to a fresh one-partition topic (made
    through ``admin_bootstrap``, a PLAINTEXT listener)."""
    topic, _ = make_topic(admin_bootstrap, 1, "bench-security")
    producer = confluent_kafka.Producer(dict(conf, **{"linger.ms": 5, "acks": "all"}))
    producer.list_topics(timeout=10)
    start = time.perf_counter()
    produce_all(producer, topic, PAYLOAD, messages)
    if producer.flush(120):
        raise SystemExit("records still unacknowledged after 120 s")
    return messages / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=30)
    parser.add_argument("--messages", type=int, default=50000)
    parser.add_argument("--compare", metavar="HOST:PORT",
                        help="PLAINTEXT bootstrap of another Kafka to measure in the same run")
    args = parser.parse_args()
    flags = [flag for listener in LISTENERS for flag in ("--listener", listener)]
    with served(*flags, "--user", f"{USER}:{PASSWORD}") as broker:
        ca = broker.ready["ca"]
        bootstraps = dict(part.split("://", 1)
                          for part in broker.ready["listeners"].split(","))
        setup = {}
        for listener in LISTENERS:
            setup[listener] = setup_ms(client_config(listener, bootstraps[listener], ca),
                                       args.connections)
            print(f"set-up   {listener:<15} {setup[listener]:>8.2f} ms   "
                  f"x{setup[listener] / setup['PLAINTEXT']:.2f} of PLAINTEXT")
        plain = produce_rate(client_config("PLAINTEXT", bootstraps["PLAINTEXT"], ca),
                             args.messages, bootstraps["PLAINTEXT"])
        secured = produce_rate(client_config("SASL_SSL", bootstraps["SASL_SSL"], ca),
                               args.messages, bootstraps["PLAINTEXT"])
        print(f"produce  PLAINTEXT       {plain:>10,.0f} msg/s")
        print(f"produce  SASL_SSL        {secured:>10,.0f} msg/s   "
              f"SASL_SSL / PLAINTEXT = {secured / plain:.2f}")
        if args.compare:
            other_conf = client_config("PLAINTEXT", args.compare, None)
            other_setup = setup_ms(other_conf, args.connections)
            other_rate = produce_rate(other_conf, args.messages, args.compare)
            print(f"other    set-up {other_setup:.2f} ms, produce {other_rate:,.0f} msg/s")
            print(f"set-up other / mockbroker (PLAINTEXT) = "
                  f"{other_setup / setup['PLAINTEXT']:.2f}")
            print(f"produce mockbroker / other (PLAINTEXT) = {plain / other_rate:.2f}; "
                  f"mockbroker SASL_SSL / other PLAINTEXT = {secured / other_rate:.2f}")


if __name__ == "__main__":
    main()
