"""Client telemetry (KIP-714): what GetTelemetrySubscriptions and PushTelemetry do.

- :mod:`~mockbroker.core.telemetry.manager`: Kafka's ClientMetricsManager (each broker's client
  instances, their subscriptions, push intervals and errors) and the receiver that keeps what
  clients push (``GET /clients``);
- :mod:`~mockbroker.core.telemetry.otlp`: the pushed OTLP ``MetricsData``, decoded.

The subscriptions themselves are configs (:mod:`mockbroker.core.config.client_metrics`).
Loaded with the first telemetry request: a broker no client pushes to never loads it.
"""
