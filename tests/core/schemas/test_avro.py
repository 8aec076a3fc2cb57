"""The registry's Avro format: what it accepts and refuses (Avro Java's messages), the text it
stores (``Schema.toString()``) and stores when normalizing (Confluent's
``AvroSchemaUtils.toNormalizedString``), references, and the compatibility verdicts and
messages Confluent gives.

Sources are named at each table: Confluent's schema-registry repository (paths relative to its
root) and Apache Avro's (``lang/java/avro/...``, release 1.12.1, the Avro line Confluent 8.x
builds on).  Every parse error, canonical string and compatibility finding listed here was also
checked against ``avro-1.12.1.jar`` itself (``Schema.Parser`` with the strict name validator and
default validation, ``Schema.toString``, ``SchemaCompatibility``) while writing the module.
"""

from __future__ import annotations

import json

import pytest

from mockbroker.core.schemas import formats
from mockbroker.core.schemas.avro import AvroSchema, parse
from mockbroker.core.schemas.compatibility import Earlier, check
from mockbroker.core.schemas.formats import InvalidSchema


def record(*fields: dict, name: str = "myrecord", **extra) -> str:
    return json.dumps({"type": "record", "name": name, "fields": list(fields), **extra})


def field(name: str, type_, **extra) -> dict:
    return {"name": name, "type": type_, **extra}


# The schemas of core/src/test/java/io/confluent/kafka/schemaregistry/avro/
# AvroCompatibilityTest.java (schemaString1 .. schemaString8).
S1 = record(field("f1", "string"))
S2 = record(field("f1", "string"), field("f2", "string", default="foo"))
S3 = record(field("f1", "string"), field("f2", "string"))
S4 = record(field("f1_new", "string", aliases=["f1"]))
S6 = record(field("f1", ["null", "string"], doc="doc of f1"))
S7 = record(field("f1", ["null", "string", "int"], doc="doc of f1"))
S8 = record(field("f1", "string"), field("f2", "string", default="foo"),
            field("f3", "string", default="bar"))
SCHEMAS = {"S1": S1, "S2": S2, "S3": S3, "S4": S4, "S6": S6, "S7": S7, "S8": S8}


def compatible(level: str, new: str, previous: list[str]) -> bool:
    """The registry's verdict at ``level`` (:mod:`mockbroker.core.schemas.compatibility`) for
    ``new`` after ``previous`` (registration order)."""
    earlier = [Earlier(n, parse(SCHEMAS[p])) for n, p in enumerate(previous, 1)]
    return not check(level, parse(SCHEMAS[new]), earlier)


