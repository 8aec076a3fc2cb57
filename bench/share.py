"""Share-group consumption (KIP-932) with Kafka's own Java share consumer: mockbroker against
another Kafka measured in the same run.

mockbroker runs as ``mockbroker serve`` in its own process (``bench.served``); the other target
is a bootstrap given with ``--compare HOST:PORT``.  Workloads: records of 100 B and of 10 KiB,
in topics of 1 and of 12 partitions (four cases).  For each case every target gets one fresh
topic, written off the clock by confluent-kafka in the same shape on both (records handed to the
partitions in turn, each batch sent once ``batch.size`` fills, never on a timer: the two logs
hold the same batches, see ``write_topic``).  Then each run reads the whole topic through a
fresh share group with Kafka's ``org.apache.kafka.tools.ShareConsumerPerformance`` (one
``KafkaShareConsumer``, implicit acknowledgement: each poll acknowledges the records of the one
before, and the tool's final ``commitSync`` the last).  A share group starts at the latest
offset unless told otherwise, so before its consumer starts each group gets the group config
``share.auto.offset.reset=earliest`` (IncrementalAlterConfigs on a GROUP resource).

What is timed: a share member is given its partitions only by its second heartbeat, one
``group.share.heartbeat.interval.ms`` (5 s by default on both) after it joins, so a rate over
the tool's whole run would mostly time that wait.  The tool runs with ``--show-detailed-stats
--reporting-interval 1``: it prints a line, with its own millisecond clock, at the first record
of every poll that returns records (at most one a millisecond).  The rate is taken **from the
first poll that returned records to the end of the read** (the tool's own end time, once it
has counted every record): the records after the first poll's, over that time.  The join is
left out, and is printed apart ("first record s": from the consumer's subscribe to its first
record).  ``--messages`` records of 100 B take about a second or less to read on either broker,
so each figure is a rough one: hence the several rounds and the medians.

Broker CPU comes from the serving process's own counters (``/proc/PID/stat``, user + system,
every thread): mockbroker's pid is known; the other broker's is the process listening on the
bootstrap port (found with ``ss``) or ``--compare-pid``; without one its CPU figures are n/a.
The counters are read when the tool prints its line for the first poll and when it prints its
final line (after its ``commitSync``, so the last acknowledgements are in), while the bench
reads the tool's output as it comes; the CPU seconds between are per million of the records
after the first poll.  The consumer's JVM (the tool's own process) is read at the same cues:
"client CPU s/M".  A fresh JVM compiles its fetch path during the read, on either target; where
its CPU moves with msg/s, the consumer set the pace, not the broker.  The counters count in
clock ticks (10 ms): a read of 200,000 records resolves 0.05 s per million.  "records/poll"
is how many records a poll of the consumer returned after the first (the tool's lines, so two
polls within a millisecond count as one): what each ShareFetch answer held, which a broker
sizes by its own rules (records, bytes, whole batches), and which sets how many round trips a
read takes.

Every run is checked: the tool must count every record, and afterwards the group must have no
lag left on any partition (DescribeShareGroupOffsets v1, sent to the group's coordinator with
the project's ``wire`` codec): every record acknowledged.  A record delivered twice is counted
twice by the tool, which then stops before another is read, so it shows as lag too.  Failed
checks are printed below the figures, for either target.

Before the measured rounds, ``--warmup`` passes (one by default) read 100 B and 10 KiB records
from 12 partitions on each target (the sizes and the most partitions measured), uncounted: a
JVM broker compiles its data path during its first minute or so of load.  Each round reads each
case once on each target; which target goes first swaps from one round to the next
(mockbroker, other; other, mockbroker; ...), so a slow spell of the machine falls on both.  The
medians are printed, with the ratio mockbroker /
other and the lowest and highest ratio of single runs (round i of one target over round i of
the other: a range that spans 1 is no clear difference), and for each case whether the
targets are met: a rate at least the other's (ratio >= 1.0) and less broker CPU per record
(ratio < 1.0).  Without ``--compare`` only mockbroker is measured.

    .venv/bin/python bench/share.py [--compare HOST:PORT [--compare-pid PID]]
        [--messages 200000] [--big-messages 20000] [--rounds 3] [--warmup 1]
        [--sizes 100,10240] [--partitions 1,12]

Needs ``java`` and Kafka's tools jars (``kafka-tools``, ``kafka-clients`` and their
dependencies) on ``--java-classpath``, by default ``.cache/jars/kafka-tools/*`` as
``ci/dev.sh test`` sets it up.  The other broker needs share groups enabled (Kafka 4.1 or
later; a one-node cluster also needs ``share.coordinator.state.topic.replication.factor=1``
and ``share.coordinator.state.topic.min.isr=1``).
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import confluent_kafka
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource

# the benches run as scripts: make the repository importable for their shared helpers
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import wire  # noqa: E402
from bench.procstat import cpu_seconds, listening_pid  # noqa: E402
from bench.served import make_topic, produce_all, read_frame, served  # noqa: E402

SIZES = (100, 10240)
PARTITIONS = (1, 12)
MB = 1e6  # decimal megabytes (the tool's own MB are MiB)
TOOL = "org.apache.kafka.tools.ShareConsumerPerformance"
TOOL_DATE = "%Y-%m-%d %H:%M:%S:%f"  # the tool's default --date-format, yyyy-MM-dd HH:mm:ss:SSS
#: broker settings that shape a share read; the bench warns when the targets differ
SHARE_SETTINGS = ("group.share.partition.max.record.locks", "group.share.record.lock.duration.ms",
                  "group.share.heartbeat.interval.ms", "group.share.delivery.count.limit")
#: figure -> True when higher is better
#: figure -> True when higher is better, None when it is the client's and neither is
HIGHER_BETTER = {"msg/s": True, "MB/s": True, "CPU s/M rec": False, "client CPU s/M": None,
                 "records/poll": None, "first record s": False}


@dataclass(frozen=True)
class Target:
    label: str
    bootstrap: str
    pid: int | None  # the serving process, for its CPU counters


@dataclass
class Tally:
    """case -> figure -> label -> values, in the order first seen; and what failed a check."""
    values: dict[str, dict[str, dict[str, list[float]]]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def add(self, case: str, figure: str, label: str, value: float | None) -> None:
        if value is not None:
            self.values.setdefault(case, {}).setdefault(figure, defaultdict(list))[label] \
                .append(value)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def in_turn(targets: list[Target], turn: int) -> list[Target]:
    """The targets as given on even turns, reversed on odd ones (A, B; B, A; ...)."""
    return targets if turn % 2 == 0 else targets[::-1]


def case_name(size: int, partitions: int) -> str:
    return f"{f'{size} B' if size < 1024 else f'{size / 1024:g} KiB'} x{partitions}p"


# ---------------------------------------------------------------- the topic and the group


def write_topic(bootstrap: str, topic: str, payload: bytes, n: int, partitions: int) -> None:
    """Write the topic that is read, off the clock and in the same shape on every target: the
    records handed to the partitions in turn, each batch sent once it is full (``batch.size``),
    the rest at ``flush()``; a batch closed on ``linger.ms`` would be as large as the target's
    last acknowledgement was slow, and the reads would then differ in fetches."""
    producer = confluent_kafka.Producer({
        "bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
        "linger.ms": 60_000, "queue.buffering.max.messages": 2_000_000})
    produce_all(producer, topic, payload, n, partitions=partitions)
    left = producer.flush(300)
    if left:
        raise RuntimeError(f"{left} records of {topic} not written")


def share_group(admin: AdminClient) -> str:
    """A fresh group id, configured to start at the earliest offset (a share group starts at
    the latest unless its ``share.auto.offset.reset`` says otherwise)."""
    group = f"bench-share-{uuid.uuid4().hex[:12]}"
    resource = ConfigResource("GROUP", group, incremental_configs=[ConfigEntry(
        "share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)])
    for future in admin.incremental_alter_configs([resource], request_timeout=15).values():
        future.result(20)
    return group


def delete_topics(bootstrap: str, names: list[str]) -> None:
    """Delete the topics once read, so that what one case stored weighs on no later one."""
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    try:
        for future in admin.delete_topics(names, operation_timeout=60,
                                          request_timeout=120).values():
            future.result(180)
    except Exception as exc:  # noqa: BLE001 - a leftover topic only costs memory
        log(f"  (could not delete {len(names)} topic(s): {exc})")


def share_settings(bootstrap: str) -> dict[str, str]:
    """The broker's SHARE_SETTINGS, where it tells (DescribeConfigs)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        broker = min(admin.list_topics(timeout=10).brokers)
        resource = ConfigResource(ConfigResource.Type.BROKER, str(broker))
        configs = admin.describe_configs([resource], request_timeout=10)[resource].result(15)
        return {key: configs[key].value for key in SHARE_SETTINGS if key in configs}
    except Exception:  # noqa: BLE001 - only used for a warning
        return {}


