"""mockbroker: a Kafka-wire-compatible mock broker for integration tests."""

from mockbroker.mock_cluster import MockCluster

__all__ = ["MockCluster"]
__version__ = "0.1.0"
