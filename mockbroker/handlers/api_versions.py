"""ApiVersions (key 18): what this broker serves, built from the handler registry.

A request in a version we do not serve is answered (not dropped) with a v0 body carrying
UNSUPPORTED_VERSION and ApiVersions' own range (KIP-511), so a newer client can retry with a
version both sides know; see :func:`unsupported_version`.

A request Kafka's ``ApiVersionsRequest.isValid`` refuses is answered INVALID_REQUEST: from v3 a
client software name or version that is not alphanumerics with ``-`` and ``.`` inside; from v5
(KIP-1242) a ClusterId without a NodeId or a NodeId without a ClusterId.  A v5 request naming
another cluster, or this cluster but another node, is answered REBOOTSTRAP_REQUIRED: the client
reached a broker other than the one its metadata expects.  Both answers carry no API keys.

A broker emulating an older Kafka release (``kafka_version``) lists that release's APIs, ranges
and features (:mod:`mockbroker.core.kafka_version`), and a request in an ApiVersions version the
release does not serve (v4 to Kafka 3.8) gets the same KIP-511 answer, with the release's range.

From v3 the answer lists the cluster's features (:mod:`mockbroker.core.features`), and the
client's software name and version are kept for its connection (client telemetry matches on
them).  GetTelemetrySubscriptions and PushTelemetry are listed only with ``telemetry_receiver``
on, as Kafka lists them only with a telemetry receiver (it serves them either way).
"""

from __future__ import annotations

import re

from mockbroker.handlers import REGISTRY
from wire import encode_response_body, errors, response_class
from mockbroker.handlers.registry import ApiRegistry

API_KEY = 18
RESPONSE = response_class(API_KEY)


def _keys(registry: ApiRegistry, settings) -> list:
    return [RESPONSE.ApiVersion(api_key=key, min_version=lo, max_version=hi)
            for key, lo, hi in registry.api_versions(settings)]


def unsupported_version(core, header):
    """The KIP-511 answer to an ApiVersions request in a version the broker does not serve:
    (the version to encode it in, the response), with the range of the emulated release."""
    lo, hi = next((lo, hi) for key, lo, hi in core.registry.api_versions(core.settings)
                  if key == API_KEY)
    return 0, RESPONSE(error_code=errors.UNSUPPORTED_VERSION, api_keys=[
        RESPONSE.ApiVersion(api_key=API_KEY, min_version=lo, max_version=hi)])


#: what Kafka accepts as a client software name or version (v3+)
_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")
_NO_NODE = -1


def _is_valid(request, version: int) -> bool:
    if version >= 5 and (request.cluster_id is None) != (request.node_id == _NO_NODE):
        return False
    if version >= 3:
        return all(_SOFTWARE.fullmatch(value) for value in
                   (request.client_software_name, request.client_software_version))
    return True


def _names_another_broker(core, ctx, request) -> bool:
    return (ctx.api_version >= 5 and request.cluster_id is not None
            and (request.cluster_id != core.cluster.cluster_id
                 or request.node_id != ctx.broker_id))


@REGISTRY.handler(API_KEY, unsupported=unsupported_version)
def handle(core, ctx, request):
    if not _is_valid(request, ctx.api_version):
        return RESPONSE(error_code=errors.INVALID_REQUEST, api_keys=[], throttle_time_ms=0)
    if _names_another_broker(core, ctx, request):
        return RESPONSE(error_code=errors.REBOOTSTRAP_REQUIRED, api_keys=[], throttle_time_ms=0)
    if ctx.api_version >= 3:  # what the connection's client says it is (KIP-511)
        core.client_software[(ctx.broker_id, ctx.connection_id)] = (
            request.client_software_name, request.client_software_version)
    features = core.cluster.features
    # every new connection asks; the answer changes with the settings that list APIs and with
    # the finalized features, which move their epoch on
    key = (ctx.api_version, features.epoch, tuple(features.finalized()),
           core.registry.advertising(core.settings))
    answers = core.api_versions_answers
    found = answers.get(key)
    if found is None:
        if len(answers) > 64:
            answers.clear()
        found = answers[key] = encode_response_body(API_KEY, ctx.api_version,
                                                    _answer(core, ctx))
    return found


def _answer(core, ctx):
    return RESPONSE(
        error_code=errors.NONE, api_keys=_keys(core.registry, core.settings), throttle_time_ms=0,
        supported_features=[RESPONSE.SupportedFeatureKey(
            name=f.name, min_version=f.min_supported, max_version=f.max_supported)
            for f in core.cluster.features.supported(ctx.api_version)],
        finalized_features_epoch=core.cluster.features.epoch,
        finalized_features=[RESPONSE.FinalizedFeatureKey(
            name=name, min_version_level=level, max_version_level=level)
            for name, level in core.cluster.features.finalized()])
