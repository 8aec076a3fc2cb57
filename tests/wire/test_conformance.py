"""Our definitions against Apache Kafka's own message specs.

The specs are read from the Kafka jars that the project's set-up fetches (see README); every API
a broker listener serves, in every version, and the embedded formats must agree with them field
by field: names, types, version ranges, nullable versions, tags, defaults.
"""

from __future__ import annotations

import pytest

from tests.wire.upstream import kafka_jars
from wire.definitions import APIS, KAFKA_VERSION
from wire.builder import EMBEDDED
from wire.schema import Field, Message, Versions, snake_case
from wire.tools.generate import EMBEDDED as EMBEDDED_NAMES, load_specs

SPECS = load_specs(kafka_jars())

UPSTREAM_APIS = {
    spec["apiKey"]: spec for spec in SPECS.values()
    if spec.get("type") == "request" and "broker" in spec.get("listeners", ())
    and spec.get("validVersions") != "none"
}


def _versions(text):
    return Versions.parse(text)


def _upstream_default(f: dict):
    """The value a field defaults to, by Kafka's rules, in our Python terms."""
    ftype = f["type"]
    raw = f.get("default")
    if isinstance(raw, str) and raw.lower() in ("null", "none"):
        return None
    if raw is None and "default" in f:
        return None
    if ftype.startswith("[]") or ftype[:1].isupper():
        return "<empty>"
    if raw is None:
        return {"string": "", "bool": False, "float64": 0.0, "bytes": b"", "records": b""}.get(
            ftype, 0 if ftype.startswith(("int", "uint")) else None)
    if ftype.startswith(("int", "uint")):
        return int(str(raw), 0)
    if ftype == "bool":
        return str(raw).lower() == "true"
    if ftype == "float64":
        return float(raw)
    return raw


def _our_default(f: Field):
    if f.default_is_null:
        return None
    if f.is_array or f.is_struct:
        return "<empty>"
    if f.type == "uuid":
        return None  # Kafka's implicit uuid default is the zero UUID; checked separately
    return f.default


def _common_structs(spec: dict) -> dict[str, dict]:
    return {s["name"]: s for s in spec.get("commonStructs", ())}


def compare_fields(ours: tuple[Field, ...], theirs: list[dict], common: dict[str, dict],
                   where: str) -> list[str]:
    problems = []
    names = [f.name for f in ours]
    expected = [snake_case(f["name"]) for f in theirs]
    if names != expected:
        return [f"{where}: fields {names} != upstream {expected}"]
    for mine, up in zip(ours, theirs):
        at = f"{where}.{mine.name}"
        if mine.type != up["type"]:
            problems.append(f"{at}: type {mine.type} != {up['type']}")
        if mine.versions != _versions(up.get("versions") or up.get("taggedVersions")):
            problems.append(f"{at}: versions {mine.versions} != {up.get('versions')}")
        if mine.nullable != _versions(up.get("nullableVersions")):
            problems.append(f"{at}: nullable {mine.nullable} != {up.get('nullableVersions')}")
        if mine.tag != up.get("tag"):
            problems.append(f"{at}: tag {mine.tag} != {up.get('tag')}")
        if mine.tagged != _versions(up.get("taggedVersions")):
            problems.append(f"{at}: tagged {mine.tagged} != {up.get('taggedVersions')}")
        if mine.ignorable != bool(up.get("ignorable", False)):
            problems.append(f"{at}: ignorable {mine.ignorable} != {up.get('ignorable')}")
        flexible = _versions(up["flexibleVersions"]) if "flexibleVersions" in up else None
        if mine.flexible != flexible:
            problems.append(f"{at}: flexible override {mine.flexible} != {flexible}")
        if up["type"] != "uuid" and _our_default(mine) != _upstream_default(up):
            problems.append(f"{at}: default {_our_default(mine)!r} != {_upstream_default(up)!r}")
        element = up["type"][2:] if up["type"].startswith("[]") else up["type"]
        sub = up.get("fields")
        if sub is None and element in common:
            sub = common[element]["fields"]
        if sub is not None:
            problems.extend(compare_fields(mine.fields, sub, common, at))
        elif mine.fields:
            problems.append(f"{at}: has fields upstream lacks")
    return problems


