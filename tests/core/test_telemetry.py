"""Client telemetry (KIP-714) as Kafka 4.4 serves it: the client metrics subscriptions (the
CLIENT_METRICS config resource and its checks), which clients a subscription matches, the
subscription id, GetTelemetrySubscriptions and PushTelemetry with their errors in Kafka's
order, push intervals, the terminating push, and the receiver that decodes and keeps the OTLP
metrics clients push.

The subscription ids and the sequences of error codes below are what a live Kafka 4.4 answered
to the same requests (no telemetry receiver configured, which changes neither).
"""

from __future__ import annotations

import struct
import uuid

import pytest

import wire
from mockbroker.core.context import RequestContext
from mockbroker.core.observe import inspect
from mockbroker.core.telemetry.manager import kafka_id, parse_id, subscription_id
from mockbroker.core.telemetry.otlp import OtlpError, decode_metrics_data
from mockbroker.handlers import REGISTRY
from tests.core.harness import make_core, received, send, settled
from wire import compression, errors

GET, PUSH, API_VERSIONS = 71, 72, 18
DESCRIBE_CONFIGS, ALTER_CONFIGS, INCREMENTAL_ALTER_CONFIGS, LIST_CONFIG_RESOURCES = 32, 33, 44, 74
CLIENT_METRICS = 16
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
ZERO = uuid.UUID(int=0)
ID = uuid.UUID("11111111-2222-3333-4444-555555555555")
PRODUCER = "org.apache.kafka.producer."
COORDINATOR = "org.apache.kafka.consumer.coordinator"


@pytest.fixture
def core():
    return make_core(1, telemetry_receiver=True)


class Client:
    """One client connection: its requests carry its client id, address and port."""

    def __init__(self, core, client_id: str = "app-1", *, connection_id: int = 1,
                 host: str = "127.0.0.1", port: int | None = 50000, broker: int = 0):
        self.core, self.client_id, self.connection_id = core, client_id, connection_id
        self.host, self.port, self.broker = host, port, broker

    def ask(self, api_key: int, version: int, **fields):
        body = wire.request_class(api_key)(**fields)
        frame = wire.encode_request(api_key, version, 7, self.client_id, body,
                                    size_prefix=False)
        request = wire.decode_request(frame)
        ctx = RequestContext(self.broker, self.connection_id, self.client_id, version,
                             self.core.clock.now_ms(), self.host, client_port=self.port)
        return settled(self.core.handle(request, ctx).map(
            lambda response: received(api_key, version, response)))

    def hello(self, name: str = "apache-kafka-java", version: str = "4.4.0"):
        return self.ask(API_VERSIONS, 3, client_software_name=name,
                        client_software_version=version)

    def get(self, instance_id: uuid.UUID = ZERO):
        return self.ask(GET, 0, client_instance_id=instance_id)

    def push(self, instance_id: uuid.UUID, subscription: int, *, terminating: bool = False,
             codec: int = 0, metrics: bytes = b"") -> int:
        return self.ask(PUSH, 0, client_instance_id=instance_id, subscription_id=subscription,
                        terminating=terminating, compression_type=codec,
                        metrics=metrics).error_code

    def closed(self) -> None:
        from mockbroker.core.dispatch import Connection

        self.core.connection_closed(Connection(self.broker, self.connection_id))


def subscribe(core, name: str, **configs: str) -> tuple[int, str | None]:
    """IncrementalAlterConfigs SET of a subscription's configs (``interval_ms`` for
    interval.ms): (error code, message)."""
    return alter_incremental(core, name, *((key.replace("_", "."), SET, value)
                                           for key, value in configs.items()))


def alter_incremental(core, name: str, *ops, validate_only: bool = False):
    request = wire.request_class(INCREMENTAL_ALTER_CONFIGS)
    response = send(core, INCREMENTAL_ALTER_CONFIGS, 1, resources=[
        request.AlterConfigsResource(resource_type=CLIENT_METRICS, resource_name=name, configs=[
            request.AlterableConfig(name=n, config_operation=op, value=v) for n, op, v in ops])],
        validate_only=validate_only)
    [result] = response.responses
    return result.error_code, result.error_message


