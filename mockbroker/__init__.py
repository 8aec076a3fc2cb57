"""mockbroker: a Kafka-wire-compatible mock broker for integration tests."""

from mockbroker._version import __version__  # noqa: F401

from mockbroker.admin import AdminClient, AdminError, WaitTimeout  # noqa: E402
from mockbroker.core.control import DISCONNECT  # noqa: E402
from mockbroker.mock_cluster import MockCluster  # noqa: E402

__all__ = ["AdminClient", "AdminError", "DISCONNECT", "MockCluster", "WaitTimeout"]
