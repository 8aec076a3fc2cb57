"""Broker CPU per small request: mockbroker against any other Kafka measured in the same run.

Each kind of request a test cluster's clients send over and over is sent to both targets, and
the broker's CPU seconds (its own ``/proc`` counters) over a measured window are divided by the
answers it gave in that window:

- ``fetch``: an empty long poll, as an idle consumer sends it: a Fetch of a partition at its end
  (nothing to read) with ``max_wait_ms`` (``--fetch-wait-ms``, 500 by default: librdkafka's and
  the Java consumer's default), ``--fetch-connections`` connections each with one in flight, so
  every answer is a long poll that timed out;
- ``heartbeat``: Heartbeat of the one member of a classic group (joined and synced first);
- ``metadata``: Metadata of one topic;
- ``offset_commit``: OffsetCommit of one partition for a group with no members;
- ``list_offsets``: ListOffsets (latest) of one partition.

Apart from ``fetch``, ``--connections`` connections each keep ``--depth`` requests in flight
(one frame, encoded once, sent again as each answer comes back): the broker is kept busy and the
figure is its cost per request at full load, not a client's.  The requests use versions both
targets serve (the highest up to the one a current client sends, by ApiVersions).  The targets
are single brokers (each is also its own group coordinator).

Rounds alternate which target goes first; each kind is measured for ``--seconds`` per round
after a warm-up second; medians of the rounds are printed with the ratio mockbroker / other
(below 1: mockbroker spends less), and the lowest and highest ratio of single rounds.

    .venv/bin/python bench/requests.py [--compare HOST:PORT [--compare-pid PID]] [--rounds 5]
        [--seconds 4] [--only fetch,heartbeat,...] [--connections 4] [--depth 8]
        [--fetch-connections 200] [--fetch-wait-ms 500]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import wire  # noqa: E402
from bench.procstat import broker_pid, cpu_seconds  # noqa: E402
from bench.served import make_topic, read_frame, served  # noqa: E402

KINDS = ("fetch", "heartbeat", "metadata", "offset_commit", "list_offsets")
#: the highest version of each API the bench sends (what a current client sends, short of
#: Fetch's topic ids)
WANTED = {1: 12, 2: 7, 3: 12, 8: 8, 10: 4, 11: 7, 12: 4, 14: 5, 18: 3}
FETCH, LIST_OFFSETS, METADATA = (wire.request_class(k) for k in (1, 2, 3))
OFFSET_COMMIT, FIND_COORDINATOR, JOIN_GROUP = (wire.request_class(k) for k in (8, 10, 11))
HEARTBEAT, SYNC_GROUP, API_VERSIONS = (wire.request_class(k) for k in (12, 14, 18))
MEMBER_ID_REQUIRED = 79


@dataclass
class Target:
    name: str
    bootstrap: str
    pid: int | None


class Connection:
    """A connection to a broker for requests encoded with the project's codec."""

    def __init__(self, bootstrap: str):
        host, port = bootstrap.split(",")[0].rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.versions: dict[int, int] = {}

    def close(self) -> None:
        self.sock.close()

    def call(self, key: int, version: int, body):
        self.sock.sendall(wire.encode_request(key, version, 1, "bench", body))
        return wire.decode_response(key, version, read_frame(self.sock))[1]

    def negotiate(self) -> dict[int, int]:
        answer = self.call(18, 3, API_VERSIONS(client_software_name="bench",
                                               client_software_version="1"))
        served = {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}
        for key, wanted in WANTED.items():
            low, high = served.get(key, (0, -1))
            if high < low or wanted < low:
                raise SystemExit(f"the broker serves no version of API {key} the bench sends")
            self.versions[key] = min(wanted, high)
        return self.versions


@dataclass
class Workload:
    """One kind of request, ready to send: the frame and how many connections send it, with
    how many in flight on each."""
    frame: bytes
    connections: int
    depth: int


def _checked(error_code: int, what: str) -> None:
    if error_code:
        raise SystemExit(f"{what}: error code {error_code}")