# ---------------------------------------------------------------- the check afterwards


def ask(address: tuple[str, int], api: int, version: int, body):
    with socket.create_connection(address, timeout=30) as sock:
        sock.sendall(wire.encode_request(api, version, 1, "bench-share", body))
        return wire.decode_response(api, version, read_frame(sock))[1]


def share_lags(bootstrap: str, group: str, topic: str) -> dict[int, int]:
    """{partition: lag} of ``group`` on ``topic``: records from the share-partition start offset
    to the high watermark not yet acknowledged (or archived), as the group's coordinator tells
    (FindCoordinator v6, key type 0: a share group has a group coordinator like any group;
    then DescribeShareGroupOffsets v1, the first version with the lag)."""
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    found = ask((host, int(port)), 10, 6, wire.request_class(10)(
        key_type=0, coordinator_keys=[group]))
    coordinator = found.coordinators[0]
    if coordinator.error_code:
        raise RuntimeError(f"FindCoordinator: error {coordinator.error_code}")
    describe = wire.request_class(90)
    request = describe(groups=[describe.DescribeShareGroupOffsetsRequestGroup(
        group_id=group, topics=None)])
    described = ask((coordinator.host, coordinator.port), 90, 1, request)
    lags = {}
    for answer in described.groups:
        if answer.error_code:
            raise RuntimeError(f"DescribeShareGroupOffsets: error {answer.error_code} "
                               f"{answer.error_message or ''}")
        for t in answer.topics:
            if t.topic_name == topic:
                for p in t.partitions:
                    lags[p.partition_index] = p.lag if not p.error_code else None
    return lags


