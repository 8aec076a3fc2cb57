"""The client conformance matrix, from a test run's JUnit report.

    python ci/conformance.py REPORT.xml                 print the matrix and the figures
    python ci/conformance.py REPORT.xml --check FILE    fail unless FILE shows this matrix
    python ci/conformance.py REPORT.xml --write FILE    put this matrix into FILE

``tests/clients/test_conformance.py`` runs each scenario once per client and target
(``test_name[target-client]``, the target being mockbroker or kafka).  A cell says what the run
showed for that client and capability: **both** when every scenario of it passed on mockbroker
and on Apache Kafka, **mockbroker only** when some passed on mockbroker alone, **failing** when
one failed on mockbroker, *not yet* when the run had no such test, and "not in the client" for
what the client itself lacks.

The SASL / TLS column comes from the security tests (:data:`ELSEWHERE`), which run on
mockbroker and on a secured Apache Kafka (SSL, SASL_PLAINTEXT and SASL_SSL listeners) alike; a
cell of theirs says **both** only when each of its tests passed on both.

Under the matrix come the figures: how many conformance scenarios pass on both targets, how
many of all client-level tests (``tests/clients`` and Spark's, each parametrization counted)
that run on both pass on both, how many run on mockbroker alone and why (the
``mockbroker_only`` reason ``tests/clients/conftest.py`` records in the report), and any test
that passed on mockbroker but not on Kafka.  In FILE the block sits between the lines
``<!-- conformance:start -->`` and ``<!-- conformance:end -->``.

Last comes the table of the Kafka releases mockbroker emulates (``kafka_version``), from
``tests/clients/test_kafka_versions.py``: one test per target and release, each recording the
release (``kafka_version``) and what it found (``api_versions``: identical to the release's
table, or identical but for what mockbroker does not serve; ``scenarios``: passed).
"""

from __future__ import annotations

import argparse
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from pathlib import Path

MODULE = "tests.clients.test_conformance"
#: the modules whose tests take a target and a client as the conformance scenarios do
#: (``test_name[target-client]``): the conformance module, and the share groups' own
SCENARIO_MODULES = {MODULE, "tests.clients.test_share_groups", "tests.clients.test_share_tools",
                    "tests.clients.test_share_go", "tests.clients.test_share_confluent",
                    "tests.clients.test_quotas", "tests.clients.test_features",
                    "tests.clients.test_streams_groups"}
