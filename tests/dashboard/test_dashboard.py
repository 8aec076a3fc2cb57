"""The dashboard (``GET /``) in a real browser: headless Chromium (Debian's, which
``bash ci/dev.sh setup`` installs) driven by Playwright, against a cluster that stock clients
use meanwhile.

What is checked is what a user of the page sees, live: the brokers and partitions, a group's
members, its lag as records are produced and offsets committed, and its rebalance timeline as
consumers join, leave and are expired; a control rule added from the page's form, which then
fires on a client's request, shown fired.  Every wait is for a condition (Playwright's
``expect`` polls the page; :func:`wait_for` the admin API), never a fixed time.  The page's
screenshot is kept as a test artifact (``$MOCKBROKER_ARTIFACTS/dashboard.png``).

The page itself, the token in its address and the ``access_token`` parameter of the event
stream are checked over plain HTTP here too.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import threading
import urllib.error
import urllib.request
from concurrent.futures import Future
from pathlib import Path

import confluent_kafka as ck
import kafka
import kafka.errors
import pytest
from playwright.sync_api import Page, expect, sync_playwright

from mockbroker import AdminError, MockCluster
from tests.clients.helpers import RDKAFKA_LOG, wait_for

TOPIC = "orders"
PARTITIONS = 4
GROUP = "dashboard"
#: how long the page may take to show a change (it is live: well under a second, unless busy)
SHOWN_MS = 30_000
ARTIFACTS = Path(os.environ.get("MOCKBROKER_ARTIFACTS", ".cache/artifacts"))


# -- the browser ---------------------------------------------------------------------------

def chromium_path() -> str:
    path = shutil.which("chromium") or "/usr/bin/chromium"
    assert os.access(path, os.X_OK), \
        "the dashboard test needs Debian's chromium (bash ci/dev.sh setup installs it as root)"
    return path


@pytest.fixture
def page():
    """A page of headless Chromium; fails the test on any error of the page's scripts."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            page.set_default_timeout(SHOWN_MS)
            expect.set_options(timeout=SHOWN_MS)
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.script_errors = errors
            yield page
        finally:
            browser.close()


# -- clients ---------------------------------------------------------------------------------

class Member:
    """A confluent-kafka consumer in GROUP, polled on a thread of its own (librdkafka serves
    rebalances inside poll), which also runs whatever the test asks of the consumer: a consumer
    is used from one thread only.  It commits only what the test tells it to."""

    def __init__(self, cluster: MockCluster, client_id: str):
        self.client_id = client_id
        self.consumer = ck.Consumer({
            "bootstrap.servers": cluster.bootstrap_servers, "group.id": GROUP,
            "client.id": client_id, "enable.auto.commit": False,
            "auto.offset.reset": "earliest", "session.timeout.ms": 10_000,
            # a fast heartbeat: rebalances are learnt of at once
            "heartbeat.interval.ms": 100, "fetch.wait.max.ms": 100, "logger": RDKAFKA_LOG})
        self.consumer.subscribe([TOPIC])
        self._calls: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self.failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=f"member-{client_id}",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                while not self._calls.empty():
                    fn, result = self._calls.get()
                    try:
                        result.set_result(fn())
                    except BaseException as exc:
                        result.set_exception(exc)
                self.consumer.poll(0.05)  # what it consumes is not looked at
        except BaseException as exc:
            self.failure = exc

    def call(self, fn):
        assert self.failure is None, f"{self.client_id} failed: {self.failure!r}"
        result: Future = Future()
        self._calls.put((fn, result))
        return result.result(timeout=30)

    def commit(self, offset: int) -> None:
        """Commit ``offset`` on every partition, and wait for the answer."""
        tps = [ck.TopicPartition(TOPIC, p, offset) for p in range(PARTITIONS)]
        done = self.call(lambda: self.consumer.commit(offsets=tps, asynchronous=False))
        assert all(tp.error is None for tp in done), done

    def close(self) -> None:
        """Close the consumer, which leaves the group (LeaveGroup)."""
        if not self._stop.is_set():
            self.call(self.consumer.close)
            self._stop.set()
            self._thread.join(10)


@pytest.fixture
def members():
    started: list[Member] = []
    yield started
    for member in started:
        if member.failure is None:
            member.close()


def member_ids(admin, state: str = "Stable") -> dict[str, str] | None:
    """{client id: member id} of GROUP once it is in ``state``, else None."""
    try:
        group = admin.group(GROUP)
    except AdminError:
        return None
    if group.state != state:
        return None
    return {m.client_id: m.member_id for m in group.members}


