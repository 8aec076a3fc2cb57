"""Client quotas on both targets, as their users meet them: ``kafka-configs.sh`` (Kafka's
``ConfigCommand`` on the Java Admin) setting, describing and deleting quotas of users, client
ids and IPs with what it prints on Kafka 4.4; a confluent-kafka producer and consumer over their
byte rates told to back off (``throttle_cb``) and losing nothing; a CreateTopics over the
controller mutation quota refused with THROTTLING_QUOTA_EXCEEDED; and, on mockbroker, the
``throttle`` control action that tests a client's back-off without a quota.

Every quota names an entity of its own test (a fresh client id or user), never a default one:
the Kafka target serves every test of the run."""

from __future__ import annotations


import confluent_kafka as ck
import pytest

import wire
from mockbroker import MockCluster
from mockbroker.admin import AdminError
from tests.clients.helpers import (
    RDKAFKA_LOG, TIMEOUT_S, kafka_tool, run_kafka_tool, wait_for,
)
from tests.real_kafka import ask
from wire import errors

CONFIGS = "org.apache.kafka.tools.ConfigCommand"
TOPICS = "org.apache.kafka.tools.TopicCommand"
ALTER, DESCRIBE = 49, 48


def _port(target) -> tuple[str, int]:
    host, port = target.bootstrap_servers.split(",")[0].rsplit(":", 1)
    return host, int(port)


def tool(main_class: str, bootstrap: str, *args: str) -> tuple[int, str]:
    """(exit code, what it printed) of one of Kafka's tools, which may fail."""
    done = run_kafka_tool(main_class, "--bootstrap-server", bootstrap, *args)
    return done.code, "\n".join(done.out.splitlines() + done.err)


def _ms(event) -> int:
    """A throttle event's time in ms (confluent-kafka gives seconds)."""
    return round(event.throttle_time * 1000)


def set_quota(target, kind: str, name: str, **values: float) -> None:
    """AlterClientQuotas of one entity, then wait until the broker describes it (Kafka's brokers
    learn of it a moment after its controller)."""
    host, port = _port(target)
    cls = wire.request_class(ALTER)
    answer = ask(port, ALTER, 1, cls(validate_only=False, entries=[cls.EntryData(
        entity=[cls.EntityData(entity_type=kind, entity_name=name)],
        ops=[cls.OpData(key=k, value=v, remove=False) for k, v in values.items()])]),
        host=host)
    assert [e.error_code for e in answer.entries] == [errors.NONE], answer
    described = wire.request_class(DESCRIBE)

    def known():
        found = ask(port, DESCRIBE, 1, described(strict=True, components=[
            described.ComponentData(entity_type=kind, match_type=0, match=name)]), host=host)
        return [{v.key: v.value for v in e.values} for e in found.entries or ()] == [values]
    wait_for(known, f"the {kind} {name} quota known to the broker")


@pytest.mark.parametrize("client", ["kafka-tools"])
def test_kafka_configs_sets_describes_and_deletes_client_quotas(target, client):
    bootstrap = target.bootstrap_servers
    user, app, ip = target.unique("alice"), target.unique("app"), "10.11.12.13"

    def configs(*args: str) -> list[str]:
        return kafka_tool(CONFIGS, bootstrap, *args).splitlines()

    assert configs("--alter", "--entity-type", "users", "--entity-name", user,
                   "--add-config", "producer_byte_rate=1024,consumer_byte_rate=2048") == \
        [f"Completed updating config for user {user}."]
    assert configs("--alter", "--entity-type", "users", "--entity-name", user,
                   "--entity-type", "clients", "--entity-name", app,
                   "--add-config", "request_percentage=20") == \
        [f"Completed updating config for user {user}."]
    assert configs("--describe", "--entity-type", "users", "--entity-name", user) == [
        f"Quota configs for user-principal '{user}' are consumer_byte_rate=2048.0, "
        "producer_byte_rate=1024.0"]
    assert configs("--describe", "--entity-type", "users", "--entity-name", user,
                   "--entity-type", "clients", "--entity-name", app) == [
        f"Quota configs for user-principal '{user}', client-id '{app}' are "
        "request_percentage=20.0"]
    assert configs("--alter", "--entity-type", "ips", "--entity-name", ip,
                   "--add-config", "connection_creation_rate=3") == \
        [f"Completed updating config for ip {ip}."]
    assert f"Quota configs for ip '{ip}' are connection_creation_rate=3.0" in \
        configs("--describe", "--entity-type", "ips")
    configs("--alter", "--entity-type", "users", "--entity-name", user,
            "--delete-config", "consumer_byte_rate")
    assert configs("--describe", "--entity-type", "users", "--entity-name", user) == [
        f"Quota configs for user-principal '{user}' are producer_byte_rate=1024.0"]
    configs("--alter", "--entity-type", "ips", "--entity-name", ip,
            "--delete-config", "connection_creation_rate")
    # the broker's refusal, as the tool reports it
    code, said = tool(CONFIGS, bootstrap, "--alter", "--entity-type", "clients",
                      "--entity-name", app, "--add-config", "producer_byte_rate=1.5")
    assert code == 1
    assert "InvalidRequestException: producer_byte_rate cannot be a fractional value." in said