def prepare(kind: str, bootstrap: str, topic: str, args: argparse.Namespace) -> Workload:
    """The request of ``kind`` and its load; what it needs first (a joined member) is done."""
    conn = Connection(bootstrap)
    try:
        v = conn.negotiate()
        group = f"bench-requests-{uuid.uuid4().hex[:12]}"
        if kind == "fetch":
            def fetch(wait_ms: int):
                return FETCH(replica_id=-1, max_wait_ms=wait_ms, min_bytes=1, max_bytes=1 << 20,
                             isolation_level=0, session_id=0, session_epoch=-1,
                             topics=[FETCH.FetchTopic(topic=topic, partitions=[
                                 FETCH.FetchPartition(partition=0, current_leader_epoch=-1,
                                                      fetch_offset=0, log_start_offset=-1,
                                                      partition_max_bytes=1 << 20)])],
                             forgotten_topics_data=[], rack_id="")
            check = conn.call(1, v[1], fetch(0))
            _checked(check.error_code or check.responses[0].partitions[0].error_code, "Fetch")
            return Workload(wire.encode_request(1, v[1], 1, "bench", fetch(args.fetch_wait_ms)),
                            args.fetch_connections, 1)
        if kind == "heartbeat":
            body = HEARTBEAT(group_id=group, **_joined(conn, group))
            _checked(conn.call(12, v[12], body).error_code, "Heartbeat")
            return Workload(wire.encode_request(12, v[12], 1, "bench", body),
                            args.connections, args.depth)
        if kind == "metadata":
            body = METADATA(topics=[METADATA.MetadataRequestTopic(name=topic)],
                            allow_auto_topic_creation=False)
            _checked(conn.call(3, v[3], body).topics[0].error_code, "Metadata")
            key = 3
        elif kind == "offset_commit":
            body = OFFSET_COMMIT(group_id=group, generation_id_or_member_epoch=-1, member_id="",
                                 topics=[OFFSET_COMMIT.OffsetCommitRequestTopic(
                                     name=topic, partitions=[
                                         OFFSET_COMMIT.OffsetCommitRequestPartition(
                                             partition_index=0, committed_offset=0,
                                             committed_metadata="")])])
            answer = conn.call(8, v[8], body)
            _checked(answer.topics[0].partitions[0].error_code, "OffsetCommit")
            key = 8
        else:
            body = LIST_OFFSETS(replica_id=-1, isolation_level=0, topics=[
                LIST_OFFSETS.ListOffsetsTopic(name=topic, partitions=[
                    LIST_OFFSETS.ListOffsetsPartition(partition_index=0, timestamp=-1,
                                                      current_leader_epoch=-1)])])
            _checked(conn.call(2, v[2], body).topics[0].partitions[0].error_code, "ListOffsets")
            key = 2
        return Workload(wire.encode_request(key, v[key], 1, "bench", body),
                        args.connections, args.depth)
    finally:
        conn.close()


def _joined(conn: Connection, group: str) -> dict:
    """Join ``group`` as its only member and sync: the Heartbeat fields of that member."""
    v = conn.versions
    answer = conn.call(10, v[10], FIND_COORDINATOR(key_type=0, coordinator_keys=[group]))
    _checked(answer.coordinators[0].error_code, "FindCoordinator")
    member = ""
    for _ in range(2):  # from v4 a new member is first given its id (MEMBER_ID_REQUIRED)
        joined = conn.call(11, v[11], JOIN_GROUP(
            group_id=group, session_timeout_ms=30_000, rebalance_timeout_ms=30_000,
            member_id=member, group_instance_id=None, protocol_type="consumer",
            protocols=[JOIN_GROUP.JoinGroupRequestProtocol(name="range", metadata=b"")]))
        member = joined.member_id
        if joined.error_code != MEMBER_ID_REQUIRED:
            break
    _checked(joined.error_code, "JoinGroup")
    synced = conn.call(14, v[14], SYNC_GROUP(
        group_id=group, generation_id=joined.generation_id, member_id=member,
        group_instance_id=None, protocol_type="consumer", protocol_name="range",
        assignments=[SYNC_GROUP.SyncGroupRequestAssignment(member_id=member,
                                                           assignment=b"")]))
    _checked(synced.error_code, "SyncGroup")
    return {"generation_id": joined.generation_id, "member_id": member,
            "group_instance_id": None}


