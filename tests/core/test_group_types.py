"""Group types are asked, never named: the table of group types
(``mockbroker/core/groups/types.py``) is the one place that knows them all, and code outside
``mockbroker/core/groups/`` asks the group coordinator instead of comparing a group's type with
a type's name or testing a group's class.  Each entry of the table declares what the table
asks, and a type the table gains is served, listed, described, watched and shown without
another line outside its package.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mockbroker.core.errors import ApiException
from mockbroker.core.groups import GroupProtocol, GroupSnapshot, GroupType, Listed
from mockbroker.core.groups import types as group_types
from mockbroker.core.groups.classic_api import JoinRequest
from mockbroker.core.groups.records import OFFSET_COMMIT_TYPES
from mockbroker.core.observe import inspect
from tests.core.harness import make_core, send
from wire import errors

ROOT = Path(__file__).resolve().parents[2]
GROUPS = ROOT / "mockbroker" / "core" / "groups"
#: the code that must ask rather than name: the package but its groups, and the pytest plugin
SCANNED = (ROOT / "mockbroker", ROOT / "conftest_plugin")
#: attribute and variable names that hold a group's type
TYPE_NAMES = {"type", "group_type", "type_name"}


def group_classes() -> dict[str, str]:
    """Every group class under ``mockbroker/core/groups/``, read from the source (a class body
    assigning ``type = "<name>"``): class name -> its type's name."""
    found = {}
    for path in GROUPS.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ClassDef):
                continue
            for statement in node.body:
                value = getattr(statement, "value", None)
                if isinstance(statement, ast.Assign) and isinstance(value, ast.Constant) \
                        and isinstance(value.value, str) \
                        and any(isinstance(t, ast.Name) and t.id == "type"
                                for t in statement.targets):
                    found[node.name] = value.value
    return found


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _strings(node: ast.AST) -> set[str]:
    """The string constants ``node`` is, or holds (a tuple, list or set of them)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return {e.value for e in node.elts if isinstance(e, ast.Constant)
                and isinstance(e.value, str)}
    return set()


def _classes(node: ast.AST) -> set[str]:
    """The class names ``node`` names (a name, an attribute, or a tuple of them)."""
    if isinstance(node, ast.Tuple):
        return {n for e in node.elts for n in _classes(e)}
    name = _name(node)
    return {name} if name else set()


def type_tests(source: str, filename: str, classes: dict[str, str]) -> list[str]:
    """Where ``source`` tells a group's type by name or by class: a comparison of a type with a
    type's name (``group.type == "consumer"``, ``group_type in ("classic", "consumer")``), an
    ``isinstance`` or ``issubclass`` of a group class, a comparison with a group class
    (``type(group) is ClassicGroup``), a ``case ConsumerGroup()``."""
    names = set(classes.values())
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        where = f"{filename}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_name(o) in TYPE_NAMES for o in operands) and \
                    any(_strings(o) & names for o in operands):
                found.append(f"{where}: compares a group's type with a type's name")
            if any(_name(o) in classes for o in operands):
                found.append(f"{where}: compares with a group class")
        elif isinstance(node, ast.Call) and _name(node.func) in ("isinstance", "issubclass") \
                and len(node.args) == 2 and _classes(node.args[1]) & classes.keys():
            found.append(f"{where}: {_name(node.func)} of a group class")
        elif isinstance(node, ast.MatchClass) and _name(node.cls) in classes:
            found.append(f"{where}: matches a group class")
    return found


def test_nothing_outside_the_groups_package_tells_a_groups_type_by_name_or_class():
    classes = group_classes()
    assert {"classic", "consumer"} <= set(classes.values())  # the scan knows what to look for
    found = []
    for top in SCANNED:
        for path in sorted(top.rglob("*.py")):
            if GROUPS in path.parents:
                continue
            found += type_tests(path.read_text(), str(path.relative_to(ROOT)), classes)
    assert not found, "ask the group coordinator instead:\n" + "\n".join(found)


@pytest.mark.parametrize("line", [
    'if found.type == "consumer": pass',
    'if "classic" != group.type: pass',
    'ok = group_type not in ("classic", "consumer")',
    "ok = isinstance(group, ConsumerGroup)",
    "ok = isinstance(group, (int, groups.ClassicGroup))",
    "ok = type(group) is ClassicGroup",
    "match group:\n    case ConsumerGroup(): pass",
])
def test_the_scan_catches_each_way_of_telling_a_type(line):
    assert type_tests(line, "probe.py", group_classes())


@pytest.mark.parametrize("line", [
    'ok = protocol_type == "consumer"',  # the embedded protocol's type, not the group's
    'view = core.groups.describe_as("classic", broker, group_id)',
    "ok = found.type == wanted",
])
def test_the_scan_lets_asking_be(line):
    assert not type_tests(line, "probe.py", group_classes())


# -- the table ----------------------------------------------------------------------------------


def asked(protocol: type) -> set[str]:
    return {name for name in vars(protocol) if not name.startswith("_")} | \
        set(getattr(protocol, "__annotations__", {}))


def test_each_entry_declares_what_the_table_asks_under_its_own_name():
    core = make_core()
    seen_kinds: set[int] = set(OFFSET_COMMIT_TYPES)
    for name in group_types.names():
        declared = group_types.declared(name)
        assert declared.name == name
        missing = sorted(a for a in asked(GroupType) if not hasattr(declared, a))
        assert not missing, (name, missing)
        # each record type belongs to one group type, and none to the shared offsets
        assert not seen_kinds & set(declared.record_types), name
        seen_kinds |= set(declared.record_types)
        protocol = core.groups.protocol(name)
        missing = sorted(a for a in asked(GroupProtocol) if not hasattr(protocol, a))
        assert not missing, (name, missing)
        group = declared.new_group("g", 0)
        assert group.type == name and group.is_empty
        assert declared.listed(group) == Listed("g", declared.listed(group).protocol_type,
                                                "Empty", name)
    assert group_types.BARE in group_types.names()


# -- a type the table gains ---------------------------------------------------------------------


class ToyGroup:
    """A group of a type no code outside this test knows."""

    type = "toy"

    def __init__(self, group_id: str, now_ms: int):
        self.group_id = group_id
        self.offsets: dict = {}
        self.pending_offsets: dict = {}
        self.members = {"m-1": "client-1"}
        self.is_dead = False
        self.is_empty = False
        self.deletable_when_offsets_expire = False

    def deleted(self, now_ms: int) -> None:
        self.is_dead = True

    unloaded = converted = deleted

    def offset_expiry_base(self) -> tuple[bool, int | None]:
        return False, None

    def may_expire_offset_of(self, topic: str) -> bool:
        return False

    def subscribed_topics(self) -> set[str] | None:
        return None

    def consumes(self, topic: str, subscribed: set[str] | None = None) -> bool:
        return True


class ToyProtocol:
    def __init__(self, coordinator):
        self.expired: list[str] = []

    def loaded(self, group) -> None:
        pass

    def expire_member(self, group, member_id: str) -> None:
        self.expired.append(member_id)

    def force_rebalance(self, group) -> None:
        raise ApiException(errors.INVALID_REQUEST, "toys do not rebalance")

    def validate_offset_commit(self, shard, group_id, group, member_id, instance_id,
                               generation, api_version, *, transactional=False):
        raise ApiException(errors.UNKNOWN_MEMBER_ID)

    def validate_offset_fetch(self, group, member_id, member_epoch) -> None:
        pass


class ToyReplayer:
    def record(self, kind, key, value) -> None:
        raise AssertionError("a toy group writes no record")

    def groups(self) -> dict:
        return {}


class ToyType:
    name = "toy"
    record_types = (99,)
    rebalancing = frozenset({"Shuffling"})

    def protocol(self, coordinator):
        return ToyProtocol(coordinator)

    def new_group(self, group_id, now_ms):
        return ToyGroup(group_id, now_ms)

    def replayer(self, now_ms):
        return ToyReplayer()

    def tombstones(self, group):
        return []

    def snapshot(self, group):
        return GroupSnapshot(self.name, "Playing", 3, {})

    def assignments(self, coordinator, group):
        return {}

    def listed(self, group):
        return Listed(group.group_id, "toy", "Playing", self.name)

    def view(self, coordinator, group, shared):
        from mockbroker.adminapi.views import GroupView

        # the admin API's description names the types it documents (adminapi.views.GroupType,
        # standard library only): a real type adds its name there; the toy passes as classic
        return GroupView(group_id=group.group_id, state="Stable", type="classic", generation=3,
                         protocol_type="toy", protocol=None, leader=None, members=[], **shared)

    def summary(self, group, coordinator_id):
        from mockbroker.adminapi.views import GroupSummaryView

        return GroupSummaryView(group_id=group.group_id, state="Stable", generation=3,
                                protocol_type="toy", coordinator=coordinator_id, members=1)


@pytest.fixture
def toy(monkeypatch):
    """The table with a third type, one entry more; a core with a toy group in it."""
    monkeypatch.setitem(group_types.TABLE, "toy", ToyType)
    monkeypatch.setattr(group_types, "_declared", {})
    core = make_core()
    broker = core.groups.placement.coordinator_for("toys")
    core.groups.shard_for("toys", broker)  # creates __consumer_offsets
    core.clock.advance(0)
    core.groups.shard_for("toys", broker).groups["toys"] = ToyGroup("toys", 0)
    return core, broker


def test_a_third_type_is_listed_described_refused_and_shown_by_its_entry_alone(toy):
    core, broker = toy
    listed = send(core, 16, 5, broker=broker, states_filter=[], types_filter=["toy"])
    assert [(g.group_id, g.protocol_type, g.group_state, g.group_type)
            for g in listed.groups] == [("toys", "toy", "Playing", "toy")]
    described = send(core, 15, 6, broker=broker, groups=["toys"],
                     include_authorized_operations=False).groups[0]
    assert (described.error_code, described.group_state, described.error_message) == \
        (errors.GROUP_ID_NOT_FOUND, "Dead", "Group toys is not a classic group.")
    described = send(core, 69, 0, broker=broker, group_ids=["toys"],
                     include_authorized_operations=False).groups[0]
    assert (described.error_code, described.error_message) == \
        (errors.GROUP_ID_NOT_FOUND, "Group toys is not a consumer group.")
    # nothing serves the classic protocol, or the consumer protocol, in a toy group: a classic
    # member is refused as Kafka refuses one at a group of a type it cannot join
    joined = core.groups.classic.join_group(broker, JoinRequest(
        "toys", "", None, "c", "/h", 10_000, 10_000, "consumer", [("range", b"")], 5))
    assert joined.error_code == errors.INCONSISTENT_GROUP_PROTOCOL
    beat = send(core, 68, 0, broker=broker, group_id="toys", member_id="", member_epoch=0,
                rebalance_timeout_ms=30_000, subscribed_topic_names=["t"], topic_partitions=[])
    assert (beat.error_code, beat.error_message) == \
        (errors.GROUP_ID_NOT_FOUND, "Group toys is not a consumer group.")
    # an OffsetCommit is the toy protocol's to check; the admin knobs are its protocol's too
    with pytest.raises(ApiException) as refused:
        core.groups.validate_offset_commit(broker, "toys", "m-1", None, 1, 8)
    assert refused.value.error_code == errors.UNKNOWN_MEMBER_ID
    core.groups.admin.expire_member("toys", "m-1")
    assert core.groups.protocol("toy").expired == ["m-1"]
    with pytest.raises(ApiException, match="toys do not rebalance"):
        core.groups.admin.force_rebalance("toys")
    # the admin API and the watch see it through its entry
    assert [s.group_id for s in inspect.groups(core, "toy")] == ["toys"]
    assert inspect.group_view(core, *inspect.group(core, "toys")).protocol_type == "toy"
    core.watch.look(["toys"])
    [state] = [e for e in core.events.since(0) if e["type"] == "group_state"
               and e["group"] == "toys"]
    assert (state["group_type"], state["to"], state["generation"]) == ("toy", "Playing", 3)
