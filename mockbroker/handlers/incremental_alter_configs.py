"""IncrementalAlterConfigs (key 44): SET, DELETE, APPEND and SUBTRACT on single configs of
topics and brokers; a resource with any bad change keeps its configs as they were.

With an authorizer each resource needs ALTER_CONFIGS (ControllerApis' check): see
:func:`mockbroker.handlers._common.alter_configs`."""

from __future__ import annotations

from mockbroker.core.config.alter import AlterResource
from mockbroker.core.control.error_responses import KeyedShape
from mockbroker.handlers import REGISTRY
from mockbroker.handlers._common import alter_configs
from wire import response_class

API_KEY = 44
RESPONSE = response_class(API_KEY)


ERRORS = (KeyedShape("resources", "resource_name", "responses", "resource_name"),)


@REGISTRY.handler(API_KEY, errors=ERRORS)
def handle(core, ctx, request):
    resources = [AlterResource(r.resource_type, r.resource_name,
                               [(c.name, c.config_operation, c.value) for c in r.configs])
                 for r in request.resources]
    outcome = alter_configs(core, ctx, resources, incremental=True,
                            validate_only=request.validate_only)
    return RESPONSE(throttle_time_ms=0, responses=[
        RESPONSE.AlterConfigsResourceResponse(error_code=code, error_message=message,
                                              resource_type=r.resource_type,
                                              resource_name=r.resource_name)
        for r, (code, message) in zip(request.resources, outcome)])
