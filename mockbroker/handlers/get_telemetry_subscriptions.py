"""GetTelemetrySubscriptions (key 71): a client asks which of its metrics to push, how often,
and compressed how (KIP-714); the logic is :mod:`mockbroker.core.telemetry.manager`.

The first request names the zero id and is given a new client instance id; a refusal
(THROTTLING_QUOTA_EXCEEDED: asked again within the push interval) carries nothing else, as
Kafka's.  Served whether or not ``telemetry_receiver`` is on, and advertised only when it is,
as Kafka serves it without a telemetry receiver and advertises it only with one.
"""

from __future__ import annotations

from mockbroker.core.telemetry.manager import ACCEPTED_COMPRESSION, ZERO_ID
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 71
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    software = core.client_software.get((ctx.broker_id, ctx.connection_id))
    error, instance = core.telemetry.get_subscriptions(ctx, software,
                                                       request.client_instance_id)
    if error != errors.NONE:
        return RESPONSE(throttle_time_ms=0, error_code=error, client_instance_id=ZERO_ID,
                        subscription_id=0, accepted_compression_types=[], push_interval_ms=0,
                        telemetry_max_bytes=0, delta_temporality=False, requested_metrics=[])
    return RESPONSE(throttle_time_ms=0, error_code=errors.NONE,
                    client_instance_id=instance.instance_id,
                    subscription_id=instance.subscription_id,
                    accepted_compression_types=list(ACCEPTED_COMPRESSION),
                    push_interval_ms=instance.push_interval_ms,
                    telemetry_max_bytes=core.telemetry.max_bytes, delta_temporality=True,
                    requested_metrics=list(instance.metrics))