ACT = "AvroCompatibilityTest.java"
COMPATIBILITY_TABLE = [
    # (level, new, previous in registration order, Confluent's verdict, where from)
    ("BACKWARD", "S2", ["S1"], True, f"{ACT} testBasicBackwardsCompatibility: adding a field "
                                     "with default"),
    ("BACKWARD", "S3", ["S1"], False, f"{ACT} testBasicBackwardsCompatibility: adding a field "
                                      "w/o default"),
    ("BACKWARD", "S4", ["S1"], True, f"{ACT} testBasicBackwardsCompatibility: changing field "
                                     "name with alias"),
    ("BACKWARD", "S6", ["S1"], True, f"{ACT} testBasicBackwardsCompatibility: evolving a field "
                                     "type to a union"),
    ("BACKWARD", "S1", ["S6"], False, f"{ACT} testBasicBackwardsCompatibility: removing a type "
                                      "from a union"),
    ("BACKWARD", "S7", ["S6"], True, f"{ACT} testBasicBackwardsCompatibility: adding a new "
                                     "type in union"),
    ("BACKWARD", "S6", ["S7"], False, f"{ACT} testBasicBackwardsCompatibility: removing a type "
                                      "from a union"),
    ("BACKWARD", "S3", ["S1", "S2"], True, f"{ACT} testBasicBackwardsCompatibility: only "
                                           "schema 2 is checked"),
    ("BACKWARD_TRANSITIVE", "S8", ["S1", "S2"], True, f"{ACT} testBasicBackwardsTransitive"
                                                      "Compatibility: iteratively adding"),
    ("BACKWARD_TRANSITIVE", "S3", ["S2"], True, f"{ACT} testBasicBackwardsTransitive"
                                                "Compatibility: removing a default"),
    ("BACKWARD_TRANSITIVE", "S3", ["S1", "S2"], False, f"{ACT} testBasicBackwardsTransitive"
                                                       "Compatibility: not transitively"),
    ("FORWARD", "S2", ["S1"], True, f"{ACT} testBasicForwardsCompatibility: adding a field"),
    ("FORWARD", "S3", ["S1"], True, f"{ACT} testBasicForwardsCompatibility: adding a field"),
    ("FORWARD", "S3", ["S2"], True, f"{ACT} testBasicForwardsCompatibility: adding a field"),
    ("FORWARD", "S2", ["S3"], True, f"{ACT} testBasicForwardsCompatibility: adding a field"),
    ("FORWARD", "S1", ["S3", "S2"], True, f"{ACT} testBasicForwardsCompatibility: only the "
                                          "latest is checked"),
    ("FORWARD_TRANSITIVE", "S1", ["S8", "S2"], True, f"{ACT} testBasicForwardsTransitive"
                                                     "Compatibility: iteratively removing"),
    ("FORWARD_TRANSITIVE", "S1", ["S2", "S3"], False, f"{ACT} testBasicForwardsTransitive"
                                                      "Compatibility: removing a default"),
    ("FULL", "S2", ["S1"], True, f"{ACT} testBasicFullCompatibility: adding a field with "
                                 "default"),
    ("FULL", "S3", ["S1", "S2"], True, f"{ACT} testBasicFullCompatibility: latest only"),
    ("FULL", "S1", ["S3", "S2"], True, f"{ACT} testBasicFullCompatibility: latest only"),
    ("FULL_TRANSITIVE", "S8", ["S1", "S2"], True, f"{ACT} testBasicFullTransitive"
                                                  "Compatibility: iteratively adding"),
    ("FULL_TRANSITIVE", "S1", ["S8", "S2"], True, f"{ACT} testBasicFullTransitive"
                                                  "Compatibility: iteratively removing"),
    ("FULL_TRANSITIVE", "S3", ["S2"], True, f"{ACT} testBasicFullTransitiveCompatibility: "
                                            "adding default"),
    ("FULL_TRANSITIVE", "S3", ["S2", "S1"], False, f"{ACT} testBasicFullTransitive"
                                                   "Compatibility: adding w/o default"),
    ("FULL_TRANSITIVE", "S1", ["S2", "S3"], False, f"{ACT} testBasicFullTransitive"
                                                   "Compatibility: removing w/o default"),
]


@pytest.mark.parametrize("level,new,previous,expected,source", COMPATIBILITY_TABLE,
                         ids=[f"{r[0]}-{r[1]}-over-{'-'.join(r[2])}" for r in COMPATIBILITY_TABLE])
def test_confluent_compatibility_table(level, new, previous, expected, source):
    assert compatible(level, new, previous) is expected, source


def test_bad_default_null_string_is_accepted():
    """AvroCompatibilityTest.testBadDefaultNull: "null" (a string) as the default of a
    ["null","string"] union parses, as Avro 1.12 accepts a default any branch accepts."""
    parse(record(field("f1", ["null", "string"], default="null"),
                 field("f2", "string", default="foo")))


def msg(kind: str, description: str, info: str) -> str:
    return f"{{errorType:'{kind}', description:'{description}', additionalInfo:'{info}'}}"


