"""``GET /metrics``: Kafka exporter series that agree with the admin API, the broker's request
counters and durations, the token, and the text format as Prometheus' own parser reads it."""

from __future__ import annotations

import contextlib
import urllib.error
import urllib.request

import confluent_kafka as ck
import pytest
from confluent_kafka.admin import AdminClient as CkAdmin
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata
from prometheus_client.parser import text_string_to_metric_families

from mockbroker import MockCluster
from mockbroker.core.cluster import Broker
from mockbroker.handlers import new_core
from mockbroker.io.admin.metrics import render
from mockbroker.core.observe.request_metrics import DURATION_BUCKETS, RequestMetrics
from tests.clients.helpers import RDKAFKA_LOG, TIMEOUT_S, wait_for

#: (sample name, sorted label pairs) -> value
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def _get(url: str, token: str | None = None, method: str = "GET"):
    request = urllib.request.Request(url, method=method)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    return urllib.request.urlopen(request, timeout=10)


def scrape(admin_url: str, token: str | None = None) -> Samples:
    with _get(f"{admin_url}/metrics", token) as response:
        assert response.status == 200
        assert response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
        text = response.read().decode("utf-8")
    return samples_of(text)


def samples_of(text: str) -> Samples:
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            key = (sample.name, tuple(sorted(sample.labels.items())))
            assert key not in samples, key  # each series once
            samples[key] = sample.value
    return samples


def series(samples: Samples, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {labels: value for (n, labels), value in samples.items() if n == name}


def _requests(samples: Samples, api: str) -> float:
    return sum(value for labels, value in series(samples, "mockbroker_requests_total").items()
               if dict(labels)["api"] == api)


@pytest.mark.kafka(brokers=2, topics={"orders": 3, "audit": 1})
def test_exporter_series_agree_with_the_admin_api(kafka_cluster, kafka_admin):
    bootstrap = kafka_cluster.bootstrap_servers
    with contextlib.ExitStack() as stack:
        producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=0)
        stack.callback(producer.close)
        sends = 0
        for partition, count in ((0, 5), (1, 3), (2, 2)):
            for i in range(count):
                producer.send("orders", f"o{i}".encode(), partition=partition)
                producer.flush()  # one record, one Produce request
                sends += 1
        for i in range(4):
            producer.send("audit", b"a", partition=0)
        producer.flush()

        admin = CkAdmin({"bootstrap.servers": bootstrap, "logger": RDKAFKA_LOG})
        [deleted] = admin.delete_records([ck.TopicPartition("orders", 0, 2)]).values()
        assert deleted.result(timeout=TIMEOUT_S).low_watermark == 2

        # billing: an active member, offsets committed in two of its three partitions
        consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "billing",
                                "client.id": "billing-1", "enable.auto.commit": False,
                                "auto.offset.reset": "earliest", "logger": RDKAFKA_LOG})
        stack.callback(consumer.close)
        consumer.subscribe(["orders"])

        def assigned() -> bool:
            consumer.poll(0.05)  # joins the group (the records it reads are not committed)
            return len(consumer.assignment()) == 3
        wait_for(assigned, "billing assigned every partition")
        consumer.commit(offsets=[ck.TopicPartition("orders", 0, 3),
                                 ck.TopicPartition("orders", 1, 1)], asynchronous=False)
        # auditors: offsets committed, no member left
        gone = KafkaConsumer(bootstrap_servers=bootstrap, group_id="auditors",
                             enable_auto_commit=False)
        gone.assign([TopicPartition("audit", 0)])
        gone.commit({TopicPartition("audit", 0): OffsetAndMetadata(4, "", -1)})
        gone.close()

        samples = scrape(kafka_cluster.admin_url)
        assert series(samples, "kafka_brokers") == {(): 2}

        topics = {t.name: t for t in kafka_admin.topics()}
        assert series(samples, "kafka_topic_partitions") == {
            (("topic", name),): len(t.partitions) for name, t in topics.items()}
        for name, field in (("current_offset", lambda p: p.high_watermark),
                            ("oldest_offset", lambda p: p.log_start_offset),
                            ("leader", lambda p: p.leader),
                            ("replicas", lambda p: len(p.replicas)),
                            ("in_sync_replica", lambda p: len(p.isr))):
            assert series(samples, f"kafka_topic_partition_{name}") == {
                (("partition", str(p.partition)), ("topic", t.name)): field(p)
                for t in topics.values() for p in t.partitions}, name
        offsets = series(samples, "kafka_topic_partition_current_offset")
        oldest = series(samples, "kafka_topic_partition_oldest_offset")
        orders_0 = (("partition", "0"), ("topic", "orders"))
        assert (offsets[orders_0], oldest[orders_0]) == (5, 2)  # after DeleteRecords
        assert oldest[(("partition", "1"), ("topic", "orders"))] == 0  # not deleted from
        assert not any("__" in dict(labels).get("topic", "") for (_, labels) in samples)

        groups = {g: kafka_admin.group(g) for g in ("billing", "auditors")}
        assert groups["billing"].lag == {"orders": {0: 2, 1: 2}}  # the test's own premise
        assert series(samples, "kafka_consumergroup_members") == {
            (("consumergroup", "auditors"),): 0, (("consumergroup", "billing"),): 1}
        for name, field in (("current_offset", "offsets"), ("lag", "lag")):
            assert series(samples, f"kafka_consumergroup_{name}") == {
                (("consumergroup", g), ("partition", str(p)), ("topic", t)): value
                for g, view in groups.items()
                for t, partitions in getattr(view, field).items()
                for p, value in partitions.items()}, name
            assert series(samples, f"kafka_consumergroup_{name}_sum") == {
                (("consumergroup", g), ("topic", t)): sum(partitions.values())
                for g, view in groups.items()
                for t, partitions in getattr(view, field).items()}, name

        # every Produce request is counted once it is answered, as the request log has it
        def counted():
            now = scrape(kafka_cluster.admin_url)
            produced = _requests(now, "Produce")
            return now if produced >= sends and \
                produced == len(kafka_admin.requests("Produce")) else None
        samples = wait_for(counted, "every Produce request counted")
        assert _requests(samples, "Metadata") >= 1 and _requests(samples, "ApiVersions") >= 1
        assert {dict(labels)["broker"] for labels in
                series(samples, "mockbroker_requests_total")} <= {"0", "1"}
        _check_histograms(samples)

    # the process's counters outlive a reset; the cluster's series start afresh (the clients
    # are closed first: one still open would ask for its topics again and auto-create them)
    del admin
    kafka_admin.reset()
    after = scrape(kafka_cluster.admin_url)
    assert _requests(after, "Produce") >= _requests(samples, "Produce")
    assert series(after, "kafka_topic_partitions") == {}
    assert series(after, "kafka_consumergroup_members") == {}


