"""DescribeConfigs (key 32): topic and broker configs with their values, sources and types;
synonyms when asked (v1+), documentation when asked (v3+).  The model is
:mod:`mockbroker.core.config.describe`.

With an authorizer (Kafka's ConfigHelper): a broker's (or broker logger's, or client-metrics)
configs need DESCRIBE_CONFIGS on the cluster, a topic's or a group's DESCRIBE_CONFIGS on it;
a resource the principal may not describe comes after the others, with
CLUSTER_/TOPIC_/GROUP_AUTHORIZATION_FAILED, Kafka's message and no configs."""

from __future__ import annotations

from mockbroker.core.config.describe import describe
from mockbroker.core.errors import ApiException
from mockbroker.core.control.error_responses import KeyedShape
from mockbroker.core.security.acls import AclOperation as Op
from mockbroker.core.security.authorize import MESSAGES, access
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 32
RESPONSE = response_class(API_KEY)


ERRORS = (KeyedShape("resources", "resource_name", "results", "resource_name"),)


@REGISTRY.handler(API_KEY, errors=ERRORS)
def handle(core, ctx, request):
    include_documentation = request.include_documentation if ctx.api_version >= 3 else False
    acl = access(core, ctx)
    results, refused = [], []
    for resource in request.resources:
        out = RESPONSE.DescribeConfigsResult(
            error_code=errors.NONE, error_message=None, resource_type=resource.resource_type,
            resource_name=resource.resource_name, configs=[])
        denial = acl.config_denial(Op.DESCRIBE_CONFIGS, resource.resource_type,
                                   resource.resource_name)
        if denial is not None:
            out.error_code, out.error_message = denial, MESSAGES[denial]
            refused.append(out)
            continue
        try:
            entries = describe(
                core.cluster, resource.resource_type, resource.resource_name, ctx.broker_id,
                resource.configuration_keys, request.include_synonyms, include_documentation)
        except ApiException as exc:
            out.error_code = exc.error_code
            out.error_message = exc.message or None
        else:
            out.configs = [RESPONSE.DescribeConfigsResourceResult(
                name=e.name, value=e.value, read_only=e.read_only, config_source=e.source,
                is_sensitive=e.sensitive, config_type=e.type, documentation=e.documentation,
                synonyms=[RESPONSE.DescribeConfigsSynonym(name=n, value=v, source=s)
                          for n, v, s in e.synonyms]) for e in entries]
        results.append(out)
    return RESPONSE(throttle_time_ms=0, results=results + refused)
