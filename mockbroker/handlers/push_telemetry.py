"""PushTelemetry (key 72): a client pushes its metrics, OTLP ``MetricsData`` compressed as it
chose (KIP-714); the checks, their order and the receiver that keeps the metrics are
:mod:`mockbroker.core.telemetry.manager`.  The answer is an error code alone.

Served whether or not ``telemetry_receiver`` is on, and advertised only when it is, as Kafka
does; without the receiver a push is checked, decompressed and dropped, as Kafka without a
telemetry receiver drops it.
"""

from __future__ import annotations

from mockbroker.handlers import REGISTRY
from wire import response_class

API_KEY = 72
RESPONSE = response_class(API_KEY)


@REGISTRY.handler(API_KEY)
def handle(core, ctx, request):
    software = core.client_software.get((ctx.broker_id, ctx.connection_id))
    return RESPONSE(throttle_time_ms=0,
                    error_code=core.telemetry.push(ctx, software, request))
