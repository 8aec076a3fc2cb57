"""What the admin API shows of a cluster: brokers, topics, decoded records, groups, faults,
the request log, ACLs and SASL users, as the views of :mod:`mockbroker.adminapi.views`.
Read-only; everything here runs on the cluster's loop thread.  A group's view is its type's to
build (the group coordinator asks its table of group types); the offsets and lag every type
shows alike are built here."""

from __future__ import annotations

import base64
import json

from mockbroker.adminapi.jsonview import from_object
from mockbroker.core.security.acls import authorizer_of
from mockbroker.core.security.mechanisms import PLAIN, SCRAM_HASHES
from mockbroker.adminapi.views import (
    AclsView, AclView, BrokerView, FaultView, GroupSummaryView, GroupView, HeaderView,
    LoggedRequestView, PartitionView, RecordView, SchemaReferenceView, SchemaRegistryView,
    SchemaVersionView, SubjectView, TopicView, TransactionView, UserView,
)
from mockbroker.adminapi.views import ClientMetricView, ClientSubscriptionView, ClientView
from wire import errors
from wire.records import decode_records, read_batch_header
from wire.apis import API_NAMES


class NotFound(LookupError):
    """An unknown broker, topic, partition, group or member (HTTP 404)."""


def brokers(core) -> list[BrokerView]:
    cluster = core.cluster
    leads: dict[int, int] = {}
    for partition in cluster.all_partitions():
        leads[partition.leader] = leads.get(partition.leader, 0) + 1
    return [from_object(
        BrokerView, broker, id=broker.node_id, state="up" if broker.alive else "down",
        controller=broker.node_id == cluster.controller_id,
        latency_ms=core.control.latency_ms(broker.node_id),
        leader_partitions=leads.get(broker.node_id, 0),
        listeners={name: f"{host}:{port}" for name, (host, port) in
                   (broker.endpoints or {"PLAINTEXT": (broker.host, broker.port)}).items()},
    ) for broker in sorted(cluster.brokers.values(), key=lambda b: b.node_id)]


def broker_view(core, node_id: int) -> BrokerView:
    broker(core, node_id)  # raises NotFound
    return next(b for b in brokers(core) if b.id == node_id)


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


def topic_view(found) -> TopicView:
    return TopicView(
        name=found.name, topic_id=str(found.topic_id), internal=found.internal,
        configs=dict(found.configs),
        partitions=[PartitionView(
            partition=p.index, leader=p.leader, leader_epoch=p.leader_epoch,
            replicas=list(p.replicas), isr=list(p.isr),
            log_start_offset=p.log.log_start_offset, high_watermark=p.log.high_watermark,
            records=p.log.high_watermark - p.log.log_start_offset,
            last_stable_offset=p.log.last_stable_offset, elr=list(p.elr),
            adding=list(p.adding), removing=list(p.removing), lagging=sorted(p.lagging),
        ) for p in found.partitions])


def topics(core, include_internal: bool = False) -> list[TopicView]:
    return [topic_view(t) for name, t in sorted(core.cluster.topics.items())
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
            limit: int) -> list[RecordView]:
    """Decoded records of one partition (or of every partition, each in offset order) from
    ``offset`` (default: the log start), at most ``limit``."""
    found = topic(core, name)
    if partition is not None and not 0 <= partition < len(found.partitions):
        raise NotFound(f"topic {name!r} has no partition {partition} "
                       f"(it has {len(found.partitions)})")
    chosen = found.partitions if partition is None else [found.partitions[partition]]
    out: list[RecordView] = []
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
            transaction = _transaction_of(log, header, batch.base_offset) \
                if header.is_transactional else None
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
                    headers.append(HeaderView(key=header_key, value=text, value_base64=raw))
                out.append(RecordView(
                    partition=p.index, offset=record.offset, timestamp=record.timestamp,
                    timestamp_type="LogAppendTime" if header.timestamp_type else "CreateTime",
                    key=key, key_base64=key_b64, value=value, value_base64=value_b64,
                    headers=headers, transaction=transaction,
                ))
    return out


def _transaction_of(log, header, base_offset: int) -> str:
    """What became of the transaction a transactional batch at ``base_offset`` belongs to."""
    pid = header.producer_id
    first_open = log.producer_state.ongoing.get(pid)
    if first_open is not None and base_offset >= first_open:
        return "pending"
    for aborted in log.aborted:
        if aborted.producer_id == pid and aborted.first_offset <= base_offset <= \
                aborted.last_offset:
            return "aborted"
    return "committed"