def check_acknowledged(target: Target, group: str, topic: str, partitions: int) -> str | None:
    """None when the group has no lag left on any partition (every record acknowledged), else
    what is left; asked a few times, as a broker may write the state of the last
    acknowledgements after answering them.  (The start offset itself is no test: both brokers
    may leave it at the start of the last batch read, with no lag.)"""
    left = "no answer"
    for _ in range(10):
        try:
            lags = share_lags(target.bootstrap, group, topic)
        except Exception as exc:  # noqa: BLE001 - reported as a failed check
            left = f"offsets not described ({exc})"
        else:
            behind = {p: lags.get(p) for p in range(partitions) if lags.get(p) != 0}
            if not behind:
                return None
            left = ", ".join(f"partition {p} lag {lag if lag is not None else 'unknown'}"
                             for p, lag in sorted(behind.items())[:4])
            if len(behind) > 4:
                left += f" (and {len(behind) - 4} more partitions)"
        time.sleep(0.2)
    return left


# ---------------------------------------------------------------- one read


def java_available(classpath: str) -> bool:
    jars = [jar for entry in classpath.split(":")
            for jar in (glob.glob(entry + ".jar") if entry.endswith("*") else [entry])]
    return shutil.which("java") is not None \
        and any(Path(jar).name.startswith("kafka-tools-") for jar in jars)


@dataclass
class Read:
    records: int  # counted by the tool
    timed: int  # records after the first poll's
    seconds: float  # from the first poll that returned records to the end of the read
    first_record: float  # seconds from subscribe to the first poll that returned records
    cpu: float | None  # the broker's CPU seconds over the same span (to the final commit)
    client_cpu: float  # the consumer JVM's CPU seconds over the same span
    polls: int  # polls that returned records after the first (those within a ms as one)