def _check_histograms(samples: Samples) -> None:
    """Each API's histogram: cumulative buckets up to +Inf, which is its count, which is the
    sum of its requests over the brokers."""
    name = "mockbroker_request_duration_seconds"
    counts = series(samples, f"{name}_count")
    assert counts
    for labels, count in counts.items():
        api = dict(labels)["api"]
        buckets = sorted((float(dict(b)["le"]), value)
                         for b, value in series(samples, f"{name}_bucket").items()
                         if dict(b)["api"] == api)
        assert [le for le, _ in buckets] == [*DURATION_BUCKETS, float("inf")]
        values = [value for _, value in buckets]
        assert values == sorted(values) and values[-1] == count
        assert count == _requests(samples, api)
        assert 0 <= series(samples, f"{name}_sum")[labels] < count * 60


def test_request_durations_fall_in_the_buckets_prometheus_reads():
    metrics = RequestMetrics()
    for seconds in (0.0001, 0.0003, 0.002, 0.002, 45.0):
        metrics.observe(0, 1, seconds)  # Produce, broker 1
    metrics.observe(31000, 0, 0.1)  # no such API: counted apart, whatever the key

    samples = samples_of(render(new_core([Broker(0, "127.0.0.1", 9092)]), metrics))
    assert series(samples, "mockbroker_requests_total") == {
        (("api", "Produce"), ("broker", "1")): 5, (("api", "unknown"), ("broker", "0")): 1}
    produce = {float(dict(labels)["le"]): value for labels, value in
               series(samples, "mockbroker_request_duration_seconds_bucket").items()
               if dict(labels)["api"] == "Produce"}
    # a bucket counts what is at most its bound
    assert (produce[0.0001], produce[0.00025], produce[0.0005], produce[0.0025]) == (1, 1, 2, 4)
    assert (produce[30.0], produce[float("inf")]) == (4, 5)
    assert series(samples, "mockbroker_request_duration_seconds_sum")[
        (("api", "Produce"),)] == pytest.approx(45.0044)


def test_label_values_are_escaped():
    with MockCluster() as cluster:
        weird = 'a "quoted"\\group'
        consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers,
                                 group_id=weird, enable_auto_commit=False)
        try:
            cluster.admin.create_topic("t", 1)
            consumer.assign([TopicPartition("t", 0)])
            consumer.commit({TopicPartition("t", 0): OffsetAndMetadata(0, "", -1)})
        finally:
            consumer.close()
        samples = scrape(cluster.admin_url)
        assert series(samples, "kafka_consumergroup_current_offset") == {
            (("consumergroup", weird), ("partition", "0"), ("topic", "t")): 0}


def test_metrics_need_the_token_where_the_api_does():
    with MockCluster(admin_token="metrics-token") as cluster:
        url = f"{cluster.admin_url}/metrics"
        for token in (None, "not-the-token"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                _get(url, token)
            assert refused.value.code == 401
            assert refused.value.headers["WWW-Authenticate"].startswith("Bearer ")
        assert series(scrape(cluster.admin_url, "metrics-token"), "kafka_brokers") == {(): 1}
        assert _get(f"{cluster.admin_url}/health").status == 200  # still public


def test_metrics_answer_get_and_head_only():
    with MockCluster() as cluster:
        url = f"{cluster.admin_url}/metrics"
        with _get(url, method="HEAD") as head:
            assert head.status == 200 and head.read() == b""
        with pytest.raises(urllib.error.HTTPError) as refused:
            _get(url, method="POST")
        assert refused.value.code == 405
        assert "error" in refused.value.read().decode()