def test_messages_name_the_field_and_path():
    """Confluent's client/.../avro/Difference.java templates, reader's side then writer's."""
    assert parse(S3).is_backward_compatible(parse(S1)) == [msg(
        "READER_FIELD_MISSING_DEFAULT_VALUE", "The field 'f2' at path '/fields/1' in the %s "
        "schema has no default value and is missing in the %s schema", "f2")]
    # a union written, a plain string read: the null branch cannot be read
    assert parse(S1).is_backward_compatible(parse(S6)) == [msg(
        "TYPE_MISMATCH", "The type (path '/fields/0/type/0') of a field in the %s schema does "
        "not match with the %s schema", "reader type: STRING not compatible with writer type: "
        "NULL")]
    assert parse(S6).is_backward_compatible(parse(S7)) == [msg(
        "MISSING_UNION_BRANCH", "The %s schema is missing a type inside a union field at path "
        "'/fields/0/type/2' in the %s schema", "reader union lacking writer type: INT")]


ENUM_ABC = {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}


@pytest.mark.parametrize("reader,writer,expected", [
    # lang/java/avro/src/test/java/org/apache/avro/TestSchemaCompatibilityMissingEnumSymbols
    (record(field("e", dict(ENUM_ABC, symbols=["A"]))), record(field("e", ENUM_ABC)),
     msg("MISSING_ENUM_SYMBOLS", "The %s schema is missing enum symbols '[B, C]' at path "
         "'/fields/0/type/symbols' in the %s schema", "[B, C]")),
    # ... TestSchemaCompatibilityFixedSizeMismatch
    (json.dumps({"type": "fixed", "name": "F", "size": 4}),
     json.dumps({"type": "fixed", "name": "F", "size": 8}),
     msg("FIXED_SIZE_MISMATCH", "The size of FIXED type field at path '/size' in the %s schema "
         "does not match with the %s schema", "expected: 8, found: 4")),
    # ... TestSchemaCompatibilityNameMismatch (names compare by their short form)
    (record(field("a", "int"), name="other"), record(field("a", "int")),
     msg("NAME_MISMATCH", "The name of the schema has changed (path '/name')",
         "expected: myrecord")),
])
def test_messages_of_each_kind(reader, writer, expected):
    assert parse(reader).is_backward_compatible(parse(writer)) == [expected]


@pytest.mark.parametrize("reader,writer", [
    (record(field("e", dict(ENUM_ABC, symbols=["A"], default="A"))),
     record(field("e", ENUM_ABC))),                       # TestSchemaCompatibilityEnumDefaults
    (record(field("a", "int"), name="a.myrecord"), record(field("a", "int"), name="b.myrecord")),
    (record(field("a", "int"), name="x", aliases=["myrecord"]), record(field("a", "int"))),
    (record(field("l", "long"), field("f", "float"), field("d", "double"), field("s", "string"),
            field("b", "bytes")),
     record(field("l", "int"), field("f", "long"), field("d", "float"), field("s", "bytes"),
            field("b", "string"))),                       # Avro spec: schema resolution
    (json.dumps({"type": "record", "name": "N", "fields": [
        field("v", "int"), field("next", ["null", "N"])]}),) * 2,   # recursive type
])
def test_compatible_pairs(reader, writer):
    assert parse(reader).is_backward_compatible(parse(writer)) == []


