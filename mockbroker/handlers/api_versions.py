"""ApiVersions (key 18): what this broker serves, built from the handler registry.

A request in a version we do not serve is answered (not dropped) with a v0 body carrying
UNSUPPORTED_VERSION and ApiVersions' own range (KIP-511), so a newer client can retry with a
version both sides know; see :func:`unsupported_version`.
"""

from __future__ import annotations

from mockbroker.handlers import REGISTRY
from wire import errors, response_class
from mockbroker.handlers.registry import ApiRegistry

API_KEY = 18
RESPONSE = response_class(API_KEY)


def _keys(registry: ApiRegistry) -> list:
    return [RESPONSE.ApiVersion(api_key=key, min_version=lo, max_version=hi)
            for key, lo, hi in registry.api_versions()]


def unsupported_version(core, header):
    """The KIP-511 answer to an ApiVersions request in a version the broker does not serve:
    (the version to encode it in, the response)."""
    entry = core.registry.get(API_KEY)
    return 0, RESPONSE(error_code=errors.UNSUPPORTED_VERSION, api_keys=[
        RESPONSE.ApiVersion(api_key=API_KEY, min_version=entry.min_version,
                            max_version=entry.max_version)])


@REGISTRY.handler(API_KEY, 0, 4, unsupported=unsupported_version)
def handle(core, ctx, request):
    return RESPONSE(error_code=errors.NONE, api_keys=_keys(core.registry), throttle_time_ms=0)
