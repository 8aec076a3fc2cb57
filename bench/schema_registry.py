"""The Schema Registry's speed: lookups a second, and serialize-and-produce throughput, on
mockbroker's registry against confluent-kafka's in-process ``mock://`` client, in the same run.

mockbroker runs as ``mockbroker serve --schema-registry`` in its own process (``bench.served``),
so the registry shares no interpreter (and no GIL) with the clients measuring it.  The other
target is confluent-kafka's ``mock://`` registry, a dictionary inside the bench's own process:
no HTTP, no JSON, no parsing, no compatibility check.  It is the ceiling a registry reached over
the network cannot touch, so its ratios say what the HTTP registry costs against none at all,
not how mockbroker compares with another server.

Lookups (each cell runs for ``--seconds``; calls/s, and for mockbroker the broker process's CPU
per call in µs, read from ``/proc``, which shows what is the broker's and what the client's):

- ``register``: ``--schemas`` Avro schemas, one subject each, with ``register_schema`` (a miss
  in the client's cache every time: each schema is new);
- ``GET /schemas/ids/{id}`` and ``POST /subjects/{s}`` (a lookup), over keep-alive
  ``http.client`` connections from one thread and from ``--threads`` threads (one connection
  each), the ids and subjects taken in turn from those registered;
- the same two through ``SchemaRegistryClient.get_schema`` and ``lookup_schema``, with its
  caches cleared before each call (otherwise every call after the first is answered from its
  cache, on either target);
- a lookup in one subject holding ``--versions`` versions (each adds an optional field), of
  its first version: what a lookup costs as a subject grows.

Serialize-and-produce: ``AvroSerializer`` (auto-registering its schema) and a confluent-kafka
``Producer`` (acks=1, linger 5 ms) writing ``--records`` small records to a fresh topic of the
same mockbroker broker, with the registry at ``schema_registry_url`` and with ``mock://``:
records/s from the first ``serialize`` call to the last acknowledgement, and the first
``serialize`` call alone (where the serializer registers its schema).  A run with ``mock://``
off the clock comes first (the process's first producer pays for warming up), then rounds that
alternate which registry goes first.  The ratio printed is always mockbroker / ``mock://``.

    .venv/bin/python bench/schema_registry.py [--quick] [--seconds 1.5] [--schemas 200]
        [--threads 4] [--versions 50] [--records 50000] [--rounds 2]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable
from urllib.parse import quote, urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import confluent_kafka  # noqa: E402
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient  # noqa: E402
from confluent_kafka.schema_registry.avro import AvroSerializer  # noqa: E402
from confluent_kafka.serialization import MessageField, SerializationContext  # noqa: E402

from bench.procstat import cpu_seconds  # noqa: E402
from bench.served import make_topic, served  # noqa: E402

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
MOCK_URL = "mock://bench"

#: the record the serializer writes: a few small fields, about 30 bytes encoded
RECORD_SCHEMA = json.dumps({
    "type": "record", "name": "Payment", "namespace": "bench",
    "fields": [{"name": "id", "type": "long"}, {"name": "account", "type": "string"},
               {"name": "amount", "type": "double"},
               {"name": "currency", "type": {"type": "enum", "name": "Currency",
                                             "symbols": ["EUR", "USD", "GBP"]}}]})


def numbered_schema(i: int) -> str:
    """A distinct small Avro record schema per ``i``."""
    return json.dumps({"type": "record", "name": f"Bench{i}", "namespace": "bench",
                       "fields": [{"name": "id", "type": "long"},
                                  {"name": f"field{i}", "type": "string"}]})


def widened_schema(n: int) -> str:
    """Version ``n`` of the deep subject: ``n - 1`` optional fields after ``id`` (each version
    can read what the one before wrote: BACKWARD compatible)."""
    fields = [{"name": "id", "type": "long"}] + [
        {"name": f"extra{k}", "type": ["null", "string"], "default": None} for k in range(1, n)]
    return json.dumps({"type": "record", "name": "Deep", "namespace": "bench", "fields": fields})


@dataclass
class Cell:
    calls: int
    seconds: float
    broker_cpu: float | None = None  # seconds of the broker's CPU over the cell

    @property
    def rate(self) -> float:
        return self.calls / self.seconds if self.seconds else 0.0

    @property
    def cpu_us(self) -> float | None:
        if self.broker_cpu is None or not self.calls:
            return None
        return self.broker_cpu / self.calls * 1e6


# -- raw HTTP ---------------------------------------------------------------------------------

class Http:
    """One keep-alive connection to the registry."""

    def __init__(self, url: str):
        parts = urlsplit(url)
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": CONTENT_TYPE}
        if data is not None:
            headers["Content-Type"] = CONTENT_TYPE
        self.conn.request(method, path, body=data, headers=headers)
        answer = self.conn.getresponse()
        payload = answer.read()
        if answer.status != 200:
            raise RuntimeError(f"{method} {path}: {answer.status} {payload[:200]!r}")
        return json.loads(payload)

    def close(self) -> None:
        self.conn.close()


def timed(seconds: float, threads: int, make: Callable[[int], Callable[[int], None]],
          pid: int | None = None) -> Cell:
    """Calls of what ``make(thread)`` returns (called with a running count) for ``seconds``,
    from ``threads`` threads; the broker's CPU over the same time when ``pid`` is given."""
    counts = [0] * threads
    errors: list[BaseException] = []
    start = threading.Barrier(threads + 1)
    stop = threading.Event()

    def work(t: int) -> None:
        step = make(t)
        start.wait()
        n = 0
        try:
            while not stop.is_set():
                step(n)
                n += 1
        except BaseException as exc:  # reported after the cell
            errors.append(exc)
        counts[t] = n

    workers = [threading.Thread(target=work, args=(t,), daemon=True) for t in range(threads)]
    for w in workers:
        w.start()
    start.wait()
    cpu0, t0 = (cpu_seconds(pid) if pid else None), time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for w in workers:
        w.join()
    elapsed = time.perf_counter() - t0
    cpu = None if pid is None else cpu_seconds(pid) - cpu0
    if errors:
        raise SystemExit(f"a call failed: {errors[0]!r}")
    return Cell(sum(counts), elapsed, cpu)


