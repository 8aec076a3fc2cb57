"""Seeing it and steering time over HTTP: ``GET /events`` and its live stream, the rebalance
timeline, the broker clock (``GET /clock``, ``POST /clock/advance``) and the waits
(``POST /wait/...``), from the Python client and raw HTTP; every bad call refused with a 4xx
that says why, and a wait that times out says what it saw."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request

import confluent_kafka as ck
import pytest

from mockbroker import AdminClient, AdminError, MockCluster, WaitTimeout
from tests.clients.helpers import RDKAFKA_LOG
from tests.test_serve import CLEAN_ENV, MOCKBROKER, parse_ready_line


def _raw(url: str, method: str, path: str, body: bytes | None = None,
         headers: dict[str, str] | None = None):
    request = urllib.request.Request(url + path, data=body, method=method,
                                     headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _produce(bootstrap: str, topic: str, count: int) -> None:
    producer = ck.Producer({"bootstrap.servers": bootstrap, "logger": RDKAFKA_LOG,
                            "linger.ms": 0})
    for i in range(count):
        producer.produce(topic, f"v{i}".encode(), partition=i % 2)
    assert producer.flush(10) == 0


class Stream:
    """A client of ``GET /events/stream``, reading server-sent events on a thread."""

    def __init__(self, admin_url: str, query: str = "", headers: dict[str, str] | None = None):
        parsed = urllib.parse.urlsplit(admin_url)
        self.connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
        self.connection.request("GET", "/events/stream" + query, headers=headers or {})
        self.response = self.connection.getresponse()
        self.events: list[dict] = []
        self.ids: list[int] = []
        self.ended = threading.Event()
        self._arrived = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        fields: dict[str, str] = {}
        try:
            for raw in self.response:
                line = raw.decode().rstrip("\n")
                if line:
                    if not line.startswith(":"):
                        name, _, value = line.partition(": ")
                        fields[name] = value
                    continue
                if "data" in fields:
                    with self._arrived:
                        event = json.loads(fields["data"])
                        assert fields["event"] == event["type"]
                        self.ids.append(int(fields["id"]))
                        self.events.append(event)
                        self._arrived.notify_all()
                fields = {}
        except (OSError, AttributeError, ValueError):
            pass  # closed under the reader (http.client drops its file on close)
        finally:
            self.ended.set()
            with self._arrived:
                self._arrived.notify_all()

    def wait_for(self, predicate, what: str, timeout: float = 30) -> dict:
        with self._arrived:
            found = self._arrived.wait_for(
                lambda: next((e for e in self.events if predicate(e)), None)
                or self.ended.is_set(), timeout)
        event = next((e for e in self.events if predicate(e)), None)
        assert event is not None, f"no {what} on the stream (got {self.events})"
        assert found
        return event

    def close(self) -> None:
        # shut the socket under the reading thread first: closing alone waits for its read
        if self.connection.sock is not None:
            self.connection.sock.shutdown(socket.SHUT_RDWR)
        self.connection.close()


@pytest.fixture
def cluster():
    with MockCluster(topics={"orders": 2}) as started:
        yield started


@pytest.fixture
def manual():
    with MockCluster(clock="manual", topics={"orders": 2}) as started:
        yield started


# -- events --------------------------------------------------------------------------------------

def test_events_are_listed_in_order_and_filtered_by_seq_type_and_field(cluster):
    admin = AdminClient(cluster.admin_url)
    admin.create_topic("audit", 1)
    admin.delete_topic("audit")
    every = admin.events()
    assert [e["seq"] for e in every] == list(range(1, len(every) + 1))
    assert [(e["type"], e["topic"]) for e in every] == [
        ("topic_created", "orders"), ("topic_created", "audit"), ("topic_deleted", "audit")]
    assert every[1]["admin"] == "create_topic" and every[2]["admin"] == "delete_topic"
    assert admin.events(since=1) == every[1:]
    assert admin.events("topic_deleted") == every[2:]
    assert admin.events(["topic_created", "topic_deleted"], topic="audit") == every[1:]
    assert admin.events(limit=1) == every[:1]
    assert admin.last_event_seq() == every[-1]["seq"]


@pytest.mark.parametrize("query, message", [
    ("?type=topic_made", "unknown event type(s) topic_made"),
    ("?since=soon", "query parameter since must be an integer"),
    ("?colour=red", "unknown query parameter(s) colour"),
    ("?limit=0", "query parameter limit must be at least 1"),
])
def test_a_bad_events_query_is_a_400_saying_why(cluster, query, message):
    status, body = _raw(cluster.admin_url, "GET", "/events" + query)
    assert status == 400 and message in body["error"]


def test_the_rebalances_of_an_unknown_group_are_a_404(cluster):
    status, body = _raw(cluster.admin_url, "GET", "/groups/nobody/rebalances")
    assert (status, body) == (404, {"error": "unknown group 'nobody'"})


def test_the_stream_sends_each_event_live_and_replays_from_a_seq(cluster):
    admin = AdminClient(cluster.admin_url)
    live = Stream(cluster.admin_url)
    try:
        assert live.response.status == 200
        assert live.response.getheader("Content-Type") == "text/event-stream"
        admin.create_topic("audit", 3)
        event = live.wait_for(lambda e: e["type"] == "topic_created", "topic_created")
        assert (event["topic"], event["partitions"]) == ("audit", 3)
        assert live.ids == [event["seq"]]  # from now on: nothing older than the stream
    finally:
        live.close()
    replay = Stream(cluster.admin_url, "?since=0&type=topic_created")
    reconnect = Stream(cluster.admin_url, headers={"Last-Event-ID": "1"})
    try:
        replay.wait_for(lambda e: e["topic"] == "audit", "the replayed event")
        assert [e["topic"] for e in replay.events] == ["orders", "audit"]
        reconnect.wait_for(lambda e: e["topic"] == "audit", "what came after id 1")
        assert reconnect.ids[0] == 2
    finally:
        replay.close()
        reconnect.close()


def test_a_stream_ends_when_the_cluster_stops():
    started = MockCluster().start()
    stream = Stream(started.admin_url)
    started.stop()  # returns although a stream was open
    assert stream.ended.wait(30)


def test_a_bad_stream_query_is_a_400(cluster):
    for query in ("?since=x", "?type=nope", "?colour=red"):
        status, body = _raw(cluster.admin_url, "GET", "/events/stream" + query)
        assert status == 400 and body["error"], query


def test_with_a_token_the_stream_takes_it_as_access_token():
    with MockCluster(admin_token="s3cret") as started:
        status, _ = _raw(started.admin_url, "GET", "/events")
        assert status == 401
        refused = Stream(started.admin_url)
        assert refused.response.status == 401
        refused.close()
        stream = Stream(started.admin_url, "?since=0&access_token=s3cret")
        try:
            assert stream.response.status == 200
            AdminClient(started.admin_url, token="s3cret").create_topic("late", 1)
            stream.wait_for(lambda e: e.get("topic") == "late", "the new topic")
        finally:
            stream.close()


# -- the clock -----------------------------------------------------------------------------------

def test_a_real_clock_cannot_be_advanced(cluster):
    admin = AdminClient(cluster.admin_url)
    assert admin.clock().mode == "real"
    with pytest.raises(AdminError) as refused:
        admin.advance_clock(1000)
    assert refused.value.status == 409
    assert "the broker clock is real" in refused.value.message
    with pytest.raises(AdminError, match="real"):
        cluster.advance_clock(1000)


def test_a_manual_clock_moves_only_when_told(manual):
    admin = AdminClient(manual.admin_url)
    before = admin.clock()
    assert before.mode == "manual" and before.now_ms == manual.now_ms
    assert admin.advance_clock(45_000).now_ms == before.now_ms + 45_000
    assert manual.advance_clock(0) == before.now_ms + 45_000
    moved = admin.events("clock_advanced")[0]
    assert (moved["ms"], moved["now_ms"], moved["admin"]) == \
        (45_000, before.now_ms + 45_000, "advance_clock")
    # records the broker stamps take its time (LogAppendTime)
    admin.create_topic("stamped", 1, configs={"message.timestamp.type": "LogAppendTime"})
    _produce(manual.bootstrap_servers, "stamped", 1)
    [record] = admin.records("stamped")
    assert (record.timestamp_type, record.timestamp) == ("LogAppendTime", manual.now_ms)


@pytest.mark.parametrize("body, message", [
    (b'{"ms": -1}', "ms must be at least 0"),
    (b'{}', "ms is required"),
    (b'{"ms": 1, "hours": 2}', "unknown field(s) hours"),
    (b'{"ms": "soon"}', "ms must be an integer"),
    (b'[1]', "the body must be a JSON object"),
])
def test_a_bad_advance_is_a_400_and_leaves_the_clock(manual, body, message):
    before = manual.now_ms
    status, answer = _raw(manual.admin_url, "POST", "/clock/advance", body)
    assert status == 400 and message in answer["error"]
    assert manual.now_ms == before


def test_a_bad_clock_setting_is_refused_before_start():
    with pytest.raises(ValueError, match="clock: must be real or manual"):
        MockCluster(clock="fast")


def test_serve_with_a_manual_clock_says_so_and_serves_it():
    proc = subprocess.Popen([*MOCKBROKER, "serve", "--port", "0", "--clock", "manual"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=CLEAN_ENV)
    try:
        line = proc.stdout.readline()
        _, admin_url = parse_ready_line(line)
        assert line.rstrip().endswith(" clock=manual")
        admin = AdminClient(admin_url)
        start = admin.clock().now_ms
        assert admin.clock().mode == "manual"
        assert admin.advance_clock(1234).now_ms == start + 1234
    finally:
        proc.kill()
        proc.wait(10)


# -- waits ---------------------------------------------------------------------------------------

def test_a_wait_for_records_answers_once_they_are_there(cluster):
    admin = AdminClient(cluster.admin_url)
    done = []
    waiter = threading.Thread(target=lambda: done.append(
        admin.wait_for_records("orders", 10, timeout=60)))
    waiter.start()
    _produce(cluster.bootstrap_servers, "orders", 10)
    waiter.join(90)
    [topic] = done
    assert sum(p.records for p in topic.partitions) == 10


def test_a_wait_that_times_out_says_what_it_saw(cluster):
    _produce(cluster.bootstrap_servers, "orders", 3)
    with pytest.raises(WaitTimeout) as timed_out:
        cluster.wait_for_records("orders", 5, timeout=0.2)
    assert timed_out.value.status == 408
    assert timed_out.value.message == (
        "timed out after 200 ms waiting for topic 'orders' to hold 5 records; "
        "last seen: 3 records (2, 1 by partition)")
    with pytest.raises(WaitTimeout, match="last seen: no group 'nobody'"):
        cluster.wait_for_group("nobody", members=2, timeout=0)
    with pytest.raises(WaitTimeout, match="no such event after seq 0"):
        cluster.wait_for_event("member_expired", group="nobody", timeout=0)


def test_a_wait_for_an_event_that_has_happened_answers_at_once(cluster):
    cluster.admin.create_topic("audit", 1)
    event = cluster.wait_for_event("topic_created", topic="audit", timeout=0)
    assert event["seq"] == 2
    with pytest.raises(WaitTimeout):
        cluster.wait_for_event("topic_created", topic="audit", since=event["seq"], timeout=0)


@pytest.mark.parametrize("path, body, message", [
    ("/wait/group", b'{"state": "Stable"}', "group_id is required"),
    ("/wait/group", b'{"group_id": "g", "state": "Calm"}', "state must be one of"),
    ("/wait/group", b'{"group_id": "g", "assignment": {"t": ["x"]}}',
     "assignment must map topic names to lists of partitions"),
    ("/wait/records", b'{"topic": "orders", "records": 1, "timeout_ms": 600001}',
     "timeout_ms must be at most 600000"),
    ("/wait/records", b'{"topic": "orders"}', "records is required"),
    ("/wait/lag", b'{"group_id": ""}', "group_id must be a non-empty string"),
    ("/wait/event", b'{"type": "nothing"}', "unknown event type 'nothing'"),
    ("/wait/event", b'{"match": {"a": [1]}}', "match must map field names to plain values"),
    ("/wait/event", b'{"since": -1}', "since must be at least 0"),
])
def test_a_bad_wait_is_a_400_saying_why(cluster, path, body, message):
    status, answer = _raw(cluster.admin_url, "POST", path, body)
    assert status == 400 and message in answer["error"], answer