def test_findings_come_in_avros_order():
    """Lang/java/avro/src/test/java/org/apache/avro/TestSchemaCompatibilityMultiple
    .multipleIncompatibilities, written out as JSON: nine findings, in Avro's order."""
    def enum(name, symbols):
        return {"type": "enum", "name": name, "symbols": symbols}

    def sub(extra, fixed_size, union, reader_union, ns, items):
        fields = [field("identical_1_field", "long", default=42)] + extra + [
            field("fixed_length_mismatch_field",
                  {"type": "fixed", "name": "fixed_length_mismatch_type", "size": fixed_size}),
            field("union_missing_branches_field", union),
            field("reader_union_does_not_support_type_field", reader_union),
            field("record_fqn_mismatch_field", {
                "type": "record", "name": "recordA", "namespace": ns, "fields": [
                    field("A_field_0", "boolean", default=True),
                    field("array_type_mismatch_field", {"type": "array", "items": items})]})]
        return {"type": "record", "name": "sub_record_type", "fields": fields}

    reader = record(
        field("check_enum_symbols_field", enum("check_enum_symbols_type", ["A", "C"])),
        field("check_enum_name_field", enum("check_enum_name_type", list("ABCD"))),
        field("type_mismatch_field", "string"),
        field("sub_record", sub([field("extra_no_default_field", "long")], 4, ["boolean"],
                                ["boolean"], "not_nsA", "string")), name="base")
    writer = record(
        field("check_enum_symbols_field", enum("check_enum_symbols_type", list("ABCD"))),
        field("check_enum_name_field", enum("check_enum_name_type_ERR", list("ABCD"))),
        field("type_mismatch_field", "long"),
        field("sub_record", sub([], 8, ["boolean", "double", "string"], "long", "nsA",
                                "boolean")), name="base")
    found = [(m.split("'")[1], m.rsplit("additionalInfo:'", 1)[1][:-2])
             for m in parse(reader).is_backward_compatible(parse(writer))]
    assert found == [
        ("MISSING_ENUM_SYMBOLS", "[B, D]"),
        ("NAME_MISMATCH", "expected: check_enum_name_type_ERR"),
        ("TYPE_MISMATCH", "reader type: STRING not compatible with writer type: LONG"),
        ("READER_FIELD_MISSING_DEFAULT_VALUE", "extra_no_default_field"),
        ("FIXED_SIZE_MISMATCH", "expected: 8, found: 4"),
        ("MISSING_UNION_BRANCH", "reader union lacking writer type: DOUBLE"),
        ("MISSING_UNION_BRANCH", "reader union lacking writer type: STRING"),
        ("MISSING_UNION_BRANCH", "reader union lacking writer type: LONG"),
        ("TYPE_MISMATCH", "reader type: STRING not compatible with writer type: BOOLEAN"),
    ]


def test_other_schema_type_is_incompatible():
    class Other(formats.ParsedSchema):
        schema_type = "JSON"
        canonical = normalized = is_backward_compatible = None  # type: ignore[assignment]
    assert parse(S1).is_backward_compatible(Other()) == [
        "Incompatible because of different schema type"]


# -- parsing -----------------------------------------------------------------------------------

