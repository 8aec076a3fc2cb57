"""Client telemetry (KIP-714) with real clients.

On both targets: ``kafka-client-metrics.sh`` (Kafka's ClientMetricsCommand) creates, describes,
lists and deletes a client metrics subscription, and refuses what Kafka refuses, with Kafka's
messages; and a broker without a telemetry receiver (Kafka's default, and mockbroker's) leaves
GetTelemetrySubscriptions and PushTelemetry out of ApiVersions yet answers them.

On mockbroker with ``telemetry_receiver`` on (Kafka would need a metrics reporter plugin, which
one shared Kafka serving every test cannot have): librdkafka and the Java producer and consumer
find the APIs advertised, subscribe, and push their metrics, which ``GET /clients`` and ``GET
/clients/{id}/metrics`` show decoded; librdkafka's last push as it closes is marked
terminating.
"""

from __future__ import annotations

import logging
import shutil
import socket
import subprocess
import uuid
from pathlib import Path

import confluent_kafka as ck
import pytest

import wire
from mockbroker import AdminClient, MockCluster
from mockbroker.admin import AdminError
from tests.clients.helpers import RDKAFKA_LOG, run_kafka_tool, wait_for
from tests.clients.targets import MOCK_SETTINGS
from tests.real_kafka import ask
from wire import errors
from wire.definitions import KAFKA_VERSION

TOOL = "org.apache.kafka.tools.ClientMetricsCommand"
GET, PUSH = 71, 72
JARS = Path(__file__).resolve().parents[2] / ".cache" / "jars"
SOURCE = Path(__file__).with_name("java") / "TelemetryClient.java"
CLASSPATH = [JARS / f"kafka-clients-{KAFKA_VERSION}.jar", JARS / "slf4j-api-1.7.36.jar"]
#: each JVM here lives seconds: the C1 compiler alone gets it there sooner, for less CPU
SHORT_JVM = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
#: the push interval of the subscriptions here (Kafka's shortest is 100 ms)
INTERVAL_MS = 500
RECORDS = 5  # what TelemetryClient.java produces or consumes


def client_metrics_tool(bootstrap: str, *args: str) -> tuple[int, list[str]]:
    """(exit code, lines printed) of ``kafka-client-metrics.sh``, which may refuse."""
    done = run_kafka_tool(TOOL, "--bootstrap-server", bootstrap, *args, jvm=SHORT_JVM)
    return done.code, [line for line in done.lines if not line.startswith("\tat ")]


@pytest.mark.parametrize("client", ["kafka-tools"])
def test_kafka_client_metrics_manages_a_subscription(target, client):
    bootstrap = target.bootstrap_servers
    name = target.unique("telemetry-sub")
    # matching only a client id of its own: the other tests' clients on a shared Kafka are not
    # subscribed by it
    match = f"client_id={name}.*"
    assert client_metrics_tool(bootstrap, "--alter", "--name", name, "--metrics",
                               "org.apache.kafka.producer.,org.apache.kafka.consumer.",
                               "--interval", "1000", "--match", match) == \
        (0, [f"Altered client metrics config for {name}."])
    assert client_metrics_tool(bootstrap, "--describe", "--name", name) == (0, [
        f"Client metrics configs for {name} are:", "  interval.ms=1000", f"  match={match}",
        "  metrics=org.apache.kafka.producer.,org.apache.kafka.consumer."])
    code, lines = client_metrics_tool(bootstrap, "--list")
    assert code == 0 and name in lines
    # a change of one config keeps the others
    assert client_metrics_tool(bootstrap, "--alter", "--name", name, "--interval", "2000")[0] \
        == 0
    assert client_metrics_tool(bootstrap, "--describe", "--name", name)[1][1:] == [
        "  interval.ms=2000", f"  match={match}",
        "  metrics=org.apache.kafka.producer.,org.apache.kafka.consumer."]
    refused = "Error while executing client metrics command : "
    code, lines = client_metrics_tool(bootstrap, "--alter", "--name", name, "--interval", "5")
    assert code == 1 and lines[0] == refused + "Invalid value 5 for interval.ms, interval " \
                                               "must be between 100 and 3600000 (1 hour)"
    code, lines = client_metrics_tool(bootstrap, "--alter", "--name", name, "--match",
                                      "client_name=x")
    assert code == 1 and lines[0] == refused + "Illegal client matching pattern: client_name=x"
    assert client_metrics_tool(bootstrap, "--delete", "--name", name) == \
        (0, [f"Deleted client metrics config for {name}."])
    assert client_metrics_tool(bootstrap, "--describe", "--name", name) == (0, [
        f"The client metric resource {name} doesn't exist and doesn't have dynamic config."])
    assert name not in client_metrics_tool(bootstrap, "--list")[1]


