"""The mockbroker pytest plugin (registered through the ``pytest11`` entry point, so installing
the package is enough).

Fixtures:

* ``kafka_cluster``: a fresh, started :class:`~mockbroker.MockCluster` for each test, with the
  settings of the ``@pytest.mark.kafka(brokers=3, topics={"orders": 6}, ...)`` marker (the
  closest marker wins per setting: function over class over module) on top of the run's
  settings (ini ``kafka_brokers`` / ``kafka_settings``, ``--kafka-brokers`` /
  ``--kafka-setting NAME=VALUE``).
* ``kafka_bootstrap``: its ``bootstrap_servers``, or the cluster given by
  ``--kafka-bootstrap=HOST:PORT`` (ini ``kafka_bootstrap``) to run the same tests against an
  existing Kafka.
* ``kafka_admin``: an :class:`~mockbroker.AdminClient` for the cluster's HTTP API (skipped,
  with the reason, when the run uses an existing Kafka); it sends the cluster's admin token and
  trusts its CA when the API needs them (``host="0.0.0.0"``, ``admin_token=``, ``admin_tls=``).
* ``kafka_cluster_factory``: starts extra clusters inside a test (``factory(brokers=3)``),
  all stopped at its end.
* ``schema_registry_url``: the URL of the test cluster's Schema Registry (Confluent's REST API;
  a test that takes it gets a cluster with ``schema_registry=True``, as the marker's
  ``schema_registry=True`` gives one to ``kafka_cluster`` too).

For other scopes, :func:`cluster_fixture` makes a cluster fixture of your own::

    shared_kafka = cluster_fixture(scope="session", topics={"events": 3})

Every setting of :class:`~mockbroker.MockCluster` goes in the marker (and in
``cluster_fixture`` and the factory) under its own name, security included::

    @pytest.mark.kafka(security_protocol="SASL_SSL", users={"alice": "secret"},
                       authorizer=True, super_users=["admin"])

and in ``--kafka-setting`` / ini ``kafka_settings`` lines as text (``users=alice:secret,bob:pw``,
``listeners=PLAINTEXT,SASL_SSL``, ``authorizer=true``).  ``kafka_version="3.9"`` makes a cluster
one of that Kafka release (its API versions, features and their defaults; 4.4 by default):
``@pytest.mark.kafka(kafka_version="3.9")`` for a test, ``--kafka-setting kafka_version=3.9``
for a whole run; an unknown release is a usage error naming the known ones.

Every cluster listens on ephemeral ports, so ``pytest -n auto`` workers never clash.

pytest loads this module in every project of the environment, Kafka or not: it imports nothing
of mockbroker at load time (the broker, its event loop and aiohttp come with the first fixture
or setting that needs them), so a run that uses none of it does not pay for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator

import pytest

if TYPE_CHECKING:
    from mockbroker import AdminClient, MockCluster

_EXTERNAL_KEY = pytest.StashKey[str | None]()
_SETTINGS_KEY = pytest.StashKey[dict[str, Any]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mockbroker", "mock Kafka clusters (mockbroker)")
    group.addoption("--kafka-bootstrap", dest="kafka_bootstrap", default=None,
                    metavar="HOST:PORT[,HOST:PORT...]",
                    help="run against this existing Kafka cluster instead of mockbroker "
                         "(tests that need kafka_admin or kafka_cluster are skipped)")
    group.addoption("--kafka-brokers", dest="kafka_brokers", default=None, type=int,
                    metavar="N", help="brokers in each mock cluster (default 1)")
    group.addoption("--kafka-setting", dest="kafka_settings", action="append", default=[],
                    metavar="NAME=VALUE",
                    help="a broker setting for every mock cluster, with Kafka's name "
                         "(num.partitions=3 or num_partitions=3); repeatable")
    parser.addini("kafka_bootstrap", "an existing Kafka cluster to run against", default=None)
    parser.addini("kafka_brokers", "brokers in each mock cluster", default=None)
    parser.addini("kafka_settings", "broker settings for every mock cluster, one NAME=VALUE "
                  "per line", type="linelist", default=[])


def _parse_value(text: str) -> Any:
    text = text.strip()
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return int(text)
    except ValueError:
        return text


#: settings given as text that MockCluster takes as a list: ``users=alice:secret,bob:pw``
_LIST_SETTINGS = ("users",)


def _parse_settings(lines: list[str], where: str) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    for line in lines:
        if not line.strip():
            continue
        name, sep, value = line.partition("=")
        if not sep or not name.strip():
            raise pytest.UsageError(f"{where}: expected NAME=VALUE, got {line!r}")
        name = name.strip().replace(".", "_").replace("-", "_")
        if name in _LIST_SETTINGS:
            settings[name] = [item.strip() for item in value.split(",") if item.strip()]
        else:
            settings[name] = _parse_value(value)
    return settings


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "kafka(**settings): settings for the test's mock Kafka cluster, with MockCluster's "
        "names (brokers=3, topics={'orders': 6}, group_initial_rebalance_delay_ms=0, ...)",
    )
    settings = _parse_settings(config.getini("kafka_settings"), "ini kafka_settings")
    settings.update(_parse_settings(config.getoption("kafka_settings") or [], "--kafka-setting"))
    brokers = config.getoption("kafka_brokers") or config.getini("kafka_brokers")
    if brokers not in (None, ""):
        try:
            settings["brokers"] = int(brokers)
        except ValueError:
            raise pytest.UsageError(f"kafka_brokers must be a number, got {brokers!r}") from None
    if settings:  # only a run that configures clusters imports the broker to check them
        try:
            _check(settings)
        except ValueError as exc:
            raise pytest.UsageError(f"mockbroker settings: {exc}") from None
    config.stash[_SETTINGS_KEY] = settings
    external = config.getoption("kafka_bootstrap") or config.getini("kafka_bootstrap") or None
    config.stash[_EXTERNAL_KEY] = external.strip() if external else None


def pytest_report_header(config: pytest.Config) -> str | None:
    external = config.stash.get(_EXTERNAL_KEY, None)
    if external:
        return f"kafka: existing cluster at {external} (mockbroker fixtures that need it skip)"
    return None


def external_bootstrap(config: pytest.Config) -> str | None:
    """The existing Kafka this run targets (``--kafka-bootstrap``), or None for mockbroker."""
    return config.stash.get(_EXTERNAL_KEY, None)


def run_settings(config: pytest.Config) -> dict[str, Any]:
    """The run's cluster settings (ini and command line), before any marker."""
    return dict(config.stash.get(_SETTINGS_KEY, {}))