@pytest.mark.parametrize("client", ["confluent-kafka"])
def test_a_producer_over_its_byte_rate_is_told_to_back_off_and_loses_nothing(target, client):
    """Thirteen requests of 10 kB inside ten seconds are over 10 kB/s: the broker answers with a
    throttle time, which librdkafka reports, and every record is written."""
    topic = target.create_topic("quota-produce", 1)
    client_id = target.unique("throttled-producer")
    set_quota(target, "client-id", client_id, producer_byte_rate=10240.0)
    throttles: list[int] = []
    producer = ck.Producer({"bootstrap.servers": target.bootstrap_servers,
                            "client.id": client_id, "logger": RDKAFKA_LOG,
                            "throttle_cb": lambda event: throttles.append(_ms(event))})
    delivered = []
    for i in range(13):
        producer.produce(topic, b"%02d" % i + b"x" * 10000, partition=0,
                         on_delivery=lambda err, msg: delivered.append(err))
        assert producer.flush(TIMEOUT_S) == 0
    wait_for(lambda: producer.poll(0.1) is not None and any(throttles),
             "librdkafka told of a throttle")
    assert delivered == [None] * 13
    consumer = ck.Consumer({"bootstrap.servers": target.bootstrap_servers,
                            "group.id": target.unique("check"), "logger": RDKAFKA_LOG})
    try:
        assert consumer.get_watermark_offsets(ck.TopicPartition(topic, 0),
                                              timeout=TIMEOUT_S) == (0, 13)
    finally:
        consumer.close()


@pytest.mark.parametrize("client", ["confluent-kafka"])
def test_a_consumer_over_its_byte_rate_is_throttled_and_gets_every_record(target, client):
    """Fetches over 10 kB/s: the broker answers one with nothing and a throttle time, and the
    consumer, having waited, gets the rest."""
    topic = target.create_topic("quota-fetch", 1)
    producer = ck.Producer({"bootstrap.servers": target.bootstrap_servers,
                            "logger": RDKAFKA_LOG})
    values = [b"%03d" % i + b"y" * 2000 for i in range(60)]
    for value in values:
        producer.produce(topic, value, partition=0)
    assert producer.flush(TIMEOUT_S) == 0
    client_id = target.unique("throttled-consumer")
    set_quota(target, "client-id", client_id, consumer_byte_rate=10240.0)
    throttles: list[int] = []
    consumer = ck.Consumer({"bootstrap.servers": target.bootstrap_servers,
                            "client.id": client_id, "group.id": target.unique("quota"),
                            "auto.offset.reset": "earliest", "logger": RDKAFKA_LOG,
                            "throttle_cb": lambda event: throttles.append(_ms(event))})
    consumer.assign([ck.TopicPartition(topic, 0, 0)])
    got: list[bytes] = []

    def read():
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            got.append(message.value())
        return len(got) == len(values) and any(throttles)
    try:
        wait_for(read, "every record, and a throttle on the way")
    finally:
        consumer.close()
    assert got == values


