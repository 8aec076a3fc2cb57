"""Metadata answered by the core directly (no sockets)."""

from __future__ import annotations

import pytest

import wire
from tests.core.harness import make_core, send


def _metadata(core, version, **body):
    cls = wire.request_class(3)
    topics = body.pop("topics", None)
    request = cls(topics=None if topics is None else
                  [cls.MetadataRequestTopic(name=n) for n in topics], **body)
    return send(core, 3, version, request, client_id="c")


@pytest.fixture
def core():
    core = make_core(3, racks=True)
    core.cluster.create_topic("orders", 6)
    return core


def test_authorized_operations_only_when_asked(core):
    plain = _metadata(core, 10, topics=["orders"])
    assert plain.cluster_authorized_operations == -2147483648
    assert plain.topics[0].topic_authorized_operations == -2147483648
    asked = _metadata(core, 10, topics=["orders"], include_cluster_authorized_operations=True,
                      include_topic_authorized_operations=True)
    # READ(3) WRITE(4) CREATE(5) DELETE(6) ALTER(7) DESCRIBE(8) DESCRIBE_CONFIGS(10) ALTER_CONFIGS(11)
    assert asked.topics[0].topic_authorized_operations == 3576
    assert asked.cluster_authorized_operations == 8096


def test_leaders_spread_over_brokers_with_three_replicas(core):
    meta = _metadata(core, 12, topics=["orders"])
    partitions = meta.topics[0].partitions
    assert {p.leader_id for p in partitions} == {0, 1, 2}
    assert all(sorted(p.replica_nodes) == [0, 1, 2] and p.isr_nodes == p.replica_nodes
               for p in partitions)
    assert [(b.node_id, b.rack) for b in meta.brokers] == [(0, "r0"), (1, "r1"), (2, "r2")]
    assert meta.controller_id == 0 and meta.cluster_id


def test_v0_empty_list_means_every_topic_and_later_versions_use_null(core):
    assert [t.name for t in _metadata(core, 0, topics=[]).topics] == ["orders"]
    assert _metadata(core, 1, topics=[]).topics == []
    assert [t.name for t in _metadata(core, 1).topics] == ["orders"]


def test_auto_creation_and_its_refusals(core):
    meta = _metadata(core, 12, topics=["fresh", "bad name!"], allow_auto_topic_creation=True)
    got = {t.name: (t.error_code, len(t.partitions)) for t in meta.topics}
    assert got == {"fresh": (0, 1), "bad name!": (wire.errors.INVALID_TOPIC_EXCEPTION, 0)}
    meta = _metadata(core, 12, topics=["other"], allow_auto_topic_creation=False)
    assert meta.topics[0].error_code == wire.errors.UNKNOWN_TOPIC_OR_PARTITION
    assert "other" not in core.cluster.topics
