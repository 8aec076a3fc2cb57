"""Log directories (mockbroker.core.log_dirs) as DescribeLogDirs shows them and
AlterReplicaLogDirs moves replicas between them, with the error codes Kafka 4.4's broker
answers (checked against a broker with two log dirs): LOG_DIR_NOT_FOUND for a path that is not
exactly one of its directories, UNKNOWN_TOPIC_OR_PARTITION, REPLICA_NOT_AVAILABLE,
INVALID_TOPIC_EXCEPTION for a name too long, KAFKA_STORAGE_ERROR around an offline directory.
A move is done at once (the mock has no future replica to copy)."""

from __future__ import annotations

import pytest

import wire
from mockbroker.core.log_dirs import DEFAULT_LOG_DIR, log_dirs_of
from mockbroker.core.security import Principal
from mockbroker.core.security.acls import Authorizer
from tests.core.harness import make_core, send
from wire import errors

ALTER, DESCRIBE = 34, 35
A = wire.request_class(ALTER)
D = wire.request_class(DESCRIBE)
DIRS = "/data/a,/data/b"


def alter(core, *moves, broker: int = 0, version: int = 2, **kw):
    """AlterReplicaLogDirs of (path, topic, [partitions]) moves: [(topic, [(partition, code)])]."""
    answer = send(core, ALTER, version, A(dirs=[
        A.AlterReplicaLogDir(path=path, topics=[A.AlterReplicaLogDirTopic(name=topic,
                                                                          partitions=list(ps))])
        for path, topic, ps in moves]), broker=broker, **kw)
    return [(t.topic_name, [(p.partition_index, p.error_code) for p in t.partitions])
            for t in answer.results]


def describe(core, topics=None, broker: int = 0, version: int = 4):
    """DescribeLogDirs: [(path, error, {topic: [partitions]})]."""
    answer = send(core, DESCRIBE, version, D(topics=topics), broker=broker)
    return [(r.log_dir, r.error_code, {t.name: [p.partition_index for p in t.partitions]
                                       for t in r.topics}) for r in answer.results]


def test_one_directory_by_default_holding_every_replica():
    core = make_core(1)
    core.cluster.create_topic("orders", 2, 1)
    assert describe(core) == [(DEFAULT_LOG_DIR, errors.NONE, {"orders": [0, 1]})]
    assert alter(core, (DEFAULT_LOG_DIR, "orders", [0, 1])) == [
        ("orders", [(0, errors.NONE), (1, errors.NONE)])]


def test_replicas_go_to_the_directory_holding_fewest_and_move_at_once():
    core = make_core(1, log_dirs=DIRS)
    core.cluster.create_topic("orders", 3, 1)
    assert describe(core) == [("/data/a", errors.NONE, {"orders": [0, 2]}),
                              ("/data/b", errors.NONE, {"orders": [1]})]
    assert alter(core, ("/data/b", "orders", [0, 2])) == [
        ("orders", [(0, errors.NONE), (2, errors.NONE)])]
    assert describe(core) == [("/data/a", errors.NONE, {}),
                              ("/data/b", errors.NONE, {"orders": [0, 1, 2]})]
    answer = send(core, DESCRIBE, 4, D(topics=None))
    assert {(p.offset_lag, p.is_future_key) for r in answer.results for t in r.topics
            for p in t.partitions} == {(0, False)}
    # a topic created now fills the emptier directory first
    core.cluster.create_topic("audit", 1, 1)
    assert describe(core)[0] == ("/data/a", errors.NONE, {"audit": [0]})


def test_describing_named_partitions_lists_those_only():
    core = make_core(1, log_dirs=DIRS)
    core.cluster.create_topic("orders", 3, 1)
    named = [D.DescribableLogDirTopic(topic="orders", partitions=[1, 7]),
             D.DescribableLogDirTopic(topic="nope", partitions=[0])]
    assert describe(core, named) == [("/data/a", errors.NONE, {}),
                                     ("/data/b", errors.NONE, {"orders": [1]})]
    assert describe(core, []) == [("/data/a", errors.NONE, {}), ("/data/b", errors.NONE, {})]


@pytest.mark.parametrize("path", ["/data/c", "data/a", "/data/a/", ""])
def test_a_path_not_exactly_one_of_the_brokers_directories_is_not_found(path):
    core = make_core(1, log_dirs=DIRS)
    core.cluster.create_topic("orders", 1, 1)
    # checked before the partition is looked for
    assert alter(core, (path, "orders", [0]), (path, "nope", [0])) == [
        ("orders", [(0, errors.LOG_DIR_NOT_FOUND)]), ("nope", [(0, errors.LOG_DIR_NOT_FOUND)])]


def test_partitions_the_broker_does_not_host():
    core = make_core(2, log_dirs=DIRS)
    core.cluster.create_topic("orders", 2, 1)
    hosted = [p.index for p in core.cluster.topics["orders"].partitions if 0 in p.replicas]
    other = [p.index for p in core.cluster.topics["orders"].partitions if 0 not in p.replicas]
    assert alter(core, ("/data/b", "orders", [*other, 9]), ("/data/b", "nope", [0])) == [
        ("orders", [(other[0], errors.REPLICA_NOT_AVAILABLE),
                    (9, errors.UNKNOWN_TOPIC_OR_PARTITION)]),
        ("nope", [(0, errors.UNKNOWN_TOPIC_OR_PARTITION)])]
    assert hosted


