"""The import contracts in pyproject.toml ([tool.importlinter]) hold for this tree, and bite.

Each biting case copies the three packages to a temporary directory, adds one import that a
contract forbids, and runs ``lint-imports`` there: it must fail, naming exactly the contracts
that import breaks.  A contract that passes whatever the code does would be worse than none.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("wire", "mockbroker", "conftest_plugin")

pytest.importorskip("importlinter", reason="import-linter is in the test extras")

CONTRACTS = {contract["id"]: contract["name"] for contract in
             tomllib.loads((ROOT / "pyproject.toml").read_text())
             ["tool"]["importlinter"]["contracts"]}


def lint_imports(cwd: Path) -> tuple[int, dict[str, str], str]:
    """Run ``lint-imports`` in ``cwd``: exit status, {contract name: KEPT|BROKEN}, output."""
    # lint-imports puts its working directory first on sys.path, so it analyses that tree.
    env = {**os.environ, "PYTHONPATH": str(cwd), "COLUMNS": "240", "NO_COLOR": "1"}
    result = subprocess.run(
        [sys.executable, "-c",
         "import sys; from importlinter.cli import lint_imports_command; "
         "sys.exit(lint_imports_command())", "--no-cache", "--no-logo"],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    output = result.stdout + result.stderr
    verdicts = {}
    for line in output.splitlines():
        for name in CONTRACTS.values():
            rest = line.removeprefix(name + " ")
            if rest != line and rest.split(" ", 1)[0] in ("KEPT", "BROKEN"):
                verdicts[name] = rest.split(" ", 1)[0]
    return result.returncode, verdicts, output


def test_the_tree_keeps_every_contract():
    status, verdicts, output = lint_imports(ROOT)
    assert status == 0, output
    assert verdicts == {name: "KEPT" for name in CONTRACTS.values()}, output


# Reaching up into io drags the whole of io along, chains included: asyncio, the handler
# registry (whose package holds the served table), the front door and the group coordinator
# (whose table of group types reaches every type).  Those contracts may break too; the one the
# case names must.
THROUGH_IO = {"sans-io", "handlers-independent", "groups-beside-data-path", "data-path-apart",
              "observers-above-what-they-see", "coordinator-base-below-coordinators",
              "listeners-apart-from-admin-server", "transactions-beside-groups",
              "group-types-independent"}

# (module to edit, the line added, contracts it must break, contracts it may break besides)
INJECTIONS = {
    "core imports io": (
        "mockbroker/core/cluster.py", "import mockbroker.io.kafka.server", {"layers"},
        THROUGH_IO),
    "core reaches the front through the package root": (
        "mockbroker/core/datapath/produce.py", "from mockbroker import MockCluster", {"layers"},
        THROUGH_IO),
    "handler imports io": (
        "mockbroker/handlers/produce.py", "from mockbroker.io import runtime", {"layers"},
        THROUGH_IO),
    "io imports the cluster": (
        "mockbroker/io/kafka/server.py", "import mockbroker.mock_cluster", {"layers"},
        {"listeners-apart-from-admin-server"}),
    "wire imports the core": (
        "wire/records.py", "import mockbroker.core.errors",
        {"layers", "wire-knows-no-broker"}, set()),
    "core codes through construct": (
        "mockbroker/core/groups/records.py", "from wire.builder import embedded_struct",
        {"broker-serves-without-construct"}, set()),
    "codec loads construct": (
        "wire/protocol.py", "import construct", {"broker-serves-without-construct"}, set()),
    "core uses asyncio": (
        "mockbroker/core/datapath/fetch.py", "import asyncio", {"sans-io"}, set()),
    "handler opens a socket": (
        "mockbroker/handlers/metadata.py", "import socket", {"sans-io"}, set()),
    "admin client needs aiohttp": (
        "mockbroker/admin.py", "import aiohttp", {"admin-client-stdlib-only"}, set()),
    "admin client reaches into io": (
        "mockbroker/admin.py", "import mockbroker.io.admin.local", {"admin-client-stdlib-only"},
        set()),
    "config imports the cluster": (
        "mockbroker/core/config/topic.py", "import mockbroker.core.cluster",
        {"config-below-cluster"}, set()),
    "groups import the front door": (
        "mockbroker/core/groups/offsets.py", "from mockbroker.core import dispatch",
        {"groups-beside-data-path"}, {"observers-above-what-they-see"}),
    "the admin API's description imports the core": (
        "mockbroker/adminapi/routes.py", "import mockbroker.core.errors",
        {"layers", "admin-api-description-stdlib-only"}, {"admin-client-stdlib-only"}),
    "the admin API's description needs a third-party package": (
        "mockbroker/adminapi/jsonview.py", "import msgspec",
        {"admin-api-description-stdlib-only"}, {"admin-client-stdlib-only"}),
    "a listener imports the admin server": (
        "mockbroker/io/kafka/server.py", "import mockbroker.io.admin.metrics",
        {"listeners-apart-from-admin-server"}, set()),
    "the data path reads the group coordinator": (
        "mockbroker/core/datapath/produce.py", "import mockbroker.core.groups.coordinator",
        {"data-path-apart"}, set()),
    "the cluster inspects itself": (
        "mockbroker/core/cluster.py", "from mockbroker.core.observe import inspect",
        {"observers-above-what-they-see"},
        {"data-path-apart", "coordinator-base-below-coordinators"}),
    "placement knows the group coordinator": (
        "mockbroker/core/coordinators/placement.py", "import mockbroker.core.groups.coordinator",
        # a consumer group's assignors hash as placement does: through placement, one type
        # would reach the table of group types, and every other type
        {"coordinator-base-below-coordinators"},
        {"transactions-beside-groups", "group-types-independent"}),
    "the transaction coordinator reads the groups": (
        "mockbroker/core/transactions/markers.py", "import mockbroker.core.groups.offsets",
        {"transactions-beside-groups"}, {"group-types-independent"}),
    "one group type imports another": (
        "mockbroker/core/groups/classic/state.py", "import mockbroker.core.groups.consumer.group",
        {"group-types-independent"}, set()),
    "handler imports another handler": (
        "mockbroker/handlers/heartbeat.py", "from mockbroker.handlers import join_group",
        {"handlers-independent"}, set()),
}


@pytest.mark.parametrize("case", INJECTIONS)
def test_a_forbidden_import_breaks_its_contract(case, tmp_path):
    path, line, must, may = INJECTIONS[case]
    assert must | may <= CONTRACTS.keys()
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / path
    target.write_text(target.read_text() + f"\n{line}  # injected by test_layers\n")

    status, verdicts, output = lint_imports(tmp_path)

    assert status != 0, output
    assert verdicts.keys() == set(CONTRACTS.values()), output
    broken = {id_ for id_, name in CONTRACTS.items() if verdicts[name] == "BROKEN"}
    assert must <= broken <= must | may, output
    module = path.removesuffix(".py").replace("/", ".")
    assert module in output, output  # the report names the offending module
