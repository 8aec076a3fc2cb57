"""AlterConfigs and IncrementalAlterConfigs: change a topic's overrides, a broker's dynamic
configs, a group's or a client metrics subscription's configs, all or nothing per resource,
with Kafka 4.1's checks and error codes (ConfigAdminManager and DynamicBrokerConfig on the
broker, ConfigurationControlManager on the controller).

The legacy API replaces a resource's configs by exactly those sent; the incremental one applies
SET, DELETE, APPEND and SUBTRACT to single configs.  The cluster comes in as an argument
(anything with what :class:`~mockbroker.core.config.topic.ConfigCluster` names).
"""

from __future__ import annotations

from typing import Iterable

from msgspec import Struct

from mockbroker.core.config.broker import BROKER_CONFIGS, BROKER_QUOTA_CONFIGS, broker_resource
from mockbroker.core.config.group import validate_group_overrides
from mockbroker.core.config.topic import TOPIC_CONFIGS, ConfigCluster, validate_topic_overrides
from mockbroker.core.config.values import (
    ConfigType, InvalidValue, OpType, ResourceType, apply_ops, resource_type_name,
)
from mockbroker.core.errors import ApiException
from mockbroker.core.names import topic_name_error
from wire import errors

MIN_ISR = "min.insync.replicas"


class AlterResource(Struct):
    """One resource of an AlterConfigs or IncrementalAlterConfigs request.  ``configs`` holds
    (name, value) for the legacy API and (name, operation, value) for the incremental one."""

    resource_type: int
    resource_name: str
    configs: list[tuple]


def alter(cluster: ConfigCluster, resources: list[AlterResource], broker_id: int, *,
          incremental: bool, validate_only: bool) -> list[tuple[int, str | None]]:
    """Every resource of an (Incremental)AlterConfigs request, in request order:
    (error code, error message) each.  A failing resource changes nothing."""
    seen: dict[tuple[int, str], int] = {}
    for resource in resources:
        ident = (resource.resource_type, resource.resource_name)
        seen[ident] = seen.get(ident, 0) + 1
    results = []
    for resource in resources:
        if seen[(resource.resource_type, resource.resource_name)] > 1:
            results.append((errors.INVALID_REQUEST, "Each resource must appear at most once."))
            continue
        try:
            _alter_one(cluster, resource, broker_id, incremental, validate_only)
        except ApiException as exc:
            results.append((exc.error_code, exc.message or None))
        else:
            results.append((errors.NONE, None))
    return results


def _alter_one(cluster: ConfigCluster, resource: AlterResource, broker_id: int,
               incremental: bool, validate_only: bool) -> None:
    names = [c[0] for c in resource.configs]
    if len(set(names)) != len(names):
        raise ApiException(errors.INVALID_REQUEST, "Error due to duplicate config keys")
    if incremental:
        nulls = [c[0] for c in resource.configs if c[1] != OpType.DELETE and c[2] is None]
    else:
        nulls = [c[0] for c in resource.configs if c[1] is None]
    if nulls:
        raise ApiException(errors.INVALID_REQUEST,
                           "Null value not supported for : " + ", ".join(nulls))
    kind, name = resource.resource_type, resource.resource_name
    if kind == ResourceType.TOPIC:
        if incremental:
            incremental_alter_topic(cluster, name, resource.configs, validate_only=validate_only)
        else:
            alter_topic(cluster, name, dict(resource.configs), validate_only=validate_only)
    elif kind == ResourceType.BROKER:
        if incremental:
            incremental_alter_broker(cluster, name, broker_id, resource.configs,
                                     validate_only=validate_only)
        else:
            alter_broker(cluster, name, broker_id, dict(resource.configs),
                         validate_only=validate_only)
    elif kind == ResourceType.GROUP:
        if incremental:
            incremental_alter_group(cluster, name, broker_id, resource.configs,
                                    validate_only=validate_only)
        else:
            alter_group(cluster, name, broker_id, dict(resource.configs),
                        validate_only=validate_only)
    elif kind == ResourceType.CLIENT_METRICS:
        from mockbroker.core.config import client_metrics

        if incremental:
            client_metrics.incremental_alter(cluster.broker_configs, name, resource.configs,
                                             validate_only=validate_only)
        else:
            client_metrics.alter(cluster.broker_configs, name, dict(resource.configs),
                                 validate_only=validate_only)
    elif kind == ResourceType.BROKER_LOGGER and incremental:
        raise ApiException(errors.INVALID_REQUEST,
                           f"Unsupported resource type: {resource_type_name(kind)}")
    else:
        raise ApiException(errors.INVALID_REQUEST, f"Unknown resource type {kind}")



