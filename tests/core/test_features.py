"""Feature levels (KIP-584) in the core: UpdateFeatures with Kafka 4.4's checks, messages and
answers in each version, ApiVersions showing the levels and an epoch that moves with every
change, and what a lowered level turns off: the consumer group protocol at ``group.version`` 0
and share groups at ``share.version`` 0 (UNSUPPORTED_VERSION, as Kafka answers), and the share
groups' dead-letter queue below ``share.version`` 2."""

from __future__ import annotations

import pytest

import wire
from tests.core.harness import make_core, send
from tests.core.test_share_dead_letters import REJECT, member_id, opened, with_queue
from wire import errors

UPDATE, API_VERSIONS = 57, 18
UPGRADE, SAFE, UNSAFE = 1, 2, 3
PREFIX = "The update failed for all features since the following feature had an error: "
REQUEST = wire.request_class(UPDATE)


def update(core, *features, version=2, validate_only=False):
    """``features``: (name, level[, upgrade type])."""
    body = REQUEST(timeout_ms=1000, validate_only=validate_only, feature_updates=[
        REQUEST.FeatureUpdateKey(feature=f[0], max_version_level=f[1],
                                 upgrade_type=f[2] if len(f) > 2 else UPGRADE,
                                 allow_downgrade=len(f) > 2)
        for f in features])
    return send(core, UPDATE, version, body)


def finalized(core) -> tuple[dict[str, int], int]:
    answer = send(core, API_VERSIONS, 4, client_software_name="t", client_software_version="1")
    return ({f.name: f.max_version_level for f in answer.finalized_features},
            answer.finalized_features_epoch)


def test_a_new_cluster_finalizes_kafka_4_4s_levels():
    assert finalized(make_core()) == ({"metadata.version": 33, "transaction.version": 2,
                                       "group.version": 1, "share.version": 2,
                                "streams.version": 1, "eligible.leader.replicas.version": 1}, 1)


def test_downgrades_and_upgrades_move_the_levels_and_the_epoch():
    core = make_core()
    answer = update(core, ("transaction.version", 1, SAFE))
    assert (answer.error_code, answer.error_message) == (errors.NONE, None)
    assert finalized(core) == ({"metadata.version": 33, "transaction.version": 1,
                                "group.version": 1, "share.version": 2,
                                "streams.version": 1, "eligible.leader.replicas.version": 1}, 2)
    # a level of 0 takes the feature out of the finalized ones
    update(core, ("group.version", 0, SAFE), ("share.version", 0, UNSAFE))
    assert finalized(core) == ({"metadata.version": 33, "transaction.version": 1,
                                "streams.version": 1, "eligible.leader.replicas.version": 1}, 4)
    # a change to the level it has is written all the same: the epoch moves
    assert update(core, ("transaction.version", 1)).error_code == errors.NONE
    assert finalized(core)[1] == 5
    update(core, ("transaction.version", 2), ("group.version", 1))
    assert finalized(core) == ({"metadata.version": 33, "transaction.version": 2,
                                "group.version": 1, "streams.version": 1,
                                "eligible.leader.replicas.version": 1}, 7)


def test_validate_only_checks_and_changes_nothing():
    core = make_core()
    answer = update(core, ("transaction.version", 0, SAFE), validate_only=True)
    assert answer.error_code == errors.NONE
    assert finalized(core) == ({"metadata.version": 33, "transaction.version": 2,
                                "group.version": 1, "share.version": 2,
                                "streams.version": 1, "eligible.leader.replicas.version": 1}, 1)


@pytest.mark.parametrize("change, message", [
    (("foo.version", 1), "Invalid update version 1 for feature foo.version. Local controller 0 "
                         "does not support this feature."),
    (("foo.version", 0, SAFE), "Invalid update version 0 for feature foo.version. Feature "
                               "foo.version not found."),
    (("transaction.version", -1, SAFE), "Invalid update version -1 for feature "
                                        "transaction.version. A feature version cannot be less "
                                        "than 0."),
    (("transaction.version", 3), "Invalid update version 3 for feature transaction.version. "
                                 "Local controller 0 only supports versions 0-2"),
    (("metadata.version", 34), "Invalid update version 34 for feature metadata.version. Local "
                               "controller 0 only supports versions 7-33"),
    (("transaction.version", 1), "Invalid update version 1 for feature transaction.version. "
                                 "Can't downgrade the version of this feature without setting "
                                 "the upgrade type to either safe or unsafe downgrade."),
    (("transaction.version", 1, 4), "Invalid update version 1 for feature transaction.version. "
                                    "The controller does not support the given upgrade type."),
    (("metadata.version", 32, SAFE), "Unsupported metadata.version downgrade from 33 to 32. "
                                     "Refusing to perform the requested downgrade because it "
                                     "might delete metadata information."),
    (("metadata.version", 32, UNSAFE), "Unsupported metadata.version downgrade from 33 to 32. "
                                       "Unsafe metadata downgrade is not supported in this "
                                       "version."),
])
def test_updates_kafka_refuses(change, message):
    core = make_core()
    answer = update(core, change)
    assert (answer.error_code, answer.error_message) == (errors.INVALID_UPDATE_VERSION,
                                                         PREFIX + message)
    assert finalized(core)[1] == 1


