"""ci/conformance.py: the README's matrix says only what a test run showed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "ci" / "conformance.py"
CASE = '<testcase classname="tests.clients.test_conformance" name="{name}[{target}-{client}]">' \
       '{inner}</testcase>'


def report(tmp_path: Path, cases: list[tuple[str, str, str, str]]) -> Path:
    """A JUnit report of (test, target, client, outcome) cases."""
    inner = {"passed": "", "failed": "<failure message='x'/>", "skipped": "<skipped/>"}
    body = "".join(CASE.format(name=n, target=t, client=c, inner=inner[o])
                   for n, t, c, o in cases)
    path = tmp_path / "report.xml"
    path.write_text(f'<testsuites><testsuite name="pytest">{body}'
                    f'<testcase classname="tests.core.x" name="test_other"/></testsuite></testsuites>')
    return path


def run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)],
                          capture_output=True, text=True)


def test_cells_say_what_the_run_showed(tmp_path):
    records = "test_records_come_back_with_keys_headers_and_offsets"
    groups = "test_a_classic_group_splits_commits_and_resumes"
    txn = "test_a_read_committed_reader_sees_committed_transactions_only"
    path = report(tmp_path, [
        (records, "mockbroker", "aiokafka", "passed"), (records, "kafka", "aiokafka", "passed"),
        (groups, "mockbroker", "aiokafka", "passed"), (groups, "kafka", "aiokafka", "failed"),
        (txn, "mockbroker", "aiokafka", "failed"), (txn, "kafka", "aiokafka", "passed")])
    out = run(path)
    assert out.returncode == 0, out.stderr
    row = next(line for line in out.stdout.splitlines() if line.startswith("| aiokafka"))
    assert row.split(" | ")[1:6] == ["**both**", "mockbroker only",
                                     "— (not in the client)", "failing", "*not yet*"]
    assert "1 of 3 conformance scenarios" in out.stdout
    assert "test_a_classic_group_splits_commits_and_resumes[aiokafka] (failed)" in out.stdout


def test_check_fails_when_the_readme_differs_and_write_fixes_it(tmp_path):
    path = report(tmp_path, [
        ("test_records_come_back_with_keys_headers_and_offsets", target, "java", "passed")
        for target in ("mockbroker", "kafka")])
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- conformance:start -->\nold\n<!-- conformance:end -->\nend\n")
    checked = run(path, "--check", readme)
    assert checked.returncode == 1 and "is not what this run showed" in checked.stderr
    assert run(path, "--write", readme).returncode == 0
    assert run(path, "--check", readme).returncode == 0
    text = readme.read_text()
    assert text.startswith("intro\n") and text.endswith("end\n")
    assert "| java | **both** |" in text
    assert run(tmp_path / "report.xml", "--check", tmp_path / "none.md").returncode != 0


def test_a_run_without_conformance_tests_is_an_error(tmp_path):
    path = report(tmp_path, [])
    out = run(path)
    assert out.returncode == 1 and "no conformance tests" in out.stderr