# -- the lookups ------------------------------------------------------------------------------

def register_all(client, subjects: list[str], schemas: list[Schema],
                 pid: int | None) -> tuple[Cell, list[int]]:
    cpu0, t0 = (cpu_seconds(pid) if pid else None), time.perf_counter()
    ids = [client.register_schema(s, schema) for s, schema in zip(subjects, schemas)]
    elapsed = time.perf_counter() - t0
    return Cell(len(ids), elapsed, None if pid is None else cpu_seconds(pid) - cpu0), ids


def lookups(args, url: str, pid: int) -> tuple[dict[str, Cell], dict[str, Cell]]:
    """Every lookup cell on mockbroker (``url``) and on ``mock://``: (mine, mock's)."""
    n = args.schemas
    subjects = [f"bench-{i}-value" for i in range(n)]
    texts = [numbered_schema(i) for i in range(n)]
    schemas = [Schema(t, "AVRO") for t in texts]
    bodies = [{"schema": t} for t in texts]
    mine: dict[str, Cell] = {}
    mock: dict[str, Cell] = {}

    real = SchemaRegistryClient({"url": url})
    fake = SchemaRegistryClient.new_client({"url": MOCK_URL})
    mine["register"], ids = register_all(real, subjects, schemas, pid)
    mock["register"], mock_ids = register_all(fake, subjects, schemas, None)
    say(f"registered {n} schemas: {mine['register'].rate:,.0f}/s "
        f"(mock:// {mock['register'].rate:,.0f}/s)")

    conns: list[Http] = []  # every connection the cells open, closed at the end

    def connect() -> Http:
        conns.append(Http(url))
        return conns[-1]

    def raw(method_path: Callable[[Http, int], None]) -> Callable[[int], Callable[[int], None]]:
        def make(t: int) -> Callable[[int], None]:
            conn = connect()
            offset = t * 7919
            return lambda k: method_path(conn, (k + offset) % n)
        return make

    get_id = raw(lambda c, i: c.call("GET", f"/schemas/ids/{ids[i]}"))
    post_lookup = raw(lambda c, i: c.call("POST", f"/subjects/{quote(subjects[i])}",
                                          bodies[i]))
    for name, make in (("GET /schemas/ids/{id}", get_id), ("POST /subjects/{s}", post_lookup)):
        mine[f"{name} http 1"] = timed(args.seconds, 1, make, pid)
        mine[f"{name} http {args.threads}"] = timed(args.seconds, args.threads, make, pid)
        say(f"{name}: {mine[f'{name} http 1'].rate:,.0f}/s from 1 thread, "
            f"{mine[f'{name} http {args.threads}'].rate:,.0f}/s from {args.threads}")

    def uncached(client, call: Callable[[int], object]):
        """Calls of ``call`` with the client's caches cleared first (``mock://`` has none)."""
        clear = client.clear_caches if client is real else (lambda: None)

        def step(k: int) -> None:
            clear()
            call(k % n)
        return lambda t: step

    for client, pid_, out, ids_ in ((real, pid, mine, ids), (fake, None, mock, mock_ids)):
        out["get_schema"] = timed(args.seconds, 1, uncached(
            client, lambda i: client.get_schema(ids_[i])), pid_)
        out["lookup_schema"] = timed(args.seconds, 1, uncached(
            client, lambda i: client.lookup_schema(subjects[i], schemas[i])), pid_)

    # one subject of many versions: the lookup of its first
    deep = "bench-deep-value"
    versions = [Schema(widened_schema(v), "AVRO") for v in range(1, args.versions + 1)]
    t0 = time.perf_counter()
    for schema in versions:
        real.register_schema(deep, schema)
    deep_seconds = time.perf_counter() - t0
    for schema in versions:
        fake.register_schema(deep, schema)
    say(f"registered {args.versions} versions of {deep} in {deep_seconds:.1f} s")
    first = {"schema": versions[0].schema_str}

    def deep_lookup(t: int) -> Callable[[int], None]:
        conn = connect()
        return lambda k: conn.call("POST", f"/subjects/{deep}", first)

    mine[f"lookup v1 of {args.versions}"] = timed(args.seconds, 1, deep_lookup, pid)
    mock[f"lookup v1 of {args.versions}"] = timed(
        args.seconds, 1, lambda t: lambda k: fake.lookup_schema(deep, versions[0]))
    real.close()
    for conn in conns:
        conn.close()
    return mine, mock


