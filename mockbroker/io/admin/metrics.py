"""``GET /metrics``: the cluster in Prometheus' text format (version 0.0.4), written here.

Two kinds of series:

- the cluster as Kafka's exporter (danielqsj/kafka_exporter) shows a Kafka cluster, under its
  names and labels, so that dashboards and alerts written for it work unchanged:
  ``kafka_brokers``, ``kafka_topic_partition_*`` (internal topics left out, as ``GET /topics``
  leaves them out) and ``kafka_consumergroup_*``; share groups, which the exporter does not
  know, as ``mockbroker_sharegroup_*`` (start offset, lag and acquired records per share
  partition).  Committed offsets and lag are those of
  ``GET /groups/{group_id}`` (:func:`mockbroker.core.observe.inspect.group_view`), never computed
  again here, so the two always agree;
- the broker's own traffic, counted by :class:`RequestMetrics` as the listeners time it (the
  core reads no time; :mod:`mockbroker.core.observe.request_metrics` holds the counts without
  the HTTP server): ``mockbroker_requests_total{api,broker}`` and the histogram
  ``mockbroker_request_duration_seconds{api}``, from a request frame read to its answer
  written;
- with a Schema Registry: its subjects, schemas and each subject's live versions, and the
  calls it answered (``mockbroker_schema_registry_requests_total{operation,status}``).

The request metrics belong to the process, as the listeners do: ``POST /reset`` forgets the
cluster's state (and the request log of ``GET /requests``) but not these counters, so that a
scraper sees them grow monotonically for as long as the process runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator

from aiohttp import web

from mockbroker.core.observe import inspect
from mockbroker.core.observe.request_metrics import DURATION_BUCKETS, RequestMetrics
from wire.apis import API_NAMES

if TYPE_CHECKING:
    from mockbroker.io.runtime import ClusterRuntime

#: where the metrics are served
PATH = "/metrics"
#: Prometheus' text exposition format
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# -- the text format -------------------------------------------------------------------------

def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    if isinstance(value, int):
        return str(value)
    if value == float("inf"):
        return "+Inf"
    return repr(value)


class _Writer:
    """Families of samples, each announced by its HELP and TYPE lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def family(self, name: str, kind: str, help_text: str,
               samples: Iterable[tuple[dict[str, str], float]], suffix: str = "") -> None:
        self.lines.append(f"# HELP {name} {help_text}")
        self.lines.append(f"# TYPE {name} {kind}")
        for labels, value in samples:
            self.sample(name + suffix, labels, value)

    def sample(self, name: str, labels: dict[str, str], value: float) -> None:
        if labels:
            inside = ",".join(f'{key}="{_escape(str(v))}"' for key, v in labels.items())
            self.lines.append(f"{name}{{{inside}}} {_number(value)}")
        else:
            self.lines.append(f"{name} {_number(value)}")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _api_name(api_key: int) -> str:
    return API_NAMES.get(api_key, "unknown")


def _cluster(out: _Writer, core) -> None:
    brokers = inspect.brokers(core)
    out.family("kafka_brokers", "gauge", "Number of live brokers in the cluster.",
               [({}, sum(1 for b in brokers if b.state == "up"))])
    topics = inspect.topics(core)  # internal topics left out, as GET /topics does

    def per_partition(value) -> Iterator[tuple[dict[str, str], float]]:
        for topic in topics:
            for p in topic.partitions:
                yield {"topic": topic.name, "partition": str(p.partition)}, value(p)

    out.family("kafka_topic_partitions", "gauge", "Number of partitions of a topic.",
               [({"topic": t.name}, len(t.partitions)) for t in topics])
    for name, help_text, value in (
            ("current_offset", "High watermark of a partition.", lambda p: p.high_watermark),
            ("oldest_offset", "Log start offset of a partition.", lambda p: p.log_start_offset),
            ("leader", "Broker id of a partition's leader.", lambda p: p.leader),
            ("replicas", "Number of replicas of a partition.", lambda p: len(p.replicas)),
            ("in_sync_replica", "Number of in-sync replicas of a partition.",
             lambda p: len(p.isr)),
            ("leader_is_preferred", "1 if the partition's leader is its preferred replica.",
             lambda p: int(bool(p.replicas) and p.leader == p.replicas[0])),
            ("under_replicated_partition", "1 if the partition is under-replicated.",
             lambda p: int(len(p.isr) < len(p.replicas)))):
        out.family(f"kafka_topic_partition_{name}", "gauge", help_text, per_partition(value))
    _groups(out, core)