class Connection:
    """One connection to a broker, as a client keeps it: Kafka forgets a client instance when
    the connection its telemetry came on closes."""

    def __init__(self, stack, bootstrap: str):
        host, port = bootstrap.split(",")[0].rsplit(":", 1)
        self.sock = stack.enter_context(socket.create_connection((host, int(port)),
                                                                  timeout=10))
        self.answers = stack.enter_context(self.sock.makefile("rb"))
        self.correlation_id = 0

    def ask(self, api_key: int, version: int, **fields):
        self.correlation_id += 1
        self.sock.sendall(wire.encode_request(api_key, version, self.correlation_id, "probe",
                                              wire.request_class(api_key)(**fields)))
        size = int.from_bytes(self.answers.read(4), "big")
        return wire.decode_response(api_key, version, self.answers.read(size))[1]


def test_without_a_receiver_telemetry_is_answered_but_not_advertised(target, stack):
    conn = Connection(stack, target.bootstrap_servers)
    versions = conn.ask(18, 3, client_software_name="probe", client_software_version="1")
    assert not {GET, PUSH} & {k.api_key for k in versions.api_keys}
    instance = uuid.uuid4()  # a client of its own, whatever else the broker has seen
    answer = conn.ask(GET, 0, client_instance_id=instance)
    assert (answer.error_code, answer.client_instance_id) == (errors.NONE, instance)
    assert answer.accepted_compression_types == [4, 3, 1, 2]
    assert answer.delta_temporality and answer.telemetry_max_bytes == 1024 * 1024
    assert conn.ask(GET, 0, client_instance_id=instance).error_code == \
        errors.THROTTLING_QUOTA_EXCEEDED

    def push(subscription: int, client: uuid.UUID = instance, **fields) -> int:
        return conn.ask(PUSH, 0, client_instance_id=client, subscription_id=subscription,
                        **{"terminating": False, "compression_type": 0, "metrics": b"",
                           **fields}).error_code

    # what the client pushes is dropped, there being no receiver
    assert push(answer.subscription_id, metrics=b"not OTLP") == errors.NONE
    assert push(answer.subscription_id) == errors.THROTTLING_QUOTA_EXCEEDED
    assert push(answer.subscription_id + 1) == errors.THROTTLING_QUOTA_EXCEEDED
    assert push(answer.subscription_id, terminating=True) == errors.NONE
    assert push(answer.subscription_id) == errors.INVALID_REQUEST
    assert push(0, uuid.UUID(int=0)) == errors.INVALID_REQUEST
    other = uuid.uuid4()
    answer = conn.ask(GET, 0, client_instance_id=other)
    assert push(answer.subscription_id + 1, other) == errors.UNKNOWN_SUBSCRIPTION_ID
    assert conn.ask(GET, 0, client_instance_id=other).error_code == errors.NONE


# -- with the receiver on (mockbroker only) --------------------------------------------------

@pytest.fixture
def cluster(stack) -> MockCluster:
    """A cluster with the telemetry receiver on, and a subscription to every client metric
    (``org.apache.kafka.``) pushed every INTERVAL_MS."""
    cluster = stack.enter_context(MockCluster(telemetry_receiver=True, **MOCK_SETTINGS))
    host, port = cluster.bootstrap_servers.rsplit(":", 1)
    request = wire.request_class(44)
    answer = ask(int(port), 44, 1, request(resources=[request.AlterConfigsResource(
        resource_type=16, resource_name="everything", configs=[
            request.AlterableConfig(name="metrics", config_operation=0,
                                    value="org.apache.kafka."),
            request.AlterableConfig(name="interval.ms", config_operation=0,
                                    value=str(INTERVAL_MS))])], validate_only=False),
        host=host)
    assert answer.responses[0].error_code == errors.NONE
    return cluster