#: test function -> the capability it shows
CAPABILITIES = {
    "test_records_come_back_with_keys_headers_and_offsets": "produce / consume",
    "test_console_tools_write_and_read_records": "produce / consume",
    "test_a_classic_group_splits_commits_and_resumes": "groups, classic",
    "test_a_consumer_protocol_group_splits_commits_and_resumes":
        "groups, consumer / streams protocol",
    "test_a_group_member_commits_and_the_next_resumes": "groups, classic",
    "test_a_consumer_protocol_member_commits_and_the_next_resumes":
        "groups, consumer / streams protocol",
    "test_a_read_committed_reader_sees_committed_transactions_only": "transactions",
    "test_an_exactly_once_streams_app_counts_every_word_once": "transactions",
    "test_a_streams_app_reads_lines_and_writes_counts": "produce / consume",
    "test_two_streams_instances_share_the_tasks_and_one_takes_over": "groups, classic",
    "test_topics_are_created_configured_grown_and_deleted": "admin",
    "test_the_java_admin_describes_a_consumer_protocol_group": "admin",
    "test_kafka_consumer_groups_describes_resets_and_deletes_a_group": "admin",
    "test_kafka_topics_creates_describes_grows_and_deletes_a_topic": "admin",
    "test_kafka_configs_adds_describes_and_deletes_a_topic_config": "admin",
    "test_kafka_transactions_lists_and_describes_an_open_transaction": "transactions",
    "test_spark_writes_reads_and_streams_records": "Spark",
    "test_kafka_share_groups_lists_describes_resets_and_deletes": "share groups",
    "test_a_franz_go_share_consumer_reads_and_accepts_every_record": "share groups",
    "test_implicit_acknowledgement_delivers_each_record_once": "share groups",
    "test_two_consumers_share_one_partition_and_get_each_record_once": "share groups",
    "test_explicit_release_reject_and_the_delivery_limit": "share groups",
    "test_records_a_killed_consumer_held_go_to_another_delivered_again": "share groups",
    "test_records_a_consumer_holds_past_their_lock_go_to_another": "share groups",
    "test_a_read_committed_share_group_skips_aborted_transactions": "share groups",
    "test_rejected_and_exhausted_records_go_to_the_dead_letter_queue": "share groups",
    "test_kafka_configs_sets_describes_and_deletes_client_quotas": "quotas",
    "test_kafka_features_describes_and_checks_upgrades_and_downgrades": "admin",
    "test_a_producer_over_its_byte_rate_is_told_to_back_off_and_loses_nothing": "quotas",
    "test_a_consumer_over_its_byte_rate_is_throttled_and_gets_every_record": "quotas",
    "test_creating_topics_over_the_controller_mutation_rate_is_refused": "quotas",
    "test_with_the_defaults_records_produced_before_it_joined_never_reach_a_new_consumer":
        "share groups",
    "test_with_share_auto_offset_reset_earliest_on_the_group_it_gets_every_record":
        "share groups",
    "test_a_streams_group_app_counts_every_word_at_least_once":
        "groups, consumer / streams protocol",
    "test_a_streams_group_app_counts_every_word_exactly_once":
        "groups, consumer / streams protocol",
    "test_two_instances_split_the_tasks_and_one_takes_over_from_the_other":
        "groups, consumer / streams protocol",
    "test_a_standby_replica_takes_over_a_killed_instance_and_counts_on":
        "groups, consumer / streams protocol",
    "test_the_broker_creates_the_internal_topics_of_the_topology":
        "groups, consumer / streams protocol",
    "test_kafka_streams_groups_lists_describes_resets_and_deletes_a_group": "admin",
}
#: tests of other modules that show a capability for one client: (module, test) -> (client,
#: capability); they run on mockbroker alone, their marker says why
ELSEWHERE = {
    ("tests.clients.test_security", "test_confluent_kafka_over_sasl"):
        ("confluent-kafka", "SASL / TLS"),
    ("tests.clients.test_security", "test_confluent_kafka_with_a_client_certificate"):
        ("confluent-kafka", "SASL / TLS"),
    ("tests.clients.test_security",
     "test_confluent_kafka_logs_in_again_on_its_connection_before_its_session_ends"):
        ("confluent-kafka", "SASL / TLS"),
    ("tests.clients.test_security", "test_kafka_python_over_sasl"): ("kafka-python", "SASL / TLS"),
    ("tests.clients.test_security", "test_aiokafka_over_sasl"): ("aiokafka", "SASL / TLS"),
    ("tests.clients.test_security", "test_kcat_over_sasl_ssl"): ("kcat", "SASL / TLS"),
    ("tests.clients.test_security_java", "test_sasl_produce_consume_commit_and_admin"):
        ("java", "SASL / TLS"),
    ("tests.clients.test_security_java", "test_ssl_with_a_required_client_certificate"):
        ("java", "SASL / TLS"),
    ("tests.clients.test_security_java", "test_kafka_acls_adds_lists_and_removes_as_a_super_user"):
        ("kafka-tools", "SASL / TLS"),
    ("tests.clients.test_security_java", "test_an_exactly_once_streams_app_over_sasl_ssl"):
        ("kafka-streams", "SASL / TLS"),
    ("tests.clients.test_security", "test_franz_go_over_sasl_and_ssl"): ("franz-go", "SASL / TLS"),
    ("tests.clients.test_security", "test_kafkajs_over_sasl_and_ssl"): ("kafkajs", "SASL / TLS"),
}
COLUMNS = ["produce / consume", "groups, classic", "groups, consumer / streams protocol",
           "share groups", "transactions", "admin", "quotas", "SASL / TLS", "Spark"]
CLIENTS = ["confluent-kafka", "kafka-python", "aiokafka", "java", "kafka-streams", "franz-go",
           "kafkajs", "kcat", "kafka-tools"]
#: what a client does not have at all: kafka-python, aiokafka and kafkajs speak only the classic
#: group protocol, and so does Debian's kcat (its librdkafka predates ``group.protocol``); none
#: of them, nor Kafka Streams, has a share consumer; kcat and Kafka Streams administer nothing;
#: Spark's Kafka connector is built on the Java client, so its scenario is the java row's
ABSENT = {*((client, "groups, consumer / streams protocol")
            for client in ("kafka-python", "aiokafka", "kafkajs", "kcat")),
          *((client, "share groups") for client in ("kafka-python", "aiokafka", "kafkajs",
                                                    "kcat", "kafka-streams")),
          ("kcat", "admin"), ("kafka-streams", "admin"),
          *((client, "Spark") for client in CLIENTS if client != "java")}