def settled(admin, *client_ids: str) -> dict[str, str]:
    """Wait until GROUP is stable with exactly these clients; their member ids."""
    return wait_for(lambda: (ids := member_ids(admin)) is not None
                    and sorted(ids) == sorted(client_ids) and ids,
                    f"{GROUP} to be stable with {client_ids}")


def get_json(cluster: MockCluster, path: str):
    with urllib.request.urlopen(cluster.admin_url + path, timeout=10) as response:
        return json.loads(response.read())


def produce(cluster: MockCluster, count: int) -> None:
    """``count`` records spread evenly over the partitions, each with a key and a header."""
    producer = ck.Producer({"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 0,
                            "logger": RDKAFKA_LOG})
    errors: list[ck.KafkaError] = []
    for i in range(count):
        producer.produce(TOPIC, f"value-{i}".encode(), key=f"key-{i}".encode(),
                         partition=i % PARTITIONS, headers=[("n", str(i).encode())],
                         on_delivery=lambda error, _message: error and errors.append(error))
    assert producer.flush(15) == 0 and not errors, errors


# -- the page, live --------------------------------------------------------------------------

@pytest.mark.kafka(topics={TOPIC: PARTITIONS})
def test_the_dashboard_shows_a_group_rebalancing_and_a_rule_firing(kafka_cluster, kafka_admin,
                                                                   page: Page, members):
    page.goto(kafka_cluster.admin_url + "/")
    [broker] = kafka_admin.brokers()
    expect(page.locator(f'#brokers tr[data-broker="{broker.id}"]')).to_contain_text(
        f"{broker.address}")
    expect(page.locator(f'#brokers tr[data-broker="{broker.id}"]')).to_contain_text("alive")
    # the page follows the event stream
    expect(page.locator("#live")).to_have_text("live")

    # records: the partitions' offsets, and the record browser
    produce(kafka_cluster, 5 * PARTITIONS)
    for p in range(PARTITIONS):
        high_watermark = page.locator(f'#topics-list tr[data-partition="{TOPIC}-{p}"] td').nth(7)
        expect(high_watermark).to_have_text("5")
    page.locator("#records-partition").select_option("1")
    page.locator("#records-form button[type=submit]").click()
    expect(page.locator("#records tbody tr")).to_have_count(5)
    expect(page.locator('#records tr[data-offset="1-0"]')).to_contain_text("key-1")
    expect(page.locator('#records tr[data-offset="1-0"]')).to_contain_text("value-1")
    expect(page.locator('#records tr[data-offset="1-0"]')).to_contain_text("n=1")

    group = page.locator(f'article.group[data-group="{GROUP}"]')

    # a first member, alone; its commits make lag, then none
    members.append(Member(kafka_cluster, "dash-a"))
    a = settled(kafka_admin, "dash-a")["dash-a"]
    expect(group.locator(f'.members tr[data-member="{a}"]')).to_contain_text("dash-a")
    members[0].commit(2)
    for p in range(PARTITIONS):
        expect(group.locator(f'.offsets tr[data-partition="{TOPIC}-{p}"] .lag')).to_have_text("3")
    expect(group.locator(".total-lag")).to_have_text(str(3 * PARTITIONS))
    members[0].commit(5)
    expect(group.locator(".total-lag")).to_have_text("0")

    # a join, a leave, and an expiry (as if its session had timed out)
    members.append(Member(kafka_cluster, "dash-b"))
    b = settled(kafka_admin, "dash-a", "dash-b")["dash-b"]
    expect(group.locator(f'.members tr[data-member="{b}"]')).to_contain_text("dash-b")
    members[1].close()
    settled(kafka_admin, "dash-a")
    expect(group.locator(f'.members tr[data-member="{b}"]')).to_have_count(0)
    members.append(Member(kafka_cluster, "dash-c"))
    c = settled(kafka_admin, "dash-a", "dash-c")["dash-c"]
    kafka_admin.expire_member(GROUP, c)
    # the consumer finds itself out of the group and joins again, under a new member id
    wait_for(lambda: (ids := member_ids(kafka_admin)) and sorted(ids) == ["dash-a", "dash-c"]
             and ids["dash-c"] != c, "dash-c to be back under a new member id")

    rebalances = get_json(kafka_cluster, f"/groups/{GROUP}/rebalances")
    [joined] = [i for i, r in enumerate(rebalances) if b in r["joined"]]
    [left] = [i for i, r in enumerate(rebalances) if b in r["left"]]
    [expired] = [i for i, r in enumerate(rebalances) if c in r["expired"]]
    assert joined < left < expired, rebalances
    expect(group.locator(".timeline .rebalance")).to_have_count(len(rebalances))
    for index, member_id in [(joined, b), (left, b), (expired, c)]:
        shown = group.locator(f'.timeline .rebalance[data-index="{index}"]')
        expect(shown).to_contain_text(rebalances[index]["cause"])
        expect(shown).to_contain_text(member_id)
        took = rebalances[index]["duration_ms"]
        if took < 10_000:  # longer ones are shown in seconds
            expect(shown.locator(".duration")).to_have_text(f"{took} ms")
    expect(group.locator(".members tr[data-member]")).to_have_count(2)
    # and the events behind it, in the feed
    for kind in ("member_joined", "member_left", "member_expired"):
        expect(page.locator(f'#events-feed li[data-type="{kind}"]').first).to_be_visible()

    # a rule added from the page's form
    page.locator("#fault-api").fill("Produce")
    page.locator("#fault-action").select_option("error")
    page.locator("#fault-error").fill("NOT_LEADER_OR_FOLLOWER")
    page.locator("#fault-count").fill("1")
    page.locator("#fault-topic").fill(TOPIC)
    page.locator("#fault-form button[type=submit]").click()
    [rule] = wait_for(lambda: kafka_admin.faults(), "the rule added from the page")
    assert (rule.api, rule.action, rule.error, rule.count, rule.topic, rule.fired) == \
        ("Produce", "error", "NOT_LEADER_OR_FOLLOWER", 1, TOPIC, 0)
    shown_rule = page.locator(f'#faults tr[data-rule="{rule.id}"]')
    expect(shown_rule.locator(".fired")).to_have_text("0")
    # it fires on the next Produce: a producer that does not retry sees the error (librdkafka
    # retries NOT_LEADER_OR_FOLLOWER whatever its settings, kafka-python does as told)
    producer = kafka.KafkaProducer(bootstrap_servers=kafka_cluster.bootstrap_servers, retries=0,
                                   client_id="dash-producer")
    try:
        with pytest.raises(kafka.errors.NotLeaderForPartitionError):
            producer.send(TOPIC, b"refused", partition=0).get(timeout=15)
    finally:
        producer.close()
    [logged] = kafka_admin.requests("Produce", limit=1)
    assert logged.fault == rule.id and logged.error == "NOT_LEADER_OR_FOLLOWER"
    # spent, it has left GET /faults; the page still shows it, fired
    expect(shown_rule.locator(".fired")).to_have_text("1")
    expect(shown_rule).to_contain_text("spent")
    expect(page.locator("#requests tbody")).to_contain_text("NOT_LEADER_OR_FOLLOWER")

    assert page.script_errors == []
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    screenshot = ARTIFACTS / "dashboard.png"
    page.screenshot(path=str(screenshot), full_page=True)
    data = screenshot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 20_000, len(data)


