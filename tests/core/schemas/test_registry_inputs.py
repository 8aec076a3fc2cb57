"""Whatever a request sends, the registry answers with one of Confluent's errors or does what
was asked: no other exception (an HTTP 500), and nothing half-written (a refused call adds no
record to ``_schemas``)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings, strategies as st

from mockbroker.core.schemas.registry import RegistryError, SchemaRegistry
from tests.core.schemas.test_registry import Records

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 2 ** 40) | st.floats(allow_nan=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                  max_size=4),
    max_leaves=20)
#: pieces of schemas of the three formats, valid or nearly so
SCHEMA_TEXTS = st.one_of(
    JSON_VALUES.map(json.dumps),
    st.sampled_from([
        '"int"', '{"type": "record", "name": "R", "fields": []}',
        '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "Nope"}]}',
        '{"type": "enum", "name": "E", "symbols": ["A", "A"]}',
        '{"type": "object", "properties": {"a": {"type": "string"}}}', '{"type": 5}',
        'syntax = "proto3";\nmessage M {\n  string a = 1;\n}\n', "message {", "[" * 3000,
        'syntax = "proto3"; message M { Unknown a = 1; }', "", "   ", "{"]),
    st.text(max_size=40))
BODIES = st.one_of(
    st.fixed_dictionaries({"schema": SCHEMA_TEXTS}, optional={
        "schemaType": st.sampled_from(["AVRO", "JSON", "PROTOBUF", "XML", "avro"]) | JSON_VALUES,
        "references": st.lists(st.fixed_dictionaries(
            {"name": st.text(max_size=6), "subject": st.sampled_from(["s", "t", "u"]),
             "version": st.integers(-2, 3)}), max_size=2) | JSON_VALUES,
        "metadata": JSON_VALUES, "ruleSet": JSON_VALUES,
        "id": st.integers(-2, 5) | JSON_VALUES, "version": st.integers(-1, 4) | JSON_VALUES}),
    st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=3))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=st.lists(st.tuples(st.sampled_from(["register", "lookup", "compatibility"]),
                                st.sampled_from(["s", "t", "u"]), BODIES,
                                st.booleans()), min_size=1, max_size=6))
def test_any_body_is_answered_or_refused_and_refusals_write_nothing(calls):
    records = Records()
    registry = SchemaRegistry(records)
    for operation, subject, body, normalize in calls:
        before = len(records.records)
        try:
            if operation == "register":
                registry.register(subject, body, normalize=normalize)
            elif operation == "lookup":
                registry.lookup(subject, body, normalize=normalize)
            else:
                registry.test_compatibility(subject, None, body, normalize=normalize)
        except RegistryError as exc:
            assert 400 <= exc.status < 500, exc.message
            assert len(records.records) == before  # nothing written for a refusal
    # what was written reads back: every stored version parses again
    fresh = SchemaRegistry(records)
    for subject, versions in fresh.catch_up().subjects.items():
        for found in versions.values():
            fresh.parsed(found)
