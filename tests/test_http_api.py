"""The admin HTTP API from outside: every route with the Python client and with raw HTTP, the
OpenAPI document against the routes, and every bad call refused with a 4xx and no change."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request

import confluent_kafka as ck
import pytest

import wire
from mockbroker import AdminClient, AdminError
from tests.clients.helpers import RDKAFKA_LOG, wait_for


def _raw(url: str, method: str, path: str, body: bytes | None = None):
    request = urllib.request.Request(url + path, data=body, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _produce(bootstrap: str, topic: str, messages) -> None:
    producer = ck.Producer({"bootstrap.servers": bootstrap, "logger": RDKAFKA_LOG,
                            "linger.ms": 0})
    for partition, key, value, headers in messages:
        producer.produce(topic, value, key=key, partition=partition, headers=headers)
    assert producer.flush(10) == 0


def _state(admin: AdminClient):
    """Everything a bad call must leave alone."""
    return (admin.faults(), admin.topics(internal=True), admin.groups(), admin.brokers())


def test_health_and_the_openapi_document_lists_exactly_the_routes(kafka_cluster, kafka_admin):
    assert kafka_admin.health()
    document = kafka_admin.openapi()
    assert document["openapi"].startswith("3.")
    documented = {(method.upper(), path) for path, ops in document["paths"].items()
                  for method in ops}
    app = kafka_cluster.call(lambda: kafka_cluster._started().admin._runner.app)
    served = {(route.method, route.resource.canonical) for route in app.router.routes()
              if route.method != "HEAD"}
    assert documented == served
    for path, ops in document["paths"].items():  # every $ref resolves
        for op in ops.values():
            for text in json.dumps(op).split('"$ref": "')[1:]:
                name = text.split('"')[0].rsplit("/", 1)[1]
                assert name in document["components"]["schemas"], (path, name)


@pytest.mark.kafka(brokers=3, topics={"orders": 3})
def test_brokers_stop_start_and_latency(kafka_admin):
    brokers = kafka_admin.brokers()
    assert [(b.id, b.state) for b in brokers] == [(0, "up"), (1, "up"), (2, "up")]
    assert sum(b.leader_partitions for b in brokers) == 3
    stopped = kafka_admin.stop_broker(1)
    assert stopped.state == "down" and stopped.leader_partitions == 0
    leaders = {p.leader for p in kafka_admin.topic("orders").partitions}
    assert 1 not in leaders and leaders <= {0, 2}
    with pytest.raises(OSError):  # its listener is closed
        import socket
        socket.create_connection((stopped.host, stopped.port), timeout=2).close()
    assert kafka_admin.start_broker(1).state == "up"
    assert kafka_admin.set_broker_latency(2, 150).latency_ms == 150
    assert kafka_admin.broker(2).latency_ms == 150
    assert kafka_admin.set_broker_latency(2, 0).latency_ms == 0


def test_topics_create_list_delete(kafka_admin):
    created = kafka_admin.create_topic("events", 4, configs={"retention.ms": "60000"})
    assert [p.partition for p in created.partitions] == [0, 1, 2, 3]
    assert created.configs == {"retention.ms": "60000"}
    assert [t.name for t in kafka_admin.topics()] == ["events"]
    with pytest.raises(AdminError) as exists:
        kafka_admin.create_topic("events", 1)
    assert exists.value.status == 409 and "already exists" in exists.value.message
    kafka_admin.delete_topic("events")
    assert kafka_admin.topics() == []
    with pytest.raises(AdminError) as gone:
        kafka_admin.topic("events")
    assert gone.value.status == 404


@pytest.mark.kafka(topics={"orders": 2})
def test_records_are_decoded_with_keys_values_and_headers(kafka_admin, kafka_bootstrap):
    _produce(kafka_bootstrap, "orders", [
        (0, b"k0", b"first", [("trace", b"t-1")]),
        (0, b"k1", b"\xff\xfe binary", None),
        (1, None, b"other", [("empty", None)]),
    ])
    first, second = kafka_admin.records("orders", 0)
    assert (first.offset, first.key, first.value) == (0, "k0", "first")
    assert [(h.key, h.value) for h in first.headers] == [("trace", "t-1")]
    assert second.value is None and second.raw_value == b"\xff\xfe binary"
    assert first.timestamp_type == "CreateTime"
    assert [r.value for r in kafka_admin.records("orders", 0, offset=1)] == [None]
    assert len(kafka_admin.records("orders", 0, limit=1)) == 1
    (other,) = kafka_admin.records("orders", 1)
    assert other.key is None and other.headers[0].value is None
    assert [(r.partition, r.offset) for r in kafka_admin.records("orders")] == \
        [(0, 0), (0, 1), (1, 0)]
    partitions = kafka_admin.topic("orders").partitions
    assert [(p.log_start_offset, p.high_watermark) for p in partitions] == [(0, 2), (0, 1)]


@pytest.mark.kafka(brokers=3, topics={"orders": 1})
def test_move_a_partition_leader(kafka_admin):
    before = kafka_admin.topic("orders").partitions[0]
    target = next(b for b in before.replicas if b != before.leader)
    after = kafka_admin.move_leader("orders", 0, target).partitions[0]
    assert after.leader == target and after.leader_epoch == before.leader_epoch + 1


@pytest.mark.kafka(topics={"orders": 3})
def test_a_group_with_its_members_assignment_offsets_and_lag(kafka_admin, kafka_bootstrap):
    _produce(kafka_bootstrap, "orders", [(p, None, b"x", None) for p in (0, 0, 1, 2)])
    consumer = ck.Consumer({"bootstrap.servers": kafka_bootstrap, "group.id": "billing",
                            "client.id": "billing-1", "auto.offset.reset": "earliest",
                            "enable.auto.commit": False, "logger": RDKAFKA_LOG})
    try:
        consumer.subscribe(["orders"])
        seen = []
        wait_for(lambda: seen.extend(m for m in [consumer.poll(0.2)] if m and not m.error())
                 or len(seen) >= 4, "four messages")
        consumer.commit(offsets=[ck.TopicPartition("orders", 0, 1)], asynchronous=False)
        group = kafka_admin.group("billing")
        assert (group.state, group.protocol_type, group.protocol) == \
            ("Stable", "consumer", "range")
        (member,) = group.members
        assert member.client_id == "billing-1" and member.group_instance_id is None
        assert member.assignment == {"orders": [0, 1, 2]}
        assert group.leader == member.member_id and group.generation >= 1
        assert group.offsets == {"orders": {0: 1}} and group.lag == {"orders": {0: 1}}
        assert [(g.group_id, g.state, g.members) for g in kafka_admin.groups()] == \
            [("billing", "Stable", 1)]
    finally:
        consumer.close()


def test_faults_listed_fetched_and_removed(kafka_admin):
    one = kafka_admin.add_fault("Produce", error="NOT_LEADER_OR_FOLLOWER", count=3)
    two = kafka_admin.add_fault("Fetch", action="delay", delay_ms=200, count=None, broker=0)
    assert [f.id for f in kafka_admin.faults()] == [one.id, two.id]
    assert kafka_admin.get_fault(two.id) == two
    assert (two.action, two.count, two.delay_ms, two.api) == ("delay", None, 200, "Fetch")
    assert kafka_admin.remove_fault(one.id).id == one.id
    assert [f.id for f in kafka_admin.faults()] == [two.id]
    with kafka_admin.fault("Heartbeat", error=27) as scoped:
        assert scoped.id in {f.id for f in kafka_admin.faults()}
    assert scoped.id not in {f.id for f in kafka_admin.faults()}
    assert kafka_admin.clear_faults() == 1 and kafka_admin.faults() == []


@pytest.mark.kafka(topics={"orders": 1})
def test_the_request_log_names_api_version_client_broker_and_error(kafka_admin,
                                                                    kafka_bootstrap):
    kafka_admin.add_fault("Produce", error="NOT_ENOUGH_REPLICAS", count=1)
    producer = ck.Producer({"bootstrap.servers": kafka_bootstrap, "client.id": "writer",
                            "logger": RDKAFKA_LOG, "retry.backoff.ms": 10})
    producer.produce("orders", b"v")
    assert producer.flush(10) == 0
    produces = kafka_admin.requests("Produce", client_id="writer")
    assert [(r.error, r.outcome, r.broker) for r in produces] == [
        ("NOT_ENOUGH_REPLICAS", "answered", 0), (None, "answered", 0)]
    assert produces[0].fault is not None and produces[1].fault is None
    assert produces[0].api_version >= 3
    assert {r.api for r in kafka_admin.requests(client_id="writer")} >= \
        {"ApiVersions", "Metadata", "Produce"}
    assert len(kafka_admin.requests(limit=2)) == 2
    kafka_admin.clear_requests()
    assert kafka_admin.requests("Produce") == []


@pytest.mark.kafka(brokers=2, topics={"orders": 2})
def test_reset_forgets_everything_and_restarts_brokers(kafka_cluster, kafka_admin):
    kafka_admin.add_fault("Produce", error=6, count=None)
    kafka_admin.stop_broker(1)
    kafka_admin.set_broker_latency(0, 100)
    kafka_admin.reset()
    assert kafka_admin.topics(internal=True) == [] and kafka_admin.faults() == []
    assert [(b.state, b.latency_ms) for b in kafka_admin.brokers()] == [("up", 0), ("up", 0)]
    assert kafka_cluster.bootstrap_servers.count(":") == 2
    kafka_admin.create_topic("after", 1)
    _produce(kafka_cluster.bootstrap_servers, "after", [(0, b"k", b"v", None)])
    assert [r.value for r in kafka_admin.records("after")] == ["v"]


@pytest.mark.kafka(brokers=3, topics={"orders": 1})
def test_a_replica_held_back_as_lagging_leaves_the_isr_until_let_go(kafka_admin):
    before = kafka_admin.topic("orders").partitions[0]
    follower = max(b for b in before.replicas if b != before.leader)
    held = kafka_admin.set_replica_lagging("orders", 0, follower).partitions[0]
    assert (held.isr, held.lagging, held.leader) == \
        ([r for r in before.isr if r != follower], [follower], before.leader)
    assert kafka_admin.broker(follower).state == "up"  # its broker runs on
    with pytest.raises(AdminError) as refused:
        kafka_admin.set_replica_lagging("orders", 0, before.leader)
    assert refused.value.status == 409 and "cannot lag behind itself" in refused.value.message
    back = kafka_admin.set_replica_lagging("orders", 0, follower, lagging=False).partitions[0]
    assert (back.isr, back.lagging) == (sorted(before.isr), [])


@pytest.mark.kafka(brokers=3, topics={"orders": 1})
def test_a_controlled_shutdown_is_told_apart_from_a_crash(kafka_admin):
    assert kafka_admin.stop_broker(1, controlled=True).state == "down"
    assert kafka_admin.stop_broker(2).state == "down"
    stops = [(e["broker"], e["controlled"]) for e in kafka_admin.events("broker_stopped")]
    assert stops == [(1, True), (2, False)]


def _bad_calls(admin):
    return [
        ("POST", "/faults", b"{not json", 400, "malformed JSON"),
        ("POST", "/faults", b"[1, 2]", 400, "JSON object"),
        ("POST", "/faults", b"", 400, "needs a JSON object"),
        ("POST", "/faults", b'{"api": "Prodoose", "error": 6}', 400, "unknown API name"),
        ("POST", "/faults", b'{"api": "Produce", "error": "NOT_AN_ERROR"}', 400,
         "unknown Kafka error name"),
        ("POST", "/faults", b'{"api": "Produce", "error": 6, "count": -1}', 400,
         "count must be at least 1"),
        ("POST", "/faults", b'{"api": "Produce", "error": 6, "broker": 42}', 400,
         "unknown broker 42"),
        ("DELETE", "/faults/999", None, 404, "no fault 999"),
        ("GET", "/faults/abc", None, 404, "unknown fault"),
        ("POST", "/brokers/42/stop", None, 404, "unknown broker 42"),
        ("POST", "/brokers/0/stop?controlled=maybe", None, 400, "must be true or false"),
        ("POST", "/brokers/0/stop?clean=true", None, 400, "unknown query parameter"),
        ("POST", "/brokers/x/start", None, 404, "unknown broker"),
        ("PUT", "/brokers/0/latency", b'{"delay_ms": -5}', 400, "at least 0"),
        ("PUT", "/brokers/0/latency", b'{"ms": 5}', 400, "unknown field"),
        ("GET", "/groups/nobody", None, 404, "unknown group"),
        ("POST", "/groups/nobody/rebalance", None, 404, "unknown group"),
        ("POST", "/groups/nobody/coordinator", b'{"broker": 0}', 404, "unknown group"),
        ("POST", "/groups/nobody/members/m/expire", None, 404, "unknown group"),
        ("GET", "/topics/missing", None, 404, "unknown topic"),
        ("DELETE", "/topics/missing", None, 404, "unknown topic"),
        ("GET", "/topics/missing/records", None, 404, "unknown topic"),
        ("GET", "/topics/orders/records?partition=9", None, 404, "no partition 9"),
        ("GET", "/topics/orders/records?offset=abc", None, 400, "must be an integer"),
        ("GET", "/topics/orders/records?limit=-1", None, 400, "at least 0"),
        ("GET", "/topics/orders/records?color=red", None, 400, "unknown query parameter"),
        ("POST", "/topics", b'{"name": "bad name!", "partitions": 1}', 400, "characters"),
        ("POST", "/topics", b'{"name": "orders", "partitions": 1}', 409, "already exists"),
        ("POST", "/topics", b'{"name": "x", "partitions": 0}', 400, "at least 1"),
        ("POST", "/topics", b'{"partitions": 1}', 400, "name is required"),
        ("POST", "/topics/orders/partitions/0/leader", b'{"broker": 9}', 404,
         "unknown broker 9"),
        ("POST", "/topics/orders/partitions/5/leader", b'{"broker": 0}', 404,
         "no partition 5"),
        ("POST", "/topics/orders/partitions/0/leader", b'{}', 400, "broker is required"),
        ("PUT", "/topics/orders/partitions/0/replicas/9", b'{"lagging": true}', 404,
         "unknown broker 9"),
        ("PUT", "/topics/orders/partitions/7/replicas/0", b'{"lagging": true}', 404,
         "no partition 7"),
        ("PUT", "/topics/orders/partitions/0/replicas/0", b'{}', 400, "lagging is required"),
        ("PUT", "/topics/orders/partitions/0/replicas/0", b'{"lagging": "yes"}', 400,
         "lagging"),
        ("GET", "/requests?api=Nope", None, 400, "unknown API name"),
        ("GET", "/requests?broker=7", None, 404, "unknown broker 7"),
        ("GET", "/nowhere", None, 404, "no such endpoint"),
        ("PATCH", "/faults", b"{}", 405, "not allowed"),
    ]


@pytest.mark.kafka(brokers=2, topics={"orders": 2})
def test_every_bad_call_gets_a_4xx_with_the_reason_and_changes_nothing(kafka_cluster,
                                                                       kafka_admin):
    kafka_admin.add_fault("Heartbeat", error=27, count=None)
    before = _state(kafka_admin)
    for method, path, body, status, message in _bad_calls(kafka_admin):
        got_status, got = _raw(kafka_cluster.admin_url, method, path, body)
        assert (got_status, message in got.get("error", "")) == (status, True), \
            (method, path, got)
        assert _state(kafka_admin) == before, (method, path)


@pytest.mark.kafka(brokers=3, topics={"orders": 1})
def test_moving_a_partition_leader_to_a_stopped_broker_is_refused(kafka_admin):
    partition = kafka_admin.topic("orders").partitions[0]
    other = next(b for b in partition.replicas if b != partition.leader)
    kafka_admin.stop_broker(other)
    before = _state(kafka_admin)
    with pytest.raises(AdminError) as refused:
        kafka_admin.move_leader("orders", 0, other)
    assert refused.value.status == 409 and "stopped" in refused.value.message
    assert _state(kafka_admin) == before


def test_a_request_the_broker_does_not_serve_is_in_the_log_before_its_connection_closes(
        kafka_cluster, kafka_admin):
    host, port = kafka_cluster.bootstrap_servers.split(",")[0].rsplit(":", 1)
    frame = wire.encode_request(84, 0, 9, "unserved-client", wire.request_class(84)())
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(frame)
        assert conn.recv(4) == b""  # closed, with no answer
    (logged,) = kafka_admin.requests(client_id="unserved-client")
    assert (logged.api, logged.api_version, logged.outcome) == \
        ("ReadShareGroupState", 0, "unsupported")


@pytest.mark.kafka(brokers=3, topics={"payments": 2})
def test_transactions_are_seen_steered_and_broken_over_http(kafka_cluster, kafka_admin):
    bootstrap = kafka_cluster.bootstrap_servers
    producer = ck.Producer({"bootstrap.servers": bootstrap, "transactional.id": "payer",
                            "logger": RDKAFKA_LOG})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce("payments", b"first", partition=0)
    producer.produce("payments", b"second", partition=1)
    producer.flush(30)
    status, data = _raw(kafka_cluster.admin_url, "GET", "/transactions/payer")
    assert status == 200
    assert (data["state"], data["partitions"], data["timeout_ms"], data["producer_epoch"]) == \
        ("Ongoing", {"payments": [0, 1]}, 60000, 0)
    assert [t.transactional_id for t in kafka_admin.transactions()] == ["payer"]
    partitions = kafka_admin.topic("payments").partitions
    assert [(p.high_watermark, p.last_stable_offset) for p in partitions] == [(1, 0), (1, 0)]
    assert [(r.value, r.transaction) for r in kafka_admin.records("payments")] == \
        [("first", "pending"), ("second", "pending")]

    moved_to = next(b for b in range(3) if b != data["coordinator"])
    assert kafka_admin.move_transaction_coordinator("payer", moved_to).coordinator == moved_to
    producer.commit_transaction(30)  # the client finds the new coordinator
    wait_for(lambda: kafka_admin.transaction("payer").state == "CompleteCommit",
             "the commit to complete")
    assert [(r.value, r.transaction) for r in kafka_admin.records("payments")] == \
        [("first", "committed"), ("second", "committed")]

    # "expire a transaction now": the next one is timed out when its EndTxn arrives
    kafka_admin.add_fault("EndTxn", action="abort_transaction", target_transaction="payer")
    producer.begin_transaction()
    producer.produce("payments", b"doomed", partition=0)
    producer.flush(30)
    with pytest.raises(ck.KafkaException):
        producer.commit_transaction(30)
    after = kafka_admin.transaction("payer")
    assert (after.state, after.producer_epoch) == ("CompleteAbort", 1)
    assert [(r.value, r.transaction) for r in kafka_admin.records("payments", 0)] == \
        [("first", "committed"), ("doomed", "aborted")]
    with pytest.raises(AdminError) as refused:
        kafka_admin.abort_transaction("payer")  # nothing open to abort
    assert refused.value.status == 409
    with pytest.raises(AdminError) as unknown:
        kafka_admin.transaction("nobody")
    assert unknown.value.status == 404


# -- the token off loopback, and the security resources ---------------------------------------

def _own_address() -> str | None:
    """An IPv4 address of this machine that is not loopback, or None."""
    candidates = []
    for target in ("10.255.255.255", "192.0.2.1", "198.51.100.1"):
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
                probe.connect((target, 9))  # UDP: picks the route's address, sends nothing
                candidates.append(probe.getsockname()[0])
        except OSError:
            pass
    try:
        candidates.append(socket.gethostbyname(socket.gethostname()))
    except OSError:
        pass
    for address in candidates:
        if not address.startswith("127.") and address != "0.0.0.0":
            return address
    return None


def _call(url: str, method: str = "GET", *, authorization: str | None = None,
          body: bytes | None = None):
    """(status, JSON body, headers) of one raw call."""
    request = urllib.request.Request(url, data=body, method=method)
    if authorization is not None:
        request.add_header("Authorization", authorization)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read()), response.headers
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), exc.headers


def _refused(status, body, headers, reason: str, error: str | None) -> bool:
    challenge = headers.get("WWW-Authenticate", "")
    return (status == 401 and reason in body["error"] and challenge.startswith("Bearer ")
            and (f'error="{error}"' in challenge if error else "error=" not in challenge))


def test_off_loopback_every_call_but_health_needs_the_token():
    from mockbroker import MockCluster

    # every interface is off loopback; it is reached here through 127.0.0.1, as advertised
    with MockCluster(host="0.0.0.0", topics={"orders": 1}) as cluster:
        base, token = cluster.admin_url, cluster.admin_token
        assert base.startswith("http://127.0.0.1:") and token and len(token) >= 32
        bearer = f"Bearer {token}"

        assert _call(base + "/health")[:2] == (200, {"status": "ok"})
        assert _refused(*_call(base + "/topics"), "requires a token", None)
        assert _refused(*_call(base + "/topics", authorization="Bearer nope"), "wrong token",
                        "invalid_token")
        assert _refused(*_call(base + "/topics", authorization=f"Basic {token}"),
                        "must be Bearer TOKEN", "invalid_request")
        assert _refused(*_call(base + "/topics", authorization="Bearer"),
                        "must be Bearer TOKEN", "invalid_request")
        # a refused call changes nothing, and does not say which paths exist
        assert _refused(*_call(base + "/topics", "POST", body=b'{"name": "sneaky"}'),
                        "requires a token", None)
        assert _refused(*_call(base + "/reset", "POST"), "requires a token", None)
        assert _refused(*_call(base + "/nowhere"), "requires a token", None)
        assert _call(base + "/nowhere", authorization=bearer)[0] == 404

        status, topics, _ = _call(base + "/topics", authorization=bearer)
        assert status == 200 and [t["name"] for t in topics] == ["orders"]
        assert _call(base + "/topics", authorization=f"bearer  {token} ")[0] == 200
        admin = AdminClient(base, token=token)
        assert [t.name for t in admin.topics()] == ["orders"]
        with pytest.raises(AdminError) as refused:
            AdminClient(base).topics()
        assert refused.value.status == 401 and "requires a token" in refused.value.message
        assert AdminClient(base).health()  # open to anyone, for health checks

        document = admin.openapi()
        assert document["security"] == [{"bearer": []}]
        assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
        assert document["paths"]["/health"]["get"]["security"] == []
        assert "401" in document["paths"]["/topics"]["get"]["responses"]
        assert [t.name for t in cluster.admin.topics()] == ["orders"]  # in-process: no HTTP


def test_on_every_interface_every_caller_needs_the_token():
    from mockbroker import MockCluster

    with MockCluster(host="0.0.0.0") as cluster:
        port = cluster.admin_url.rsplit(":", 1)[1]
        assert cluster.admin_token
        # loopback, and the machine's own address where it has one besides loopback
        for host in ["127.0.0.1", *filter(None, [_own_address()])]:
            url = f"http://{host}:{port}/brokers"
            assert _refused(*_call(url), "requires a token", None), host
            assert _call(url, authorization=f"Bearer {cluster.admin_token}")[0] == 200, host
            assert _call(f"http://{host}:{port}/health")[0] == 200, host


def test_on_loopback_no_token_unless_one_is_given():
    from mockbroker import MockCluster

    with MockCluster() as open_cluster:
        assert open_cluster.admin_token is None
        assert _call(open_cluster.admin_url + "/brokers")[0] == 200
        assert "security" not in AdminClient(open_cluster.admin_url).openapi()
    with MockCluster(admin_token="chosen-token") as closed:
        assert closed.admin_token == "chosen-token"
        assert _refused(*_call(closed.admin_url + "/brokers"), "requires a token", None)
        assert _call(closed.admin_url + "/brokers", authorization="Bearer chosen-token")[0] \
            == 200
        assert AdminClient(closed.admin_url, token="chosen-token").brokers()


@pytest.mark.parametrize("settings,message", [
    ({"admin_token": "two words"}, "admin_token"),
    ({"admin_token": ""}, "admin_token"),
    ({"admin_token": 1234}, "admin_token"),
    ({"admin_tls": "yes"}, "admin_tls"),
])
def test_bad_admin_settings_are_refused_before_start(settings, message):
    from mockbroker import MockCluster

    with pytest.raises(ValueError, match=message) as refused:
        MockCluster(**settings)
    assert "two words" not in str(refused.value)  # a token is never echoed


def test_the_admin_api_over_https_with_the_generated_ca():
    from mockbroker import MockCluster

    with MockCluster(admin_tls=True) as cluster:
        assert cluster.admin_url.startswith("https://127.0.0.1:")
        admin = AdminClient(cluster.admin_url, ca_location=cluster.ssl_ca_location)
        assert admin.health() and [b.id for b in admin.brokers()] == [0]
        with pytest.raises(urllib.error.URLError):  # a certificate the system does not trust
            urllib.request.urlopen(cluster.admin_url + "/health", timeout=10)


@pytest.mark.kafka(security_protocol="SASL_PLAINTEXT", authorizer=True, super_users=["admin"],
                   users={"admin": "admin-secret", "alice": "alice-secret"},
                   topics={"orders": 1})
def test_acls_and_users_over_http(kafka_cluster, kafka_admin):
    from confluent_kafka.admin import (AclBinding, AclOperation, AclPermissionType,
                                       AdminClient as KafkaAdmin, ResourcePatternType,
                                       ResourceType)

    kafka = KafkaAdmin({"bootstrap.servers": kafka_cluster.bootstrap_servers,
                        "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                        "sasl.username": "admin", "sasl.password": "admin-secret",
                        "logger": RDKAFKA_LOG})
    assert kafka_admin.acls().acls == []
    binding = AclBinding(ResourceType.TOPIC, "orders", ResourcePatternType.LITERAL,
                         "User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW)
    for future in kafka.create_acls([binding]).values():
        future.result(30)
    status, acls = _raw(kafka_cluster.admin_url, "GET", "/acls")
    assert status == 200 and acls == {
        "authorizer": True, "allow_everyone_if_no_acl_found": False,
        "super_users": ["User:admin"],
        "acls": [{"resource_type": "TOPIC", "resource_name": "orders",
                  "pattern_type": "LITERAL", "principal": "User:alice", "host": "*",
                  "operation": "READ", "permission_type": "ALLOW"}]}
    assert kafka_admin.acls().acls[0].principal == "User:alice"

    status, users = _raw(kafka_cluster.admin_url, "GET", "/users")
    every = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
    assert status == 200 and users == [
        {"name": "admin", "mechanisms": every, "super_user": True},
        {"name": "alice", "mechanisms": every, "super_user": False}]
    assert [u.name for u in kafka_admin.users()] == ["admin", "alice"]
    raw = urllib.request.urlopen(kafka_cluster.admin_url + "/users", timeout=10).read()
    assert b"secret" not in raw


def test_without_an_authorizer_acls_are_empty_and_say_so(kafka_admin):
    acls = kafka_admin.acls()
    assert (acls.authorizer, acls.acls) == (False, [])
    assert kafka_admin.users() == []


@pytest.mark.parametrize("host,loopback", [
    ("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("[::1]", True),
    ("localhost", True), ("LocalHost", True), ("::ffff:127.0.0.1", True),
    ("0.0.0.0", False), ("::", False), ("", False), ("192.0.2.7", False),
    ("example.com", False), ("10.0.0.1", False),
])
def test_what_counts_as_loopback(host, loopback):
    from mockbroker.io.admin.token import admin_token_for, is_loopback

    assert is_loopback(host) is loopback
    assert (admin_token_for(host, None) is None) is loopback
    assert admin_token_for(host, "given") == "given"


def test_brokers_show_the_address_of_each_listener():
    from mockbroker import MockCluster
    with MockCluster(brokers=2, listeners=["PLAINTEXT", "SASL_SSL"],
                     users={"alice": "secret"}) as cluster:
        brokers = AdminClient(cluster.admin_url).brokers()
        for protocol, bootstrap in cluster.listeners.items():
            assert ",".join(b.listeners[protocol] for b in brokers) == bootstrap
        assert [sorted(b.listeners) for b in brokers] == [["PLAINTEXT", "SASL_SSL"]] * 2
