"""Consumer groups with the Java kafka-clients (Kafka's own consumer, at the version our
definitions come from, classic protocol), alone and mixed with kafka-python and confluent-kafka
members in one group.

The Java member is ``java/GroupMember.java`` run from source in its own JVM; it reports its
assignments, records and commits on stdout, which :class:`JavaMember` reads, and closes (leaving
the group) when told on stdin.  It plugs into the same helpers as the Python members of
``test_groups.py``: ``settle`` (every partition owned by exactly one member of a stable group)
and ``consume_all``.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path

from kafka.coordinator.assignors.range import RangePartitionAssignor

from tests.clients.test_groups import (ALL, GROUP, HEARTBEAT_MS, SESSION_MS, TOPIC, Got,
                                       assert_once, consume_all, group_view,
                                       group_view_answered, join, produce, settle, start)
from tests import jvm
from tests.clients.helpers import wait_for
from wire.definitions import KAFKA_VERSION

ROOT = Path(__file__).resolve().parents[2]
SOURCE = Path(__file__).with_name("java") / "GroupMember.java"
#: a JVM member's first join includes starting the JVM, which a busy machine makes slow
JVM_TIMEOUT_S = 60
CLASSPATH = [ROOT / ".cache" / "jars" / f"kafka-clients-{KAFKA_VERSION}.jar",
             ROOT / ".cache" / "jars" / "slf4j-api-1.7.36.jar"]


class JavaMember:
    """A Java consumer in the group, seen through what it prints."""

    client = "java"

    def __init__(self, cluster, name: str, group_id: str = GROUP, *,
                 classic_timeouts: bool = True, topic: str = TOPIC, **config: str):
        missing = [str(p) for p in CLASSPATH if not p.exists()]
        assert not missing and shutil.which("java"), \
            f"the Java client needs java and {missing} (bash ci/dev.sh setup fetches them)"
        self.name = name
        self.got: list[Got] = []
        self.events: list[tuple[str, frozenset]] = []
        self.lines: list[str] = []
        self._assignment: frozenset = frozenset()
        self.process = subprocess.Popen(
            [*jvm.program(SOURCE, ":".join(map(str, CLASSPATH))),
             cluster.bootstrap_servers, group_id, topic, name,
             str(SESSION_MS) if classic_timeouts else "-",
             str(HEARTBEAT_MS) if classic_timeouts else "-",
             *(f"{k}={v}" for k, v in config.items())],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            line = line.rstrip("\n")
            self.lines.append(line)
            kind, _, rest = line.partition(" ")
            if kind in ("assigned", "revoked"):
                parts = frozenset(int(p) for p in rest.split(",") if p)
                self.events.append(("assign" if kind == "assigned" else "revoke", parts))
                # the consumer protocol reports only what it adds (cooperative), the classic
                # eager one everything after revoking everything: a union serves both
                self._assignment = self._assignment | parts if kind == "assigned" \
                    else self._assignment - parts
            elif kind == "record":
                partition, offset, value = rest.split(" ", 2)
                self.got.append(Got(self.name, int(partition), int(offset), value.encode()))

    def _check(self) -> None:
        failed = [line for line in self.lines if line.startswith("failed")]
        assert not failed, f"Java member {self.name}: {failed}"

    def assignment(self) -> frozenset:
        self._check()
        return self._assignment

    def values(self) -> set[bytes]:
        self._check()
        return {g.value for g in list(self.got)}

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.process.stdin.write("close\n")
                self.process.stdin.flush()
                self.process.wait(30)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait(10)
        self._reader.join(10)


def java_member(stack, scene, name: str, **config: str) -> JavaMember:
    member = JavaMember(scene, name, group_id=scene.group, topic=scene.topic, **config)
    stack.callback(member.close)
    return member


def test_a_java_consumer_gets_every_partition_and_a_new_one_resumes_after_its_commit(stack,
                                                                                     target):
    cluster = start(target)
    first = java_member(stack, cluster, "java-1")
    assert settle(cluster, [first], timeout=JVM_TIMEOUT_S) == {"java-1": ALL}
    before = produce(stack, cluster, "before")
    consume_all([first], before)
    wait_for(lambda: sum(group_view(cluster).committed.values()) == len(before),
             "the Java member's commits")
    first.close()
    assert first.lines[-1] == "closed" and first.process.returncode == 0
    assert group_view(cluster).state == "Empty"  # it left the group on close
    after = produce(stack, cluster, "after")
    second = java_member(stack, cluster, "java-2")
    consume_all([second], after)
    assert second.values() == after  # nothing before the commit is read again


def test_java_kafka_python_and_confluent_members_share_one_range_group(stack, target):
    cluster = start(target)
    members = [
        java_member(stack, cluster, "java",
                    **{"partition.assignment.strategy":
                       "org.apache.kafka.clients.consumer.RangeAssignor"}),
        join(stack, cluster, "kafka-python", "kp",
             partition_assignment_strategy=[RangePartitionAssignor]),
        join(stack, cluster, "confluent-kafka", "ck",
             **{"partition.assignment.strategy": "range"}),
    ]
    owned = settle(cluster, members, timeout=JVM_TIMEOUT_S)
    assert sorted(map(len, owned.values())) == [2, 2, 2]
    view = group_view(cluster)
    assert view.protocol == "range" and len(view.members) == 3
    values = produce(stack, cluster, "mixed")
    consume_all(members, values)
    assert_once(members, values)
    for m in members:
        assert {g.partition for g in m.got} == owned[m.name]

    # the Java member leaves; the other two take over its partitions
    members[0].close()
    rest = members[1:]
    owned = settle(cluster, rest, timeout=JVM_TIMEOUT_S)
    assert sorted(map(len, owned.values())) == [3, 3]
    later = produce(stack, cluster, "later")
    consume_all(rest, later)
    consumed_later = [g.value for m in rest for g in m.got if g.value in later]
    assert sorted(consumed_later) == sorted(later)  # each once


def test_a_java_member_follows_its_coordinator_when_the_broker_stops(stack, lifecycle_target):
    target = lifecycle_target
    cluster = start(target)
    member = java_member(stack, cluster, "java")
    settle(cluster, [member], timeout=JVM_TIMEOUT_S)
    consume_all([member], produce(stack, cluster, "before"))
    old = target.coordinator_id(cluster.group)
    target.stop_broker(old)
    after = produce(stack, cluster, "after")
    consume_all([member], after)
    wait_for(lambda: (v := group_view_answered(cluster, target)) is not None and
             v.state == "Stable" and sum(v.committed.values()) == 120,
             "commits at the new coordinator")
    assert target.coordinator_id(cluster.group) != old
