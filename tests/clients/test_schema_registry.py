"""The Schema Registry as confluent-kafka-python's users meet it: its ``SchemaRegistryClient``
call by call, its Avro serializer and deserializer around a produce and a consume, and the
registry's records in ``_schemas``, which a registry reading the topic afresh answers from as
the one that wrote them.

Expected answers are Confluent Schema Registry's (8.x): its error codes and messages from its
``Errors`` and resources, and the registration rules of its ``KafkaSchemaRegistry`` (the same
schema under two subjects keeps its id; registering a schema a subject has returns its
version; versions go on from the highest ever given, deleted ones included).  Apache Kafka has
no registry, so these tests run on mockbroker alone.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import confluent_kafka as ck
import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient, SchemaReference
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import MessageField, SerializationContext

from mockbroker import AdminError, MockCluster
from tests.clients.helpers import RDKAFKA_LOG, TIMEOUT_S, wait_for

pytestmark = pytest.mark.mockbroker_only("schema-registry")

USER_V1 = {"type": "record", "name": "User", "namespace": "shop",
           "fields": [{"name": "name", "type": "string"}]}
#: v1 plus a field with a default: BACKWARD compatible
USER_V2 = {**USER_V1, "fields": USER_V1["fields"] + [
    {"name": "age", "type": "int", "default": 0}]}
#: v1 plus a field without a default: not BACKWARD compatible
USER_BAD = {**USER_V1, "fields": USER_V1["fields"] + [{"name": "email", "type": "string"}]}


def avro(schema: dict) -> Schema:
    return Schema(json.dumps(schema), "AVRO")


@pytest.fixture
def cluster(stack) -> MockCluster:
    return stack.enter_context(MockCluster(schema_registry=True))


@pytest.fixture
def client(cluster) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": cluster.schema_registry_url})


def refused(call, *args, **kwargs) -> tuple[int, int, str]:
    with pytest.raises(SchemaRegistryError) as info:
        call(*args, **kwargs)
    return info.value.http_status_code, info.value.error_code, info.value.error_message


def http(url: str, method: str, path: str, body: bytes | None = None):
    request = urllib.request.Request(url + path, data=body, method=method, headers={
        "Content-Type": "application/vnd.schemaregistry.v1+json"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            return response.status, response.headers["Content-Type"], response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read()


def test_the_client_registers_reads_and_looks_up_schemas(client):
    first = client.register_schema("users-value", avro(USER_V1))
    assert first == 1
    assert client.register_schema("users-value", avro(USER_V1)) == 1  # already there
    assert client.register_schema("customers-value", avro(USER_V1)) == 1  # same schema, same id
    second = client.register_schema("users-value", avro(USER_V2))
    assert second == 2
    latest = client.get_latest_version("users-value")
    assert (latest.subject, latest.version, latest.schema_id) == ("users-value", 2, 2)
    assert json.loads(latest.schema.schema_str) == USER_V2
    assert latest.schema.schema_type == "AVRO"
    assert client.get_versions("users-value") == [1, 2]
    assert client.get_subjects() == ["customers-value", "users-value"]
    assert json.loads(client.get_schema(1).schema_str) == USER_V1
    found = client.lookup_schema("customers-value", avro(USER_V1))
    assert (found.subject, found.version, found.schema_id) == ("customers-value", 1, 1)
    assert sorted(client.get_subjects_by_schema_id(1)) == ["customers-value", "users-value"]
    assert [(v.subject, v.version) for v in client.get_schema_versions(1)] == \
        [("customers-value", 1), ("users-value", 1)]
    assert client.get_version("users-value", 1).schema_id == 1


def test_what_the_client_is_refused_carries_confluents_codes(client):
    client.register_schema("users-value", avro(USER_V1))
    assert refused(client.get_latest_version, "nobody-value") == \
        (404, 40401, "Subject 'nobody-value' not found.")
    assert refused(client.get_version, "users-value", 7) == (404, 40402, "Version 7 not found.")
    assert refused(client.get_schema, 99) == (404, 40403, "Schema 99 not found")
    assert refused(client.lookup_schema, "users-value", avro(USER_V2)) == \
        (404, 40403, "Schema not found")
    status, code, message = refused(client.register_schema, "users-value", avro(USER_BAD))
    assert (status, code) == (409, 40901)
    assert message.startswith('Schema being registered is incompatible with an earlier schema '
                              'for subject "users-value", details: [{errorType:'
                              "'READER_FIELD_MISSING_DEFAULT_VALUE'")
    assert message.endswith("{validateFields: 'false', compatibility: 'BACKWARD'}]")
    status, code, message = refused(client.register_schema, "broken-value",
                                    Schema('{"type": "record"}', "AVRO"))
    assert (status, code) == (422, 42201)
    assert message.startswith("Invalid schema of type AVRO, details: ")


def test_compatibility_is_tested_and_set_per_subject_and_globally(client):
    client.register_schema("users-value", avro(USER_V1))
    assert client.test_compatibility("users-value", avro(USER_V2)) is True
    assert client.test_compatibility("users-value", avro(USER_BAD)) is False
    assert client.get_compatibility() == "BACKWARD"
    assert refused(client.get_compatibility, "users-value") == (
        404, 40408, "Subject 'users-value' does not have subject-level compatibility "
                    "configured")
    client.set_compatibility("users-value", "NONE")
    assert client.get_compatibility("users-value") == "NONE"
    assert client.test_compatibility("users-value", avro(USER_BAD)) is True
    assert client.register_schema("users-value", avro(USER_BAD)) == 2
    client.set_compatibility(level="FORWARD")
    assert client.get_compatibility() == "FORWARD"
    assert refused(client.set_compatibility, "users-value", "SIDEWAYS")[:2] == (422, 42203)


def test_versions_and_subjects_are_deleted_softly_then_for_good(cluster, client):
    client.register_schema("users-value", avro(USER_V1))
    client.register_schema("users-value", avro(USER_V2))
    assert client.delete_version("users-value", 1) == 1
    assert client.get_versions("users-value") == [2]
    assert refused(client.delete_version, "users-value", 1, permanent=False)[:2] == (404, 40406)
    assert refused(client.delete_subject, "users-value", permanent=True) == (
        404, 40405, "Subject 'users-value' was not deleted first before being permanently "
                    "deleted")
    assert client.delete_subject("users-value") == [2]
    assert client.get_subjects() == []
    assert client.get_subjects(deleted=True) == ["users-value"]
    assert json.loads(client.get_schema(1).schema_str) == USER_V1  # ids stay readable
    assert client.delete_subject("users-value", permanent=True) == [1, 2]
    assert client.get_subjects(deleted=True) == []
    # (the client keeps what it read by id: asked again over HTTP)
    status, _, body = http(cluster.schema_registry_url, "GET", "/schemas/ids/1")
    assert (status, json.loads(body)) == (404, {"error_code": 40403,
                                                "message": "Schema 1 not found"})
    # versions go on from the highest ever given: a subject made anew starts at 1 again
    assert client.register_schema("users-value", avro(USER_V1)) == 3
    assert client.get_latest_version("users-value").version == 1


def test_avro_values_go_through_kafka_with_the_registry(cluster):
    registry = SchemaRegistryClient({"url": cluster.schema_registry_url})
    serialize = AvroSerializer(registry, json.dumps(USER_V2))
    deserialize = AvroDeserializer(registry)
    producer = ck.Producer({"bootstrap.servers": cluster.bootstrap_servers,
                            "logger": RDKAFKA_LOG})
    for name, age in (("ada", 36), ("alan", 41)):
        value = serialize({"name": name, "age": age},
                          SerializationContext("people", MessageField.VALUE))
        assert value[0] == 0 and int.from_bytes(value[1:5], "big") == 1  # magic byte, id
        producer.produce("people", value)
    assert producer.flush(TIMEOUT_S) == 0
    consumer = ck.Consumer({"bootstrap.servers": cluster.bootstrap_servers,
                            "group.id": "readers", "auto.offset.reset": "earliest",
                            "logger": RDKAFKA_LOG})
    consumer.subscribe(["people"])
    read = []
    try:
        def poll():
            message = consumer.poll(0.2)
            if message is not None and not message.error():
                read.append(deserialize(message.value(),
                                        SerializationContext("people", MessageField.VALUE)))
            return len(read) == 2
        wait_for(poll, "two records read back")
    finally:
        consumer.close()
    assert read == [{"name": "ada", "age": 36}, {"name": "alan", "age": 41}]
    assert registry.get_subjects() == ["people-value"]


def test_without_auto_registration_a_serializer_finds_the_registered_schema(cluster, client):
    client.register_schema("people-value", avro(USER_V1))
    client.register_schema("people-value", avro(USER_V2))
    lookup = AvroSerializer(client, json.dumps(USER_V1), conf={"auto.register.schemas": False})
    value = lookup({"name": "ada"}, SerializationContext("people", MessageField.VALUE))
    assert int.from_bytes(value[1:5], "big") == 1
    latest = AvroSerializer(client, json.dumps(USER_V1),
                            conf={"auto.register.schemas": False, "use.latest.version": True})
    value = latest({"name": "ada", "age": 3}, SerializationContext("people",
                                                                    MessageField.VALUE))
    assert int.from_bytes(value[1:5], "big") == 2
    unknown = AvroSerializer(client, json.dumps(USER_BAD), conf={"auto.register.schemas": False})
    with pytest.raises(Exception, match="Schema not found"):
        unknown({"name": "ada", "email": "a@b"}, SerializationContext("people",
                                                                     MessageField.VALUE))


def test_the_records_in_schemas_are_confluents_and_rebuild_the_registry(cluster, client):
    client.register_schema("users-value", avro(USER_V1))
    client.set_compatibility("users-value", "FULL")
    client.delete_version("users-value", 1)
    consumer = ck.Consumer({"bootstrap.servers": cluster.bootstrap_servers,
                            "group.id": "auditor", "auto.offset.reset": "earliest",
                            "logger": RDKAFKA_LOG})
    consumer.subscribe(["_schemas"])
    seen = []
    try:
        def poll():
            message = consumer.poll(0.2)
            if message is not None and not message.error():
                seen.append((json.loads(message.key()),
                             None if message.value() is None else json.loads(message.value())))
            return len(seen) == 3
        wait_for(poll, "the registry's three records")
    finally:
        consumer.close()
    key, value = seen[0]
    assert key == {"keytype": "SCHEMA", "subject": "users-value", "version": 1, "magic": 1}
    assert {k: value[k] for k in ("subject", "version", "id", "schemaType", "deleted")} == \
        {"subject": "users-value", "version": 1, "id": 1, "schemaType": "AVRO",
         "deleted": False}
    assert json.loads(value["schema"]) == USER_V1
    assert seen[1] == ({"keytype": "CONFIG", "subject": "users-value", "magic": 0},
                       {"subject": "users-value", "compatibilityLevel": "FULL"})
    assert seen[2][1]["deleted"] is True

    def rebuilt(core):
        from mockbroker.core.schemas.cluster import TopicSource
        from mockbroker.core.schemas.registry import SchemaRegistry

        fresh = SchemaRegistry(TopicSource(core.cluster))
        return (fresh.subjects(deleted=True), fresh.versions("users-value", deleted=True),
                fresh.config("users-value"), fresh.by_id(1).schema)
    assert cluster.call(rebuilt, cluster.core) == (
        ["users-value"], [1], {"compatibilityLevel": "FULL"}, client.get_schema(1).schema_str)


def test_bad_requests_get_confluents_error_bodies(cluster):
    url = cluster.schema_registry_url
    status, kind, body = http(url, "GET", "/subjects")
    assert (status, kind, body) == (200, "application/vnd.schemaregistry.v1+json", b"[]")
    for method, path, data, want in (
            ("POST", "/subjects/s/versions", b"{not json", (400, 400)),
            ("POST", "/subjects/s/versions", b"[1]", (422, 422)),
            ("POST", "/subjects/s/versions", b'{"schema": "\\"int\\"", "schemaType": "XML"}',
             (422, 42201, "Invalid schema type XML")),
            ("POST", "/subjects/s/versions", b'{"schema": ""}', (422, 42201, "Empty schema")),
            ("GET", "/subjects/s/versions/0", None, (422, 42202)),
            ("GET", "/subjects/s/versions/one", None, (422, 42202)),
            ("PUT", "/config", b'{"compatibility": "SOMETIMES"}', (422, 42203)),
            ("PUT", "/mode", b'{"mode": "SLEEPING"}', (422, 42204)),
            ("GET", "/mode/s", None, (404, 40409)),
            ("GET", "/nowhere", None, (404, 404)),
    ):
        status, kind, body = http(url, method, path, data)
        answer = json.loads(body)
        assert kind == "application/vnd.schemaregistry.v1+json"
        assert (status, answer["error_code"]) == want[:2], (method, path, answer)
        if len(want) > 2:
            assert answer["message"] == want[2]
    # nothing was written by any of them
    assert http(url, "GET", "/subjects?deleted=true")[2] == b"[]"
    assert json.loads(http(url, "GET", "/config")[2]) == {"compatibilityLevel": "BACKWARD"}


def test_the_read_only_and_import_modes(client, cluster):
    client.update_global_mode("READONLY")
    assert refused(client.register_schema, "users-value", avro(USER_V1)) == (
        422, 42205, "Subject users-value in context  is in read-only mode")
    client.update_global_mode("IMPORT")
    url = cluster.schema_registry_url
    body = json.dumps({"schema": json.dumps(USER_V1), "id": 42, "version": 7}).encode()
    status, _, answer = http(url, "POST", "/subjects/users-value/versions", body)
    assert status == 200 and json.loads(answer)["id"] == 42
    assert client.get_version("users-value", 7).schema_id == 42
    client.update_global_mode("READWRITE")
    assert client.register_schema("users-value", avro(USER_V2)) == 43
    assert client.get_versions("users-value") == [7, 8]


def test_a_schema_with_a_reference_to_another_subject(client):
    address = {"type": "record", "name": "Address", "namespace": "shop",
               "fields": [{"name": "city", "type": "string"}]}
    client.register_schema("address", avro(address))
    customer = {"type": "record", "name": "Customer", "namespace": "shop",
                "fields": [{"name": "name", "type": "string"},
                           {"name": "home", "type": "shop.Address"}]}
    referring = Schema(json.dumps(customer), "AVRO",
                       [SchemaReference("shop.Address", "address", 1)])
    schema_id = client.register_schema("customer-value", referring)
    fetched = client.get_schema(schema_id)
    assert [(r.name, r.subject, r.version) for r in fetched.references] == \
        [("shop.Address", "address", 1)]
    assert client.get_referenced_by("address", 1) == [schema_id]
    assert refused(client.delete_version, "address", 1)[:2] == (422, 42206)


ORDER = {"$schema": "http://json-schema.org/draft-07/schema#", "title": "Order",
         "type": "object", "properties": {"id": {"type": "integer"},
                                          "item": {"type": "string"}},
         "required": ["id"]}


def test_json_schema_values_are_checked_registered_and_read(cluster, client):
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer

    serialize = JSONSerializer(json.dumps(ORDER), client)
    context = SerializationContext("orders", MessageField.VALUE)
    value = serialize({"id": 7, "item": "tea"}, context)
    assert value[0] == 0 and int.from_bytes(value[1:5], "big") == 1
    with pytest.raises(Exception, match="is not of type 'integer'"):
        serialize({"id": "seven"}, context)  # the serializer validates against the schema
    registered = client.get_latest_version("orders-value")
    assert (registered.schema.schema_type, json.loads(registered.schema.schema_str)) == \
        ("JSON", ORDER)
    deserialize = JSONDeserializer(None, schema_registry_client=client)
    assert deserialize(value, context) == {"id": 7, "item": "tea"}
    # a property added to an open content model is not BACKWARD compatible by Confluent's
    # rules (JSON Schema diff: OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL)
    wider = {**ORDER, "properties": {**ORDER["properties"], "note": {"type": "string"}}}
    status, code, message = refused(client.register_schema, "orders-value",
                                    Schema(json.dumps(wider), "JSON"))
    assert (status, code) == (409, 40901)
    assert "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL" in message
    status, code, message = refused(client.register_schema, "orders-value",
                                    Schema('{"type": 5}', "JSON"))
    assert (status, code) == (422, 42201)
    assert message.startswith("Invalid schema {subject=orders-value,") and \
        message.endswith("details: Invalid JSON")


def _protobuf_classes():
    """``shop.Customer`` (in ``shop/customer.proto``) with a field of ``shop.Address``,
    imported from ``shop/address.proto``: message classes as protoc would generate them."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    field = descriptor_pb2.FieldDescriptorProto
    address = descriptor_pb2.FileDescriptorProto(
        name="shop/address.proto", package="shop", syntax="proto3")
    address.message_type.add(name="Address").field.add(
        name="city", number=1, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
    customer = descriptor_pb2.FileDescriptorProto(
        name="shop/customer.proto", package="shop", syntax="proto3",
        dependency=["shop/address.proto"])
    message = customer.message_type.add(name="Customer")
    message.field.add(name="name", number=1, type=field.TYPE_STRING,
                      label=field.LABEL_OPTIONAL)
    message.field.add(name="home", number=2, type=field.TYPE_MESSAGE,
                      type_name=".shop.Address", label=field.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(address)
    pool.Add(customer)
    return (message_factory.GetMessageClass(pool.FindMessageTypeByName("shop.Customer")),
            message_factory.GetMessageClass(pool.FindMessageTypeByName("shop.Address")))


def test_protobuf_values_register_their_imports_as_references(cluster, client):
    from confluent_kafka.schema_registry.protobuf import (
        ProtobufDeserializer, ProtobufSerializer,
    )

    customer_class, address_class = _protobuf_classes()
    serialize = ProtobufSerializer(customer_class, client, {"use.deprecated.format": False})
    context = SerializationContext("customers", MessageField.VALUE)
    value = serialize(customer_class(name="ada", home=address_class(city="London")), context)
    assert value[0] == 0 and value[5] == 0  # magic byte, id, then message index [0]
    assert sorted(client.get_subjects()) == ["customers-value", "shop/address.proto"]
    registered = client.get_latest_version("customers-value")
    assert registered.schema.schema_type == "PROTOBUF"
    assert [(r.name, r.subject, r.version) for r in registered.schema.references] == \
        [("shop/address.proto", "shop/address.proto", 1)]
    # stored as .proto text (the client sent a serialized descriptor), as Confluent's
    # ProtobufSchema writes a file it read from one
    assert registered.schema.schema_str == (
        'syntax = "proto3";\npackage shop;\n\nimport "shop/address.proto";\n\n'
        "message Customer {\n  string name = 1;\n  .shop.Address home = 2;\n}\n")
    deserialize = ProtobufDeserializer(customer_class, {"use.deprecated.format": False})
    read = deserialize(value, context)
    assert (read.name, read.home.city) == ("ada", "London")
    status, code, message = refused(client.register_schema, "customers-value", Schema(
        'syntax = "proto3";\nmessage Customer {\n  int64 name = 1;\n}\n', "PROTOBUF"))
    assert (status, code) == (409, 40901)
    assert "FIELD_SCALAR_KIND_CHANGED" in message or "FIELD_KIND_CHANGED" in message


def test_a_secured_cluster_s_registry_wants_a_user_over_tls(stack):
    cluster = stack.enter_context(MockCluster(schema_registry=True,
                                              security_protocol="SASL_SSL",
                                              users={"alice": "secret"},
                                              admin_token="registry-admin-token"))
    url = cluster.schema_registry_url
    assert url.startswith("https://")
    ca = {"ssl.ca.location": cluster.ssl_ca_location}
    alice = SchemaRegistryClient({"url": url, "basic.auth.user.info": "alice:secret", **ca})
    assert alice.register_schema("users-value", avro(USER_V1)) == 1
    for who in ({}, {"basic.auth.user.info": "alice:wrong"},
                {"basic.auth.user.info": "mallory:secret"}):
        stranger = SchemaRegistryClient({"url": url, **who, **ca})
        assert refused(stranger.get_subjects) == (401, 401, "Unauthorized")
    # the admin API's token is taken too, as a bearer token
    bearer = {"bearer.auth.credentials.source": "STATIC_TOKEN",
              "bearer.auth.logical.cluster": "lkc", "bearer.auth.identity.pool.id": "pool"}
    admin = SchemaRegistryClient({"url": url, **bearer,
                                  "bearer.auth.token": "registry-admin-token", **ca})
    assert admin.get_subjects() == ["users-value"]
    wrong = SchemaRegistryClient({"url": url, **bearer, "bearer.auth.token": "guess", **ca})
    assert refused(wrong.get_subjects)[:2] == (401, 401)


def test_control_rules_break_registry_calls_on_purpose(cluster, client):
    client.register_schema("users-value", avro(USER_V1))
    admin = cluster.admin

    def fresh() -> SchemaRegistryClient:  # no cache of earlier answers, no retries of a 500
        return SchemaRegistryClient({"url": cluster.schema_registry_url, "max.retries": 0})
    admin.add_fault(registry="lookup", subject="users-value", error=50001, count=2)
    for _ in range(2):
        assert refused(fresh().lookup_schema, "users-value", avro(USER_V1)) == (
            500, 50001, "Error while writing to the Kafka store")
    assert fresh().lookup_schema("users-value", avro(USER_V1)).version == 1  # used up
    # another subject, another operation: untouched by a rule for this one
    admin.add_fault(registry="register", subject="orders-value", error=40901)
    assert fresh().register_schema("users-value", avro(USER_V2)) == 2
    assert refused(fresh().register_schema, "orders-value", avro(USER_V1))[:2] == (409, 40901)
    assert [e["action"] for e in admin.events("rule_fired")] == ["error"] * 3
    assert admin.faults() == []
    admin.add_fault(registry="*", action="disconnect")
    # the connection closes without an answer: the client's HTTP library says so
    with pytest.raises(Exception, match="Server disconnected without sending a response"):
        fresh().get_subjects()
    assert fresh().get_subjects() == ["users-value"]  # only one call was cut
    with pytest.raises(AdminError, match="registry: unknown operation"):
        admin.add_fault(registry="publish", error=500)
    with pytest.raises(AdminError, match="a Confluent error code"):
        admin.add_fault(registry="register", error="NOT_LEADER_OR_FOLLOWER")


def test_the_registry_outlives_the_loss_of_its_topic_s_leader(stack):
    cluster = stack.enter_context(MockCluster(brokers=3, schema_registry=True))
    client = SchemaRegistryClient({"url": cluster.schema_registry_url})
    assert client.register_schema("users-value", avro(USER_V1)) == 1
    [partition] = cluster.admin.topic("_schemas").partitions
    assert len(partition.replicas) == 3  # up to three replicas, as Confluent creates it
    cluster.stop_broker(partition.leader)
    assert cluster.admin.topic("_schemas").partitions[0].leader != partition.leader
    assert client.register_schema("users-value", avro(USER_V2)) == 2
    assert SchemaRegistryClient({"url": cluster.schema_registry_url}) \
        .get_versions("users-value") == [1, 2]
    # without a leader the registry still reads, and a write is refused, not lost
    for broker in {0, 1, 2} - {partition.leader}:
        cluster.stop_broker(broker)
    fresh = SchemaRegistryClient({"url": cluster.schema_registry_url, "max.retries": 0})
    assert fresh.get_versions("users-value") == [1, 2]
    status, code, _ = refused(fresh.register_schema, "orders-value", avro(USER_V1))
    assert (status, code) == (500, 50001)


def test_a_delayed_registry_call_waits_on_the_broker_clock(stack):
    import threading

    cluster = stack.enter_context(MockCluster(schema_registry=True, clock="manual"))
    client = SchemaRegistryClient({"url": cluster.schema_registry_url})
    schema_id = client.register_schema("users-value", avro(USER_V1))
    cluster.admin.add_fault(registry="schema_by_id", delay_ms=5000)
    answers = []
    reader = threading.Thread(target=lambda: answers.append(
        SchemaRegistryClient({"url": cluster.schema_registry_url}).get_schema(schema_id)))
    reader.start()
    cluster.wait_for_event("rule_fired", timeout=TIMEOUT_S)
    assert reader.is_alive() and answers == []  # held until the clock reaches the delay
    cluster.advance_clock(5000)
    reader.join(TIMEOUT_S)
    assert json.loads(answers[0].schema_str) == USER_V1