def compare_message(ours: Message, spec: dict) -> list[str]:
    problems = []
    if ours.name != spec["name"]:
        problems.append(f"name {ours.name} != {spec['name']}")
    if ours.valid != _versions(spec["validVersions"]):
        problems.append(f"{ours.name}: valid versions {ours.valid} != {spec['validVersions']}")
    if ours.flexible != _versions(spec.get("flexibleVersions")):
        problems.append(f"{ours.name}: flexible {ours.flexible} != {spec.get('flexibleVersions')}")
    if ours.api_key != spec.get("apiKey"):
        problems.append(f"{ours.name}: api key {ours.api_key} != {spec.get('apiKey')}")
    problems.extend(compare_fields(ours.fields, spec["fields"], _common_structs(spec), ours.name))
    return problems


def test_upstream_is_the_version_our_definitions_came_from():
    jar_names = [p.name for p in kafka_jars()]
    assert all(KAFKA_VERSION in name for name in jar_names), jar_names


def test_we_define_exactly_the_apis_a_kafka_broker_serves():
    assert sorted(APIS) == sorted(UPSTREAM_APIS)


def test_the_apis_the_issue_names_are_all_there():
    named = {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
             26, 27, 28, 29, 30, 31, 32, 33, 35, 36, 37, 42, 43, 44, 46, 47, 48, 50, 51, 60, 61,
             65, 66, 68, 69, 71, 72, 74, 75}
    assert named <= set(APIS)


@pytest.mark.parametrize("api_key", sorted(UPSTREAM_APIS))
def test_api_matches_upstream(api_key):
    request = UPSTREAM_APIS[api_key]
    response = SPECS[request["name"][: -len("Request")] + "Response"]
    ours = APIS[api_key]
    assert ours.name == request["name"][: -len("Request")]
    problems = compare_message(ours.request, request) + compare_message(ours.response, response)
    assert problems == []
    assert ours.response.valid == ours.request.valid
    assert tuple(request.get("listeners", ())) == ours.listeners
    assert bool(request.get("latestVersionUnstable")) == ours.latest_version_unstable


@pytest.mark.parametrize("name", EMBEDDED_NAMES)
def test_embedded_format_matches_upstream(name):
    assert compare_message(EMBEDDED[name], SPECS[name]) == []


def test_zero_uuid_is_the_implicit_default():
    from wire.builder import request_class

    fetch = request_class(1)
    topic = fetch.FetchTopic()
    assert topic.topic_id.int == 0


def test_version_ranges_issue_lists():
    # The ranges the project was asked for, as Kafka 4.x defines them.
    expected = {0: (3, 13), 1: (4, 18), 2: (1, 11), 3: (0, 13), 8: (2, 10), 9: (1, 10),
                10: (0, 6), 11: (0, 9), 12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 6),
                16: (0, 5), 17: (0, 1), 18: (0, 5), 19: (2, 7), 20: (1, 6), 21: (0, 2),
                22: (0, 6), 23: (2, 4), 24: (0, 5), 25: (0, 4), 26: (0, 5), 27: (1, 2),
                28: (0, 6), 29: (1, 3), 30: (1, 3), 31: (1, 3), 32: (1, 4), 33: (0, 2),
                35: (1, 5), 36: (0, 2), 37: (0, 3), 42: (0, 3), 43: (0, 2), 44: (0, 1),
                47: (0, 0), 60: (0, 2)}
    got = {key: (APIS[key].min_version, APIS[key].max_version) for key in expected}
    assert got == expected


def test_error_names_match_kafkas_errors_enum(tmp_path):
    """Every constant of Kafka's ``Errors`` enum is in our table, and nothing else is."""
    import shutil
    import subprocess
    import zipfile

    from wire.errors import ERRORS

    javap = shutil.which("javap")
    assert javap, "javap (Java 17) is needed to read Kafka's Errors enum"
    clients = next(j for j in kafka_jars() if j.name.startswith("kafka-clients"))
    with zipfile.ZipFile(clients) as jar:
        jar.extract("org/apache/kafka/common/protocol/Errors.class", tmp_path)
    out = subprocess.run([javap, "-p", "-classpath", str(tmp_path),
                          "org.apache.kafka.common.protocol.Errors"],
                         capture_output=True, text=True, check=True).stdout
    names = {line.rstrip(";").split()[-1] for line in out.splitlines()
             if "public static final org.apache.kafka.common.protocol.Errors" in line}
    assert names == {e.name for e in ERRORS.values()}