def tool_time(text: str) -> float:
    return datetime.strptime(text.strip(), TOOL_DATE).timestamp()


def share_read(args, target: Target, admin: AdminClient, topic: str, n: int) -> tuple[Read, str]:
    """One read of ``n`` records through a fresh share group; returns it and the group."""
    group = share_group(admin)
    argv = ["java", "-cp", args.java_classpath, TOOL, "--bootstrap-server", target.bootstrap,
            "--topic", topic, "--group", group, "--num-records", str(n), "--timeout", "30000",
            "--show-detailed-stats", "--reporting-interval", "1", "--hide-header"]
    progress: list[tuple[float, float, int]] = []  # (interval start, poll time, records so far)
    final = None
    cpu_first = cpu_final = None
    client_first = client_final = 0.0
    with tempfile.TemporaryFile("w+") as errors:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=errors, text=True, cwd=tempfile.gettempdir())
        try:
            for line in proc.stdout:  # read as it comes: the CPU counters are read on cue
                fields = [f.strip() for f in line.split(",")]
                if len(fields) < 7:
                    continue
                if line.rstrip().endswith("for share consumer 1"):
                    if not progress:
                        client_first = cpu_seconds(proc.pid)
                        if target.pid:
                            cpu_first = cpu_seconds(target.pid)
                    progress.append((tool_time(fields[0]), tool_time(fields[1]),
                                     int(fields[5])))
                elif final is None:  # the last line: the whole read, after the commit
                    client_final = cpu_seconds(proc.pid)
                    if target.pid:
                        cpu_final = cpu_seconds(target.pid)
                    final = (tool_time(fields[1]), int(fields[5]))
            proc.wait(60)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        finally:
            proc.stdout.close()
        errors.seek(0)
        stderr = errors.read()
    if proc.returncode or final is None or not progress:
        raise RuntimeError(f"{target.label}: {TOOL} exited {proc.returncode}, "
                           f"{len(progress)} progress lines: {stderr[-800:]}")
    subscribed, first, _ = progress[0]
    end, records = final
    # the second line comes with the first record of a later poll: the ones before were the
    # first poll's (or arrived within its millisecond)
    in_first = progress[1][2] - 1 if len(progress) > 1 else records
    timed = records - in_first
    cpu = cpu_final - cpu_first if cpu_first is not None and cpu_final is not None else None
    return Read(records, timed, max(end - first, 0.001), first - subscribed, cpu,
                client_final - client_first, len(progress) - 1), group


# ---------------------------------------------------------------- a case on every target


def run_case(args, tally: Tally, targets: list[Target], admins: dict[str, AdminClient],
             size: int, partitions: int, rounds: int, *, quiet: bool = False) -> None:
    """Write one topic per target, then ``rounds`` reads of it on each, the targets taking
    turns; the figures go to ``tally``."""
    n = args.messages if size < 1024 else args.big_messages  # records under 1 KiB are small
    name = case_name(size, partitions)
    topics = {}
    try:
        for target in targets:
            topic, got = make_topic(target.bootstrap, partitions, "bench-share")
            topics[target.label] = topic
            if got != partitions:
                raise RuntimeError(f"{target.label} made {topic} with {got} partitions, "
                                   f"not {partitions}")
            write_topic(target.bootstrap, topic, b"x" * size, n, partitions)
        for turn in range(rounds):
            for target in in_turn(targets, turn):
                read, group = share_read(args, target, admins[target.label],
                                         topics[target.label], n)
                problem = None
                if read.records != n:
                    problem = f"the tool counted {read.records:,} of {n:,} records"
                short = check_acknowledged(target, group, topics[target.label], partitions)
                if short:
                    problem = f"{problem + '; ' if problem else ''}not all acknowledged: {short}"
                if problem:
                    tally.problems.append(f"{target.label}, {name}"
                                          f"{' (warm-up)' if quiet else ''}, round {turn + 1}: "
                                          f"{problem}")
                rate = read.timed / read.seconds
                tally.add(name, "msg/s", target.label, rate)
                tally.add(name, "MB/s", target.label, rate * size / MB)
                tally.add(name, "CPU s/M rec", target.label,
                          None if read.cpu is None or not read.timed
                          else read.cpu / read.timed * 1e6)
                if read.timed:
                    tally.add(name, "client CPU s/M", target.label,
                              read.client_cpu / read.timed * 1e6)
                if read.polls:
                    tally.add(name, "records/poll", target.label, read.timed / read.polls)
                tally.add(name, "first record s", target.label, read.first_record)
                cpu_text = "n/a" if read.cpu is None else f"{read.cpu:.2f} s"
                log(f"  {'warm-up ' if quiet else ''}{target.label:<10} {name:<11} "
                    f"{rate:>10,.0f} msg/s  ({read.timed:,} records in {read.seconds:.3f} s "
                    f"after {read.first_record:.2f} s to the first; broker CPU {cpu_text})"
                    f"{'  CHECK FAILED: ' + problem if problem else ''}")
    finally:
        for target in targets:
            if target.label in topics:
                delete_topics(target.bootstrap, [topics[target.label]])


