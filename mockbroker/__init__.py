"""mockbroker: a Kafka-wire-compatible mock broker for integration tests."""

__version__ = "0.1.0"