# -- transactions ---------------------------------------------------------------------------------

def transaction(core, transactional_id: str):
    found = core.transactions.find(transactional_id)
    if found is None:
        raise NotFound(f"unknown transactional id {transactional_id!r}")
    return found


def transaction_view(core, meta) -> TransactionView:
    now = core.clock.now_ms()
    partitions: dict[str, list[int]] = {}
    for topic, index in sorted(meta.partitions):
        partitions.setdefault(topic, []).append(index)
    pending: dict[str, dict[str, dict[str, int]]] = {}
    for _, group in core.groups.all_groups():
        for (topic, index), entry in sorted(
                group.pending_offsets.get(meta.producer_id, {}).items()):
            pending.setdefault(group.group_id, {}).setdefault(topic, {})[str(index)] = \
                entry.offset
    return TransactionView(
        transactional_id=meta.transactional_id, state=meta.state.value,
        producer_id=meta.producer_id, producer_epoch=meta.producer_epoch,
        partitions=partitions, timeout_ms=meta.timeout_ms,
        coordinator=core.transactions.placement.partition(meta.transactional_id).leader,
        start_ms=meta.start_ms, age_ms=now - meta.start_ms if meta.start_ms >= 0 else None,
        last_update_ms=meta.last_update_ms, pending_offsets=pending)


def transactions(core) -> list[TransactionView]:
    return [transaction_view(core, meta) for meta in sorted(
        (meta for _, meta in core.transactions.loaded()), key=lambda m: m.transactional_id)]


# -- groups ---------------------------------------------------------------------------------------

def group(core, group_id: str):
    for shard, found in core.groups.all_groups():
        if found.group_id == group_id:
            return shard, found
    raise NotFound(f"unknown group {group_id!r}")


def group_view(core, shard, found) -> GroupView:
    offsets: dict[str, dict[int, int]] = {}
    lag: dict[str, dict[int, int]] = {}
    metadata: dict[str, dict[int, str]] = {}
    for (topic_name, index), entry in sorted(found.offsets.items()):
        offsets.setdefault(topic_name, {})[index] = entry.offset
        metadata.setdefault(topic_name, {})[index] = entry.metadata
        partition = core.cluster.partition(topic_name, index)
        if partition is not None:
            lag.setdefault(topic_name, {})[index] = \
                max(0, partition.log.high_watermark - entry.offset)
    return core.groups.view(found, dict(coordinator=shard.leader, offsets=offsets,
                                        offset_metadata=metadata, lag=lag))


def groups(core, group_type: str | None = None) -> list[GroupSummaryView]:
    """Every group's summary, by group id; only those of ``group_type`` when given."""
    return [core.groups.summary(found, shard.leader)
            for shard, found in sorted(core.groups.all_groups(), key=lambda sg: sg[1].group_id)
            if group_type is None or found.type == group_type]


# -- faults and the request log -------------------------------------------------------------------

def _error_name(code: int | None) -> str | None:
    return errors.error_by_code(code).name if code else None


def fault_view(fault) -> FaultView:
    """A fault as the API shows it; its other fields are the fault's attributes of the same
    names."""
    registry = getattr(fault, "registry", None)
    return from_object(FaultView, fault,
                       api=API_NAMES.get(fault.api) if fault.api is not None else None,
                       api_key=fault.api,
                       # a registry rule's error is a Confluent code, which has no Kafka name
                       error=None if registry is not None else _error_name(fault.error),
                       error_code=fault.error)


def faults(core) -> list[FaultView]:
    return [fault_view(rule) for rule in core.control]


def requests(core, api: int | None = None, broker_id: int | None = None,
             client_id: str | None = None, limit: int | None = None) -> list[LoggedRequestView]:
    picked = [entry for entry in core.requests
              if (api is None or entry.api_key == api)
              and (broker_id is None or entry.broker == broker_id)
              and (client_id is None or entry.client_id == client_id)]
    if limit is not None:
        picked = picked[-limit:] if limit else []
    return [from_object(LoggedRequestView, entry,
                        api=API_NAMES.get(entry.api_key, str(entry.api_key)),
                        error=_error_name(entry.error_code)) for entry in picked]


# -- security -------------------------------------------------------------------------------------