# ---------------------------------------------------------------- the report


def figure_text(value: float | None) -> str:
    if value is None:
        return "n/a"
    if abs(value) >= 99.95:
        return f"{value:,.0f}"
    if abs(value) >= 9.995:
        return f"{value:.1f}"
    return f"{value:.2f}" if abs(value) >= 0.995 else f"{value:.3g}"


def median(values: list[float] | None) -> float | None:
    return statistics.median(values) if values else None


def report(tally: Tally, labels: list[str]) -> None:
    compare = len(labels) > 1
    head = f"{'case':<11} {'figure':<15} {labels[0]:>11}"
    if compare:
        head += f" {labels[1]:>11} {'ratio':>7}  {'runs':<11}  better"
    print("\n" + head)
    print("-" * len(head))
    verdicts = []
    for case, figures in tally.values.items():
        last = None
        ratios = {}
        for figure, by_label in figures.items():
            mine = median(by_label.get(labels[0]))
            other = median(by_label.get(labels[1])) if compare else None
            line = f"{case if case != last else '':<11} {figure:<15} {figure_text(mine):>11}"
            last = case
            if compare:
                ratio = mine / other if mine is not None and other else None
                ratios[figure] = ratio
                singles = [a / b for a, b in zip(by_label.get(labels[0], []),
                                                 by_label.get(labels[1], [])) if b]
                spread = f"{figure_text(min(singles))}-{figure_text(max(singles))}" \
                    if len(singles) >= 2 else ""
                direction = {True: "higher", False: "lower", None: "-"}[HIGHER_BETTER[figure]]
                line += f" {figure_text(other):>11} {figure_text(ratio):>7}  {spread:<11}" \
                        f"  {direction}"
            print(line)
        if compare:
            verdicts.append((case, ratios.get("msg/s"), ratios.get("CPU s/M rec")))
    if compare:
        print(f"\nratio = {labels[0]} / {labels[1]}, medians of the runs; 'better' is the "
              "direction in which mockbroker does better\nruns = the lowest and highest ratio "
              "of one run to the other target's run in the same round (a range that spans 1 "
              "is no clear difference)\nmsg/s, MB/s: records after the first poll, from that "
              "poll to the end of the read (the join is left out: 'first record s')\n"
              "CPU s/M rec: the broker process's CPU seconds over the same span, per million "
              "of those records\nclient CPU s/M: the same for the consumer's JVM: where it moves "
              "with msg/s, the consumer set the pace\nrecords/poll: records per poll of the "
              "consumer after the first (polls within one millisecond count as one): how much "
              "each ShareFetch answer held")
        print("\ntargets: rate >= 1.0x the other's, broker CPU per record below the other's")
        for case, rate, cpu in verdicts:
            rate_text = "n/a" if rate is None else \
                f"{rate:.2f}x {'met' if rate >= 1.0 else 'NOT met'}"
            cpu_text = "n/a (no pid)" if cpu is None else \
                f"{cpu:.2f}x {'met' if cpu < 1.0 else 'NOT met'}"
            print(f"  {case:<11} rate {rate_text:<16} CPU per record {cpu_text}")
    if tally.problems:
        print(f"\nchecks failed ({len(tally.problems)}):")
        for problem in tally.problems:
            print(f"  {problem}")
    else:
        print("\nchecks: every read counted every record, and every group acknowledged them all")