def test_a_directory_named_before_the_replica_exists_is_where_it_is_created():
    core = make_core(1, log_dirs=DIRS)
    assert alter(core, ("/data/b", "later", [0])) == [
        ("later", [(0, errors.UNKNOWN_TOPIC_OR_PARTITION)])]
    core.cluster.create_topic("later", 1, 1)
    assert describe(core) == [("/data/a", errors.NONE, {}),
                              ("/data/b", errors.NONE, {"later": [0]})]


def test_a_name_too_long_for_a_future_replicas_directory_is_an_invalid_topic():
    core = make_core(1, log_dirs=DIRS)
    # <topic>-<partition>.<32 hex digits>-future must fit in 255 characters
    assert alter(core, ("/data/c", "x" * 214, [0]), ("/data/c", "y" * 213, [0])) == [
        ("x" * 214, [(0, errors.INVALID_TOPIC_EXCEPTION)]),
        ("y" * 213, [(0, errors.LOG_DIR_NOT_FOUND)])]


def test_a_partition_named_twice_moves_once_to_the_last_directory():
    core = make_core(1, log_dirs=DIRS)
    core.cluster.create_topic("orders", 1, 1)
    assert alter(core, ("/data/b", "orders", [0, 0]), ("/data/a", "orders", [0])) == [
        ("orders", [(0, errors.NONE)])]
    assert describe(core)[0] == ("/data/a", errors.NONE, {"orders": [0]})
    assert alter(core) == []


def test_an_offline_directory():
    core = make_core(1, log_dirs="/data/a,/data/b,/data/c")
    core.cluster.create_topic("orders", 2, 1)
    assert describe(core)[:2] == [("/data/a", errors.NONE, {"orders": [0]}),
                                  ("/data/b", errors.NONE, {"orders": [1]})]
    model = log_dirs_of(core.cluster)
    model.set_offline(0, "/data/b")
    answer = send(core, DESCRIBE, 4, D(topics=None))
    assert [(r.log_dir, r.error_code, r.topics, r.total_bytes, r.usable_bytes)
            for r in answer.results][1] == ("/data/b", errors.KAFKA_STORAGE_ERROR, [], -1, -1)
    storage = errors.KAFKA_STORAGE_ERROR
    assert alter(core, ("/data/b", "orders", [0])) == [("orders", [(0, storage)])]
    assert alter(core, ("/data/a", "orders", [1])) == [("orders", [(1, storage)])]  # offline
    # no future replica is made while a directory of the broker is offline
    assert alter(core, ("/data/c", "orders", [0])) == [("orders", [(0, storage)])]
    assert alter(core, ("/data/a", "orders", [0])) == [("orders", [(0, errors.NONE)])]
    model.set_offline(0, "/data/b", False)
    assert alter(core, ("/data/c", "orders", [0, 1])) == [
        ("orders", [(0, errors.NONE), (1, errors.NONE)])]
    assert describe(core)[2] == ("/data/c", errors.NONE, {"orders": [0, 1]})
    with pytest.raises(KeyError):
        model.set_offline(0, "/data/z")


def test_replicas_of_a_deleted_topic_are_forgotten():
    core = make_core(1, log_dirs=DIRS)
    core.cluster.create_topic("orders", 2, 1)
    alter(core, ("/data/b", "orders", [0]))
    core.cluster.delete_topic("orders")
    assert describe(core) == [("/data/a", errors.NONE, {}), ("/data/b", errors.NONE, {})]
    core.cluster.create_topic("orders", 1, 1)
    assert describe(core)[0] == ("/data/a", errors.NONE, {"orders": [0]})


def test_moving_needs_alter_on_the_cluster():
    core = make_core(1, log_dirs=DIRS)
    core.cluster.create_topic("orders", 1, 1)
    core.security.authorizer = Authorizer()
    alice = Principal("User", "alice")
    assert alter(core, ("/data/b", "orders", [0]), ("/data/a", "orders", [0]),
                 principal=alice) == [
        ("orders", [(0, errors.CLUSTER_AUTHORIZATION_FAILED)]),
        ("orders", [(0, errors.CLUSTER_AUTHORIZATION_FAILED)])]


def test_a_fault_fails_every_partition_named():
    core = make_core(1, log_dirs=DIRS)
    core.cluster.create_topic("orders", 2, 1)
    core.control.add({"api": "AlterReplicaLogDirs", "error": "KAFKA_STORAGE_ERROR",
                      "topic": "orders", "partition": 1})
    assert alter(core, ("/data/b", "orders", [0, 1])) == [
        ("orders", [(0, errors.KAFKA_STORAGE_ERROR), (1, errors.KAFKA_STORAGE_ERROR)])]
    assert alter(core, ("/data/b", "orders", [0])) == [("orders", [(0, errors.NONE)])]


def test_the_setting_takes_distinct_absolute_paths_and_shows_as_a_static_config():
    for bad in ("relative/dir", "/a,/a", "/a,,/b"):
        with pytest.raises(ValueError, match="log_dirs"):
            make_core(1, log_dirs=bad)
    core = make_core(1, log_dirs=" /data/a , /data/b ")
    assert [path for path, _, _ in describe(core)] == ["/data/a", "/data/b"]
    assert core.cluster.broker_configs.static(0)["log.dirs"] == " /data/a , /data/b "