def alter_legacy(core, name: str, **configs: str):
    request = wire.request_class(ALTER_CONFIGS)
    response = send(core, ALTER_CONFIGS, 2, resources=[request.AlterConfigsResource(
        resource_type=CLIENT_METRICS, resource_name=name, configs=[
            request.AlterableConfig(name=k.replace("_", "."), value=v)
            for k, v in configs.items()])], validate_only=False)
    [result] = response.responses
    return result.error_code, result.error_message


def describe(core, name: str, *, synonyms: bool = True, keys=None):
    request = wire.request_class(DESCRIBE_CONFIGS)
    response = send(core, DESCRIBE_CONFIGS, 4, resources=[request.DescribeConfigsResource(
        resource_type=CLIENT_METRICS, resource_name=name, configuration_keys=keys)],
        include_synonyms=synonyms, include_documentation=False)
    [result] = response.results
    return result


def listed(core, version: int = 1) -> list[str]:
    fields = {"resource_types": [CLIENT_METRICS]} if version else {}
    response = send(core, LIST_CONFIG_RESOURCES, version, **fields)
    assert response.error_code == errors.NONE
    return [r.resource_name for r in response.config_resources]


# -- the APIs and ApiVersions ------------------------------------------------------------------

@pytest.mark.parametrize("receiver", [False, True])
def test_the_apis_are_advertised_with_the_receiver_only_and_answered_either_way(receiver):
    core = make_core(1, telemetry_receiver=receiver)
    client = Client(core)
    advertised = {k.api_key: (k.min_version, k.max_version) for k in client.hello().api_keys}
    assert (GET in advertised, PUSH in advertised) == (receiver, receiver)
    if receiver:
        assert advertised[GET] == advertised[PUSH] == (0, 0)
    answer = client.get()
    assert answer.error_code == errors.NONE and answer.client_instance_id != ZERO
    assert client.push(answer.client_instance_id, answer.subscription_id) == errors.NONE
    assert REGISTRY.supports(GET, 0) and REGISTRY.supports(PUSH, 0)


def test_a_first_request_is_given_an_instance_and_kafkas_defaults(core):
    answer = Client(core).get()
    assert answer.error_code == errors.NONE
    assert answer.client_instance_id not in (ZERO, uuid.UUID(int=1))
    assert not kafka_id(answer.client_instance_id).startswith("-")
    assert answer.accepted_compression_types == [compression.ZSTD, compression.LZ4,
                                                 compression.GZIP, compression.SNAPPY]
    assert (answer.push_interval_ms, answer.telemetry_max_bytes) == (300_000, 1024 * 1024)
    assert answer.delta_temporality is True and answer.requested_metrics == []
    assert answer.subscription_id == subscription_id([], 300_000, answer.client_instance_id)


def test_the_maximum_push_size_is_the_telemetry_max_bytes_setting():
    core = make_core(1, telemetry_max_bytes=1000)
    answer = Client(core).get(ID)
    assert answer.telemetry_max_bytes == 1000
    assert Client(core).push(ID, answer.subscription_id, metrics=b"x" * 1001) == \
        errors.TELEMETRY_TOO_LARGE


@pytest.mark.parametrize("instance, metrics, interval, expected", [
    # what Kafka 4.4 answered for these instance ids and subscriptions
    ("11111111-2222-3333-4444-555555555555", [PRODUCER, COORDINATOR], 1000, -1349995827),
    ("00000000-0000-0000-0000-000000000007", [PRODUCER, COORDINATOR], 1000, -1918201624),
    ("99999999-2222-3333-4444-555555555555", [], 1000, -1069716126),
])
def test_the_subscription_id_is_kafkas(core, instance, metrics, interval, expected):
    subscribe(core, "producers", metrics=",".join(metrics), interval_ms=str(interval))
    answer = Client(core).get(uuid.UUID(instance))
    assert answer.subscription_id == expected
    assert sorted(answer.requested_metrics) == sorted(metrics)
    assert answer.client_instance_id == uuid.UUID(instance)


