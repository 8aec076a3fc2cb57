"""The Schema Registry across languages: franz-go's ``pkg/sr`` client (tests/clients/go),
kafkajs' registry package ``@kafkajs/confluent-schema-registry`` (tests/clients/node) and
confluent-kafka-python's serializers register and read each other's schemas, as they would
against Confluent Schema Registry.

What each client sees is what Confluent's registry (8.x) answers: one global id for a schema
whatever the subject, Avro payloads in Confluent's wire format (a zero magic byte, the id in
four bytes, then the Avro binary), compatibility verdicts with Confluent's messages, and the
subject-level config that kafkajs reads before its first registration (Confluent answers 40408
when a subject has none, and kafkajs then sets it to BACKWARD).  Apache Kafka has no registry,
so these tests run on mockbroker alone.
"""

from __future__ import annotations

import json

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from mockbroker import MockCluster
from tests.clients.helpers import go_client, node_client

pytestmark = pytest.mark.mockbroker_only("schema-registry")

USER_V1 = {"type": "record", "name": "User", "namespace": "shop",
           "fields": [{"name": "name", "type": "string"}]}
#: v1 plus a field with a default: BACKWARD (and FULL) compatible
USER_V2 = {**USER_V1, "fields": USER_V1["fields"] + [
    {"name": "age", "type": "int", "default": 0}]}
#: v1 plus a field without a default: not BACKWARD compatible
USER_BAD = {**USER_V1, "fields": USER_V1["fields"] + [{"name": "email", "type": "string"}]}
#: v1's field dropped for one with a default: BACKWARD compatible, not FORWARD (v1's readers
#: miss "name", which has no default), so not FULL
USER_AGE_ONLY = {**USER_V1, "fields": [{"name": "age", "type": "int", "default": 0}]}


@pytest.fixture
def url(stack) -> str:
    return stack.enter_context(MockCluster(schema_registry=True)).schema_registry_url


def go(*args: str):
    """What franz-go's pkg/sr client answers (one JSON line, see tests/clients/go/main.go)."""
    return json.loads(go_client(*args))


def node(*args: str):
    """What kafkajs' registry package answers (one JSON line, see tests/clients/node)."""
    return json.loads(node_client(*args))


def text(schema: dict) -> str:
    return json.dumps(schema)


def test_a_schema_franz_go_registers_encodes_in_kafkajs_and_decodes_in_python(url):
    registered = go("sr-register", url, "users-value", text(USER_V1))
    assert (registered["subject"], registered["version"]) == ("users-value", 1)
    schema_id = registered["id"]
    assert json.loads(registered["schema"]) == USER_V1

    parsed = node("sr-schema", url, str(schema_id))
    assert parsed["name"] == "shop.User"
    assert parsed["schema"]["fields"] == USER_V1["fields"]

    payload = bytes.fromhex(node("sr-encode", url, str(schema_id),
                                 json.dumps({"name": "ann"}))["hex"])
    # Confluent's wire format: magic byte 0, the id big-endian, then Avro's binary encoding
    assert payload[:5] == b"\0" + schema_id.to_bytes(4, "big")
    assert payload[5:] == b"\x06ann"

    writer = go("sr-writer", url, payload.hex())
    assert writer["id"] == schema_id
    assert json.loads(writer["schema"]) == USER_V1
    assert "schemaType" not in writer  # AVRO, the type Confluent leaves out

    deserialize = AvroDeserializer(SchemaRegistryClient({"url": url}))
    assert deserialize(payload, SerializationContext("users", MessageField.VALUE)) == {
        "name": "ann"}


def test_python_encodes_with_the_latest_version_and_kafkajs_decodes(url):
    first = go("sr-register", url, "users-value", text(USER_V1))["id"]
    latest = go("sr-register", url, "users-value", text(USER_V2))
    assert latest["version"] == 2 and latest["id"] != first
    assert node("sr-latest", url, "users-value") == {"id": latest["id"]}

    serialize = AvroSerializer(SchemaRegistryClient({"url": url}), text(USER_V2), conf={
        "auto.register.schemas": False, "use.latest.version": True})
    payload = serialize({"name": "bob", "age": 42},
                        SerializationContext("users", MessageField.VALUE))
    assert payload[:5] == b"\0" + latest["id"].to_bytes(4, "big")
    assert node("sr-decode", url, payload.hex()) == {"record": {"name": "bob", "age": 42}}


def test_franz_go_reads_and_checks_what_kafkajs_registered(url):
    first = node("sr-register", url, "orders-value", text(USER_V1))["id"]
    assert go("sr-versions", url, "orders-value") == [1]
    assert json.loads(go("sr-get", url, str(first))["schema"]) == USER_V1

    assert go("sr-check", url, "orders-value", text(USER_V2)) == {
        "is_compatible": True, "messages": []}
    refused = go("sr-check", url, "orders-value", text(USER_BAD))
    assert refused["is_compatible"] is False
    assert refused["messages"][0] == (
        "{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'email' at "
        "path '/fields/1' in the new schema has no default value and is missing in the old "
        "schema', additionalInfo:'email'}")
    assert "{oldSchemaVersion: 1}" in refused["messages"]
    assert "{validateFields: 'false', compatibility: 'BACKWARD'}" in refused["messages"]

    # registering it anyway: Confluent's 409 with error code 40901 and the same details
    conflict = go("sr-register", url, "orders-value", text(USER_BAD))
    assert conflict["error_code"] == 40901
    assert conflict["message"].startswith(
        'Schema being registered is incompatible with an earlier schema for subject '
        '"orders-value", details: [{errorType:\'READER_FIELD_MISSING_DEFAULT_VALUE\'')
    assert go("sr-versions", url, "orders-value") == [1]

    second = go("sr-register", url, "orders-value", text(USER_V2))
    assert second["version"] == 2
    assert node("sr-latest", url, "orders-value") == {"id": second["id"]}


def test_one_schema_under_two_subjects_has_one_id_for_every_client(url):
    left = go("sr-register", url, "left-value", text(USER_V1))["id"]
    # the same schema, laid out otherwise: Avro compares schemas, not their text
    right = node("sr-register", url, "right-value", json.dumps(USER_V1, indent=2))["id"]
    assert right == left
    assert go("sr-subjects", url, str(left)) == ["left-value", "right-value"]
    assert node("sr-id", url, "left-value", text(USER_V1)) == {"id": left}
    assert node("sr-id", url, "right-value", text(USER_V1)) == {"id": left}
    # a third client sees the same
    python = SchemaRegistryClient({"url": url})
    assert python.get_latest_version("right-value").schema_id == left


def test_kafkajs_first_registration_sets_the_subject_to_backward(url):
    assert go("sr-set-config", url, "", "FULL") == {"compatibility": "FULL"}
    # what kafkajs reads before registering: Confluent's 404 for a subject without a config
    assert go("sr-config", url, "events-value") == {
        "error_code": 40408,
        "message": "Subject 'events-value' does not have subject-level compatibility "
                   "configured"}

    node("sr-register", url, "events-value", text(USER_V1))
    assert go("sr-config", url, "events-value") == {"compatibilityLevel": "BACKWARD"}
    assert go("sr-config", url) == {"compatibilityLevel": "FULL"}  # the global one untouched

    # the subject's BACKWARD, not the global FULL, now judges its next versions
    assert go("sr-check", url, "events-value", text(USER_AGE_ONLY))["is_compatible"] is True
    second = node("sr-register", url, "events-value", text(USER_AGE_ONLY))["id"]
    assert go("sr-versions", url, "events-value") == [1, 2]
    assert node("sr-latest", url, "events-value") == {"id": second}
