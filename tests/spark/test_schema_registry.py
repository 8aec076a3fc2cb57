"""A Spark job decoding Avro values whose writer schema lives in the cluster's Schema Registry.

confluent-kafka's ``AvroSerializer`` produces the values in Confluent's framing (a zero magic
byte, the schema's id as four big-endian bytes, then the Avro binary), registering the schema
under ``<topic>-value``.  The job does what a Spark user does without a registry-aware
connector: asks the registry's REST API for the schema (``/subjects/<topic>-value/versions/
latest`` or ``/schemas/ids/<id>``), cuts the five framing bytes off the value
(``substring(value, 6)``) and hands the rest to spark-avro's ``from_avro`` with that schema.
The rows it decodes must be the records produced, and the id in each frame the registry's.

spark-avro is fetched with the Kafka connector (``ci/spark/pom.xml``) into the same folder,
whose every jar the ``spark`` fixture puts on ``spark.jars``.  Apache Kafka has no registry:
these run on mockbroker alone.
"""

from __future__ import annotations

import json
import urllib.request
from functools import reduce
from pathlib import Path

import confluent_kafka as ck
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from pyspark.sql import functions as F
from pyspark.sql.avro.functions import from_avro

from tests.clients.helpers import RDKAFKA_LOG, TIMEOUT_S
from tests.spark.conftest import memory_query

USER_V1 = {"type": "record", "name": "User", "namespace": "shop", "fields": [
    {"name": "name", "type": "string"},
    {"name": "age", "type": "int"},
    {"name": "email", "type": ["null", "string"], "default": None},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
]}
#: v1 plus a field with a default: BACKWARD compatible, so the serializer may register it
USER_V2 = {**USER_V1, "fields": USER_V1["fields"] + [
    {"name": "country", "type": "string", "default": "unknown"}]}

USERS = [
    {"name": "ada", "age": 36, "email": "ada@example.com", "tags": ["admin", "math"]},
    {"name": "linus", "age": 54, "email": None, "tags": []},
    {"name": "grace", "age": 85, "email": "grace@example.com", "tags": ["navy"]},
]


@pytest.fixture(scope="module")
def avro_spark(spark):
    """The session, once spark-avro is seen on its classpath (a missing jar is a set-up step
    missed, which ``from_avro`` would only report as a Py4J error)."""
    jars = spark.sparkContext.getConf().get("spark.jars", "").split(",")
    if not any(Path(jar).name.startswith("spark-avro_") for jar in jars):
        pytest.fail("spark-avro is not among the Spark test jars: run `bash ci/dev.sh setup` "
                    "(ci/spark/pom.xml lists it)", pytrace=False)
    return spark


def registry_get(url: str, path: str) -> dict:
    """A GET on the registry's REST API, as the job's driver sends it: the JSON answer."""
    request = urllib.request.Request(url + path, headers={
        "Accept": "application/vnd.schemaregistry.v1+json"})
    with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
        return json.loads(response.read())


def produce_avro(bootstrap: str, registry_url: str, topic: str, schema: dict,
                 records: list[dict]) -> None:
    """Produce ``records`` serialized by confluent-kafka's ``AvroSerializer`` (which registers
    ``schema`` under ``<topic>-value``), in order, and wait until every one is acknowledged."""
    serialize = AvroSerializer(SchemaRegistryClient({"url": registry_url}), json.dumps(schema))
    context = SerializationContext(topic, MessageField.VALUE)
    producer = ck.Producer({"bootstrap.servers": bootstrap, "acks": "all",
                            "logger": RDKAFKA_LOG})
    for record in records:
        producer.produce(topic, serialize(record, context))
    assert producer.flush(TIMEOUT_S) == 0