@pytest.mark.parametrize("client", ["kafka-tools"])
def test_creating_topics_over_the_controller_mutation_rate_is_refused(target, client, tmp_path):
    """At one partition a second the bucket holds eleven: ``kafka-topics.sh`` makes a topic of
    twenty partitions (emptying it), and the next is refused with THROTTLING_QUOTA_EXCEEDED
    (the Java Admin told not to retry it)."""
    client_id = target.unique("mutator")
    set_quota(target, "client-id", client_id, controller_mutation_rate=1.0)
    settings = tmp_path / "admin.properties"
    settings.write_text(f"client.id={client_id}\nretry.on.quota.violation=false\n")
    big, small = target.unique("big"), target.unique("small")
    assert tool(TOPICS, target.bootstrap_servers, "--command-config", str(settings), "--create",
                "--topic", big, "--partitions", "20") == (0, f"Created topic {big}.")
    code, said = tool(TOPICS, target.bootstrap_servers, "--command-config", str(settings),
                      "--create", "--topic", small, "--partitions", "1")
    assert "Error while executing topic command : The throttling quota has been exceeded." \
        in said
    assert small not in ck.admin.AdminClient({"bootstrap.servers": target.bootstrap_servers,
                                              "logger": RDKAFKA_LOG}).list_topics(
        timeout=TIMEOUT_S).topics


@pytest.mark.mockbroker_only("faults")
def test_the_throttle_action_tells_a_producer_to_back_off_without_a_quota(stack):
    cluster = stack.enter_context(MockCluster(topics={"throttle-action": 1}))
    cluster.admin.add_fault("Produce", action="throttle", throttle_ms=300)
    throttles: list[int] = []
    producer = ck.Producer({"bootstrap.servers": cluster.bootstrap_servers,
                            "logger": RDKAFKA_LOG,
                            "throttle_cb": lambda event: throttles.append(_ms(event))})
    producer.produce("throttle-action", b"v", partition=0)
    assert producer.flush(TIMEOUT_S) == 0
    wait_for(lambda: producer.poll(0.1) is not None or 300 in throttles,
             "librdkafka told of the throttle")
    assert 300 in throttles


@pytest.mark.mockbroker_only("mockbroker")
def test_quotas_are_set_and_read_through_the_admin_api(stack):
    """``admin.set_quota`` is ``kafka-configs.sh --alter`` without a JVM: checked as Kafka checks
    AlterClientQuotas, and seen by the Kafka API at once."""
    cluster = stack.enter_context(MockCluster())
    admin = cluster.admin
    quota = admin.set_quota({"client-id": "ingest"}, producer_byte_rate=10240)
    assert (quota.entity, quota.values) == ({"client-id": "ingest"},
                                            {"producer_byte_rate": 10240.0})
    admin.set_quota({"user": None}, request_percentage=50)
    assert [(q.entity, q.values) for q in admin.quotas()] == [
        ({"user": None}, {"request_percentage": 50.0}),
        ({"client-id": "ingest"}, {"producer_byte_rate": 10240.0})]
    with pytest.raises(AdminError) as refused:
        admin.set_quota({"client-id": "ingest"}, producer_byte_rate=1.5)
    assert (refused.value.status, str(refused.value)) == (
        400, "HTTP 400: producer_byte_rate cannot be a fractional value.")
    host, port = cluster.bootstrap_servers.rsplit(":", 1)
    described = wire.request_class(DESCRIBE)
    found = ask(int(port), DESCRIBE, 1, described(strict=False, components=[]), host=host)
    assert sorted((tuple((c.entity_type, c.entity_name) for c in e.entity),
                   tuple((v.key, v.value) for v in e.values)) for e in found.entries) == sorted([
        ((("user", None),), (("request_percentage", 50.0),)),
        ((("client-id", "ingest"),), (("producer_byte_rate", 10240.0),))])
    assert admin.set_quota({"user": None}, request_percentage=None).values == {}
    assert len(admin.quotas()) == 1