# -- which clients a subscription is for -----------------------------------------------------

def test_subscriptions_that_match_add_up_their_metrics_and_take_the_shortest_interval(core):
    subscribe(core, "apps", metrics=PRODUCER, interval_ms="2000", match="client_id=app.*")
    subscribe(core, "everyone", interval_ms="1000")
    subscribe(core, "others", metrics="org.apache.kafka.consumer.", interval_ms="100",
              match="client_id=other")
    answer = Client(core, "app-1").get()
    assert (answer.requested_metrics, answer.push_interval_ms) == ([PRODUCER], 1000)
    answer = Client(core, "other").get()
    assert (answer.requested_metrics, answer.push_interval_ms) == \
        (["org.apache.kafka.consumer."], 100)
    answer = Client(core, "nobody-else").get()
    assert (answer.requested_metrics, answer.push_interval_ms) == ([], 1000)
    subscribe(core, "all", metrics="*", match="client_id=app.*")
    assert Client(core, "app-2").get().requested_metrics == ["*"]


@pytest.mark.parametrize("pattern, matched", [
    ("client_id=app-1", True),
    ("client_id=app", False),  # a whole-value match, as Java's Pattern.matches
    ("client_id=app-.*", True),
    (" client_id = app-[0-9] ", True),
    ("client_software_name=apache-kafka-java", True),
    ("client_software_version=4\\.4\\..*", True),
    ("client_software_version=3\\..*", False),
    ("client_source_address=127\\.0\\.0\\.1", True),
    ("client_source_address=10\\..*", False),
    ("client_source_port=500[0-9]{2}", True),
    ("client_source_port=1234", False),
    ("client_id=app-1,client_software_name=librdkafka", False),  # every pattern must match
])
def test_a_subscription_matches_clients_by_their_facts(core, pattern, matched):
    assert subscribe(core, "s", metrics=PRODUCER, match=pattern) == (errors.NONE, None)
    client = Client(core, "app-1", port=50001)
    client.hello()
    assert client.get().requested_metrics == ([PRODUCER] if matched else [])


def test_a_client_is_matched_by_its_instance_id_as_kafka_writes_it(core):
    subscribe(core, "one", metrics=PRODUCER, match=f"client_instance_id={kafka_id(ID)}")
    assert kafka_id(ID) == "ERERESIiMzNERFVVVVVVVQ"
    assert Client(core).get(ID).requested_metrics == [PRODUCER]
    assert Client(core).get(uuid.uuid4()).requested_metrics == []


def test_a_client_without_software_or_port_matches_no_pattern_on_them(core):
    subscribe(core, "s", metrics=PRODUCER, match="client_software_name=.*")
    assert Client(core).get().requested_metrics == []  # no ApiVersions v3 on its connection
    subscribe(core, "p", metrics=PRODUCER, match="client_source_port=.*")
    assert Client(core, port=None).get().requested_metrics == []


def test_a_changed_subscription_reaches_the_client_at_its_next_request(core):
    client = Client(core)
    first = client.get(ID)
    assert client.get(ID).error_code == errors.THROTTLING_QUOTA_EXCEEDED
    subscribe(core, "new", metrics=PRODUCER, interval_ms="1000")
    answer = client.get(ID)  # not throttled: the instance is worked out anew
    assert answer.error_code == errors.NONE
    assert answer.subscription_id != first.subscription_id
    assert (answer.requested_metrics, answer.push_interval_ms) == ([PRODUCER], 1000)
    # a push with the old subscription id is refused, and the client may ask again at once
    assert client.push(ID, first.subscription_id) == errors.UNKNOWN_SUBSCRIPTION_ID
    assert client.get(ID).error_code == errors.NONE


# -- the errors, in Kafka's order ---------------------------------------------------------------

