"""Spark's Kafka source and sink through a SASL_SSL listener, configured with the ``kafka.``
options a Spark user sets for a secured cluster (SCRAM-SHA-512 over TLS, the CA as a PEM
truststore).  Runs on mockbroker: the Kafka target serves a PLAINTEXT listener only."""

from __future__ import annotations

import pytest

from mockbroker import MockCluster
from tests.spark.conftest import In, produce, run_to_end


@pytest.fixture(scope="module")
def secured():
    with MockCluster(listeners=["PLAINTEXT", "SASL_SSL"], users={"spark": "s3cret"},
                     topics={"in": 2, "out": 2}) as cluster:
        yield cluster


def secured_options(cluster: MockCluster, password: str = "s3cret") -> dict[str, str]:
    jaas = ("org.apache.kafka.common.security.scram.ScramLoginModule required "
            f'username="spark" password="{password}";')
    return {"kafka.bootstrap.servers": cluster.bootstrap_for("SASL_SSL"),
            "kafka.security.protocol": "SASL_SSL",
            "kafka.sasl.mechanism": "SCRAM-SHA-512",
            "kafka.sasl.jaas.config": jaas,
            "kafka.ssl.truststore.type": "PEM",
            "kafka.ssl.truststore.location": cluster.ssl_ca_location}


def with_options(builder, options: dict[str, str]):
    for name, value in options.items():
        builder = builder.option(name, value)
    return builder


def test_streaming_query_reads_and_writes_through_sasl_ssl(spark, secured, tmp_path):
    # the test's own tooling uses the PLAINTEXT listener; the query only the secured one
    produce(secured.bootstrap_for("PLAINTEXT"), "in",
            [In(f"v{i}", key=f"k{i}", partition=i % 2) for i in range(8)])
    options = secured_options(secured)
    source = with_options(spark.readStream.format("kafka"), options) \
        .option("subscribe", "in").option("startingOffsets", "earliest").load()
    sink = with_options(source.selectExpr("key", "value", "partition").writeStream
                        .format("kafka"), options) \
        .option("topic", "out").option("checkpointLocation", str(tmp_path / "checkpoint"))
    run_to_end(sink)

    read = with_options(spark.read.format("kafka"), options).option("subscribe", "out").load()
    rows = sorted(tuple(r) for r in read.selectExpr(
        "partition", "CAST(key AS STRING)", "CAST(value AS STRING)").collect())
    assert rows == sorted((i % 2, f"k{i}", f"v{i}") for i in range(8))
    # the query's writes came in on the secured listener, as User:spark with SCRAM-SHA-512
    produced = secured.call(lambda: {(r.listener, r.principal, r.mechanism)
                                     for r in secured.core.requests if r.api_key == 0})
    assert ("SASL_SSL", "User:spark", "SCRAM-SHA-512") in produced

def test_a_wrong_password_fails_the_batch_query_with_the_authentication_error(spark, secured):
    options = secured_options(secured, password="wrong")
    reader = with_options(spark.read.format("kafka"), options).option("subscribe", "in")
    with pytest.raises(Exception) as failure:
        reader.load().collect()
    # the Kafka client's exception, with the broker's message
    assert "SaslAuthenticationException: Authentication failed during authentication due to " \
           "invalid credentials with SASL mechanism SCRAM-SHA-512" in str(failure.value), \
        str(failure.value)[:2000]
