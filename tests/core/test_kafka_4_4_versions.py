"""The versions Kafka 4.4 added to APIs we serve, answered by the core as Kafka 4.4 answers them:
ApiVersions v5 (KIP-1242: the client names the cluster and node it means to reach) and
DeleteGroups v3 (a per-group error message).

Requests and responses go through the codec at the version under test, so what is checked is
what a client at that version would read.
"""

from __future__ import annotations

import pytest

import wire
from mockbroker.handlers import REGISTRY
from tests.core.harness import make_core, send
from wire import errors


@pytest.fixture
def core():
    return make_core(3)


def call(core, api_key: int, version: int, broker: int = 0, **body):
    response = send(core, api_key, version, broker=broker, client_id="app", **body)
    encoded = wire.encode_response(api_key, version, 7, response, size_prefix=False)
    return wire.decode_response(api_key, version, encoded)[1]


# -- ApiVersions v5 ----------------------------------------------------------------------------

def api_versions(core, version: int = 5, broker: int = 0, **fields):
    fields.setdefault("client_software_name", "apache-kafka-java")
    fields.setdefault("client_software_version", "4.4.0")
    return call(core, 18, version, broker, **fields)


def served() -> list[tuple[int, int, int]]:
    return list(REGISTRY.api_versions())


def keys(response) -> list[tuple[int, int, int]]:
    return [(k.api_key, k.min_version, k.max_version) for k in response.api_keys]


def test_v5_is_served_and_advertised():
    assert (18, 0, 5) in served() and (42, 0, 3) in served()


@pytest.mark.parametrize("broker", [0, 2])
def test_v5_naming_this_broker_or_nothing_gets_the_full_answer(core, broker):
    for fields in ({}, {"cluster_id": core.cluster.cluster_id, "node_id": broker}):
        response = api_versions(core, broker=broker, **fields)
        assert response.error_code == errors.NONE
        assert keys(response) == served()


THIS = "this cluster"


@pytest.mark.parametrize("cluster, node", [
    ("another-cluster", 1),  # the right node id, of another cluster
    ("", 1),
    (THIS, 0),  # this cluster, another of its brokers
    (THIS, 7),  # this cluster, no such broker
])
def test_v5_naming_another_broker_asks_for_a_rebootstrap(core, cluster, node):
    if cluster == THIS:
        cluster = core.cluster.cluster_id
    response = api_versions(core, broker=1, cluster_id=cluster, node_id=node)
    assert response.error_code == errors.REBOOTSTRAP_REQUIRED
    assert response.api_keys == [] and response.throttle_time_ms == 0
    assert response.supported_features == [] and response.finalized_features == []


@pytest.mark.parametrize("cluster, node", [(None, 1), (THIS, -1)])
def test_v5_cluster_and_node_come_together_or_not_at_all(core, cluster, node):
    if cluster == THIS:
        cluster = core.cluster.cluster_id
    response = api_versions(core, broker=1, cluster_id=cluster, node_id=node)
    assert response.error_code == errors.INVALID_REQUEST and response.api_keys == []


def test_before_v5_a_cluster_and_node_are_not_sent_so_not_checked(core):
    # v4 has no such fields: the codec leaves them out, the broker cannot see them
    response = api_versions(core, 4, broker=1, cluster_id="another-cluster", node_id=0)
    assert response.error_code == errors.NONE and keys(response) == served()


@pytest.mark.parametrize("name, version", [
    ("", "1"), ("-kafka", "1"), ("kafka", "1.0-"), ("kafka python", "1"), ("kafka", "1+2"),
])
@pytest.mark.parametrize("api_version", [3, 4, 5])
def test_from_v3_client_software_must_be_alphanumerics_dashes_and_dots(core, name, version,
                                                                      api_version):
    response = api_versions(core, api_version, client_software_name=name,
                            client_software_version=version)
    assert response.error_code == errors.INVALID_REQUEST and response.api_keys == []


@pytest.mark.parametrize("name, version", [
    ("apache-kafka-java", "4.3.0"), ("confluent-kafka-python", "2.12.1-RC1"),
    ("librdkafka", "2.12.1"), ("kafka-python", "3.0.12"), ("a", "b"),
])
def test_what_real_clients_send_is_valid(core, name, version):
    response = api_versions(core, 3, client_software_name=name, client_software_version=version)
    assert response.error_code == errors.NONE


def test_v0_to_v2_have_no_client_software_to_check(core):
    for version in range(3):
        assert call(core, 18, version).error_code == errors.NONE


# -- DeleteGroups v3 ---------------------------------------------------------------------------

def test_delete_groups_v3_answers_as_v2_with_null_messages(core):
    placement = core.groups.placement
    group = "ghost"
    owner = placement.coordinator_for(group)
    elsewhere = next(f"elsewhere-{i}" for i in range(1000)
                     if placement.coordinator_for(f"elsewhere-{i}") != owner)
    for version in (2, 3):
        response = call(core, 42, version, owner, groups_names=[group, elsewhere])
        assert [(r.group_id, r.error_code, r.error_message) for r in response.results] == [
            (group, errors.GROUP_ID_NOT_FOUND, None), (elsewhere, errors.NOT_COORDINATOR, None)]
