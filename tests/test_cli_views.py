"""``mockbroker groups`` and ``mockbroker topics`` against a ``mockbroker serve`` process, as a
user runs them: kafka-consumer-groups.sh's table for a group, the groups and topics, and one-line
errors for an unknown group, an unreachable or refusing admin API and a bad flag."""

from __future__ import annotations

import contextlib
import socket
import subprocess

import confluent_kafka as ck
import pytest
from kafka import KafkaProducer

from mockbroker import AdminClient
from tests.clients.helpers import RDKAFKA_LOG, wait_for
from tests.test_serve import CLEAN_ENV, MOCKBROKER, parse_ready_line

#: kafka-consumer-groups.sh --describe's columns
DESCRIBE_COLUMNS = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                    "CONSUMER-ID", "HOST", "CLIENT-ID"]


@contextlib.contextmanager
def _serving(*args: str):
    """A ``mockbroker serve`` process: (bootstrap, admin URL)."""
    proc = subprocess.Popen([*MOCKBROKER, "serve", "--port", "0", "--http-port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=CLEAN_ENV)
    try:
        brokers, admin = parse_ready_line(proc.stdout.readline())
        yield ",".join(f"{h}:{p}" for h, p in brokers), admin
    finally:
        proc.kill()
        proc.wait(10)


@pytest.fixture(scope="module")
def served():
    with _serving("--topic", "orders:3", "--topic", "audit:1") as (bootstrap, admin):
        producer = KafkaProducer(bootstrap_servers=bootstrap)
        for partition, count in ((0, 5), (1, 3), (2, 2)):
            for _ in range(count):
                producer.send("orders", b"o", partition=partition)
        for _ in range(4):
            producer.send("audit", b"a", partition=0)
        producer.flush()
        producer.close()
        yield bootstrap, admin


def view(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*MOCKBROKER, *args], capture_output=True, text=True, timeout=60,
                          env={**CLEAN_ENV, **(env or {})})


def _consumer(stack: contextlib.ExitStack, bootstrap: str, group: str,
              client_id: str) -> ck.Consumer:
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                            "client.id": client_id, "enable.auto.commit": False,
                            "auto.offset.reset": "earliest", "logger": RDKAFKA_LOG})
    stack.callback(consumer.close)
    return consumer


def _commit(consumer: ck.Consumer, topic: str, offsets: dict[int, int]) -> None:
    consumer.commit(offsets=[ck.TopicPartition(topic, p, o) for p, o in offsets.items()],
                    asynchronous=False)


def _table(stdout: str) -> list[list[str]]:
    """The describe table's rows (header first), checked to be aligned under the header."""
    lines = stdout.split("\n")
    assert lines[0] == "" and lines[-1] == "", stdout  # a blank line first, as Kafka's tool
    header, *rows = lines[1:-1]
    assert header.split() == DESCRIBE_COLUMNS
    starts = [header.index(column) for column in DESCRIBE_COLUMNS]
    for row in rows:
        cells = row.split()
        assert len(cells) == len(DESCRIBE_COLUMNS), row
        assert [row.index(cell, start) for cell, start in zip(cells, starts)] == starts, row
    return [row.split() for row in rows]


def test_describe_shows_offsets_lag_and_the_member_of_each_partition(served):
    bootstrap, admin_url = served
    with contextlib.ExitStack() as stack:
        consumer = _consumer(stack, bootstrap, "billing", "billing-cli")
        consumer.subscribe(["orders"])

        def assigned() -> bool:
            consumer.poll(0.05)
            return len(consumer.assignment()) == 3
        wait_for(assigned, "billing assigned every partition")
        _commit(consumer, "orders", {0: 3, 1: 1})
        # and an offset for a partition no member has
        _commit(consumer, "audit", {0: 1})
        [member] = AdminClient(admin_url).group("billing").members

        done = view("groups", "--describe", "billing", "--admin-url", admin_url)
        assert (done.returncode, done.stderr) == (0, "")
        me = [member.member_id, "/127.0.0.1", "billing-cli"]
        assert _table(done.stdout) == [
            ["billing", "orders", "0", "3", "5", "2", *me],
            ["billing", "orders", "1", "1", "3", "2", *me],
            ["billing", "orders", "2", "-", "2", "-", *me],
            ["billing", "audit", "0", "1", "4", "3", "-", "-", "-"],
        ]

        listed = view("groups", "--admin-url", admin_url)
        assert listed.returncode == 0, listed.stderr
        header, *rows = [line.split() for line in listed.stdout.splitlines()]
        assert header == ["GROUP", "TYPE", "STATE", "#MEMBERS", "COORDINATOR", "(ID)"]
        assert ["billing", "Classic", "Stable", "1"] in [row[:4] for row in rows]