def test_requests_within_the_push_interval_are_refused_as_kafka_refuses_them(core):
    subscribe(core, "sub", metrics=PRODUCER, interval_ms="1000", match="client_id=app.*")
    client = Client(core)
    answer = client.get(ID)
    sub = answer.subscription_id
    assert answer.push_interval_ms == 1000
    assert client.get(ID).error_code == errors.THROTTLING_QUOTA_EXCEEDED
    assert client.push(ID, sub) == errors.NONE  # right after a GetTelemetrySubscriptions
    assert client.push(ID, sub) == errors.THROTTLING_QUOTA_EXCEEDED
    assert client.push(ID, sub + 1) == errors.THROTTLING_QUOTA_EXCEEDED  # early comes first
    core.clock.advance(999)
    assert client.push(ID, sub) == errors.THROTTLING_QUOTA_EXCEEDED
    core.clock.advance(1)
    assert client.push(ID, sub) == errors.NONE
    core.clock.advance(1000)
    assert client.push(ID, sub, codec=9) == errors.UNSUPPORTED_COMPRESSION_TYPE
    # after an unsupported compression the client may ask for its subscription at once
    assert client.get(ID).error_code == errors.NONE
    # a terminating push is never early; nothing is taken after it
    assert client.push(ID, sub, terminating=True) == errors.NONE
    assert client.push(ID, sub) == errors.INVALID_REQUEST
    assert client.get(ID).error_code == errors.THROTTLING_QUOTA_EXCEEDED


def test_a_wrong_subscription_id_lets_the_client_ask_again_at_once(core):
    client = Client(core, "other")
    answer = client.get(ID)
    assert client.push(ID, answer.subscription_id + 1) == errors.UNKNOWN_SUBSCRIPTION_ID
    assert client.get(ID).error_code == errors.NONE
    # that request did not count as a new GetTelemetrySubscriptions: pushing is early now
    assert client.get(ID).error_code == errors.THROTTLING_QUOTA_EXCEEDED
    assert client.push(ID, answer.subscription_id) == errors.THROTTLING_QUOTA_EXCEEDED


@pytest.mark.parametrize("instance", [ZERO, uuid.UUID(int=1)])
def test_a_push_naming_a_reserved_id_is_an_invalid_request(core, instance):
    assert Client(core).push(instance, 0) == errors.INVALID_REQUEST


def test_pushes_too_large_or_that_do_not_decompress_are_refused(core):
    client = Client(core)
    sub = client.get(ID).subscription_id
    assert client.push(ID, sub, metrics=b"x" * (1024 * 1024 + 1)) == errors.TELEMETRY_TOO_LARGE
    other = uuid.uuid4()
    sub = client.get(other).subscription_id
    assert client.push(other, sub, codec=compression.GZIP, metrics=b"\xff\xff\xff") == \
        errors.INVALID_RECORD


def test_a_push_of_what_is_not_otlp_is_kept_only_without_the_receiver():
    for receiver, expected in ((False, errors.NONE), (True, errors.INVALID_RECORD)):
        client = Client(make_core(1, telemetry_receiver=receiver))
        sub = client.get(ID).subscription_id
        assert client.push(ID, sub, metrics=b"\xff\xff\xff") == expected


def test_an_instance_is_forgotten_when_its_connection_closes(core):
    subscribe(core, "sub", metrics=PRODUCER, interval_ms="1000")
    client = Client(core)
    sub = client.get(ID).subscription_id
    assert client.push(ID, sub, terminating=True) == errors.NONE
    assert client.push(ID, sub) == errors.INVALID_REQUEST
    client.closed()
    again = Client(core, connection_id=2)
    assert again.push(ID, sub) == errors.NONE  # a new instance, with the same subscription


def test_an_instance_no_request_came_for_expires(core):
    subscribe(core, "sub", metrics=PRODUCER, interval_ms="1000")
    client = Client(core)
    sub = client.get(ID).subscription_id
    assert client.push(ID, sub, terminating=True) == errors.NONE
    core.clock.advance(59_999)
    assert client.push(ID, sub) == errors.INVALID_REQUEST
    core.clock.advance(60_000)  # max(60 s, three push intervals) after its last request
    assert client.push(ID, sub) == errors.NONE