# -- topics --------------------------------------------------------------------------------------


def alter_topic(cluster: ConfigCluster, name: str, new: dict[str, str], *,
                validate_only: bool) -> None:
    """Give a topic exactly these overrides (the legacy AlterConfigs)."""
    _store_topic_configs(cluster, name, dict(new), validate_only)


def incremental_alter_topic(cluster: ConfigCluster, name: str,
                            ops: Iterable[tuple[str, int, str | None]], *,
                            validate_only: bool) -> None:
    """Apply SET / DELETE / APPEND / SUBTRACT to a topic's overrides, all or nothing."""
    topic = cluster.topics.get(name)
    current = dict(topic.configs) if topic is not None else {}

    def list_op(config: str, op: int, value: str, new: dict[str, str]) -> str:
        # a topic's list is changed from its value before the request, as Kafka does
        key = TOPIC_CONFIGS.get(config)
        if key is None or key.type is not ConfigType.LIST:
            raise ApiException(errors.INVALID_CONFIG, f"Can't {OpType(op).name} to key "
                               f"{config} because its type is not LIST.")
        base = current[config] if config in current else key.default_string
        parts = [p for p in (base or "").split(",") if p]
        if op == OpType.APPEND:
            parts += [v for v in value.split(",") if v not in parts]
        else:
            for v in value.split(","):
                if v in parts:
                    parts.remove(v)
        return ",".join(parts)

    _store_topic_configs(cluster, name, apply_ops(ops, dict(current), list_op), validate_only)


def _store_topic_configs(cluster: ConfigCluster, name: str, new: dict[str, str],
                         validate_only: bool) -> None:
    if name == "":
        raise ApiException(errors.INVALID_REQUEST, "Default topic resources are not allowed.")
    problem = topic_name_error(name)
    if problem:
        raise ApiException(errors.INVALID_TOPIC_EXCEPTION, problem)
    normalised = validate_topic_overrides(cluster, new)
    topic = cluster.topics.get(name)
    if topic is None:
        raise ApiException(errors.UNKNOWN_TOPIC_OR_PARTITION,
                           f"The topic '{name}' does not exist.")
    if not validate_only:
        min_isr_before = topic.configs.get(MIN_ISR)
        # in place: the data path holds on to the topic, not to its config dict
        topic.configs.clear()
        topic.configs.update(normalised)
        cluster.broker_configs.changed()
        if topic.configs.get(MIN_ISR) != min_isr_before:
            cluster.min_isr_changed(name)



# -- groups ---------------------------------------------------------------------------------------


def alter_group(cluster: ConfigCluster, name: str, broker_id: int, new: dict[str, str], *,
                validate_only: bool) -> None:
    """Give a group exactly these config overrides (the legacy AlterConfigs)."""
    _store_group_configs(cluster, name, broker_id, dict(new), validate_only)


def incremental_alter_group(cluster: ConfigCluster, name: str, broker_id: int,
                            ops: Iterable[tuple[str, int, str | None]], *,
                            validate_only: bool) -> None:
    """Apply SET and DELETE to a group's config overrides, all or nothing (Kafka refuses
    APPEND and SUBTRACT on every group config, lists included)."""
    props = apply_ops(ops, dict(cluster.broker_configs.group_configs.get(name, {})))
    _store_group_configs(cluster, name, broker_id, props, validate_only)


def _store_group_configs(cluster: ConfigCluster, name: str, broker_id: int,
                         new: dict[str, str], validate_only: bool) -> None:
    if name == "":
        raise ApiException(errors.INVALID_REQUEST, "Default group resources are not allowed.")
    state = cluster.broker_configs
    normalised = validate_group_overrides(new, state.effective(broker_id))
    if validate_only:
        return
    if normalised:
        state.group_configs[name] = normalised
    else:
        state.group_configs.pop(name, None)
    state.changed()  # what was worked out from the group's configs is stale



# -- brokers -------------------------------------------------------------------------------------