def test_one_refused_feature_refuses_them_all_and_the_first_in_kafkas_order_is_named():
    core = make_core()
    update(core, ("group.version", 0, SAFE))
    answer = update(core, ("transaction.version", 1, SAFE), ("group.version", 1, SAFE))
    assert answer.error_message == PREFIX + ("Invalid update version 1 for feature "
                                             "group.version. Can't downgrade to a newer "
                                             "version.")
    assert finalized(core)[0]["transaction.version"] == 2


def test_each_version_answers_in_its_own_shape():
    core = make_core()
    # v0 has no downgrade type: a downgrade is refused whatever allow_downgrade says
    v0 = update(core, ("transaction.version", 1, SAFE), version=0)
    assert (v0.error_code, v0.results) == (errors.INVALID_UPDATE_VERSION, [])
    v1 = update(core, ("transaction.version", 1, SAFE), ("group.version", 1), version=1)
    assert (v1.error_code, v1.error_message) == (errors.NONE, None)
    assert [(r.feature, r.error_code, r.error_message) for r in v1.results] == [
        ("transaction.version", 0, "NONE"), ("group.version", 0, "NONE")]


def test_at_group_version_0_the_consumer_group_protocol_is_unsupported():
    core = make_core()
    update(core, ("group.version", 0, SAFE))
    heartbeat = send(core, 68, 1, group_id="g", member_id="m", member_epoch=0,
                     rebalance_timeout_ms=1000, subscribed_topic_names=["t"], topic_partitions=[])
    assert (heartbeat.error_code, heartbeat.error_message) == (errors.UNSUPPORTED_VERSION, None)
    described = send(core, 69, 1, group_ids=["g1", "g2"], include_authorized_operations=False)
    assert [(g.group_id, g.error_code) for g in described.groups] == [
        ("g1", errors.UNSUPPORTED_VERSION), ("g2", errors.UNSUPPORTED_VERSION)]
    update(core, ("group.version", 1))
    assert send(core, 68, 1, group_id="g", member_id="m", member_epoch=0,
                rebalance_timeout_ms=1000, subscribed_topic_names=["t"],
                topic_partitions=[]).error_code != errors.UNSUPPORTED_VERSION


def test_at_share_version_0_share_groups_are_unsupported():
    core = make_core()
    update(core, ("share.version", 0, SAFE))
    answer = send(core, 76, 1, group_id="g", member_id="m" * 22, member_epoch=0,
                  subscribed_topic_names=["t"])
    assert (answer.error_code, answer.error_message, answer.member_id) == (
        errors.UNSUPPORTED_VERSION, None, None)


def test_below_share_version_2_a_rejected_record_is_archived_without_the_queue():
    h = with_queue()
    assert update(h.core, ("share.version", 1, SAFE)).error_code == errors.NONE
    h.produce(b"a")
    m = member_id()
    opened(h, m)
    h.fetch(m, 1, acks={0: [(0, 0, [REJECT])]}, max_records=0)
    h.core.clock.advance(0)
    assert h.states() == []
    queue = h.core.cluster.topics["dlq.jobs"]
    assert all(p.log.high_watermark == 0 for p in queue.partitions)


# -- ListConfigResources ----------------------------------------------------------------------

def listed(core, version=1, types=()):
    answer = send(core, 74, version, wire.request_class(74)(resource_types=list(types)))
    return answer.error_code, [(r.resource_name, r.resource_type) if version >= 1
                               else r.resource_name for r in answer.config_resources]


def test_list_config_resources_lists_what_has_configs_in_kafkas_order_of_types():
    core = make_core(brokers=2)
    core.cluster.create_topic("t1", 1, 1)
    core.cluster.create_topic("alpha", 1, 1)
    state = core.cluster.broker_configs
    state.group_configs["g-conf"] = {"consumer.session.timeout.ms": "50000"}
    state.group_configs["g-empty"] = {}  # a group whose configs were all deleted
    assert listed(core) == (errors.NONE, [("g-conf", 32), ("0", 8), ("1", 8), ("0", 4),
                                          ("1", 4), ("t1", 2), ("alpha", 2)])
    assert listed(core, types=[2, 4]) == listed(core, types=[4, 2, 2]) == (
        errors.NONE, [("0", 4), ("1", 4), ("t1", 2), ("alpha", 2)])
    assert listed(core, types=[32]) == (errors.NONE, [("g-conf", 32)])
    # no client metrics subscriptions: v0 lists nothing
    assert listed(core, version=0) == (errors.NONE, [])
    for unknown in ([1], [64], [2, 1]):
        assert listed(core, types=unknown) == (errors.UNSUPPORTED_VERSION, [])