def test_each_broker_keeps_its_own_instances():
    core = make_core(2, telemetry_receiver=True)
    subscribe(core, "sub", metrics=PRODUCER, interval_ms="1000")
    first = Client(core, broker=0)
    sub = first.get(ID).subscription_id
    assert first.push(ID, sub) == errors.NONE
    # the client moves to another broker: the same subscription id, and no throttle there
    assert Client(core, broker=1).push(ID, sub) == errors.NONE


# -- the receiver ----------------------------------------------------------------------------

def _varint(value: int) -> bytes:
    out = bytearray()
    value &= (1 << 64) - 1
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, value) -> bytes:
    """A protobuf field: bytes are length-delimited, ints varints, floats doubles."""
    if isinstance(value, (bytes, bytearray)):
        return _varint(number << 3 | 2) + _varint(len(value)) + bytes(value)
    if isinstance(value, float):
        return _varint(number << 3 | 1) + struct.pack("<d", value)
    return _varint(number << 3) + _varint(value)


def _fixed64(number: int, value: int, signed: bool = False) -> bytes:
    return _varint(number << 3 | 1) + struct.pack("<q" if signed else "<Q", value)


def _any(value) -> bytes:
    if isinstance(value, str):
        return _field(1, value.encode())
    if isinstance(value, bool):
        return _field(2, int(value))
    if isinstance(value, int):
        return _field(3, value)
    if isinstance(value, float):
        return _field(4, value)
    if isinstance(value, list):
        return _field(5, b"".join(_field(1, _any(v)) for v in value))
    raise TypeError(value)


def _attributes(number: int, attributes: dict) -> bytes:
    return b"".join(_field(number, _field(1, k.encode()) + _field(2, _any(v)))
                    for k, v in attributes.items())


def _number_point(value, attributes: dict, time_ms: int = 1000) -> bytes:
    number = _field(4, value) if isinstance(value, float) else _fixed64(6, value, signed=True)
    return (_attributes(7, attributes) + _fixed64(2, (time_ms - 500) * 1_000_000)
            + _fixed64(3, time_ms * 1_000_000) + number)


def metrics_data(*metrics: bytes, resource: dict | None = None) -> bytes:
    """A MetricsData message of one resource and one scope holding ``metrics``."""
    scope = _field(1, _field(1, b"org.apache.kafka")) + b"".join(_field(2, m) for m in metrics)
    body = _field(1, _attributes(1, resource or {})) + _field(2, scope)
    return _field(1, body)


def gauge(name: str, value, unit: str = "", **attributes) -> bytes:
    return (_field(1, name.encode()) + _field(2, b"what it is") + _field(3, unit.encode())
            + _field(5, _field(1, _number_point(value, attributes))))


def delta_sum(name: str, value, **attributes) -> bytes:
    return _field(1, name.encode()) + _field(7, _field(1, _number_point(value, attributes))
                                               + _field(2, 1) + _field(3, 1))


def histogram(name: str) -> bytes:
    point = (_attributes(9, {"node_id": "node-0"}) + _fixed64(3, 2_000_000_000)
             + _fixed64(4, 3) + _field(5, 7.5)
             + _field(6, struct.pack("<3Q", 1, 2, 0)) + _field(7, struct.pack("<2d", 1.0, 5.0)))
    return _field(1, name.encode()) + _field(9, _field(1, point) + _field(2, 2))


def summary(name: str) -> bytes:
    quantile = _field(1, 0.5) + _field(2, 4.0)
    point = _fixed64(3, 3_000_000_000) + _fixed64(4, 2) + _field(5, 8.0) + _field(6, quantile)
    return _field(1, name.encode()) + _field(11, _field(1, point))


def test_attribute_values_may_nest():
    [point] = decode_metrics_data(metrics_data(gauge("g", 1.0, tags=[["a", ["b"]]])))
    assert point.attributes == {"tags": [["a", ["b"]]]}
    decode_metrics_data(_nested(60))