# -- the page and the token, over HTTP -------------------------------------------------------

def _get(url: str, authorization: str | None = None):
    request = urllib.request.Request(url)
    if authorization:
        request.add_header("Authorization", authorization)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


def test_the_page_and_its_assets_are_public_and_everything_else_is_not():
    with MockCluster(admin_token="dashboard-token", topics={TOPIC: 1}) as cluster:
        base = cluster.admin_url
        status, headers, body = _get(base + "/")
        assert status == 200 and headers["Content-Type"].startswith("text/html")
        assert b'src="/dashboard/dashboard.js"' in body
        assert "connect-src 'self'" in headers["Content-Security-Policy"]
        for name, content_type in [("dashboard.js", "text/javascript"),
                                   ("dashboard.css", "text/css")]:
            status, headers, body = _get(f"{base}/dashboard/{name}")
            assert status == 200 and headers["Content-Type"].startswith(content_type), name
            assert body
        for path in ["/dashboard/missing.js", "/dashboard/index.html.bak",
                     "/dashboard/%2e%2e%2fpages.py", "/dashboard/"]:
            status, _, body = _get(base + path)
            assert status == 404 and "error" in json.loads(body), path
        # the data is not public: a header, or for a GET the access_token parameter
        assert _get(base + "/topics")[0] == 401
        assert _get(base + "/topics", "Bearer dashboard-token")[0] == 200
        status, _, body = _get(base + "/topics?access_token=dashboard-token")
        assert status == 200 and [t["name"] for t in json.loads(body)] == [TOPIC]
        # the parameter is taken off before the call is handled: no unknown parameter
        status, _, body = _get(base + "/requests?limit=1&access_token=dashboard-token")
        assert status == 200 and len(json.loads(body)) <= 1
        status, headers, body = _get(base + "/topics?access_token=wrong")
        assert status == 401 and "wrong token" in json.loads(body)["error"]
        assert 'error="invalid_token"' in headers["WWW-Authenticate"]
        # a change needs the header: a link cannot make one
        request = urllib.request.Request(base + "/topics?access_token=dashboard-token",
                                         data=b'{"name": "sneaky"}', method="POST")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 401
        assert [t.name for t in cluster.admin.topics()] == [TOPIC]


