"""pytest integration for mockbroker (registered through the ``pytest11`` entry point).

The fixtures (``kafka_cluster``, ``kafka_bootstrap``, ``kafka_admin``, ``kafka_cluster_factory``)
need no import; :func:`cluster_fixture` makes cluster fixtures with other scopes.
"""

from conftest_plugin.plugin import cluster_fixture

__all__ = ["cluster_fixture"]
