"""The Kafka listeners: one asyncio server per broker and listener (:mod:`.server`), each
connection's frames (:mod:`.stream`, :mod:`.tls_stream`) and TLS material (:mod:`.tls`).

It hands frames to the core's front door and writes back its answers, counting them in the
core's :mod:`~mockbroker.core.observe.request_metrics`; it knows nothing of the admin server
beside it (an import-linter contract holds the two apart)."""