def test_otlp_metrics_are_decoded_with_their_attributes_and_values():
    data = metrics_data(
        gauge("org.apache.kafka.producer.record.queue.time.avg", 9.5, "ms"),
        gauge("org.apache.kafka.producer.node.request.latency.max", 25, node_id="node-0",
              tags=["a", "b"], ok=True, ratio=0.5),
        delta_sum("org.apache.kafka.producer.record.send.total", 5.0),
        histogram("h"), summary("s"),
        resource={"client_id": "app-1", "client_rack": ""})
    points = decode_metrics_data(data)
    assert [(p.name, p.kind, p.value) for p in points[:3]] == [
        ("org.apache.kafka.producer.record.queue.time.avg", "gauge", 9.5),
        ("org.apache.kafka.producer.node.request.latency.max", "gauge", 25),
        ("org.apache.kafka.producer.record.send.total", "sum", 5.0)]
    first, second, total, hist, summ = points
    assert (first.unit, first.description, first.scope) == ("ms", "what it is",
                                                           "org.apache.kafka")
    assert (first.time_unix_nano, first.start_time_unix_nano) == (10**9, 5 * 10**8)
    assert second.attributes == {"node_id": "node-0", "tags": ["a", "b"], "ok": True,
                                 "ratio": 0.5}
    assert (total.temporality, total.monotonic) == ("delta", True)
    assert first.resource == {"client_id": "app-1", "client_rack": ""}
    assert (hist.kind, hist.temporality, hist.attributes) == ("histogram", "cumulative",
                                                              {"node_id": "node-0"})
    assert hist.value == {"count": 3, "sum": 7.5, "min": None, "max": None,
                          "bucket_counts": [1, 2, 0], "explicit_bounds": [1.0, 5.0]}
    assert summ.value == {"count": 2, "sum": 8.0, "quantiles": {"0.5": 4.0}}


def _nested(depth: int) -> bytes:
    value = _any("deep")
    for _ in range(depth):
        value = _field(5, _field(1, value))
    return metrics_data(gauge("g", 1.0), resource={}) + _field(1, _field(1, _field(
        1, _field(1, b"k") + _field(2, value))))


@pytest.mark.parametrize("data", [b"\xff\xff\xff", b"\x0a\x05ab", b"\x0b", b"\x08",
                                  _nested(10_000)])
def test_what_is_not_a_metrics_data_message_is_refused(data):
    with pytest.raises(OtlpError):
        decode_metrics_data(data)


@pytest.mark.parametrize("codec", [compression.NONE, compression.GZIP, compression.SNAPPY,
                                   compression.LZ4, compression.ZSTD])
def test_the_receiver_keeps_the_latest_value_of_each_metric(core, codec):
    subscribe(core, "sub", metrics="*", interval_ms="1000")
    client = Client(core, "app-1")
    client.hello("confluent-kafka-python", "2.16.1")
    sub = client.get(ID).subscription_id

    def push(*metrics, terminating=False) -> int:
        data = metrics_data(*metrics, resource={"client_id": "app-1"})
        return client.push(ID, sub, codec=codec, terminating=terminating,
                           metrics=compression.compress(codec, data) if codec else data)

    queue_time = "org.apache.kafka.producer.record.queue.time.avg"
    sent = "org.apache.kafka.producer.record.send.total"
    assert push(gauge(queue_time, 9.5), delta_sum(sent, 3.0),
                gauge("org.apache.kafka.producer.node.request.latency.avg", 1.0, node_id="a"),
                gauge("org.apache.kafka.producer.node.request.latency.avg", 2.0,
                      node_id="b")) == errors.NONE
    pushed_at = core.clock.now_ms()
    core.clock.advance(1000)
    assert push(gauge(queue_time, float("nan")), delta_sum(sent, 2.0),
                terminating=True) == errors.NONE
    [view] = inspect.clients(core)
    assert (view.client_instance_id, view.client_id, view.client_software_name,
            view.client_software_version, view.client_source_address,
            view.client_source_port) == (kafka_id(ID), "app-1", "confluent-kafka-python",
                                         "2.16.1", "127.0.0.1", 50000)
    assert (view.subscription.names, view.subscription.metrics,
            view.subscription.push_interval_ms) == (["sub"], ["*"], 1000)
    assert (view.pushes, view.last_push_ms, view.terminating, view.metrics) == \
        (2, pushed_at + 1000, True, 4)
    assert view.resource == {"client_id": "app-1"}
    metrics = {(m.name, m.attributes.get("node_id")): m
               for m in inspect.client_metrics(core, kafka_id(ID))}
    assert metrics[queue_time, None].value is None  # a NaN, as a Java average of nothing
    assert (metrics[sent, None].value, metrics[sent, None].total) == (2.0, 5.0)
    assert metrics["org.apache.kafka.producer.node.request.latency.avg", "b"].value == 2.0
    assert metrics["org.apache.kafka.producer.node.request.latency.avg", "b"].pushed_ms == \
        pushed_at
    assert [m.name for m in inspect.client_metrics(core, str(ID), "org.apache.kafka.producer.r")
            ] == [queue_time, sent]
    events = core.events.since(0, types=["telemetry_pushed"])
    assert [(e["client_instance_id"], e["client_id"], e["metrics"], e["terminating"])
            for e in events] == [(kafka_id(ID), "app-1", 4, False),
                                 (kafka_id(ID), "app-1", 2, True)]


