"""What the HTTP API shows of a cluster: brokers, topics, decoded records and groups, as plain
JSON-ready data.  Read-only; everything here runs on the cluster's loop thread."""

from __future__ import annotations

import base64
from typing import Any

from wire import WireError, decode_embedded
from wire.records import decode_records, read_batch_header


class NotFound(LookupError):
    """An unknown broker, topic, partition, group or member (HTTP 404)."""


class BadQuery(ValueError):
    """A query parameter that cannot be used (HTTP 400)."""


def brokers(core) -> list[dict[str, Any]]:
    cluster = core.cluster
    leads: dict[int, int] = {}
    for partition in cluster.all_partitions():
        leads[partition.leader] = leads.get(partition.leader, 0) + 1
    return [{
        "id": broker.node_id,
        "host": broker.host,
        "port": broker.port,
        "rack": broker.rack,
        "state": "up" if broker.alive else "down",
        "controller": broker.node_id == cluster.controller_id,
        "latency_ms": core.broker_latency_ms.get(broker.node_id, 0),
        "leader_partitions": leads.get(broker.node_id, 0),
    } for broker in sorted(cluster.brokers.values(), key=lambda b: b.node_id)]


def broker(core, node_id: int):
    found = core.cluster.brokers.get(node_id)
    if found is None:
        raise NotFound(f"unknown broker {node_id}; brokers are "
                       f"{', '.join(str(b) for b in sorted(core.cluster.brokers))}")
    return found


# -- topics ---------------------------------------------------------------------------------------

def topic(core, name: str):
    found = core.cluster.topics.get(name)
    if found is None:
        raise NotFound(f"unknown topic {name!r}")
    return found


def topic_json(found) -> dict[str, Any]:
    return {
        "name": found.name,
        "topic_id": str(found.topic_id),
        "internal": found.internal,
        "configs": dict(found.configs),
        "partitions": [{
            "partition": p.index,
            "leader": p.leader,
            "leader_epoch": p.leader_epoch,
            "replicas": list(p.replicas),
            "isr": list(p.isr),
            "log_start_offset": p.log.log_start_offset,
            "high_watermark": p.log.high_watermark,
            "records": p.log.high_watermark - p.log.log_start_offset,
        } for p in found.partitions],
    }


def topics(core, include_internal: bool = False) -> list[dict[str, Any]]:
    return [topic_json(t) for name, t in sorted(core.cluster.topics.items())
            if include_internal or not t.internal]


def _bytes_json(data: bytes | None) -> tuple[str | None, str | None]:
    """(UTF-8 text or None when it is not text, base64) of a key, value or header value."""
    if data is None:
        return None, None
    raw = bytes(data)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    return text, base64.b64encode(raw).decode("ascii")


def records(core, name: str, partition: int | None, offset: int | None,
            limit: int) -> list[dict[str, Any]]:
    """Decoded records of one partition (or of every partition, each in offset order) from
    ``offset`` (default: the log start), at most ``limit``."""
    found = topic(core, name)
    if partition is not None and not 0 <= partition < len(found.partitions):
        raise NotFound(f"topic {name!r} has no partition {partition} "
                       f"(it has {len(found.partitions)})")
    if limit < 0:
        raise BadQuery(f"limit must not be negative, got {limit}")
    chosen = found.partitions if partition is None else [found.partitions[partition]]
    out: list[dict[str, Any]] = []
    for p in chosen:
        log = p.log
        start = log.log_start_offset if offset is None else max(offset, log.log_start_offset)
        for batch in log.batches:
            if len(out) >= limit:
                return out
            if batch.last_offset < start:
                continue
            header = read_batch_header(batch.data)
            if header.is_control:
                continue  # transaction markers are not records a consumer sees
            for record in decode_records(batch.data, verify_crc=False):
                if record.offset < start:
                    continue
                if len(out) >= limit:
                    return out
                key, key_b64 = _bytes_json(record.key)
                value, value_b64 = _bytes_json(record.value)
                headers = []
                for header_key, header_value in record.headers:
                    text, raw = _bytes_json(header_value)
                    headers.append({"key": header_key, "value": text, "value_base64": raw})
                out.append({
                    "partition": p.index, "offset": record.offset,
                    "timestamp": record.timestamp,
                    "timestamp_type": "LogAppendTime" if header.timestamp_type else "CreateTime",
                    "key": key, "key_base64": key_b64,
                    "value": value, "value_base64": value_b64,
                    "headers": headers,
                })
    return out


# -- groups ---------------------------------------------------------------------------------------

def group(core, group_id: str):
    for shard, found in core.groups.groups():
        if found.group_id == group_id:
            return shard, found
    raise NotFound(f"unknown group {group_id!r}")


def _assignment(protocol_type: str | None, data: bytes) -> dict[str, list[int]] | None:
    if protocol_type != "consumer" or not data:
        return {} if protocol_type == "consumer" else None
    try:
        _, assignment = decode_embedded("ConsumerProtocolAssignment", data)
    except WireError:
        return None
    out: dict[str, list[int]] = {}
    for entry in assignment.assigned_partitions:
        out.setdefault(entry.topic, []).extend(entry.partitions)
    return {t: sorted(ps) for t, ps in sorted(out.items())}


def group_json(core, shard, found) -> dict[str, Any]:
    offsets: dict[str, dict[str, int]] = {}
    lag: dict[str, dict[str, int]] = {}
    metadata: dict[str, dict[str, str]] = {}
    for (topic_name, index), entry in sorted(found.offsets.items()):
        offsets.setdefault(topic_name, {})[str(index)] = entry.offset
        metadata.setdefault(topic_name, {})[str(index)] = entry.metadata
        partition = core.cluster.partition(topic_name, index)
        if partition is not None:
            lag.setdefault(topic_name, {})[str(index)] = \
                max(0, partition.log.high_watermark - entry.offset)
    return {
        "group_id": found.group_id,
        "state": found.state.value,
        "generation": found.generation_id,
        "protocol_type": found.protocol_type,
        "protocol": found.protocol_name,
        "leader": found.leader_id,
        "coordinator": shard.leader,
        "members": [{
            "member_id": m.member_id,
            "client_id": m.client_id,
            "client_host": m.client_host,
            "group_instance_id": m.group_instance_id,
            "session_timeout_ms": m.session_timeout_ms,
            "rebalance_timeout_ms": m.rebalance_timeout_ms,
            "assignment": _assignment(found.protocol_type, m.assignment),
            "assignment_base64": base64.b64encode(m.assignment).decode("ascii"),
        } for m in found.members.values()],
        "offsets": offsets,
        "offset_metadata": metadata,
        "lag": lag,
    }


def groups(core) -> list[dict[str, Any]]:
    return [{
        "group_id": found.group_id,
        "state": found.state.value,
        "generation": found.generation_id,
        "protocol_type": found.protocol_type,
        "coordinator": shard.leader,
        "members": len(found.members),
    } for shard, found in sorted(core.groups.groups(), key=lambda sg: sg[1].group_id)]


def requests(core, api: int | None = None, broker_id: int | None = None,
             client_id: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
    picked = [entry for entry in core.requests
              if (api is None or entry.api_key == api)
              and (broker_id is None or entry.broker == broker_id)
              and (client_id is None or entry.client_id == client_id)]
    if limit is not None:
        picked = picked[-limit:] if limit else []
    return [entry.to_json() for entry in picked]