def _check_broker_props(props: dict[str, str], per_broker: bool) -> dict[str, str]:
    """DynamicBrokerConfig's checks, with the INVALID_REQUEST Kafka answers them with."""
    static = [n for n in props if n in BROKER_CONFIGS and not BROKER_CONFIGS[n].dynamic]
    if static:
        raise ApiException(errors.INVALID_REQUEST,
                           f"Cannot update these configs dynamically: Set({', '.join(static)})")
    if not per_broker:
        only = [n for n in props if n in BROKER_CONFIGS and BROKER_CONFIGS[n].per_broker]
        if only:
            raise ApiException(errors.INVALID_REQUEST, "Cannot update these configs at default "
                               "cluster level, broker id must be specified: "
                               f"Set({', '.join(only)})")
    out = {}
    for name, value in props.items():
        key = BROKER_CONFIGS.get(name) or BROKER_QUOTA_CONFIGS.get(name)
        try:
            out[name] = key.normalise(value) if key else value
        except InvalidValue as exc:
            raise ApiException(errors.INVALID_REQUEST, str(exc)) from None
    return out


def alter_broker(cluster: ConfigCluster, name: str, broker_id: int, new: dict[str, str], *,
                 validate_only: bool) -> None:
    """Replace a broker's (or the cluster-wide) dynamic configs (the legacy AlterConfigs)."""
    target = broker_resource(name, broker_id)
    state = cluster.broker_configs
    before = state.dynamic_default if target is None else state.per_broker(target)
    props = _check_broker_props(new, target is not None)
    # Kafka's controller writes a record for every config sent and one removing each config
    # the resource had and the request left out
    written = {**new, **{config: None for config in before if config not in new}}
    _check_min_isr(cluster, target, written)
    _store_broker_configs(cluster, target, props, validate_only, written)


def incremental_alter_broker(cluster: ConfigCluster, name: str, broker_id: int,
                             ops: Iterable[tuple[str, int, str | None]], *,
                             validate_only: bool) -> None:
    """Apply SET / DELETE / APPEND / SUBTRACT to a broker's (or the cluster-wide) dynamic
    configs, all or nothing."""
    target = broker_resource(name, broker_id)
    state = cluster.broker_configs
    props = dict(state.dynamic_default if target is None else state.per_broker(target))

    def list_op(config: str, op: int, value: str, props: dict[str, str]) -> str:
        # a broker's list is changed from its value so far in the request
        key = BROKER_CONFIGS.get(config)
        if key is None:
            raise ApiException(errors.INVALID_CONFIG, f"Unknown config name: {config}")
        verb = "append" if op == OpType.APPEND else "subtract"
        if key.type is not ConfigType.LIST:
            raise ApiException(errors.INVALID_CONFIG, f"Config value {verb} is not allowed "
                               f"for config key: {config}")
        base = props.get(config, key.default_string) or ""
        if op == OpType.APPEND:
            parts = [p for p in base.split(",") if p]
            return ",".join(parts + [v for v in value.split(",") if v not in parts])
        removed = value.split(",")
        return ",".join(p for p in base.split(",") if p not in removed)

    ops = list(ops)
    props = _check_broker_props(apply_ops(ops, props, list_op), target is not None)
    # Kafka's controller writes a record for every config a broker request names, changed or
    # not (so that brokers reload it)
    written = {config: props.get(config) for config, _, _ in ops}
    _check_min_isr(cluster, target, written)
    _store_broker_configs(cluster, target, props, validate_only, written)


def _check_min_isr(cluster: ConfigCluster, target: int | None,
                   written: dict[str, str | None]) -> None:
    """With eligible leader replicas on, Kafka's controller keeps ``min.insync.replicas`` at
    the cluster level only: it refuses a broker's own value, and the cluster's removed."""
    if MIN_ISR not in written or not cluster.elr_enabled:
        return
    if target is not None:
        raise ApiException(errors.INVALID_CONFIG, f"Broker-level {MIN_ISR} cannot be altered "
                                                  "while ELR is enabled.")
    if written[MIN_ISR] is None:
        raise ApiException(errors.INVALID_CONFIG, f"Cluster-level {MIN_ISR} cannot be removed "
                                                  "while ELR is enabled.")


def _store_broker_configs(cluster: ConfigCluster, target: int | None, props: dict[str, str],
                          validate_only: bool, written: dict[str, str | None]) -> None:
    if validate_only:
        return
    state = cluster.broker_configs
    if target is None:
        state.dynamic_default = props
    elif props:
        state.dynamic_per_broker[target] = props
    else:
        state.dynamic_per_broker.pop(target, None)
    state.sync_settings()
    if MIN_ISR in written:
        cluster.min_isr_changed(None)