R = '{"type":"record","name":"r","fields":[%s]}'
PARSE_ERRORS = [
    # Avro 1.12.1 Schema.java / ParseContext.java / SchemaResolver.java / NameValidator.java
    (R % '{"name":"a","type":"foo"}', "Undefined schema: foo"),
    ('{"type":"record","name":"r","namespace":"n","fields":[{"name":"a","type":"Foo"}]}',
     "Undefined schema: n.Foo"),
    ('{"type":"record","name":"1r","fields":[]}', "Illegal initial character: 1r"),
    (R % '{"name":"a-b","type":"int"}', "Illegal character in: a-b"),
    ('{"type":"record","name":"h\u00e9","fields":[]}', "Illegal character in: h\u00e9"),
    ('{"type":"record","name":"r","namespace":"a.1b","fields":[]}',
     'Namespace part "1b" is invalid: Illegal initial character: 1b'),
    (R % '{"name":"a","type":"int"},{"name":"a","type":"string"}',
     "Duplicate field a in record r: a type:STRING pos:1 and a type:INT pos:0."),
    (R % '{"name":"a","type":"int","default":"x"}',
     'Invalid default for field a: "x" not a "int"'),
    (R % '{"name":"a","type":{"type":"array","items":"int"},"default":[1,"x"]}',
     'Invalid default for field a: [1,"x"] not a {"type":"array","items":"int"}'),
    (R % '{"name":"a","type":"int","default":1.0}',
     'Invalid default for field a: 1.0 not a "int"'),
    (R % '{"type":"int"}', 'No field name: {"type":"int"}'),
    (R % '{"name":"a"}', 'No field type: {"name":"a"}'),
    (R % '{"name":"a","type":"int","order":"up"}',
     "No enum constant org.apache.avro.Schema.Field.Order.UP"),
    ('{"type":"record","name":"r"}', 'Record has no fields: {"type":"record","name":"r"}'),
    ('{"type":"record","fields":[]}', 'No name in schema: {"type":"record","fields":[]}'),
    ('{"name":"x"}', 'No type: {"name":"x"}'),
    ('{"type":"enum","name":"e","symbols":["A","A"]}', "Duplicate enum symbol: A"),
    ('{"type":"enum","name":"e","symbols":["A","B"],"default":"C"}',
     "The Enum Default: C is not in the enum symbol set: [A, B]"),
    ('{"type":"enum","name":"e"}', 'Enum has no symbols: {"type":"enum","name":"e"}'),
    ('{"type":"fixed","name":"f","size":"3"}',
     'Invalid or no size: {"type":"fixed","name":"f","size":"3"}'),
    ('{"type":"array"}', 'Array has no items type: {"type":"array"}'),
    ('{"type":"map"}', 'Map has no values type: {"type":"map"}'),
    ('["int","int"]', "Duplicate in union:int"),
    ('["int",["null"]]', 'Nested union: ["int",["null"]]'),
    ('{"type":"record","name":"int","fields":[]}',
     "Schemas may not be named after primitives: int"),
    (R % '{"name":"x","type":{"type":"record","name":"r","fields":[]}}', "Can't redefine: r"),
    ('5', "Schema not yet supported: 5"),
    ('', "Cannot parse <null> schema"),
    ('"int" "long"', 'dangling content after end of schema: "long"'),
    ('{"type":"string"} // a comment', "dangling content after end of schema: // a comment"),
]


@pytest.mark.parametrize("text,message", PARSE_ERRORS)
def test_parse_errors_carry_avros_message(text, message):
    with pytest.raises(InvalidSchema) as caught:
        parse(text, {})
    assert str(caught.value) == message


def test_broken_json_is_refused():
    with pytest.raises(InvalidSchema, match="JsonParseException"):
        parse('{"type":', {})


def test_registered_schemas_are_read_leniently():
    """Confluent re-reads stored schemas without checking defaults, names only by the Unicode
    rules (client/.../avro/AvroSchema.java, AvroSchemaUtils.validateNames)."""
    text = '{"type":"record","name":"h\u00e9","fields":[{"name":"a","type":"int","default":"x"}]}'
    assert parse(text, {}, new=False).name == "h\u00e9"
    with pytest.raises(InvalidSchema, match="Illegal initial character: 1r"):
        parse('{"type":"record","name":"1r","fields":[]}', {}, new=False)


def test_format_entry_point_dispatches_here():
    schema = formats.parse("AVRO", '{"type": "string"}')
    assert isinstance(schema, AvroSchema) and schema.canonical() == '"string"'


# -- canonical and normalized text -------------------------------------------------------------

