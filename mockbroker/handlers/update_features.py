"""UpdateFeatures (key 57): raise or lower the cluster's finalized feature levels, all or none,
with the checks and messages of Kafka's controller (:class:`~mockbroker.core.features.
FeatureLevels`).  Needs ALTER on the cluster when an authorizer is configured.

v0 carries ``allow_downgrade``, which Kafka 4.4's controller ignores (a v0 downgrade is refused
as one without a downgrade type), and no ``validate_only``; v0 and v1 answer a success with a
result per feature named, each with the message ``NONE`` as Kafka writes it, and a refusal with
no results; v2 has no results at all.
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
    try:
        cluster.features.update(updates, cluster.controller_id, validate_only=validate_only)
    except FeatureUpdateError as exc:
        return RESPONSE(throttle_time_ms=0, error_code=errors.INVALID_UPDATE_VERSION,
                        error_message=str(exc), results=[])
    if updates and not validate_only:
        cluster.broker_configs.changed()  # what is worked out from the levels is redone
        if any(name == ELR_FEATURE and level > 0 for name, level, _ in updates):
            cluster.eligible_leaders_on()
        core.events.emit("features_updated", features={
            name: level for name, level, _ in updates}, epoch=cluster.features.epoch)
    return RESPONSE(throttle_time_ms=0, error_code=errors.NONE, error_message=None, results=[
        RESPONSE.UpdatableFeatureResult(feature=name, error_code=errors.NONE,
                                        error_message="NONE")
        for name, _, _ in updates])
