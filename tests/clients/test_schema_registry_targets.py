"""What a confluent-kafka-python client round-trips through a Schema Registry, checked on two
registries: mockbroker's, and Apicurio Registry's Confluent-compatible API
(:mod:`tests.clients.registry_targets`).

Apicurio is a second, independent implementation of Confluent's REST API, so these tests hold
only what a client relies on and both must agree on: a registered schema gets an id and reads
back by it, the same schema under another subject keeps its id, versions and the latest one,
lookup of a registered schema, and Avro and JSON Schema values serialized with the registry and
read back through it.  Where Apicurio answers differently from Confluent's registry (error
codes and messages, content types, the default compatibility level, which is NONE there, and
fields of its answers a client does not need), nothing is checked here: Confluent Schema
Registry's own behaviour is the reference for mockbroker, and ``test_schema_registry.py``
holds it to that on mockbroker alone.

Apicurio serves every test of a worker, so subjects and topics are named afresh and ids are
compared with one another, never with fixed numbers.  The Kafka broker is mockbroker on both
registries (Apache Kafka includes none), which is why the tests are marked ``mockbroker_only``.
"""

from __future__ import annotations

import json

import confluent_kafka as ck
import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from tests.clients.helpers import RDKAFKA_LOG, TIMEOUT_S, wait_for
from tests.clients.registry_targets import (  # noqa: F401 (fixtures)
    apicurio_registry, registry_cluster, registry_target, unique_subject,
)

pytestmark = pytest.mark.mockbroker_only("schema-registry")

USER_V1 = {"type": "record", "name": "User", "namespace": "shop",
           "fields": [{"name": "name", "type": "string"}]}
#: v1 plus a field with a default: compatible with v1 by any level
USER_V2 = {**USER_V1, "fields": USER_V1["fields"] + [
    {"name": "age", "type": "int", "default": 0}]}
ORDER = {"$schema": "http://json-schema.org/draft-07/schema#", "title": "Order",
         "type": "object", "properties": {"id": {"type": "integer"},
                                          "item": {"type": "string"}},
         "required": ["id"]}


def avro(schema: dict) -> Schema:
    return Schema(json.dumps(schema), "AVRO")


@pytest.fixture
def client(registry_target) -> SchemaRegistryClient:
    url, _ = registry_target
    return SchemaRegistryClient({"url": url})


def schema_id(value: bytes) -> int:
    """The id a serialized value carries after its magic byte (0)."""
    assert value[0] == 0
    return int.from_bytes(value[1:5], "big")


def test_a_schema_gets_an_id_that_reads_back_and_is_kept_under_another_subject(client):
    users, customers = unique_subject("users-value"), unique_subject("customers-value")
    first = client.register_schema(users, avro(USER_V1))
    assert json.loads(client.get_schema(first).schema_str) == USER_V1
    assert client.register_schema(users, avro(USER_V1)) == first  # already there
    assert client.register_schema(customers, avro(USER_V1)) == first  # same schema, same id
    second = client.register_schema(users, avro(USER_V2))
    assert second != first
    assert json.loads(client.get_schema(second).schema_str) == USER_V2


def test_versions_and_the_latest_one(client):
    users = unique_subject("users-value")
    first = client.register_schema(users, avro(USER_V1))
    second = client.register_schema(users, avro(USER_V2))
    assert client.get_versions(users) == [1, 2]
    latest = client.get_latest_version(users)
    assert (latest.subject, latest.version, latest.schema_id) == (users, 2, second)
    assert json.loads(latest.schema.schema_str) == USER_V2
    earlier = client.get_version(users, 1)
    assert (earlier.subject, earlier.version, earlier.schema_id) == (users, 1, first)
    assert json.loads(earlier.schema.schema_str) == USER_V1
    assert users in client.get_subjects()


def test_a_registered_schema_is_looked_up(client):
    users = unique_subject("users-value")
    first = client.register_schema(users, avro(USER_V1))
    second = client.register_schema(users, avro(USER_V2))
    for schema, version, expected_id in ((USER_V1, 1, first), (USER_V2, 2, second)):
        found = client.lookup_schema(users, avro(schema))
        assert (found.subject, found.version, found.schema_id) == (users, version, expected_id)
        assert json.loads(found.schema.schema_str) == schema


def _read_back(bootstrap_servers: str, topic: str, count: int) -> list[bytes]:
    consumer = ck.Consumer({"bootstrap.servers": bootstrap_servers,
                            "group.id": unique_subject("readers"),
                            "auto.offset.reset": "earliest", "logger": RDKAFKA_LOG})
    consumer.subscribe([topic])
    read = []
    try:
        def poll():
            message = consumer.poll(0.2)
            if message is not None and not message.error():
                read.append(message.value())
            return len(read) == count
        wait_for(poll, f"{count} records read back")
    finally:
        consumer.close()
    return read


def _produce(bootstrap_servers: str, topic: str, values: list[bytes]) -> None:
    producer = ck.Producer({"bootstrap.servers": bootstrap_servers, "logger": RDKAFKA_LOG})
    for value in values:
        producer.produce(topic, value)
    assert producer.flush(TIMEOUT_S) == 0


def test_avro_values_go_through_kafka_with_the_registry(client, registry_target,
                                                        registry_cluster):
    topic = unique_subject("people")
    context = SerializationContext(topic, MessageField.VALUE)
    serialize = AvroSerializer(client, json.dumps(USER_V2))
    people = [{"name": "ada", "age": 36}, {"name": "alan", "age": 41}]
    values = [serialize(person, context) for person in people]
    registered = client.get_latest_version(f"{topic}-value")
    assert {schema_id(value) for value in values} == {registered.schema_id}
    assert json.loads(registered.schema.schema_str) == USER_V2
    _produce(registry_cluster.bootstrap_servers, topic, values)
    read = _read_back(registry_cluster.bootstrap_servers, topic, len(people))
    # a deserializer with a client of its own, which knows the schema by its id only
    deserialize = AvroDeserializer(SchemaRegistryClient({"url": registry_target[0]}))
    assert [deserialize(value, context) for value in read] == people


def test_json_schema_values_go_through_kafka_with_the_registry(client, registry_target,
                                                               registry_cluster):
    topic = unique_subject("orders")
    context = SerializationContext(topic, MessageField.VALUE)
    serialize = JSONSerializer(json.dumps(ORDER), client)
    orders = [{"id": 7, "item": "tea"}, {"id": 8}]
    values = [serialize(order, context) for order in orders]
    with pytest.raises(Exception, match="is not of type 'integer'"):
        serialize({"id": "seven"}, context)  # the serializer validates against the schema
    [written] = {schema_id(value) for value in values}
    assert json.loads(client.get_schema(written).schema_str) == ORDER
    assert client.lookup_schema(f"{topic}-value", Schema(json.dumps(ORDER), "JSON")).schema_id \
        == written
    _produce(registry_cluster.bootstrap_servers, topic, values)
    read = _read_back(registry_cluster.bootstrap_servers, topic, len(orders))
    fresh = SchemaRegistryClient({"url": registry_target[0]})
    deserialize = JSONDeserializer(None, schema_registry_client=fresh)
    assert [deserialize(value, context) for value in read] == orders