CANONICAL = [
    # avro-serializer/src/test/java/io/confluent/kafka/serializers/AvroSchemaTest.java
    # testNormalization: the canonical string (and the normalized one) of schemaString
    ('{"type":"record","name":"myrecord","doc":"hi\\"there","fields":'
     '[{"type":"string","name":"f1","doc":"bye\\"now"}]}',
     '{"type":"record","name":"myrecord","doc":"hi\\"there","fields":'
     '[{"name":"f1","type":"string","doc":"bye\\"now"}]}'),
    # Avro's Schema.toString: primitives without properties collapse to their name, field
    # attributes in Avro's order (doc, default, order, aliases, then custom properties),
    # record properties before aliases, namespaces only where they change
    (' { "type" : "int" } ', '"int"'),
    ('{"type":"int","logicalType":"date","doc":"dropped"}',
     '{"type":"int","logicalType":"date"}'),
    ('{"fields":[{"x":1,"aliases":["b"],"order":"descending","default":1,"doc":"d",'
     '"type":"long","name":"a"}],"aliases":["n.o.Old","p.Q"],"doc":"D","custom":[2],'
     '"namespace":"n.o","name":"R","type":"record"}',
     '{"type":"record","name":"R","namespace":"n.o","doc":"D","fields":[{"name":"a",'
     '"type":"long","doc":"d","default":1,"order":"descending","aliases":["b"],"x":1}],'
     '"custom":[2],"aliases":["Old","p.Q"]}'),
    ('{"type":"record","name":"a.R","fields":[{"name":"x","type":{"type":"record","name":"S",'
     '"namespace":"","fields":[{"name":"y","type":{"type":"enum","name":"E","symbols":["A"],'
     '"default":"A"}}]}},{"name":"z","type":"S"},{"name":"w","type":["null","a.R"]}]}',
     '{"type":"record","name":"R","namespace":"a","fields":[{"name":"x","type":{"type":'
     '"record","name":"S","namespace":"","fields":[{"name":"y","type":{"type":"enum","name":'
     '"E","symbols":["A"],"default":"A"}}]}},{"name":"z","type":"S"},{"name":"w","type":'
     '["null","R"]}]}'),
    ('{"type":"record","name":"r","fields":[{"name":"a","type":"float","default":"1.5"},'
     '{"name":"b","type":"double","default":1e20},{"name":"c","type":"double",'
     '"default":0.0001}]}',
     '{"type":"record","name":"r","fields":[{"name":"a","type":"float","default":1.5},'
     '{"name":"b","type":"double","default":1.0E20},{"name":"c","type":"double",'
     '"default":1.0E-4}]}'),
]


@pytest.mark.parametrize("text,expected", CANONICAL)
def test_canonical_is_avros_to_string(text, expected):
    assert parse(text, {}).canonical() == expected


DEBEZIUM = (
    '{"connect.name": "some.scope.Envelope", "fields": [{"default": null, "name": "before",'
    ' "type": ["null", {"connect.name": "some.scope.Value", "fields": [{"name": "created_at",'
    ' "type": {"connect.name": "io.debezium.time.Timestamp", "connect.version": 1,'
    ' "type": "long"}}, {"name": "normal_long", "type": "long"}], "name": "Value",'
    ' "type": "record"}]}, {"default": null, "name": "after", "type": ["null", "Value"]}],'
    ' "name": "Envelope", "namespace": "some.scope", "type": "record"}')


def test_normalization_keeps_primitive_properties():
    """AvroSchemaTest.testNormalizationPreservesMetadataForPrimitiveTypes: canonical and
    normalized are the same string."""
    expected = (
        '{"type":"record","name":"Envelope","namespace":"some.scope","fields":[{"name":"before",'
        '"type":["null",{"type":"record","name":"Value","fields":[{"name":"created_at","type":'
        '{"type":"long","connect.name":"io.debezium.time.Timestamp","connect.version":1}},'
        '{"name":"normal_long","type":"long"}],"connect.name":"some.scope.Value"}],'
        '"default":null},{"name":"after","type":["null","Value"],"default":null}],'
        '"connect.name":"some.scope.Envelope"}')
    schema = parse(DEBEZIUM, {})
    assert schema.canonical() == expected
    assert schema.normalized().canonical() == expected