TARGETS = ("mockbroker", "kafka")
START, END = "<!-- conformance:start -->", "<!-- conformance:end -->"
_ID = re.compile(r"^(?P<test>\w+)\[(?P<target>mockbroker|kafka)-(?P<client>.+)\]$")


def outcomes(report: Path) -> dict[tuple[str, str, str], str]:
    """(test, client, target) -> passed, failed or skipped."""
    found: dict[tuple[str, str, str], str] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        module, name = case.get("classname"), case.get("name", "")
        mapped = ELSEWHERE.get((module, name.split("[")[0]))
        if mapped is not None:
            target, test = _target_of(case)
            found[(f"{module}::{test}", mapped[0], target)] = _outcome(case)
            continue
        if module not in SCENARIO_MODULES:
            continue
        match = _ID.match(case.get("name", ""))
        if match is None:
            continue
        found[(match["test"], match["client"], match["target"])] = _outcome(case)
    return found


def _target_of(case) -> tuple[str, str]:
    """(the target a test ran on, its id without the target): a test marked
    ``mockbroker_only`` ran on mockbroker; one that takes a target names it first among its
    parameters."""
    name = case.get("name", "")
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    target = props.get("target")
    if target not in TARGETS:
        return "mockbroker", name
    test, _, params = name.partition("[")
    rest = params[:-1].removeprefix(target).removeprefix("-")
    return target, f"{test}[{rest}]" if rest else test


def capability_of(test: str) -> str | None:
    """The capability a test (as :func:`outcomes` names it) shows, if any."""
    if "::" in test:
        module, name = test.split("::", 1)
        return ELSEWHERE[(module, name.split("[")[0])][1]
    return CAPABILITIES.get(test)


def cells(found: dict[tuple[str, str, str], str]) -> dict[tuple[str, str], str]:
    by_cell: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for (test, client, target), outcome in found.items():
        capability = capability_of(test)
        if capability is not None:
            by_cell[(client, capability)].append((target, outcome))
    out = {}
    for cell, results in by_cell.items():
        mock = [o for t, o in results if t == "mockbroker"]
        kafka = [o for t, o in results if t == "kafka"]
        if not mock or any(o != "passed" for o in mock):
            out[cell] = "failing" if "failed" in mock else "not yet"
        elif kafka and all(o == "passed" for o in kafka) and len(kafka) == len(mock):
            out[cell] = "both"
        else:
            out[cell] = "mockbroker only"
    return out


def matrix(found: dict[tuple[str, str, str], str]) -> str:
    table = cells(found)
    lines = ["| client | " + " | ".join(COLUMNS) + " |",
             "|---|" + "---|" * len(COLUMNS)]
    for client in CLIENTS:
        row = [table.get((client, column),
                         "— (not in the client)" if (client, column) in ABSENT else "*not yet*")
               for column in COLUMNS]
        lines.append(f"| {client} | " + " | ".join(
            f"**{c}**" if c == "both" else c for c in row) + " |")
    return "\n".join(lines) + "\n"


def client_tests(report: Path) -> tuple[dict[tuple[str, str], dict[str, str]], Counter]:
    """Every client-level test of the run (``tests/clients``, and any other test run on both
    targets, as Spark's are): the scenarios that ran on both targets, (module, test id without
    its target) -> {target: outcome}; and how many ran on mockbroker alone, by the reason their
    ``mockbroker_only`` marker gives."""
    scenarios: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    alone: Counter = Counter()
    for case in ET.parse(report).getroot().iter("testcase"):
        module = case.get("classname", "")
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        if not module.startswith("tests.clients.") and "target" not in props:
            continue
        if "mockbroker_only" in props:
            alone[props["mockbroker_only"]] += 1
        elif props.get("target") in TARGETS:
            target, name = props["target"], case.get("name", "")
            test, _, params = name.partition("[")
            params = params[:-1]
            if params == target:
                rest = ""
            elif params.startswith(target + "-"):
                rest = params[len(target) + 1:]
            else:
                raise ValueError(f"{module}::{name}: the target is not the first parameter")
            scenarios[(module, f"{test}[{rest}]" if rest else test)][target] = _outcome(case)
    return scenarios, alone


def _outcome(case) -> str:
    if case.find("failure") is not None or case.find("error") is not None:
        return "failed"
    return "skipped" if case.find("skipped") is not None else "passed"