def test_the_receiver_knows_a_client_from_its_first_request(core):
    Client(core).get(ID)
    [view] = inspect.clients(core)
    assert (view.pushes, view.last_push_ms, view.metrics) == (0, None, 0)
    assert inspect.client(core, kafka_id(ID)) is inspect.client(core, str(ID))
    with pytest.raises(inspect.NotFound, match="unknown client instance id"):
        inspect.client(core, "nope")


def test_without_the_receiver_nothing_is_kept_and_the_views_say_why():
    core = make_core(1)
    client = Client(core)
    sub = client.get(ID).subscription_id
    assert client.push(ID, sub, metrics=metrics_data(gauge("g", 1.0))) == errors.NONE
    assert core.events.since(0, types=["telemetry_pushed"]) == []
    with pytest.raises(inspect.NotFound, match="telemetry receiver is off"):
        inspect.clients(core)


def test_kafka_ids_read_both_ways():
    assert parse_id(kafka_id(ID)) == ID and parse_id(str(ID)) == ID
    assert parse_id("nope") is None and parse_id("") is None


# -- the subscriptions as configs --------------------------------------------------------------

def _configs(result) -> list[tuple]:
    return [(c.name, c.value, c.config_source, c.config_type, c.read_only, c.is_sensitive,
             [(s.name, s.value, s.source) for s in c.synonyms]) for c in result.configs]


def test_a_subscription_is_described_listed_and_removed_as_kafka_does(core):
    assert subscribe(core, "sub1", metrics=f"{PRODUCER}, {COORDINATOR}", interval_ms="1000",
                     match=" client_id = app.* ") == (errors.NONE, None)
    result = describe(core, "sub1")
    assert result.error_code == errors.NONE
    assert _configs(result) == [
        ("interval.ms", "1000", 7, 3, False, False, [("interval.ms", "1000", 7)]),
        ("match", "client_id = app.*", 7, 7, False, False, [("match", "client_id = app.*", 7)]),
        ("metrics", f"{PRODUCER},{COORDINATOR}", 7, 7, False, False,
         [("metrics", f"{PRODUCER},{COORDINATOR}", 7)])]
    assert _configs(describe(core, "nope", synonyms=False)) == [
        ("interval.ms", "300000", 5, 3, False, False, []), ("match", "", 5, 7, False, False, []),
        ("metrics", "", 5, 7, False, False, [])]
    assert [c.name for c in describe(core, "sub1", keys=["metrics"]).configs] == ["metrics"]
    subscribe(core, "x", interval_ms="200")
    assert alter_legacy(core, "y", interval_ms="1000") == (errors.NONE, None)
    assert listed(core) == listed(core, 0) == ["sub1", "x", "y"]  # Kafka's hash map order
    assert alter_incremental(core, "x", ("interval.ms", DELETE, None)) == (errors.NONE, None)
    assert alter_incremental(core, "z", ("interval.ms", DELETE, None)) == (errors.NONE, None)
    assert alter_incremental(core, "w", ("interval.ms", SET, "300"), validate_only=True) == \
        (errors.NONE, None)
    assert listed(core) == ["sub1", "y"]


