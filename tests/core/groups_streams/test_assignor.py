"""The ``sticky`` task assignor of streams groups (KIP-1071), held against Kafka 4.4's own.

Every expected assignment below was produced by Kafka 4.4.0's ``StickyTaskAssignor``, run
over the same group through ``tests/core/java/StickyTaskAssignorCases.java``.  The last test
runs that program over a few hundred random groups (several processes and members per
process, previous actives and standbys, reported task offsets) and compares each result.

A member is written ``(active, standby)``, each ``{subtopology: [tasks]}``.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from mockbroker.core import javaorder
from mockbroker.core.groups.streams.assignor import (NAME, MemberSpec, SubtopologySpec,
                                                     TaskAssignment, TaskAssignorError,
                                                     assign)

ROOT = Path(__file__).resolve().parents[3]
JARS = ROOT / ".cache" / "jars" / "kafka-broker"
KAFKA = Path(__file__).resolve().parents[1] / "java" / "StickyTaskAssignorCases.java"
STATELESS = False
STATEFUL = True


def member(member_id: str, process_id: str, active=None, standby=None,
           offsets=None) -> MemberSpec:
    return MemberSpec(member_id, process_id,
                      active={s: frozenset(p) for s, p in (active or {}).items()},
                      standby={s: frozenset(p) for s, p in (standby or {}).items()},
                      task_offsets=offsets or {})


def subs(**counts: tuple[int, bool]) -> dict[str, SubtopologySpec]:
    """``subs(s0=(4, STATEFUL))`` -> subtopology "0" with 4 tasks."""
    return {name[1:]: SubtopologySpec(n, stateful) for name, (n, stateful) in counts.items()}


def plain(tasks: dict[str, set[int]]) -> dict[str, list[int]]:
    return {s: sorted(p) for s, p in sorted(tasks.items())}


def run(members: list[MemberSpec], topology: dict[str, SubtopologySpec], standbys: int = 0):
    result = assign(members, topology, standbys)
    assert all(a.warmup == {} for a in result.values())
    return {m: (plain(a.active), plain(a.standby)) for m, a in result.items()}


def test_the_assignor_is_called_sticky():
    assert NAME == "sticky"


def test_one_member_gets_every_task_and_no_standby_without_a_second_process():
    assert run([member("m1", "p1")], subs(s0=(4, STATEFUL), s1=(2, STATELESS)), 1) == {
        "m1": ({"0": [0, 1, 2, 3], "1": [0, 1]}, {})}


def test_two_processes_split_the_active_tasks_evenly():
    assert run([member("m1", "p1"), member("m2", "p2")], subs(s0=(4, STATELESS))) == {
        "m1": ({"0": [1, 3]}, {}),
        "m2": ({"0": [0, 2]}, {})}


def test_a_joining_member_takes_only_what_balance_needs():
    # The split a live Kafka 4.4 broker gave a word-count application's second instance.
    before = {"0": {0, 1, 2}, "1": {0, 1, 2}}
    assert run([member("A", "pA", active=before), member("B", "pB")],
               subs(s0=(3, STATELESS), s1=(3, STATEFUL))) == {
        "A": ({"0": [0, 1], "1": [0]}, {}),
        "B": ({"0": [2], "1": [1, 2]}, {})}


def test_a_leaving_members_tasks_are_spread_and_the_others_keep_theirs():
    topology = subs(s0=(6, STATELESS))
    three = [member("m1", "p1", active={"0": {0, 3}}), member("m2", "p2", active={"0": {1, 4}}),
             member("m3", "p3", active={"0": {2, 5}})]
    assert run(three, topology) == {
        "m1": ({"0": [0, 3]}, {}), "m2": ({"0": [1, 4]}, {}), "m3": ({"0": [2, 5]}, {})}
    assert run([three[0], three[2]], topology) == {
        "m1": ({"0": [0, 3, 4]}, {}),
        "m3": ({"0": [1, 2, 5]}, {})}


def test_processes_are_loaded_by_tasks_per_member():
    # Two threads of one instance and one of another: each thread gets its share.
    group = [member("a", "p1"), member("b", "p1"), member("c", "p2")]
    assert run(group, subs(s0=(6, STATELESS))) == {
        "a": ({"0": [0, 4]}, {}), "b": ({"0": [2, 5]}, {}), "c": ({"0": [1, 3]}, {})}
    assert run(group, subs(s0=(4, STATELESS))) == {
        "a": ({"0": [0]}, {}), "b": ({"0": [2]}, {}), "c": ({"0": [1, 3]}, {})}


def test_standby_tasks_only_for_stateful_subtopologies_on_another_process():
    assert run([member("m1", "p1"), member("m2", "p2")],
               subs(s0=(2, STATEFUL), s1=(2, STATELESS)), 1) == {
        "m1": ({"0": [1], "1": [1]}, {"0": [0]}),
        "m2": ({"0": [0], "1": [0]}, {"0": [1]})}


def test_fewer_standbys_than_asked_when_processes_are_too_few():
    assert run([member("m1", "p1"), member("m2", "p2")], subs(s0=(2, STATEFUL)), 2) == {
        "m1": ({"0": [1]}, {"0": [0]}),
        "m2": ({"0": [0]}, {"0": [1]})}
    # two threads of one instance: never a standby beside the active
    assert run([member("a", "p1"), member("b", "p1")], subs(s0=(2, STATEFUL)), 1) == {
        "a": ({"0": [0]}, {}),
        "b": ({"0": [1]}, {})}


def test_a_freed_active_task_goes_to_its_previous_standby():
    topology = subs(s0=(2, STATEFUL))
    fresh = [member("m2", "p2"), member("m3", "p3")]
    assert run(fresh, topology) == {"m2": ({"0": [0]}, {}), "m3": ({"0": [1]}, {})}
    warm = [member("m2", "p2", standby={"0": {1}}), member("m3", "p3", standby={"0": {0}})]
    assert run(warm, topology) == {"m2": ({"0": [1]}, {}), "m3": ({"0": [0]}, {})}


def test_without_a_standby_the_higher_reported_offset_wins():
    group = [member("m1", "p1", offsets={("0", 0): 10, ("0", 1): 500}),
             member("m2", "p2", offsets={("0", 0): 900, ("0", 1): 20})]
    assert run(group, subs(s0=(2, STATEFUL))) == {
        "m1": ({"0": [1]}, {}),
        "m2": ({"0": [0]}, {})}


def test_actives_and_standbys_stay_where_they_are():
    group = [member("m1", "p1", active={"0": {0}}, standby={"0": {1}}),
             member("m2", "p2", active={"0": {1}}, standby={"0": {2}}),
             member("m3", "p3", active={"0": {2}}, standby={"0": {0}})]
    assert run(group, subs(s0=(3, STATEFUL)), 1) == {
        "m1": ({"0": [0]}, {"0": [1]}),
        "m2": ({"0": [1]}, {"0": [2]}),
        "m3": ({"0": [2]}, {"0": [0]})}


def test_every_member_is_in_the_result_in_kafkas_member_map_order():
    ids = ["m1", "m2", "m3", "member-10", "thread-7"]
    result = assign([member(m, m) for m in ids], subs(s0=(1, STATEFUL)), 1)
    assert list(result) == javaorder.string_order(ids)
    assert sorted(result.values(), key=lambda a: (-len(a.active), -len(a.standby))) == [
        TaskAssignment(active={"0": {0}}, standby={}, warmup={}),
        TaskAssignment(active={}, standby={"0": {0}}, warmup={}),
    ] + [TaskAssignment(active={}, standby={}, warmup={})] * 3


def test_tasks_with_no_member_to_take_them():
    with pytest.raises(TaskAssignorError) as raised:
        assign([], subs(s0=(1, STATELESS)), 0)
    assert str(raised.value) == "No process available to assign active task 0_0."


# -- against Kafka's assignor, run from its jar -------------------------------------------------

def _random_group(rng: random.Random):
    topology = {str(i * rng.choice((1, 7))): SubtopologySpec(rng.randint(1, 12),
                                                              rng.random() < 0.6)
                for i in range(rng.randint(1, 4))}
    tasks = [(s, p) for s, spec in topology.items() for p in range(spec.num_tasks)]
    processes = rng.randint(1, 8)
    held, members = rng.choice((0.0, 0.1, 0.3)), []
    ids = [f"{rng.choice(('m', 'thread-', 'A'))}{rng.randint(0, 300)}"
           for _ in range(rng.randint(1, 20))]
    for member_id in dict.fromkeys(ids):
        active: dict[str, set[int]] = {}
        standby: dict[str, set[int]] = {}
        offsets = {}
        for sub, p in tasks:
            draw = rng.random()
            if draw < held:
                active.setdefault(sub, set()).add(p)
            elif draw < 2 * held:
                standby.setdefault(sub, set()).add(p)
            if rng.random() < held:
                offsets[(sub, p)] = rng.choice((0, -2, 5, rng.randint(0, 10_000)))
        members.append(member(member_id, f"p{rng.randint(1, processes)}", active, standby,
                              offsets))
    return members, topology, rng.randint(0, 3)


def _as_input(members: list[MemberSpec], topology, standbys: int) -> list[str]:
    lines = [f"case {standbys}"]
    lines += [f"sub {s} {spec.num_tasks} {int(spec.stateful)}" for s, spec in topology.items()]
    for m in members:
        lines.append(f"member {m.member_id} {m.process_id}")
        lines += [f"active {s} {' '.join(map(str, sorted(p)))}" for s, p in m.active.items()]
        lines += [f"standby {s} {' '.join(map(str, sorted(p)))}" for s, p in m.standby.items()]
        lines += [f"offset {s} {p} {o}" for (s, p), o in m.task_offsets.items()]
    return lines + ["end"]


def _shown(tasks: dict[str, set[int]]) -> str:
    return ";".join(f"{s}:{','.join(map(str, sorted(p)))}"
                    for s, p in sorted(tasks.items()) if p) or "-"


def _ours(members: list[MemberSpec], topology, standbys: int) -> list[str]:
    try:
        result = assign(members, topology, standbys)
    except TaskAssignorError as e:
        return [f"error {e}"]
    return [f"{m.member_id} {_shown(result[m.member_id].active)} "
            f"{_shown(result[m.member_id].standby)}" for m in members]


def _kafkas(groups) -> list[list[str]]:
    classpath = [JARS / f"{jar}.jar" for jar in (
        "kafka-group-coordinator-4.4.0", "kafka-group-coordinator-api-4.4.0",
        "kafka-clients-4.4.0", "slf4j-api-1.7.36")]
    missing = [str(p) for p in classpath if not p.exists()]
    assert not missing and shutil.which("java"), \
        f"this test runs Kafka's own assignor: it needs java and {missing} " \
        f"(bash ci/dev.sh setup fetches them)"
    text = "".join(line + "\n" for group in groups for line in _as_input(*group))
    out = subprocess.run(["java", "-cp", ":".join(map(str, classpath)), str(KAFKA)],
                         input=text, capture_output=True, text=True, timeout=300, check=True)
    answers, current = [], []
    for line in out.stdout.splitlines():
        if line == "end":
            answers.append(current)
            current = []
        else:
            current.append(line)
    return answers


def test_random_groups_are_assigned_as_kafka_assigns_them():
    rng = random.Random(44)
    groups = [_random_group(rng) for _ in range(300)]
    groups.append(([], subs(s0=(2, STATEFUL)), 1))
    kafka = _kafkas(groups)
    assert len(kafka) == len(groups)
    for group, expected in zip(groups, kafka):
        assert _ours(*group) == expected, _as_input(*group)