def metric(admin, instance: str, name: str, **attributes):
    """The client's metric of that name (and attributes), or None while it has not pushed
    it."""
    for found in admin.client_metrics(instance, prefix=name):
        if found.name == name and all(found.attributes.get(k) == v
                                      for k, v in attributes.items()):
            return found
    return None


#: what librdkafka's telemetry debug log says as it takes in a push's answer
PUSH_ANSWERED = "PushTelemetryRequest succeeded"


class TelemetryLog(logging.Handler):
    """librdkafka's log (its debug lines too, served by ``poll``), kept for the test to read
    and passed on to ``RDKAFKA_LOG``."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.logger = logging.getLogger(f"{RDKAFKA_LOG.name}.telemetry")
        self.logger.setLevel(logging.DEBUG)
        self.logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())

    def count(self, text: str) -> int:
        return sum(text in line for line in self.lines)


def take_a_push_answer(client, told: TelemetryLog) -> None:
    """Poll ``client`` until it has taken in an answer to a new push.  librdkafka makes its last
    push only when it closes between pushes, not with one in flight: closed now, it is a whole
    push interval before the next."""
    answered = told.count(PUSH_ANSWERED)
    wait_for(lambda: client.poll(0.1) >= 0 and told.count(PUSH_ANSWERED) > answered,
             "librdkafka to take an answer to its push in")


@pytest.mark.mockbroker_only("broker-settings")
def test_librdkafka_pushes_its_metrics_and_a_last_push_as_it_closes(cluster):
    admin = cluster.admin
    told = TelemetryLog()
    producer = ck.Producer({"bootstrap.servers": cluster.bootstrap_servers,
                            "client.id": "rd-telemetry", "debug": "telemetry",
                            "logger": told.logger})
    for i in range(RECORDS):
        producer.produce("telemetry", f"v{i}".encode())
    assert producer.flush(10) == 0
    pushed = admin.wait_for_event("telemetry_pushed", client_id="rd-telemetry")
    instance = pushed["client_instance_id"]
    [client] = admin.clients()
    assert (client.client_instance_id, client.client_id, client.client_software_name) == \
        (instance, "rd-telemetry", "confluent-kafka-python")
    assert client.client_software_version.startswith(ck.version()[0])
    assert (client.subscription.names, client.subscription.metrics,
            client.subscription.push_interval_ms) == (["everything"], ["org.apache.kafka."],
                                                      INTERVAL_MS)
    queue_time = wait_for(lambda: metric(admin, instance,
                                         "org.apache.kafka.producer.record.queue.time.avg"),
                          "librdkafka's record queue time")
    assert queue_time.type == "gauge" and queue_time.value >= 0
    latency = metric(admin, instance, "org.apache.kafka.producer.node.request.latency.avg",
                     **{"node.id": 0})
    assert latency is not None and latency.value >= 0
    producer.flush(10)
    take_a_push_answer(producer, told)
    del producer  # closing: librdkafka pushes once more, marked terminating
    last = admin.wait_for_event("telemetry_pushed", since=pushed["seq"],
                                client_instance_id=instance, terminating=True)
    assert last["metrics"] > 0 and admin.client(instance).terminating


@pytest.fixture(scope="module")
def java_classes(tmp_path_factory) -> Path:
    """TelemetryClient, compiled once for the module's JVMs."""
    missing = [str(p) for p in CLASSPATH if not p.exists()]
    assert not missing and shutil.which("javac"), \
        f"the Java client needs a JDK and {missing} (bash ci/dev.sh setup fetches them)"
    out = tmp_path_factory.mktemp("telemetry-client")
    done = subprocess.run(["javac", *(f"-J{flag}" for flag in SHORT_JVM), "-d", str(out),
                           "-cp", ":".join(map(str, CLASSPATH)), str(SOURCE)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"javac TelemetryClient.java: {done.stderr[-3000:]}"
    return out


def run_java(stack, classes: Path, cluster: MockCluster, role: str, topic: str,
             client_id: str) -> tuple[subprocess.Popen, str]:
    """A running TelemetryClient, once it has produced or consumed its records: (the process,
    its client instance id)."""
    process = subprocess.Popen(
        ["java", *SHORT_JVM, "-cp", ":".join(map(str, [classes, *CLASSPATH])),
         "TelemetryClient", cluster.bootstrap_servers, role, topic, client_id],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    stack.callback(process.kill)
    lines = [process.stdout.readline().strip() for _ in range(2)]
    assert lines[0] == f"{'produced' if role == 'producer' else 'consumed'} {RECORDS}", lines
    assert lines[1].startswith("instance "), lines
    return process, lines[1].split()[1]


def close_java(process: subprocess.Popen) -> None:
    process.stdin.write("close\n")
    process.stdin.flush()
    assert process.stdout.read().split() == ["closed"]
    assert process.wait(timeout=60) == 0


def _total(admin, instance: str, name: str, **attributes):
    found = metric(admin, instance, name, **attributes)
    return found is not None and found.total


@pytest.mark.mockbroker_only("broker-settings")
def test_the_java_producer_pushes_its_metrics(cluster, java_classes, stack):
    admin = cluster.admin
    process, instance = run_java(stack, java_classes, cluster, "producer", "java-telemetry",
                                 "java-producer")
    client = wait_for(lambda: next((c for c in admin.clients()
                                    if c.client_instance_id == instance and c.pushes), None),
                      "the Java producer's first push")
    assert (client.client_id, client.client_software_name, client.client_software_version) == \
        ("java-producer", "apache-kafka-java", KAFKA_VERSION)
    assert client.subscription.names == ["everything"]
    # the deltas of the records it sent, added up over its pushes: every record it produced
    assert wait_for(lambda: _total(admin, instance,
                                   "org.apache.kafka.producer.record.send.total") == RECORDS,
                    "the producer's record.send.total to reach the records sent")
    per_topic = metric(admin, instance, "org.apache.kafka.producer.topic.record.send.total",
                       topic="java-telemetry")
    assert per_topic is not None and per_topic.temporality == "delta" and per_topic.monotonic
    queue_time = metric(admin, instance, "org.apache.kafka.producer.record.queue.time.avg")
    assert queue_time.type == "gauge" and queue_time.unit == "" and queue_time.value >= 0
    close_java(process)


@pytest.mark.mockbroker_only("broker-settings")
def test_the_java_consumer_pushes_its_metrics(cluster, java_classes, stack):
    producer = ck.Producer({"bootstrap.servers": cluster.bootstrap_servers,
                            "enable.metrics.push": False, "logger": RDKAFKA_LOG})
    for i in range(RECORDS):
        producer.produce("java-consumed", f"v{i}".encode())
    assert producer.flush(10) == 0
    admin = cluster.admin
    process, instance = run_java(stack, java_classes, cluster, "consumer", "java-consumed",
                                 "java-consumer")
    name = "org.apache.kafka.consumer.fetch.manager.records.consumed.total"
    assert wait_for(lambda: _total(admin, instance, name) == RECORDS,
                    "the consumer's records.consumed.total to reach the records consumed")
    client = admin.client(instance)
    assert (client.client_id, client.client_software_name) == ("java-consumer",
                                                               "apache-kafka-java")
    # the Java consumer names its group and member in the attributes it gives of itself
    assert client.resource["group_id"] == "java-consumer"
    close_java(process)


@pytest.mark.mockbroker_only("mockbroker")
def test_the_client_routes_over_http(cluster):
    admin = AdminClient(cluster.admin_url)
    assert admin.clients() == []
    host, port = cluster.bootstrap_servers.rsplit(":", 1)
    answer = ask(int(port), GET, 0, wire.request_class(GET)(client_instance_id=uuid.UUID(
        int=0)), host=host, client_id="raw")
    [client] = admin.clients()
    assert (client.client_id, client.pushes, client.last_push_ms) == ("raw", 0, None)
    assert admin.client(str(answer.client_instance_id)) == client
    assert admin.client_metrics(client.client_instance_id) == []
    with pytest.raises(AdminError) as refused:
        admin.client_metrics("no-such-client")
    assert refused.value.status == 404
    assert "unknown client instance id" in refused.value.message
    with MockCluster() as without:
        with pytest.raises(AdminError) as refused:
            AdminClient(without.admin_url).clients()
    assert refused.value.status == 404 and "telemetry receiver is off" in refused.value.message