def marker_settings(node: pytest.Item) -> dict[str, Any]:
    """The ``kafka`` markers' settings for a test, the closest marker winning per setting."""
    settings: dict[str, Any] = {}
    for marker in reversed(list(node.iter_markers("kafka"))):
        if marker.args:
            raise pytest.UsageError(f"{node.nodeid}: @pytest.mark.kafka takes keyword settings "
                                    f"only (brokers=3, topics={{...}}), got {marker.args!r}")
        settings.update(marker.kwargs)
    return settings


def _check(settings: dict[str, Any]) -> None:
    """Every name and value of ``settings`` checked (``ValueError``), nothing started."""
    from mockbroker import MockCluster

    MockCluster(**settings)


def _skip_external(config: pytest.Config, what: str) -> None:
    external = external_bootstrap(config)
    if external:
        pytest.skip(f"{what} needs a mockbroker cluster; this run targets the existing Kafka "
                    f"at {external} (--kafka-bootstrap)")


def _start(settings: dict[str, Any], where: str) -> MockCluster:
    from mockbroker import MockCluster

    try:
        cluster = MockCluster(**settings)
    except ValueError as exc:
        raise pytest.UsageError(f"{where}: {exc}") from None
    return cluster.start()


@pytest.fixture
def kafka_cluster_factory(request: pytest.FixtureRequest) -> Iterator[Callable[..., MockCluster]]:
    """``factory(**settings)`` starts another cluster (the run's settings plus these); every
    cluster it started is stopped when the test ends."""
    _skip_external(request.config, "kafka_cluster_factory")
    started: list[MockCluster] = []
    base = run_settings(request.config)

    def factory(**settings: Any) -> MockCluster:
        cluster = _start({**base, **settings}, request.node.nodeid)
        started.append(cluster)
        return cluster

    yield factory
    for cluster in reversed(started):
        cluster.stop()