class Load:
    """Connections sending one frame over and over, each with ``depth`` in flight; counts the
    answers."""

    def __init__(self, bootstrap: str, work: Workload):
        self.answers = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._conns = [Connection(bootstrap) for _ in range(work.connections)]
        self._threads = [threading.Thread(target=self._run, args=(c.sock, work), daemon=True)
                         for c in self._conns]
        self.failure: BaseException | None = None
        for t in self._threads:
            t.start()

    def _run(self, sock: socket.socket, work: Workload) -> None:
        try:
            for _ in range(work.depth):
                sock.sendall(work.frame)
            while not self._stop.is_set():
                read_frame(sock)
                with self._lock:
                    self.answers += 1
                sock.sendall(work.frame)
        except BaseException as exc:  # noqa: BLE001 (reported by stop())
            if not self._stop.is_set():
                self.failure = exc

    def stop(self) -> None:
        self._stop.set()
        for conn in self._conns:
            conn.sock.shutdown(socket.SHUT_RDWR)
        for t in self._threads:
            t.join(10)
        for conn in self._conns:
            conn.close()
        if self.failure is not None:
            raise SystemExit(f"a connection failed: {self.failure!r}")


def measure(target: Target, work: Workload, seconds: float) -> tuple[float, float]:
    """(broker CPU µs per answer, answers a second) over ``seconds`` of load, after one
    second of warm-up."""
    load = Load(target.bootstrap, work)
    try:
        time.sleep(1.0)
        start, cpu, answers = time.perf_counter(), cpu_seconds(target.pid), load.answers
        time.sleep(seconds)
        cpu = cpu_seconds(target.pid) - cpu
        answers = load.answers - answers
        elapsed = time.perf_counter() - start
    finally:
        load.stop()
    if answers == 0:
        raise SystemExit(f"{target.name}: no answers in {seconds} s")
    return cpu / answers * 1e6, answers / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--compare", metavar="HOST:PORT",
                        help="another Kafka to measure in the same run (a single broker)")
    parser.add_argument("--compare-pid", type=int, metavar="PID",
                        help="the other broker's pid (default: whoever listens on its port)")
    parser.add_argument("--only", default=",".join(KINDS))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--fetch-connections", type=int, default=200)
    parser.add_argument("--fetch-wait-ms", type=int, default=500)
    args = parser.parse_args()
    kinds = [k for k in args.only.split(",") if k]
    if unknown := sorted(set(kinds) - set(KINDS)):
        parser.error(f"--only: unknown {', '.join(unknown)} (known: {', '.join(KINDS)})")
    if min(args.rounds, args.connections, args.depth, args.fetch_connections) < 1 \
            or args.seconds <= 0 or args.fetch_wait_ms < 0:
        parser.error("--rounds, --seconds, --connections, --depth and --fetch-connections must "
                     "be positive, --fetch-wait-ms not negative")

    with served() as broker:
        targets = [Target("mockbroker", broker.bootstrap, broker.pid)]
        if args.compare:
            targets.append(Target("other", args.compare,
                                  broker_pid(parser, args.compare, args.compare_pid)))
        topics = {t.name: make_topic(t.bootstrap, 1, "bench-requests")[0] for t in targets}
        results: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for kind in kinds:
            works = {t.name: prepare(kind, t.bootstrap, topics[t.name], args) for t in targets}
            for r in range(args.rounds):
                order = targets if r % 2 == 0 else targets[::-1]
                for target in order:
                    results.setdefault((kind, target.name), []).append(
                        measure(target, works[target.name], args.seconds))
            report(kind, targets, results)


def report(kind: str, targets: list[Target], results: dict) -> None:
    cells = []
    for t in targets:
        runs = results[(kind, t.name)]
        cpu = statistics.median(c for c, _ in runs)
        rate = statistics.median(r for _, r in runs)
        cells.append(f"{t.name} {cpu:7.1f} µs CPU/request at {rate:8.0f}/s")
    line = f"{kind:<14} " + "   ".join(cells)
    if len(targets) == 2:
        mine, other = (results[(kind, t.name)] for t in targets)
        ratios = [m[0] / o[0] for m, o in zip(mine, other)]
        median = statistics.median(c for c, _ in mine) / statistics.median(c for c, _ in other)
        line += f"   ratio {median:.2f} (runs {min(ratios):.2f}-{max(ratios):.2f}; below 1: " \
                "mockbroker spends less)"
    print(line, flush=True)


if __name__ == "__main__":
    main()