def test_normalization_sorts_and_rewrites():
    """AvroSchemaUtils.toNormalizedString: properties sorted by key (object values too),
    aliases sorted, defaults passed through their type (an int default of a double field
    becomes 3.0), logical type attributes first; the result parsed again and written as
    Avro writes it."""
    text = ('{"type":"record","name":"R","namespace":"n","aliases":["z","a"],'
            '"x":{"b":1,"a":2},"fields":[{"name":"f","aliases":["q","b"],"type":{"type":'
            '"bytes","connect.x":1,"scale":2,"precision":5,"logicalType":"decimal"}},'
            '{"name":"j","type":"double","default":3},'
            '{"name":"i","type":["null","string"],"default":"dropped"}]}')
    schema = parse(text, {})
    assert schema.normalized().canonical() == (
        '{"type":"record","name":"R","namespace":"n","fields":[{"name":"f","type":{"type":'
        '"bytes","logicalType":"decimal","precision":5,"scale":2,"connect.x":1},'
        '"aliases":["b","q"]},{"name":"j","type":"double","default":3.0},'
        '{"name":"i","type":["null","string"]}],"x":{"a":2,"b":1},"aliases":["a","z"]}')
    assert schema.canonical().startswith('{"type":"record","name":"R","namespace":"n",'
                                         '"fields":[{"name":"f","type":{"type":"bytes",'
                                         '"connect.x":1,"scale":2,')


# -- references --------------------------------------------------------------------------------

ADDRESS = ('{"type":"record","name":"Address","namespace":"com.acme","fields":'
           '[{"name":"street","type":"string"}]}')
CUSTOMER = ('{"type":"record","name":"Customer","namespace":"com.acme","fields":'
            '[{"name":"home","type":"Address"},{"name":"work","type":["null","Address"]}]}')
ORDER = ('{"type":"record","name":"Order","namespace":"com.shop","fields":'
         '[{"name":"customer","type":"com.acme.Customer"}]}')


def test_references_are_used_by_name():
    """client/.../avro/AvroSchema.java: references are parsed first; the canonical string
    writes their types by name (Schema.toString with the referenced schemas as known)."""
    schema = parse(CUSTOMER, {"address.avsc": ADDRESS})
    assert schema.canonical() == CUSTOMER
    assert schema.formatted("RESOLVED") == (
        '{"type":"record","name":"Customer","namespace":"com.acme","fields":[{"name":"home",'
        '"type":{"type":"record","name":"Address","fields":[{"name":"street","type":'
        '"string"}]}},{"name":"work","type":["null","Address"]}]}')
    assert schema.formatted(None) == schema.formatted("default") == CUSTOMER
    assert schema.normalized().canonical() == CUSTOMER


def test_references_of_references_in_any_order():
    refs = {"customer.avsc": CUSTOMER, "address.avsc": ADDRESS}
    assert parse(ORDER, refs).canonical() == ORDER
    with pytest.raises(InvalidSchema, match="Undefined schema: com.acme.Address"):
        parse(ORDER, {"customer.avsc": CUSTOMER})


def test_compatibility_across_references():
    """The referenced type is compared too.  Its second use, inside a union, is reported as a
    missing branch: Avro remembers the (reader, writer) pair of the Address records as
    incompatible and the union check only asks for a verdict (same with avro-1.12.1.jar)."""
    new = parse(CUSTOMER, {"a": ADDRESS.replace('"string"}', '"string"},{"name":"zip",'
                                                 '"type":"string"}')})
    old = parse(CUSTOMER, {"a": ADDRESS})
    assert old.is_backward_compatible(new) == []
    assert new.is_backward_compatible(old) == [
        msg("READER_FIELD_MISSING_DEFAULT_VALUE", "The field 'zip' at path "
            "'/fields/0/type/fields/1' in the %s schema has no default value and is missing in "
            "the %s schema", "zip"),
        msg("MISSING_UNION_BRANCH", "The %s schema is missing a type inside a union field at "
            "path '/fields/1/type/1' in the %s schema", "reader union lacking writer type: "
            "RECORD")]