# ---------------------------------------------------------------- the run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--compare", metavar="HOST:PORT",
                        help="bootstrap of another Kafka to measure in the same run")
    parser.add_argument("--compare-pid", type=int, metavar="PID",
                        help="the other broker's pid (default: whoever listens on its port)")
    parser.add_argument("--messages", type=int, default=200_000,
                        help="records in a topic that is read, of 100 B (or any size under "
                             "1 KiB) (default: %(default)s)")
    parser.add_argument("--big-messages", type=int, default=None, metavar="N",
                        help="records of 10 KiB (1 KiB or more) in a topic that is read "
                             "(default: a tenth of "
                             "--messages, at least 1,000)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="reads of each case on each target (default: %(default)s)")
    parser.add_argument("--warmup", type=int, default=1, metavar="PASSES",
                        help="unmeasured reads of 100 B and 10 KiB records from 12 partitions "
                             "on each target before the rounds (default: %(default)s)")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), metavar="B,B",
                        help="record sizes in bytes to measure (default: %(default)s)")
    parser.add_argument("--partitions", default=",".join(map(str, PARTITIONS)), metavar="N,N",
                        help="partition counts of the topics to measure (default: %(default)s)")
    parser.add_argument("--java-classpath", default=str(ROOT / ".cache/jars/kafka-tools/*"))
    args = parser.parse_args()
    try:
        sizes = [int(v) for v in args.sizes.split(",")]
        partition_counts = [int(v) for v in args.partitions.split(",")]
    except ValueError:
        parser.error("--sizes and --partitions take comma-separated numbers")
    if args.big_messages is None:
        args.big_messages = max(1000, args.messages // 10)
    if args.rounds < 1 or args.messages < 2 or args.big_messages < 2 or args.warmup < 0:
        parser.error("--rounds must be at least 1, --messages and --big-messages at least 2, "
                     "--warmup 0 or more")
    if not java_available(args.java_classpath):
        raise SystemExit(f"java or Kafka's tools jars ({args.java_classpath}) not found")

    tally = Tally()
    started, load = time.perf_counter(), os.getloadavg()[0]
    with served() as broker:
        targets = [Target("mockbroker", broker.bootstrap, broker.pid)]
        if args.compare:
            pid = args.compare_pid or listening_pid(args.compare)
            if pid is None:
                log(f"no pid for {args.compare}: its CPU figures are n/a")
            targets.append(Target("other", args.compare, pid))
        log(f"targets: {', '.join(f'{t.label}={t.bootstrap} (pid {t.pid})' for t in targets)}")
        settings = {t.label: share_settings(t.bootstrap) for t in targets}
        if len(targets) > 1 and settings["mockbroker"] != settings["other"]:
            log(f"warning: the targets' share settings differ: {settings}")
        admins = {t.label: AdminClient({"bootstrap.servers": t.bootstrap}) for t in targets}
        if args.warmup:
            begun, warm = time.perf_counter(), Tally()
            for size in sizes:
                run_case(args, warm, targets, admins, size, max(partition_counts), args.warmup,
                         quiet=True)
            tally.problems.extend(warm.problems)  # its figures are dropped, not its failures
            log(f"  warm-up: {args.warmup} pass(es) on each target, "
                f"{time.perf_counter() - begun:.0f} s")
        for size in sizes:
            for partitions in partition_counts:
                run_case(args, tally, targets, admins, size, partitions, args.rounds)
    report(tally, [t.label for t in targets])
    # other work on the machine skews the figures: say how busy it was
    print(f"\n{args.rounds} round(s), --messages {args.messages} (100 B), --big-messages "
          f"{args.big_messages} (10 KiB), {time.perf_counter() - started:.0f} s in all; "
          f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, "
          f"{os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