def _groups(out: _Writer, core) -> None:
    views = sorted((inspect.group_view(core, shard, found)
                    for shard, found in core.groups.all_groups()), key=lambda g: g.group_id)

    def per_partition(field: str) -> Iterator[tuple[dict[str, str], float]]:
        for view in views:
            for topic, partitions in sorted(getattr(view, field).items()):
                for partition, value in sorted(partitions.items()):
                    yield ({"consumergroup": view.group_id, "topic": topic,
                            "partition": str(partition)}, value)

    def per_topic(field: str) -> Iterator[tuple[dict[str, str], float]]:
        for view in views:
            for topic, partitions in sorted(getattr(view, field).items()):
                yield {"consumergroup": view.group_id, "topic": topic}, sum(partitions.values())

    out.family("kafka_consumergroup_current_offset", "gauge",
               "Committed offset of a consumer group in a partition.", per_partition("offsets"))
    out.family("kafka_consumergroup_current_offset_sum", "gauge",
               "Sum of a consumer group's committed offsets in a topic.", per_topic("offsets"))
    out.family("kafka_consumergroup_lag", "gauge",
               "Lag of a consumer group in a partition: high watermark - committed offset.",
               per_partition("lag"))
    out.family("kafka_consumergroup_lag_sum", "gauge",
               "Sum of a consumer group's lag in a topic.", per_topic("lag"))
    out.family("kafka_consumergroup_members", "gauge", "Number of members of a consumer group.",
               [({"consumergroup": v.group_id}, len(v.members)) for v in views])
    shared = [(v.group_id, p) for v in views for p in v.share_partitions or ()]

    def per_share_partition(value) -> Iterator[tuple[dict[str, str], float]]:
        for group_id, p in shared:
            yield ({"sharegroup": group_id, "topic": p.topic, "partition": str(p.partition)},
                   value(p))

    out.family("mockbroker_sharegroup_start_offset", "gauge",
               "Share-partition start offset of a share group: every record before it is "
               "acknowledged or archived.", per_share_partition(lambda p: p.start_offset))
    out.family("mockbroker_sharegroup_lag", "gauge",
               "Records of a share partition from its start offset to the high watermark not "
               "yet acknowledged or archived.", per_share_partition(lambda p: p.lag))
    out.family("mockbroker_sharegroup_records_acquired", "gauge",
               "Records of a share partition delivered and locked now.",
               per_share_partition(lambda p: sum(r.last_offset - r.first_offset + 1
                                                 for r in p.in_flight
                                                 if r.state == "Acquired")))


def _requests(out: _Writer, metrics: RequestMetrics) -> None:
    out.family("mockbroker_requests_total", "counter",
               "Kafka requests handled, by API and broker.",
               [({"api": _api_name(api), "broker": str(broker)}, count)
                for (api, broker), count in sorted(metrics.requests.items())])
    name = "mockbroker_request_duration_seconds"
    out.family(name, "histogram",
               "Time from a request frame read to its answer written, by API.", [])
    for api, histogram in sorted(metrics.durations.items()):
        label = _api_name(api)
        cumulative = 0
        for bound, count in zip((*DURATION_BUCKETS, float("inf")), histogram.buckets):
            cumulative += count
            out.sample(f"{name}_bucket", {"api": label, "le": _number(float(bound))},
                       cumulative)
        out.sample(f"{name}_sum", {"api": label}, histogram.total)
        out.sample(f"{name}_count", {"api": label}, histogram.count)


def _schema_registry(out: _Writer, core, calls: dict[tuple[str, int], int]) -> None:
    registry = core.cluster.__dict__.get("schema_registry")
    if registry is None:  # the cluster runs none (or it has not started yet)
        return
    state = registry.catch_up()
    versions = {subject: [v for v in found.values() if not v.deleted]
                for subject, found in sorted(state.subjects.items())}
    out.family("mockbroker_schema_registry_subjects", "gauge",
               "Subjects of the Schema Registry with a live version.",
               [({}, sum(1 for live in versions.values() if live))])
    out.family("mockbroker_schema_registry_schemas", "gauge",
               "Distinct schemas (ids) the Schema Registry holds.", [({}, len(state.holders))])
    out.family("mockbroker_schema_registry_versions", "gauge",
               "Live versions of each subject.",
               [({"subject": subject}, len(live)) for subject, live in versions.items()
                if live])
    out.family("mockbroker_schema_registry_requests_total", "counter",
               "Schema Registry calls answered, by operation and HTTP status.",
               [({"operation": operation, "status": str(status)}, count)
                for (operation, status), count in sorted(calls.items())])


def render(core, metrics: RequestMetrics,
           registry_calls: dict[tuple[str, int], int] | None = None) -> str:
    """Every series, as the text ``GET /metrics`` answers; the Schema Registry's with
    ``registry_calls`` (operation, HTTP status) -> count, when the cluster runs one."""
    out = _Writer()
    _cluster(out, core)
    _requests(out, metrics)
    if registry_calls is not None:
        _schema_registry(out, core, registry_calls)
    return out.text()


def serve_metrics(runtime: "ClusterRuntime"):
    """The middleware that answers ``GET /metrics`` (HEAD too) for one runtime, reading its
    core afresh on every scrape (a reset replaces it).  A middleware, as the dashboard's pages
    are (:mod:`mockbroker.io.admin.pages`), rather than a route: the router holds exactly the
    JSON API that ``GET /openapi.json`` describes.  Placed after the token check, so where the API
    requires a token this does too (Prometheus sends it with ``authorization`` or
    ``bearer_token_file`` in its scrape config)."""
    @web.middleware
    async def metrics(request: web.Request, handler) -> web.StreamResponse:
        if request.path != PATH:
            return await handler(request)
        if request.method not in ("GET", "HEAD"):
            raise web.HTTPMethodNotAllowed(request.method, ["GET", "HEAD"])
        server = runtime.schema_registry
        body = render(runtime.core, runtime.request_metrics,
                      None if server is None else server.calls)
        return web.Response(body=body.encode(), headers={"Content-Type": CONTENT_TYPE})

    return metrics