def test_duplicate_metrics_are_dropped(core):
    assert subscribe(core, "x", metrics="a,a,b") == (errors.NONE, None)
    assert [c.value for c in describe(core, "x").configs if c.name == "metrics"] == ["a,b"]


@pytest.mark.parametrize("ops, code, message", [
    ([("foo", SET, "1")], errors.INVALID_REQUEST, "Unknown client metrics configuration: foo"),
    ([("foo", SET, "1"), ("bar", SET, "2")], errors.INVALID_REQUEST,
     "Unknown client metrics configuration: bar"),  # the first in Kafka's hash map order
    ([("interval.ms", SET, "abc")], errors.INVALID_CONFIG,
     "Invalid value abc for configuration interval.ms: Not a number of type INT"),
    ([("interval.ms", SET, "abc"), ("foo", SET, "1")], errors.INVALID_REQUEST,
     "Unknown client metrics configuration: foo"),
    ([("interval.ms", SET, "50")], errors.INVALID_REQUEST,
     "Invalid value 50 for interval.ms, interval must be between 100 and 3600000 (1 hour)"),
    ([("interval.ms", SET, "3600001")], errors.INVALID_REQUEST,
     "Invalid value 3600001 for interval.ms, interval must be between 100 and 3600000 (1 hour)"),
    ([("interval.ms", SET, "5"), ("match", SET, "zzz")], errors.INVALID_REQUEST,
     "Invalid value 5 for interval.ms, interval must be between 100 and 3600000 (1 hour)"),
    ([("metrics", SET, "a,,b")], errors.INVALID_CONFIG,
     "Configuration 'metrics' values must not be empty."),
    ([("match", SET, "client_id=a=b")], errors.INVALID_CONFIG,
     "Illegal client matching pattern: client_id=a=b"),
    ([("match", SET, "client_id=")], errors.INVALID_CONFIG,
     "Illegal client matching pattern: client_id="),
    ([("match", SET, "client_id=[")], errors.INVALID_CONFIG,
     "Illegal client matching pattern: client_id=["),
    ([("match", SET, "foo=bar")], errors.INVALID_CONFIG,
     "Illegal client matching pattern: foo=bar"),
    ([("metrics", APPEND, "c")], errors.INVALID_CONFIG,
     "Can't APPEND to key metrics because its type is not LIST."),
    ([("interval.ms", APPEND, "1")], errors.INVALID_CONFIG,
     "Can't APPEND to key interval.ms because its type is not LIST."),
    ([("metrics", SUBTRACT, "a")], errors.INVALID_CONFIG,
     "Can't SUBTRACT to key metrics because its type is not LIST."),
    ([("metrics", SET, None)], errors.INVALID_REQUEST, "Null value not supported for : metrics"),
    ([("metrics", SET, "a"), ("metrics", DELETE, None)], errors.INVALID_REQUEST,
     "Error due to duplicate config keys"),
])
def test_what_kafka_refuses_is_refused_with_its_message(core, ops, code, message):
    assert alter_incremental(core, "x", *ops) == (code, message)
    assert listed(core) == []


def test_a_subscription_needs_a_name(core):
    message = "Subscription name can't be empty"
    assert subscribe(core, "", interval_ms="200") == (errors.INVALID_REQUEST, message)
    assert alter_legacy(core, "", interval_ms="200") == (errors.INVALID_REQUEST, message)
    result = describe(core, "")
    assert (result.error_code, result.error_message) == (
        errors.INVALID_REQUEST, "Client metrics subscription name must not be empty")


def test_the_legacy_api_replaces_every_config(core):
    subscribe(core, "y", metrics=PRODUCER, interval_ms="200")
    assert alter_legacy(core, "y", interval_ms="1000") == (errors.NONE, None)
    assert [(c.name, c.value, c.config_source) for c in describe(core, "y").configs] == [
        ("interval.ms", "1000", 7), ("match", "", 5), ("metrics", "", 5)]
    assert alter_legacy(core, "y", foo="1") == (
        errors.INVALID_REQUEST, "Unknown client metrics configuration: foo")