def framed(df):
    """The Kafka rows' offsets, with each value's Confluent framing taken apart: the magic
    byte, the schema id (four bytes, big-endian) and the Avro payload after them."""
    return df.select(
        "offset",
        F.expr("substring(value, 1, 1)").alias("magic"),
        F.expr("CAST(conv(hex(substring(value, 2, 4)), 16, 10) AS INT)").alias("schema_id"),
        F.expr("substring(value, 6)").alias("payload"))


def users(rows) -> list[dict]:
    return [row.user.asDict(recursive=True) for row in rows]


@pytest.mark.kafka(topics={"users": 1})
def test_a_spark_job_decodes_avro_with_the_writer_schema_from_the_registry(
        avro_spark, kafka_cluster, schema_registry_url):
    spark, bootstrap = avro_spark, kafka_cluster.bootstrap_servers
    produce_avro(bootstrap, schema_registry_url, "users", USER_V1, USERS)

    latest = registry_get(schema_registry_url, "/subjects/users-value/versions/latest")
    assert (latest["subject"], latest["version"]) == ("users-value", 1)
    assert json.loads(latest["schema"]) == USER_V1

    def decoded(df):
        return framed(df).select("offset", "magic", "schema_id",
                                 from_avro("payload", latest["schema"]).alias("user"))

    batch = sorted(decoded(spark.read.format("kafka").option("kafka.bootstrap.servers",
                                                             bootstrap)
                           .option("subscribe", "users").load()).collect())
    assert [(r.offset, bytes(r.magic), r.schema_id) for r in batch] == \
        [(i, b"\x00", latest["id"]) for i in range(len(USERS))]
    assert users(batch) == USERS

    # the same job as a streaming query, run to the end of the topic
    stream = decoded(spark.readStream.format("kafka").option("kafka.bootstrap.servers",
                                                             bootstrap)
                     .option("subscribe", "users").option("startingOffsets", "earliest").load())
    assert users(memory_query(spark, stream)) == USERS


@pytest.mark.kafka(topics={"users": 1})
def test_each_record_decodes_with_its_own_writer_schema_read_as_the_latest(
        avro_spark, kafka_cluster, schema_registry_url):
    spark, bootstrap = avro_spark, kafka_cluster.bootstrap_servers
    produce_avro(bootstrap, schema_registry_url, "users", USER_V1, USERS[:2])
    newer = [{**USERS[2], "country": "us"}, {"name": "alan", "age": 41, "email": None,
                                              "tags": ["crypto"], "country": "uk"}]
    produce_avro(bootstrap, schema_registry_url, "users", USER_V2, newer)

    versions = registry_get(schema_registry_url, "/subjects/users-value/versions")
    assert versions == [1, 2]
    ids = [registry_get(schema_registry_url, f"/subjects/users-value/versions/{v}")["id"]
           for v in versions]
    reader = registry_get(schema_registry_url, "/subjects/users-value/versions/latest")["schema"]

    values = framed(spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
                    .option("subscribe", "users").load())
    # the driver looks up the writer schema of every id the frames carry
    found = sorted(r.schema_id for r in values.select("schema_id").distinct().collect())
    assert found == ids
    writers = {i: registry_get(schema_registry_url, f"/schemas/ids/{i}")["schema"]
               for i in found}
    assert [json.loads(writers[i]) for i in ids] == [USER_V1, USER_V2]

    # each payload read with its writer's schema, resolved to the latest (spark-avro's
    # ``avroSchema`` option): v1's records get v2's default for the field they lack
    user = reduce(lambda out, i: out.when(
        F.col("schema_id") == i, from_avro("payload", writers[i], {"avroSchema": reader})),
        found[1:], F.when(F.col("schema_id") == found[0],
                          from_avro("payload", writers[found[0]], {"avroSchema": reader})))
    rows = sorted(values.select("offset", "schema_id", user.alias("user")).collect())
    assert [r.schema_id for r in rows] == [ids[0], ids[0], ids[1], ids[1]]
    assert users(rows) == [{**u, "country": "unknown"} for u in USERS[:2]] + newer