# -- serialize and produce --------------------------------------------------------------------

@dataclass
class Produced:
    rate: float
    #: the rate after the first record (the one whose ``serialize`` asks the registry)
    steady: float
    first_ms: float
    failed: int


def serialize_and_produce(bootstrap: str, registry_url: str, records: int) -> Produced:
    topic, _ = make_topic(bootstrap, 1, prefix="bench-sr")
    client = SchemaRegistryClient.new_client({"url": registry_url})
    serializer = AvroSerializer(client, RECORD_SCHEMA)
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "acks": 1,
                                         "linger.ms": 5})
    failed = [0]

    def delivered(err, msg) -> None:
        if err is not None:
            failed[0] += 1

    context = SerializationContext(topic, MessageField.VALUE)
    currencies = ("EUR", "USD", "GBP")
    t0 = time.perf_counter()
    for i in range(records):
        value = serializer({"id": i, "account": f"acct-{i % 1000:04d}",
                            "amount": i * 0.25, "currency": currencies[i % 3]}, context)
        if i == 0:
            first = time.perf_counter() - t0
        while True:
            try:
                producer.produce(topic, value, partition=0, on_delivery=delivered)
                break
            except BufferError:  # its queue is full: let it send
                producer.poll(0.005)
        if i % 1000 == 0:
            producer.poll(0)
    left = producer.flush(60)
    elapsed = time.perf_counter() - t0
    if hasattr(client, "close"):
        client.close()
    steady = (records - 1) / (elapsed - first) if records > 1 else records / elapsed
    return Produced(records / elapsed, steady, first * 1000, failed[0] + left)


# -- the report -------------------------------------------------------------------------------

def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def fmt_rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def report_lookups(args, mine: dict[str, Cell], mock: dict[str, Cell]) -> None:
    t = args.threads
    rows = [
        ("register_schema (client, cache miss)", "register", "register"),
        ("GET /schemas/ids/{id}, http, 1 thread", "GET /schemas/ids/{id} http 1", "get_schema"),
        (f"GET /schemas/ids/{{id}}, http, {t} threads", f"GET /schemas/ids/{{id}} http {t}",
         "get_schema"),
        ("get_schema (client, caches cleared)", "get_schema", "get_schema"),
        ("POST /subjects/{s}, http, 1 thread", "POST /subjects/{s} http 1", "lookup_schema"),
        (f"POST /subjects/{{s}}, http, {t} threads", f"POST /subjects/{{s}} http {t}",
         "lookup_schema"),
        ("lookup_schema (client, caches cleared)", "lookup_schema", "lookup_schema"),
        (f"lookup of v1 in a subject of {args.versions}, http",
         f"lookup v1 of {args.versions}", f"lookup v1 of {args.versions}"),
    ]
    print(f"\nlookups: {args.schemas} schemas, {args.seconds:g} s a cell; calls/s; 'broker µs' "
          "is the broker process's CPU per call,\n'busy' its CPU over the cell's time (1.0: "
          "one core, all a single event loop can use)")
    print(f"{'call':<44}{'mockbroker':>11}{'broker µs':>10}{'busy':>6}{'mock://':>11}"
          f"{'mb/mock':>10}")
    for label, key, mock_key in rows:
        a, b = mine[key], mock[mock_key]
        cpu = a.cpu_us
        busy = "" if a.broker_cpu is None else f"{a.broker_cpu / a.seconds:.2f}"
        print(f"{label:<44}{fmt_rate(a.rate):>11}{'' if cpu is None else f'{cpu:,.0f}':>10}"
              f"{busy:>6}{fmt_rate(b.rate):>11}{a.rate / b.rate if b.rate else 0:>10.2e}")
    print("(mock:// is a dictionary in this process, called directly: no HTTP, no parsing,\n"
          " no compatibility check; its rows are the ceiling, the same call answered for free,\n"
          " not another server)")


