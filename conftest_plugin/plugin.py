"""The mockbroker pytest plugin.

Installing the package registers this module with pytest.  It declares the ``kafka`` marker
(``@pytest.mark.kafka(brokers=3, topics={...})``) that the cluster fixtures read.
"""

from __future__ import annotations


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers",
        "kafka(**settings): settings for the test's mock Kafka cluster, with MockCluster's "
        "names (brokers=3, topics={'orders': 6}, group_initial_rebalance_delay_ms=0, ...)",
    )
