"""UpdateFeatures (key 57): raise or lower the cluster's finalized feature levels, all or none,
with the checks and messages of Kafka's controller (:class:`~mockbroker.core.features.
FeatureLevels`).  Needs ALTER on the cluster when an authorizer is configured.

v0 carries ``allow_downgrade``, which Kafka 4.4's controller ignores (a v0 downgrade is refused
as one without a downgrade type), and no ``validate_only``; v0 and v1 answer a success with a
result per feature named, each with the message ``NONE`` as Kafka writes it, and a refusal with
no results; v2 has no results at all.

A cluster emulating Kafka 3.x (``kafka_version``) answers as 3.x's controller did: each feature
checked on its own and those that pass applied, with a result per feature (by name: its error
and message, or none and no message) under a top-level error of none with an empty message.
"""

from __future__ import annotations

from mockbroker.core.controller.replication import ELR_FEATURE
from mockbroker.core.features import UPGRADE, FeatureUpdateError
from mockbroker.core.security.acls import AclOperation, authorizer_of, cluster_denial
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 57
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    version = ctx.api_version
    authorizer = authorizer_of(core)
    if authorizer is not None and cluster_denial(authorizer, ctx, AclOperation.ALTER):
        return RESPONSE(throttle_time_ms=0, error_code=errors.CLUSTER_AUTHORIZATION_FAILED,
                        error_message=None, results=[])
    updates = [(u.feature, u.max_version_level, u.upgrade_type if version >= 1 else UPGRADE)
               for u in request.feature_updates]
    validate_only = version >= 1 and request.validate_only
    cluster = core.cluster
    if cluster.features.each_on_its_own:
        return _each_on_its_own(core, updates, validate_only)
    try:
        cluster.features.update(updates, cluster.controller_id, validate_only=validate_only)
    except FeatureUpdateError as exc:
        return RESPONSE(throttle_time_ms=0, error_code=errors.INVALID_UPDATE_VERSION,
                        error_message=str(exc), results=[])
    if not validate_only:
        _applied(core, updates)
    return RESPONSE(throttle_time_ms=0, error_code=errors.NONE, error_message=None, results=[
        RESPONSE.UpdatableFeatureResult(feature=name, error_code=errors.NONE,
                                        error_message="NONE")
        for name, _, _ in updates])


def _applied(core, updates: list[tuple[str, int, int]]) -> None:
    """What follows from levels just set: configs worked out again, ELR on, the event."""
    if not updates:
        return
    cluster = core.cluster
    cluster.broker_configs.changed()  # what is worked out from the levels is redone
    if any(name == ELR_FEATURE and level > 0 for name, level, _ in updates):
        cluster.eligible_leaders_on()
    core.events.emit("features_updated", features={
        name: level for name, level, _ in updates}, epoch=cluster.features.epoch)


def _each_on_its_own(core, updates: list[tuple[str, int, int]], validate_only: bool):
    """Kafka 3.x's answer: a result per feature, the ones that passed applied."""
    cluster = core.cluster
    refused = cluster.features.update_each(updates, cluster.controller_id,
                                           validate_only=validate_only)
    if not validate_only:
        _applied(core, [u for u in updates if refused.get(u[0], "") is None])
    return RESPONSE(throttle_time_ms=0, error_code=errors.NONE, error_message="", results=[
        RESPONSE.UpdatableFeatureResult(
            feature=name, error_code=errors.NONE if reason is None else
            errors.INVALID_UPDATE_VERSION, error_message=reason)
        for name, reason in refused.items()])
