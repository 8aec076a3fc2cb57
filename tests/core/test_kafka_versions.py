"""Kafka version emulation (``kafka_version``) without sockets where it can be: the release
tables (:mod:`wire.releases`) and the generator that writes them, what a core of
each release advertises and refuses, its feature levels and UpdateFeatures as that release
answers it, and the setting's way in through MockCluster, the CLI and the pytest marker.
``tests/clients/test_kafka_versions.py`` holds each table against the release's real broker."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

import wire
from mockbroker import MockCluster
from mockbroker.cli import main as cli_main
from mockbroker.core.deferred import Close
from mockbroker.core.dispatch import Connection
from mockbroker.core.features import FeatureLevels, features_of
from mockbroker.core.kafka_version import release_name
from mockbroker.handlers import REGISTRY, SERVED
from tests.core.harness import make_core, send
from wire import errors
from wire.definitions import APIS, KAFKA_VERSION
from wire.releases import LATEST, RELEASES, TELEMETRY_APIS
from wire.tools import releases as generator

ROOT = Path(__file__).resolve().parents[2]
#: every Kafka 4.x minor and the last three 3.x minors, each at its newest patch on Maven Central
VERSIONS = {"3.7": "3.7.2", "3.8": "3.8.1", "3.9": "3.9.2", "4.0": "4.0.2", "4.1": "4.1.2",
            "4.2": "4.2.2", "4.3": "4.3.1", "4.4": "4.4.0"}
#: the share coordinator's state APIs, which a broker of 4.1 on lists and only brokers send
SHARE_STATE_APIS = {83, 84, 85, 86, 87}
KNOWN = "3.7, 3.8, 3.9, 4.0, 4.1, 4.2, 4.3, 4.4"


# -- the tables --------------------------------------------------------------------------------

def test_the_releases_are_the_newest_patch_of_each_minor_and_the_newest_is_the_codecs():
    assert {name: r.version for name, r in RELEASES.items()} == VERSIONS
    assert list(RELEASES) == sorted(RELEASES, key=generator.version_key)
    assert RELEASES[LATEST].version == KAFKA_VERSION


def _clients_jar(version: str) -> Path:
    if version == KAFKA_VERSION:
        return ROOT / ".cache" / "jars" / f"kafka-clients-{version}.jar"
    return ROOT / ".cache" / "jars" / f"kafka-broker-{version}" / f"kafka-clients-{version}.jar"


def test_the_tables_are_what_the_generator_writes_from_each_releases_jar(tmp_path):
    jars = [_clients_jar(version) for version in VERSIONS.values()]
    missing = [str(jar) for jar in jars if not jar.exists()]
    assert not missing, f"{missing}: bash ci/dev.sh setup fetches them"
    out = tmp_path / "releases.py"
    assert generator.generate(jars, out) == list(VERSIONS.values())
    committed = Path(generator.__file__).parents[1] / "releases.py"
    assert out.read_text() == committed.read_text()


def test_the_generators_rules_for_what_the_jar_cannot_say():
    # Produce is listed from 0 from Kafka 4.0 on, where its oldest version is 3
    assert [RELEASES[name].apis[0][0] for name in RELEASES] == [0] * len(RELEASES)
    # a spec whose newest version is unstable loses it; one with no stable version is not
    # listed: ConsumerGroupDescribe in 3.7, share groups in 3.9 and 4.0, streams groups in 4.1
    assert 69 not in RELEASES["3.7"].apis and RELEASES["3.8"].apis[69] == (0, 0)
    assert not {76, 77, 78, 79} & set(RELEASES["4.0"].apis)
    assert not {88, 89} & set(RELEASES["4.1"].apis) and RELEASES["4.2"].apis[88] == (0, 0)
    assert RELEASES["4.4"].apis[22] == (0, 5)  # InitProducerId v6 is not stable in 4.4
    assert TELEMETRY_APIS == (71, 72) and all(71 in r.apis for r in RELEASES.values())


def test_the_newest_release_lists_exactly_what_mockbroker_serves():
    table = RELEASES[LATEST].apis
    assert {key: (s.min_version if s.advertised_min is None else s.advertised_min,
                  s.max_version) for key, s in SERVED.items()} == \
        {key: span for key, span in table.items() if key in SERVED}
    assert set(table) - set(SERVED) == SHARE_STATE_APIS


@pytest.mark.parametrize("name", list(RELEASES))
def test_no_release_lists_a_version_newer_than_mockbroker_serves(name):
    table = RELEASES[name].apis
    assert set(table) - set(SERVED) <= SHARE_STATE_APIS
    assert all(table[key][1] <= SERVED[key].max_version for key in table if key in SERVED)


# -- what a broker of a release lists ----------------------------------------------------------

@pytest.mark.parametrize("name", list(RELEASES))
@pytest.mark.parametrize("telemetry", [False, True])
def test_each_release_lists_its_apis_and_ranges(name, telemetry):
    table = RELEASES[name].apis
    listed = REGISTRY.api_versions({"kafka_version": name, "telemetry_receiver": telemetry})
    assert listed == [(key, *table[key]) for key in sorted(table) if key in SERVED and
                      (telemetry or key not in TELEMETRY_APIS)]


def api_versions(core, version: int):
    return send(core, 18, version, client_software_name="t", client_software_version="1")


def test_a_kafka_3_8_broker_answers_api_versions_as_3_8():
    core = make_core(kafka_version="3.8")
    answer = api_versions(core, 3)
    table = RELEASES["3.8"]
    assert [(k.api_key, k.min_version, k.max_version) for k in answer.api_keys] == \
        [(key, *span) for key, span in table.apis.items() if key not in TELEMETRY_APIS]
    assert [(f.name, f.min_version, f.max_version) for f in answer.supported_features] == \
        [("metadata.version", 1, 20)]
    assert [(f.name, f.max_version_level) for f in answer.finalized_features] == \
        [("metadata.version", 20)]


def test_features_of_each_release_are_those_its_broker_lists_but_kraft_version():
    for name, table in RELEASES.items():
        assert {f.name: (f.min_supported, f.max_supported) for f in features_of(name)} == {
            n: span for n, span in table.supported_features.items() if n != "kraft.version"}
        assert dict(FeatureLevels(name).finalized()) == table.finalized_features
    # what changed from release to release in a new cluster
    assert FeatureLevels("3.9").level("group.version") == 0
    assert FeatureLevels("4.0").level("eligible.leader.replicas.version") == 0
    assert FeatureLevels("4.1").level("share.version") == 0
    assert FeatureLevels("4.3").level("share.version") == 1
    assert FeatureLevels("4.4").level("share.version") == 2


def frame(api_key: int, version: int, **fields) -> bytes:
    if version not in APIS[api_key].request.valid:  # one the codec cannot write: its header
        return struct.pack(">hhih3s", api_key, version, 9, 3, b"app") + bytes(16)
    return wire.encode_request(api_key, version, 9, "app", wire.request_class(api_key)(**fields),
                               size_prefix=False)


def receive(core, api_key: int, version: int, **fields):
    outcome = core.receive(frame(api_key, version, **fields), Connection(0, 1))
    assert outcome.done
    return outcome.value


# -- what it refuses ---------------------------------------------------------------------------

@pytest.mark.parametrize("name, version", [("3.7", 4), ("3.8", 4), ("4.0", 5)])
def test_api_versions_newer_than_the_release_serves_gets_its_range_in_v0(name, version):
    value = receive(make_core(kafka_version=name), 18, version, client_software_name="t",
                    client_software_version="1")
    answer = wire.decode_response(18, 0, bytes(value)[4:])[1]  # after the size
    assert answer.error_code == errors.UNSUPPORTED_VERSION
    assert [(k.api_key, k.min_version, k.max_version) for k in answer.api_keys] == \
        [(18, *RELEASES[name].apis[18])]


@pytest.mark.parametrize("name, api_key, version", [
    ("4.0", 76, 1),   # ShareGroupHeartbeat: no share groups before 4.1
    ("4.1", 88, 0),   # StreamsGroupHeartbeat: no streams groups before 4.2
    ("3.9", 26, 5),   # EndTxn v5, transaction version 2: not before 4.0
    ("4.0", 1, 18),   # Fetch v18 came in 4.1
    ("3.7", 1, 3),    # listed by 3.7, removed in 4.0: beyond the codec
])
def test_what_the_release_does_not_serve_closes_the_connection(name, api_key, version):
    assert isinstance(receive(make_core(kafka_version=name), api_key, version), Close)
    assert not isinstance(receive(make_core(), 18, 3, client_software_name="t",
                                  client_software_version="1"), Close)


def test_the_consumer_group_protocol_before_4_0_and_share_groups_in_4_1_are_unsupported():
    heartbeat = dict(group_id="g", member_id="", member_epoch=0, rebalance_timeout_ms=30000,
                     subscribed_topic_names=["t"], topic_partitions=[])
    for name in ("3.7", "3.8", "3.9"):
        answer = send(make_core(kafka_version=name), 68, 0, **heartbeat)
        assert (answer.error_code, answer.error_message) == (errors.UNSUPPORTED_VERSION, None)
    assert send(make_core(kafka_version="4.0"), 68, 0, **heartbeat).error_code == errors.NONE
    share = dict(group_id="g", member_id="m" * 22, member_epoch=0,
                 subscribed_topic_names=["t"])
    assert send(make_core(kafka_version="4.1"), 76, 1, **share).error_code == \
        errors.UNSUPPORTED_VERSION
    assert send(make_core(kafka_version="4.2"), 76, 1, **share).error_code == errors.NONE


# -- UpdateFeatures as each release answers it -------------------------------------------------

def update(core, *features, validate_only=True):
    cls = wire.request_class(57)
    return send(core, 57, 1, cls(timeout_ms=1000, validate_only=validate_only, feature_updates=[
        cls.FeatureUpdateKey(feature=name, max_version_level=level, upgrade_type=1)
        for name, level in features]))


def test_kafka_3_judges_each_feature_on_its_own_and_applies_those_that_pass():
    core = make_core(kafka_version="3.9")
    answer = update(core, ("metadata.version", 21), ("transaction.version", 2),
                    validate_only=False)
    assert (answer.error_code, answer.error_message) == (errors.NONE, "")
    assert [(r.feature, r.error_code, r.error_message) for r in answer.results] == [
        ("metadata.version", errors.NONE, None),
        ("transaction.version", errors.INVALID_UPDATE_VERSION, "Invalid update version 2 for "
         "feature transaction.version. Local controller 0 does not support this feature.")]
    assert core.cluster.features.epoch == 2  # the one that passed was written
    answer = update(core, ("metadata.version", 22))
    assert [(r.feature, r.error_message) for r in answer.results] == [
        ("metadata.version", "Invalid update version 22 for feature metadata.version. Local "
         "controller 0 only supports versions 1-21")]


@pytest.mark.parametrize("name, feature, level, reason", [
    ("4.0", "share.version", 1, "does not support this feature."),
    ("4.1", "streams.version", 1, "does not support this feature."),
    ("4.3", "share.version", 2, "only supports versions 0-1"),
    ("4.0", "metadata.version", 26, "only supports versions 7-25"),
])
def test_from_4_0_a_level_beyond_the_release_refuses_the_whole_update(name, feature, level,
                                                                        reason):
    answer = update(make_core(kafka_version=name), (feature, level))
    assert (answer.error_code, answer.error_message, answer.results) == (
        errors.INVALID_UPDATE_VERSION, "The update failed for all features since the following "
        f"feature had an error: Invalid update version {level} for feature {feature}. Local "
        f"controller 0 {reason}", [])


# -- the setting's way in ----------------------------------------------------------------------

@pytest.mark.parametrize("value, name", [("4.0", "4.0"), ("4.0.2", "4.0"), (" 3.9.0 ", "3.9"),
                                         ("4.4", "4.4")])
def test_a_release_is_named_by_its_minor_or_a_patch_of_it(value, name):
    assert release_name(value) == name
    assert make_core(kafka_version=value).kafka_version == name


@pytest.mark.parametrize("value", ["5.0", "3.6", "4", "latest", 4.0])
def test_an_unknown_version_is_a_value_error_naming_the_known_ones(value):
    with pytest.raises(ValueError) as info:
        MockCluster(kafka_version=value)
    assert "kafka_version" in str(info.value)
    if isinstance(value, str):
        assert KNOWN in str(info.value)


def test_the_default_is_the_release_the_codec_is_generated_from():
    assert make_core().kafka_version == LATEST == "4.4"


def test_mock_cluster_runs_its_brokers_as_the_release_and_keeps_it_through_a_reset():
    with MockCluster(kafka_version="3.9.2") as cluster:
        assert cluster.core.kafka_version == "3.9"
        cluster.reset()
        assert cluster.core.kafka_version == "3.9"
        assert cluster.call(lambda: cluster.core.cluster.features.level("group.version")) == 0


def test_the_cli_takes_kafka_version_and_refuses_an_unknown_one(capsys):
    from mockbroker.cli import build_parser
    from mockbroker.cli.flags import environment_variables

    parser = build_parser(serve_flags=True)
    assert parser.parse_args(["serve", "--kafka-version", "4.0"]).kafka_version == "4.0"
    assert "MOCKBROKER_KAFKA_VERSION" in environment_variables(parser)
    with pytest.raises(SystemExit) as info:
        cli_main(["serve", "--port", "0", "--kafka-version", "2.8"])
    assert info.value.code == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "kafka_version" in line and "2.8" in line and KNOWN in line


def test_the_marker_takes_kafka_version_and_refuses_an_unknown_one():
    from conftest_plugin.plugin import _check, _parse_settings, _start

    settings = _parse_settings(["kafka_version=4.0"], "test")
    assert settings == {"kafka_version": "4.0"}
    _check(settings)
    with pytest.raises(pytest.UsageError) as info:
        _start({"kafka_version": "9.9"}, "test_x")
    assert str(info.value).startswith("test_x: kafka_version") and KNOWN in str(info.value)


def test_every_api_the_codec_defines_for_a_release_key_is_known():
    # a release lists no API key the codec does not define
    assert all(APIS.get(key) is not None for r in RELEASES.values() for key in r.apis)


def test_the_conformance_block_has_a_row_per_release_from_the_version_tests(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("conformance", ROOT / "ci" / "conformance.py")
    conformance = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conformance)

    def case(target, release, failed=False, **props):
        listed = "".join(f'<property name="{k}" value="{v}"/>' for k, v in
                         {"target": target, "kafka_version": release, **props}.items())
        return (f'<testcase classname="tests.clients.test_kafka_versions" '
                f'name="test_x[{target}-{release}]"><properties>{listed}</properties>'
                f'{"<failure/>" if failed else ""}</testcase>')
    cases = [case("mockbroker", "4.0", api_versions="identical but for kraft.version",
                  scenarios="passed"),
             case("kafka", "4.0", api_versions="identical", scenarios="passed"),
             case("kafka", "3.10", api_versions="identical", scenarios="passed"),
             case("mockbroker", "3.10", True, api_versions="identical"),
             case("mockbroker", "3.9", True, api_versions="different", scenarios="passed"),
             case("kafka", "3.9", api_versions="identical", scenarios="passed")]
    report = tmp_path / "report.xml"
    report.write_text(f'<testsuites><testsuite>{"".join(cases)}</testsuite></testsuites>')
    rows = [line for line in conformance.kafka_versions(report).splitlines()
            if line.startswith("| 3.") or line.startswith("| 4.")]
    assert rows == ["| 3.9 | no | yes |", "| 3.10 | yes | no |",
                    "| 4.0 | yes, but for kraft.version (not served by mockbroker) | yes |"]
    assert conformance.kafka_versions(_empty(tmp_path)) == ""


def _empty(tmp_path: Path) -> Path:
    path = tmp_path / "empty.xml"
    path.write_text('<testsuites><testsuite><testcase classname="tests.core.x" name="test_y"/>'
                    '</testsuite></testsuites>')
    return path