def test_an_empty_group_has_no_active_members(served):
    bootstrap, admin_url = served
    with contextlib.ExitStack() as stack:
        consumer = _consumer(stack, bootstrap, "left", "gone")
        consumer.assign([ck.TopicPartition("orders", 1)])
        _commit(consumer, "orders", {1: 2})
    # the group's id, given by the environment this time
    done = view("groups", "--describe", "left", env={"MOCKBROKER_ADMIN_URL": admin_url})
    assert done.returncode == 0
    # on stderr, before the table, as Kafka's tool prints it
    assert done.stderr == "\nConsumer group 'left' has no active members.\n"
    assert _table(done.stdout) == [["left", "orders", "1", "2", "3", "1", "-", "-", "-"]]


def test_topics_shows_every_partition(served):
    _, admin_url = served
    done = view("topics", "--admin-url", admin_url)
    assert done.returncode == 0, done.stderr
    header, *rows = [line.split() for line in done.stdout.splitlines()]
    assert header == ["TOPIC", "PARTITION", "LEADER", "REPLICAS", "ISR", "LOG-START-OFFSET",
                      "HIGH-WATERMARK", "LAST-STABLE-OFFSET", "RECORDS"]
    assert rows == [["audit", "0", "0", "0", "0", "0", "4", "4", "4"],
                    ["orders", "0", "0", "0", "0", "0", "5", "5", "5"],
                    ["orders", "1", "0", "0", "0", "0", "3", "3", "3"],
                    ["orders", "2", "0", "0", "0", "0", "2", "2", "2"]]
    internal = view("topics", "--internal", "--admin-url", admin_url)
    # __consumer_offsets once a group has been asked for (the tests' order decides)
    assert {line.split()[0] for line in internal.stdout.splitlines()[1:]} == {
        topic.name for topic in AdminClient(admin_url).topics(internal=True)}


def test_an_unknown_group_is_kafkas_error_and_exit_1(served):
    _, admin_url = served
    done = view("groups", "--describe", "nope", "--admin-url", admin_url)
    assert (done.returncode, done.stdout, done.stderr) == (
        1, "", "Error: Consumer group 'nope' does not exist.\n")


def test_an_unreachable_admin_api_is_one_line_and_exit_1():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens there once closed
    for args in (["groups"], ["topics"], ["groups", "--describe", "g"]):
        done = view(*args, "--admin-url", f"http://127.0.0.1:{port}")
        assert done.returncode == 1 and done.stdout == ""
        assert done.stderr.startswith(
            f"mockbroker: error: cannot reach the admin API at http://127.0.0.1:{port}: ")
        assert done.stderr.count("\n") == 1, done.stderr


def test_a_token_guarded_admin_api_needs_the_token():
    with _serving("--admin-token", "view-token") as (_, admin_url):
        refused = view("topics", "--admin-url", admin_url)
        assert refused.returncode == 1 and refused.stderr.count("\n") == 1
        assert "refused" in refused.stderr and "(HTTP 401)" in refused.stderr
        for token in (["--token", "view-token"], []):
            done = view("groups", "--admin-url", admin_url, *token,
                        env={} if token else {"MOCKBROKER_ADMIN_TOKEN": "view-token"})
            assert done.returncode == 0, done.stderr
            assert done.stdout.split() == ["GROUP", "TYPE", "STATE", "#MEMBERS",
                                           "COORDINATOR", "(ID)"]


@pytest.mark.parametrize("args", [["groups", "--bogus"], ["topics", "--admin-url", "nowhere"],
                                  ["groups", "--describe"]])
def test_a_bad_flag_exits_2(args):
    done = view(*args)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("mockbroker: error: ") and done.stderr.count("\n") == 1


def test_a_bad_admin_url_variable_exits_2_naming_it():
    done = view("topics", env={"MOCKBROKER_ADMIN_URL": "nowhere"})
    assert done.returncode == 2
    assert done.stderr.startswith("mockbroker: error: MOCKBROKER_ADMIN_URL: ")