def figures(found: dict[tuple[str, str, str], str], report: Path | None = None) -> str:
    # the conformance module's scenarios (the security tests counted in ELSEWHERE run on
    # mockbroker alone and are among the client-level figures below)
    found = {key: outcome for key, outcome in found.items() if "::" not in key[0]}
    scenarios = {(t, c) for t, c, _ in found}
    both = sorted(s for s in scenarios if all(found.get((*s, target)) == "passed"
                                              for target in TARGETS))
    mock_only = sorted(s for s in scenarios if found.get((*s, "mockbroker")) == "passed"
                       and found.get((*s, "kafka")) != "passed")
    lines = [f"{len(both)} of {len(scenarios)} conformance scenarios (a test with one client) "
             f"pass on both mockbroker and Apache Kafka 4.4."]
    if mock_only:
        lines.append("Passing on mockbroker but not on Kafka: " +
                     ", ".join(f"{t}[{c}] ({found.get((t, c, 'kafka'), 'not run')})"
                               for t, c in mock_only) + ".")
    if report is not None:
        lines += ["", _client_figures(*client_tests(report))]
    return "\n".join(lines) + "\n"


def _client_figures(scenarios, alone: Counter) -> str:
    both = [s for s, by in scenarios.items()
            if all(by.get(target) == "passed" for target in TARGETS)]
    mock_only = sorted(f"{module.rsplit('.', 1)[1]}::{test} ({by.get('kafka', 'not run')})"
                       for (module, test), by in scenarios.items()
                       if by.get("mockbroker") == "passed" and by.get("kafka") != "passed")
    text = (f"All client-level tests (`tests/clients` and the Spark tests that take a target, "
            f"each parametrization counted): "
            f"{len(both)} of {len(scenarios)} that run on both targets pass on both. "
            f"{sum(alone.values())} run on mockbroker alone, as their marker says, for: " +
            "; ".join(f"{why} ({count})" for why, count in sorted(
                alone.items(), key=lambda item: (-item[1], item[0]))) + ".")
    if mock_only:
        text += "\nPassing on mockbroker but not on Kafka: " + ", ".join(mock_only) + "."
    return text


def kafka_versions(report: Path) -> str:
    """The "Kafka versions" table: for each release emulated, whether mockbroker and the
    release's own broker both answered ApiVersions as the release does, and whether the
    scenarios passed on both; empty when the run had no version tests."""
    seen: dict[str, dict[str, dict[str, str]]] = defaultdict(dict)
    for case in ET.parse(report).getroot().iter("testcase"):
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        if props.get("target") in TARGETS and "kafka_version" in props:
            seen[props["kafka_version"]][props["target"]] = props
    if not seen:
        return ""
    lines = ["Kafka versions: mockbroker with `kafka_version=R` and Apache Kafka R's own broker, "
             "each held against the table of what R's broker advertises.", "",
             "| release | ApiVersions identical | scenarios passed on both |", "|---|---|---|"]
    for release in sorted(seen, key=lambda r: tuple(int(n) for n in r.split("."))):
        mock, kafka = (seen[release].get(t, {}) for t in TARGETS)
        listed = (mock.get("api_versions"), kafka.get("api_versions"))
        if listed == ("identical", "identical"):
            same = "yes"
        elif kafka.get("api_versions") == "identical" and \
                (mock.get("api_versions") or "").startswith("identical but for "):
            same = "yes, but for " + mock["api_versions"].removeprefix("identical but for ") + \
                " (not served by mockbroker)"
        else:
            same = "no"
        both = all(side.get("scenarios") == "passed" for side in (mock, kafka))
        lines.append(f"| {release} | {same} | {'yes' if both else 'no'} |")
    return "\n".join(lines) + "\n"


def block(found, report: Path | None = None) -> str:
    versions = kafka_versions(report) if report is not None else ""
    return f"{START}\n{matrix(found)}\n{figures(found, report)}" + \
        (f"\n{versions}" if versions else "") + END


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--check", type=Path, metavar="FILE")
    parser.add_argument("--write", type=Path, metavar="FILE")
    args = parser.parse_args()
    found = outcomes(args.report)
    if not found:
        print(f"{args.report}: no conformance tests in this run", file=sys.stderr)
        return 1
    wanted = block(found, args.report)
    target = args.check or args.write
    if target is None:
        print(wanted)
        return 0
    text = target.read_text()
    if START not in text or END not in text:
        print(f"{target}: no {START} ... {END} block", file=sys.stderr)
        return 1
    current = text[text.index(START):text.index(END) + len(END)]
    if args.write:
        target.write_text(text.replace(current, wanted))
        return 0
    if current != wanted:
        print(f"{target}'s conformance matrix is not what this run showed; this run:\n"
              f"{wanted}\n(python ci/conformance.py REPORT --write {target} updates it)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