def acl_view(acl) -> AclView:
    return AclView(resource_type=acl.resource_type.name, resource_name=acl.resource_name,
                   pattern_type=acl.pattern_type.name, principal=acl.principal, host=acl.host,
                   operation=acl.operation.name, permission_type=acl.permission_type.name)


def acls(core) -> AclsView:
    """The authorizer's ACLs in the order they were created; none, and ``authorizer`` false,
    when no authorizer is configured."""
    settings = core.security.settings
    authorizer = authorizer_of(core)
    return AclsView(authorizer=authorizer is not None,
                    allow_everyone_if_no_acl_found=settings.allow_everyone_if_no_acl_found,
                    super_users=[str(p) for p in core.security.super_users],
                    acls=[acl_view(acl) for acl in authorizer.acls] if authorizer else [])


def users(core) -> list[UserView]:
    """The SASL users by name, each with the mechanisms it has credentials for; what the
    credentials are (passwords, salts, keys) is never shown."""
    credentials = core.security.credentials
    super_users = {str(p) for p in core.security.super_users}
    shown = []
    for name in credentials.users():
        mechanisms = [PLAIN] if name in credentials.passwords else []
        mechanisms += [m for m in SCRAM_HASHES if name in credentials.scram[m]]
        shown.append(UserView(name=name, mechanisms=mechanisms,
                              super_user=f"User:{name}" in super_users))
    return shown


# -- client telemetry --------------------------------------------------------------------------

#: why the client routes find nothing on a cluster that receives no telemetry
NO_RECEIVER = ("the telemetry receiver is off: start the cluster with telemetry_receiver=True "
               "(mockbroker serve --telemetry-receiver) for clients to push telemetry")


def _telemetry(core):
    if not core.settings["telemetry_receiver"]:
        raise NotFound(NO_RECEIVER)
    return core.telemetry


def client_view(client) -> ClientView:
    return from_object(ClientView, client, subscription=ClientSubscriptionView(
        subscription_id=client.subscription_id, names=list(client.subscriptions),
        metrics=list(client.requested_metrics), push_interval_ms=client.push_interval_ms),
        metrics=len(client.metrics), resource=dict(client.resource))


def clients(core) -> list[ClientView]:
    """Every client instance the telemetry receiver heard from, in the order first seen."""
    return [client_view(c) for c in _telemetry(core).clients.values()]


def client(core, client_instance_id: str):
    """The receiver's client of that id (Kafka's base64 form, or a UUID)."""
    from mockbroker.core.telemetry.manager import parse_id

    telemetry = _telemetry(core)
    found = None
    wanted = parse_id(client_instance_id)
    if wanted is not None:
        found = telemetry.clients.get(wanted)
    if found is None:
        raise NotFound(f"unknown client instance id {client_instance_id!r}")
    return found


def client_metrics(core, client_instance_id: str,
                   prefix: str | None = None) -> list[ClientMetricView]:
    """The latest value of each metric the client pushed, by name (then attributes)."""
    found = client(core, client_instance_id)
    shown = [from_object(ClientMetricView, m, attributes=dict(m.attributes))
             for m in found.metrics.values() if prefix is None or m.name.startswith(prefix)]
    return sorted(shown, key=lambda m: (m.name, json.dumps(m.attributes, sort_keys=True,
                                                            default=str)))


def schema_registry(core, url: str) -> SchemaRegistryView:
    """The Schema Registry (``GET /schema-registry``): its global config and mode, and each
    subject's versions, soft-deleted ones included."""
    from mockbroker.core.schemas.cluster import registry_of

    registry = registry_of(core.cluster)
    state = registry.catch_up()
    subjects = []
    for subject, versions in sorted(state.subjects.items()):
        subjects.append(SubjectView(
            subject=subject,
            compatibility=(state.configs.get(subject) or {}).get("compatibilityLevel"),
            mode=state.modes.get(subject),
            versions=[SchemaVersionView(
                version=v.version, id=v.id, schema_type=v.schema_type, schema=v.schema,
                references=[SchemaReferenceView(name=r["name"], subject=r["subject"],
                                                version=r["version"])
                            for r in v.references],
                deleted=v.deleted) for _, v in sorted(versions.items())]))
    return SchemaRegistryView(url=url,
                              compatibility=registry.config(None)["compatibilityLevel"],
                              mode=registry.mode(None) or "READWRITE", subjects=subjects)