@pytest.fixture
def kafka_cluster(request: pytest.FixtureRequest) -> Iterator[MockCluster]:
    """A fresh cluster for this test, with the ``kafka`` marker's settings."""
    _skip_external(request.config, "kafka_cluster")
    settings = {**run_settings(request.config), **marker_settings(request.node)}
    if "schema_registry_url" in request.fixturenames:
        settings["schema_registry"] = True
    cluster = _start(settings, request.node.nodeid)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def kafka_bootstrap(request: pytest.FixtureRequest) -> str:
    """Where clients connect: the test's mock cluster, or the existing Kafka of
    ``--kafka-bootstrap`` (where the marker's ``topics`` are created if missing)."""
    external = external_bootstrap(request.config)
    if external:
        _ensure_topics(external, marker_settings(request.node).get("topics") or {})
        return external
    return request.getfixturevalue("kafka_cluster").bootstrap_servers


@pytest.fixture
def kafka_admin(request: pytest.FixtureRequest) -> AdminClient:
    """A client for the test cluster's admin HTTP API (faults, brokers, groups, topics,
    reset), as a user outside the process sees it."""
    _skip_external(request.config, "kafka_admin")
    return admin_client(request.getfixturevalue("kafka_cluster"))


@pytest.fixture
def schema_registry_url(request: pytest.FixtureRequest) -> str:
    """The URL of the test cluster's Schema Registry (``schema.registry.url`` for
    confluent-kafka's ``SchemaRegistryClient``)."""
    _skip_external(request.config, "schema_registry_url")
    return request.getfixturevalue("kafka_cluster").schema_registry_url


def admin_client(cluster: MockCluster) -> AdminClient:
    """An HTTP :class:`~mockbroker.AdminClient` for ``cluster``, with its admin token and, over
    HTTPS, its CA."""
    from mockbroker import AdminClient

    https = cluster.admin_url.startswith("https:")
    return AdminClient(cluster.admin_url, token=cluster.admin_token,
                       ca_location=cluster.ssl_ca_location if https else None)


def cluster_fixture(*, scope: str = "function", name: str | None = None,
                    **settings: Any) -> Callable:
    """A cluster fixture with its own scope and settings, for a conftest or test module::

        shared_kafka = cluster_fixture(scope="session", brokers=3, topics={"orders": 6})

    The run's settings apply underneath; the fixture is skipped under ``--kafka-bootstrap``.
    """
    try:
        _check(settings)  # a bad name or value fails at import time, not in a test
    except ValueError as exc:
        raise ValueError(f"cluster_fixture: {exc}") from None

    @pytest.fixture(scope=scope, name=name)
    def _cluster(request: pytest.FixtureRequest) -> Iterator[MockCluster]:
        _skip_external(request.config, name or "this cluster fixture")
        cluster = _start({**run_settings(request.config), **settings}, "cluster_fixture")
        try:
            yield cluster
        finally:
            cluster.stop()

    return _cluster


def _ensure_topics(bootstrap: str, topics: dict[str, int]) -> None:
    """Create a marker's topics on an existing cluster (those that exist are left alone)."""
    if not topics:
        return
    try:
        from confluent_kafka.admin import AdminClient as KafkaAdmin, NewTopic
    except ImportError:
        pytest.fail("creating the kafka marker's topics on an existing cluster needs "
                    "confluent-kafka installed", pytrace=False)

    admin = KafkaAdmin({"bootstrap.servers": bootstrap})
    existing = set(admin.list_topics(timeout=30).topics)
    wanted = [NewTopic(name, partitions) for name, partitions in topics.items()
              if name not in existing]
    for future in admin.create_topics(wanted).values() if wanted else ():
        try:
            future.result(timeout=30)
        except Exception as exc:  # a topic created concurrently by another worker is fine
            if "TOPIC_ALREADY_EXISTS" not in str(exc):
                raise