def report_produce(args, runs: dict[str, list[Produced]]) -> None:
    print(f"\nserialize-and-produce: AvroSerializer + Producer (acks=1, linger 5 ms), "
          f"{args.records:,} records,\n{args.rounds} round(s), the broker in its own process")
    print(f"{'registry':<12}{'records/s':>12}{'best':>12}{'after 1st':>12}{'first ms':>10}"
          f"{'failed':>8}")
    for label, done in runs.items():
        print(f"{label:<12}{statistics.mean(r.rate for r in done):>12,.0f}"
              f"{max(r.rate for r in done):>12,.0f}"
              f"{statistics.mean(r.steady for r in done):>12,.0f}"
              f"{statistics.median(r.first_ms for r in done):>10.1f}"
              f"{sum(r.failed for r in done):>8}")
    def ratio(of: Callable[[Produced], float]) -> float:
        return statistics.mean(map(of, runs["mockbroker"])) / \
            statistics.mean(map(of, runs["mock://"]))

    print(f"mockbroker / mock:// (mean records/s): {ratio(lambda r: r.rate):.3f}; "
          f"after the first record: {ratio(lambda r: r.steady):.3f}")
    print("(the serializer asks the registry once, on its first record, and keeps the schema\n"
          " id: the rest is fastavro and the producer, the same on both; 'first ms' is that\n"
          " first call)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="small sizes: a run of a few seconds")
    parser.add_argument("--seconds", type=float, help="seconds a lookup cell runs (1.5)")
    parser.add_argument("--schemas", type=int, help="schemas registered (200)")
    parser.add_argument("--threads", type=int, default=4,
                        help="threads of the many-thread HTTP cells (default: %(default)s)")
    parser.add_argument("--versions", type=int, help="versions of the deep subject (50)")
    parser.add_argument("--records", type=int, help="records serialized and produced (50000)")
    parser.add_argument("--rounds", type=int, help="serialize-and-produce rounds (2)")
    args = parser.parse_args()
    quick = dict(seconds=0.3, schemas=30, versions=10, records=5000, rounds=2)
    full = dict(seconds=1.5, schemas=200, versions=50, records=50000, rounds=2)
    for name, value in (quick if args.quick else full).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if min(args.schemas, args.versions, args.records, args.rounds, args.threads) < 1 \
            or args.seconds <= 0:
        parser.error("sizes must be at least 1 and --seconds above 0")

    started, load = time.perf_counter(), os.getloadavg()[0]
    with served("--schema-registry") as broker:
        url = broker.ready["schema_registry"]
        mine, mock = lookups(args, url, broker.pid)
        runs: dict[str, list[Produced]] = {"mockbroker": [], "mock://": []}
        targets = [("mockbroker", url), ("mock://", MOCK_URL)]
        # off the clock: the first producer and serializer of the process pay for loading and
        # warming up what both targets use
        serialize_and_produce(broker.bootstrap, MOCK_URL, min(args.records, 5000))
        for turn in range(args.rounds):
            for label, registry in (targets if turn % 2 == 0 else targets[::-1]):
                done = serialize_and_produce(broker.bootstrap, registry, args.records)
                runs[label].append(done)
                say(f"round {turn + 1}: {label} {done.rate:,.0f} records/s")
    report_lookups(args, mine, mock)
    report_produce(args, runs)
    print(f"\n{time.perf_counter() - started:.0f} s in all; load average {load:.1f} at the "
          f"start, {os.getloadavg()[0]:.1f} at the end, {os.cpu_count()} CPUs; "
          f"confluent-kafka {confluent_kafka.__version__}")


if __name__ == "__main__":
    main()
