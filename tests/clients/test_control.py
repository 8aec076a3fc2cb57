"""Control rules as users write them, with stock clients: an in-process callback answering
for the broker (``MockCluster.control``), and "stop a broker when the third Fetch arrives" as one
rule over HTTP, which a consumer lives through."""

from __future__ import annotations

import confluent_kafka as ck
import kafka.errors
import pytest
from kafka import KafkaProducer

import wire
from mockbroker import DISCONNECT
from tests.clients.helpers import RDKAFKA_LOG, TIMEOUT_S, wait_for
from wire import errors

pytestmark = pytest.mark.mockbroker_only("faults")

TOPIC = "orders"


@pytest.mark.kafka(brokers=1, topics={TOPIC: 1})
def test_a_callback_answers_a_produce_for_the_broker(kafka_cluster, stack):
    seen = []

    def refuse(request):
        seen.append((request.api_key, request.client_id,
                     [t.name for t in request.body.topic_data]))
        cls = wire.response_class(0)
        return cls(responses=[cls.TopicProduceResponse(name=t.name, partition_responses=[
            cls.PartitionProduceResponse(index=p.index, base_offset=-1,
                                         error_code=errors.TOPIC_AUTHORIZATION_FAILED)
            for p in t.partition_data]) for t in request.body.topic_data])

    kafka_cluster.control("Produce", refuse)
    producer = KafkaProducer(bootstrap_servers=kafka_cluster.bootstrap_servers,
                             client_id="writer", retries=0)
    stack.callback(producer.close, 5)
    with pytest.raises(kafka.errors.TopicAuthorizationFailedError):
        producer.send(TOPIC, b"refused").get(TIMEOUT_S)
    assert seen == [(0, "writer", [TOPIC])]
    # one-shot: the next produce is the broker's own
    assert producer.send(TOPIC, b"stored").get(TIMEOUT_S).offset == 0
    assert [r.value for r in kafka_cluster.admin.records(TOPIC)] == ["stored"]


@pytest.mark.kafka(brokers=1, topics={TOPIC: 1})
def test_a_kept_callback_can_disconnect_a_client_until_removed(kafka_cluster, stack):
    rule = kafka_cluster.control("Metadata", lambda request: DISCONNECT, keep=True)
    admin = kafka_cluster.admin
    assert [(f.id, f.action, f.api, f.count) for f in admin.faults()] == \
        [(rule, "callback", "Metadata", None)]
    producer = ck.Producer({"bootstrap.servers": kafka_cluster.bootstrap_servers,
                            "logger": RDKAFKA_LOG, "message.timeout.ms": 30000})
    producer.produce(TOPIC, b"later")
    wait_for(lambda: any(r.outcome == "disconnected"
                         for r in admin.requests("Metadata")), "a disconnected Metadata")
    assert admin.records(TOPIC) == []
    admin.remove_fault(rule)
    assert producer.flush(TIMEOUT_S) == 0
    assert [r.value for r in admin.records(TOPIC)] == ["later"]


@pytest.mark.kafka(brokers=3, topics={TOPIC: 1})
def test_a_broker_stopped_by_a_rule_on_the_third_fetch_is_survived(kafka_cluster, kafka_admin,
                                                                  stack):
    leader = kafka_admin.topic(TOPIC).partitions[0].leader
    rule = kafka_admin.add_fault("Fetch", action="stop_broker", after=2, target_broker=leader,
                                 broker=leader)
    producer = ck.Producer({"bootstrap.servers": kafka_cluster.bootstrap_servers,
                            "logger": RDKAFKA_LOG, "acks": "all"})
    for i in range(3):
        producer.produce(TOPIC, f"m{i}".encode())
    assert producer.flush(TIMEOUT_S) == 0
    consumer = ck.Consumer({"bootstrap.servers": kafka_cluster.bootstrap_servers,
                            "group.id": "readers", "auto.offset.reset": "earliest",
                            "fetch.wait.max.ms": 50, "logger": RDKAFKA_LOG})
    stack.callback(consumer.close)
    consumer.subscribe([TOPIC])
    values = []

    def read_all() -> bool:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            values.append(message.value())
        return len(values) >= 3 and kafka_admin.broker(leader).state == "down"

    wait_for(read_all, "every record, read across the stopped leader")
    assert values == [b"m0", b"m1", b"m2"]
    assert kafka_admin.topic(TOPIC).partitions[0].leader != leader
    fired = [r for r in kafka_admin.requests("Fetch", broker=leader) if r.fault == rule.id]
    assert len(fired) == 1 and kafka_admin.faults() == []