def test_the_page_reads_its_token_from_its_address(page: Page):
    with MockCluster(admin_token="page-token", topics={TOPIC: 2}) as cluster:
        page.goto(cluster.admin_url + "/")
        expect(page.locator("#problem")).to_contain_text("requires a token")
        page.goto(cluster.admin_url + "/#token=page-token")
        page.reload()
        expect(page.locator(f'#topics-list tr[data-partition="{TOPIC}-1"]')).to_be_visible()
        expect(page.locator("#problem")).to_be_hidden()
        # the event stream too, through its access_token parameter
        expect(page.locator("#live")).to_have_text("live")
        cluster.admin.create_topic("later", 1)
        expect(page.locator('#topics-list [data-topic="later"]')).to_be_visible()
        assert page.script_errors == []


def test_the_dashboard_shows_a_share_groups_records_in_flight(page: Page):
    from tests.share_client import RawShareConsumer
    from tests.test_share_connections import GROUP as SHARE_GROUP, TOPIC as JOBS, _joined, \
        _prepared

    with MockCluster(topics={JOBS: 1}) as cluster:
        _prepared(cluster)
        consumer: RawShareConsumer = _joined(cluster)
        assert consumer.fetch([0], ) == {0: [(0, b"a"), (1, b"b")]}
        consumer.fetch([0], acks={0: [(0, 0, [1])]})  # the first accepted
        page.goto(cluster.admin_url + "/")
        group = page.locator(f'article.group[data-group="{SHARE_GROUP}"]')
        expect(group).to_contain_text("share")
        row = group.locator(f'table.share-partitions tr[data-partition="{JOBS}-0"]')
        expect(row.locator(".run.acquired")).to_have_text("1 Acquired ×1")
        expect(row.locator("td").nth(3)).to_have_text("1")  # the start offset
        consumer.close()  # the connection drops: what it held goes back
        expect(row.locator(".run.available")).to_have_text("1 Available ×1")
        assert page.script_errors == []


def test_the_dashboard_lists_the_schema_registry_s_subjects_as_they_change(page: Page):
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

    user = {"type": "record", "name": "User", "fields": [{"name": "name", "type": "string"}]}
    with MockCluster(schema_registry=True) as cluster:
        client = SchemaRegistryClient({"url": cluster.schema_registry_url})
        client.register_schema("users-value", Schema(json.dumps(user), "AVRO"))
        page.goto(cluster.admin_url + "/")
        section = page.locator("#schema-registry")
        expect(section).to_be_visible()
        expect(section.locator("h2")).to_contain_text(cluster.schema_registry_url)
        first = section.locator('tr[data-subject="users-value"][data-version="1"]')
        expect(first).to_contain_text("AVRO")
        expect(first.locator("td.schema")).to_contain_text('"name":"User"')
        # a new version and a deletion reach the page through the event stream
        user["fields"].append({"name": "age", "type": "int", "default": 0})
        client.register_schema("users-value", Schema(json.dumps(user), "AVRO"))
        expect(section.locator('tr[data-subject="users-value"][data-version="2"]')) \
            .to_contain_text("2")
        client.delete_version("users-value", 1)
        expect(first).to_contain_text("1 (deleted)")
        assert page.script_errors == []
    with MockCluster() as cluster:  # without a registry the section stays hidden
        page.goto(cluster.admin_url + "/")
        expect(page.locator("#live")).to_have_text("live")
        expect(page.locator("#schema-registry")).to_be_hidden()
        assert page.script_errors == []
