"""ci/conformance.py: the README's matrix says only what a test run showed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "ci" / "conformance.py"
#: the matrix's columns, as the script lists them
COLUMNS = ["produce / consume", "groups, classic", "groups, consumer / streams protocol",
           "share groups", "transactions", "admin", "quotas", "SASL / TLS", "Spark"]
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
    assert row.split(" | ")[1:7] == ["**both**", "mockbroker only", "— (not in the client)",
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


def test_the_figures_count_every_client_test_by_target_and_reason(tmp_path):
    def case(module, name, outcome, **props):
        inner = "<failure message='x'/>" if outcome == "failed" else ""
        listed = "".join(f'<property name="{k}" value="{v}"/>' for k, v in props.items())
        return (f'<testcase classname="tests.clients.{module}" name="{name}">'
                f'<properties>{listed}</properties>{inner}</testcase>')
    cases = [
        case("test_conformance", "test_records_come_back_with_keys_headers_and_offsets"
             f"[{t}-kcat]", "passed", target=t) for t in ("mockbroker", "kafka")] + [
        case("test_data_path", f"test_acks[{t}-kafka-python-1]", "passed", target=t)
        for t in ("mockbroker", "kafka")] + [
        case("test_data_path", "test_bad_crc[mockbroker]", "passed", target="mockbroker"),
        case("test_data_path", "test_bad_crc[kafka]", "failed", target="kafka"),
        case("test_faults", "test_a", "passed", mockbroker_only="faults injected"),
        case("test_faults", "test_b", "passed", mockbroker_only="faults injected"),
        case("test_retention", "test_c", "passed", mockbroker_only="settings"),
    ]
    path = tmp_path / "report.xml"
    path.write_text(f'<testsuites><testsuite name="pytest">{"".join(cases)}'
                    f'</testsuite></testsuites>')
    out = run(path)
    assert out.returncode == 0, out.stderr
    assert "2 of 3 that run on both targets pass on both" in out.stdout
    assert "3 run on mockbroker alone, as their marker says, for: faults injected (2); " \
        "settings (1)." in out.stdout
    assert "Passing on mockbroker but not on Kafka: test_data_path::test_bad_crc (failed)." \
        in out.stdout


def test_the_sasl_tls_column_comes_from_the_security_tests(tmp_path):
    security = ('<testcase classname="tests.clients.test_security" '
                'name="test_kafka_python_over_sasl[SASL_SSL-{m}]">{inner}</testcase>')
    body = security.format(m="PLAIN", inner="") + \
        security.format(m="SCRAM-SHA-256", inner="") + \
        security.format(m="PLAIN", inner="").replace("kafka_python", "aiokafka") + \
        security.format(m="PLAIN", inner="<failure message='x'/>").replace(
            "kafka_python_over_sasl", "confluent_kafka_over_sasl")
    path = tmp_path / "report.xml"
    path.write_text(f'<testsuites><testsuite name="pytest">{body}</testsuite></testsuites>')
    out = run(path)
    assert out.returncode == 0, out.stderr
    sasl = COLUMNS.index("SASL / TLS") + 1
    column = {line.split(" | ")[0][2:]: line.split(" | ")[sasl]
              for line in out.stdout.splitlines() if line.startswith("| ")}
    assert column["kafka-python"] == "mockbroker only"
    assert column["aiokafka"] == "mockbroker only"
    assert column["confluent-kafka"] == "failing"
    assert column["java"] == "*not yet*"
    # they are not conformance scenarios, which run on both targets
    assert "0 of 0 conformance scenarios" in out.stdout
