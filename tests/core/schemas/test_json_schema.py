"""The JSON Schema format of the Schema Registry: reading, canonical and normalized text, and
Confluent's compatibility verdicts and messages.

Most verdicts come from Confluent's own diff test data, json-schema-provider/src/test/resources/
diff-schema-examples.json and diff-combined-schema-examples.json (schema-registry repository,
8.x), each row citing the case by its ``description``; the row gives the old (writer) and new
(reader) schema, every difference Confluent lists (compatible ones included, in its order) and
its verdict for BACKWARD under the STRICT policy (and LENIENT where the file gives one); a
parenthesis after a description tells apart cases the file describes alike.  The
remaining cases (message order with several properties, recursion, references) were checked
against Confluent's diff code run on everit here; they say so.
"""

from __future__ import annotations

import json

import pytest

from mockbroker.core.schemas import formats
from mockbroker.core.schemas.formats import LENIENT, STRICT, InvalidSchema
from mockbroker.core.schemas.json_schema import differences, parse

EXAMPLES = "json-schema-provider/src/test/resources/diff-schema-examples.json"
COMBINED = "json-schema-provider/src/test/resources/diff-combined-schema-examples.json"

STR = '{"type":"string"}'
NUM = '{"type":"number"}'
INT = '{"type":"integer"}'

# (source, case description, old schema, new schema, differences, compatible[, lenient])
CASES = [
    (EXAMPLES, "Anything can change to empty schema", '{"properties":{}}', "{}", [], True),
    (EXAMPLES, "Detect changes to id", '{"$id":"something"}', '{"$id":"something_else"}',
     ["ID_CHANGED #/"], True),
    (EXAMPLES, "Detect changes to simple schema type", '{"type":"object"}', '{"type":"array"}',
     ["TYPE_CHANGED #/"], False),
    (EXAMPLES, "Detect increased minLength string schema", '{"type":"string","minLength":10}',
     '{"type":"string","minLength":11}', ["MIN_LENGTH_INCREASED #/minLength"], False),
    (EXAMPLES, "Detect increased maxLength string schema", '{"type":"string","maxLength":10}',
     '{"type":"string","maxLength":12}', ["MAX_LENGTH_INCREASED #/maxLength"], True),
    (EXAMPLES, "Detect changes to pattern string schema",
     '{"type":"string","pattern":"date-time"}', '{"type":"string","pattern":"uuid"}',
     ["PATTERN_CHANGED #/pattern"], False),
    (EXAMPLES, "Detect decreased maximum number schema", '{"type":"number","maximum":11}',
     '{"type":"number","maximum":10}', ["MAXIMUM_DECREASED #/maximum"], False),
    (EXAMPLES, "Detect decreased minimum number schema", '{"type":"number","minimum":11}',
     '{"type":"number","minimum":10}', ["MINIMUM_DECREASED #/minimum"], True),
    (EXAMPLES, "Detect reduced multipleOf number schema", '{"type":"number","multipleOf":10}',
     '{"type":"number","multipleOf":2}', ["MULTIPLE_OF_REDUCED #/multipleOf"], True),
    (EXAMPLES, "Detect changes to multipleOf number schema",
     '{"type":"number","multipleOf":10}', '{"type":"number","multipleOf":11}',
     ["MULTIPLE_OF_CHANGED #/multipleOf"], False),
    (EXAMPLES, "Detect narrowed change to number schema", NUM, INT, ["TYPE_NARROWED #/"], False),
    (EXAMPLES, "Detect extended change to number schema", INT, NUM, ["TYPE_EXTENDED #/"], True),
    (EXAMPLES, "Detect compatible change to not schema", '{"not":%s}' % NUM, '{"not":%s}' % INT,
     ["NOT_TYPE_NARROWED #/not"], True),
    (EXAMPLES, "Detect incompatible change to not schema", '{"not":%s}' % INT, '{"not":%s}' % NUM,
     ["NOT_TYPE_EXTENDED #/not"], False),
    (EXAMPLES, "Detect removed enum", '{"type":"string","enum":["red"]}', STR,
     ["PRODUCT_TYPE_NARROWED #/"], True),
    (EXAMPLES, "Detect incompatible changes to const schema",
     '{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"foo":{"const":"red"}}}',
     '{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"foo":{"const":"blue"}}}',
     ["ENUM_ARRAY_CHANGED #/properties/foo/const"], False),
    (EXAMPLES, "Detect incompatible changes to enum schema",
     '{"allOf":[%s,{"enum":["red"]}]}' % STR, '{"allOf":[%s,{"enum":["blue"]}]}' % STR,
     ["COMBINED_TYPE_SUBSCHEMAS_CHANGED #/"], False),
    (EXAMPLES, "Detect compatible changes to enum schema",
     '{"allOf":[%s,{"enum":["red"]}]}' % STR, '{"allOf":[{"enum":["red","blue"]},%s]}' % STR,
     ["ENUM_ARRAY_EXTENDED #/allOf/1/enum"], True),
    (EXAMPLES, "Detect changes to type array", '{"type":["object"]}',
     '{"type":["object","array"]}', ["SUM_TYPE_EXTENDED #/"], True),
    (EXAMPLES, "Detect changes to sub schemas", '{"oneOf":[%s]}' % STR, '{"oneOf":[%s]}' % NUM,
     ["COMBINED_TYPE_SUBSCHEMAS_CHANGED #/"], False),
    (EXAMPLES, "Detect changes to remove properties", '{"properties":{"foo":%s}}' % STR,
     '{"properties":{"bar":%s}}' % STR,
     ["OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #/properties/bar",
      "PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL #/properties/foo"], False, True),
    (EXAMPLES, "Detect optional property added to closed content model",
     '{"properties":{"foo":%s},"additionalProperties":false}' % STR,
     '{"properties":{"foo":%s,"bar":%s},"additionalProperties":false}' % (STR, NUM),
     ["OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/bar"], True),
    (EXAMPLES, "Detect property added to partially open content model 1",
     '{"properties":{"foo":%s},"additionalProperties":false,'
     '"patternProperties":{"^S_":%s,"^I_":%s}}' % (STR, STR, INT),
     '{"properties":{"foo":%s,"I_123":%s},"additionalProperties":false,'
     '"patternProperties":{"^S_":%s,"^I_":%s}}' % (STR, NUM, STR, INT),
     ["TYPE_EXTENDED #/properties/I_123",
      "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/I_123",
      "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/I_123"], True),
    (EXAMPLES, "Detect property added to partially open content model 3",
     '{"properties":{"foo":%s},"additionalProperties":%s}' % (STR, STR),
     '{"properties":{"foo":%s,"bar":%s},"additionalProperties":%s}' % (STR, NUM, STR),
     ["TYPE_CHANGED #/properties/bar",
      "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/bar",
      "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/bar"], False),
    (EXAMPLES, "Detect property added to partially open content model 4",
     '{"properties":{"foo":%s},"additionalProperties":%s}' % (STR, STR),
     '{"properties":{"foo":%s,"bar":%s},"required":["bar"],"additionalProperties":%s}'
     % (STR, STR, STR),
     ["PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/bar",
      "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/bar"], False),
    (EXAMPLES, "Detect property removed from partially open content model 3",
     '{"properties":{"foo":%s,"bar":%s},"additionalProperties":false}' % (STR, NUM),
     '{"properties":{"foo":%s},"additionalProperties":%s}' % (STR, STR),
     ["TYPE_CHANGED #/properties/bar",
      "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/bar",
      "ADDITIONAL_PROPERTIES_ADDED #/additionalProperties"], False),
    (EXAMPLES, "Detect property added to open content model", '{"properties":{"foo":%s}}' % STR,
     '{"properties":{"foo":%s,"bar":%s}}' % (STR, NUM),
     ["OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #/properties/bar"], False, True),
    (EXAMPLES, "Detect changes to validation criteria in composed schema type",
     '{"oneOf":[%s,%s]}' % (STR, INT), '{"allOf":[%s]}' % STR, ["COMBINED_TYPE_CHANGED #/"],
     False),
    (EXAMPLES, "Detect changes to dependencies as array",
     '{"properties":{"foo":%s,"bar":%s},"dependencies":{"foo":["bar"]}}' % (NUM, STR),
     '{"properties":{"foo":%s,"bar":%s},"dependencies":{"bar":["foo"]}}' % (NUM, STR),
     ["DEPENDENCY_ARRAY_ADDED #/dependencies/bar",
      "DEPENDENCY_ARRAY_REMOVED #/dependencies/foo"], False),
    (EXAMPLES, "Detect incompatible changes to dependencies schemas",
     '{"dependencies":{"foo":%s}}' % STR, '{"dependencies":{"foo":%s}}' % NUM,
     ["TYPE_CHANGED #/dependencies/foo"], False),
    (EXAMPLES, "Detect required array to be removed",
     '{"properties":{"foo":%s},"required":["foo"]}' % STR, '{"properties":{"foo":%s}}' % STR,
     ["REQUIRED_ATTRIBUTE_REMOVED #/required/foo"], True),
    (EXAMPLES, "Detect required array to be added", '{"properties":{"foo":%s}}' % STR,
     '{"properties":{"foo":%s},"required":["foo"]}' % STR,
     ["REQUIRED_ATTRIBUTE_ADDED #/required/foo"], False),
    (EXAMPLES, "Detect decreased maxProperties", '{"maxProperties":2}', '{"maxProperties":1}',
     ["MAX_PROPERTIES_DECREASED #/maxProperties"], False),
    (EXAMPLES, "Detect changes to all items schema (added)", '{"type":"array"}',
     '{"type":"array","items":%s}' % STR, ["SCHEMA_ADDED #/items"], False),
    (EXAMPLES, "Detect changes to items schema list",
     '{"type":"array","items":[%s,%s]}' % (STR, NUM), '{"type":"array"}',
     ["ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL #/items/0",
      "ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL #/items/1"], True),
    (EXAMPLES, "Detect item added to partially open content model 2",
     '{"type":"array","items":[%s,%s],"additionalItems":%s}' % (STR, NUM, STR),
     '{"type":"array","items":[%s,%s,%s],"additionalItems":%s}' % (STR, NUM, NUM, STR),
     ["TYPE_CHANGED #/items/2",
      "ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/items/2"], False),
    (EXAMPLES, "Detect increased minItems", '{"type":"array","minItems":1}',
     '{"type":"array","minItems":2}', ["MIN_ITEMS_INCREASED #/minItems"], False),
    (EXAMPLES, "Detect incompatible changes to reference schemas",
     '{"type":"array","items":{"$ref":"#/definitions/someRef"},"definitions":{"someRef":%s}}'
     % STR,
     '{"type":"array","items":{"$ref":"#/definitions/someRef"},"definitions":{"someRef":%s}}'
     % NUM, ["TYPE_CHANGED #/items"], False),
    (EXAMPLES, "Detect compatible change of moving to reference schema", STR,
     '{"$ref":"#/definitions/someRef","definitions":{"someRef":%s}}' % STR, [], True),
    (EXAMPLES, "Detect removed boolean additional properties", '{"additionalProperties":true}',
     '{"additionalProperties":false}',
     ["ADDITIONAL_PROPERTIES_REMOVED #/additionalProperties"], False, True),
    (EXAMPLES, "Detect narrowing changes to additional properties schema",
     '{"additionalProperties":true}', '{"additionalProperties":%s}' % NUM,
     ["ADDITIONAL_PROPERTIES_NARROWED #/additionalProperties"], False, True),
    (EXAMPLES, "Detect removing false from closed content model",
     '{"additionalProperties":false,"properties":{"foo":false}}',
     '{"additionalProperties":false}',
     ["PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL #/properties/foo"], True),
    (EXAMPLES, "Detect removed boolean additional items", '{"additionalItems":true}',
     '{"additionalItems":false}', ["ADDITIONAL_ITEMS_REMOVED #/additionalItems"], False),
    (EXAMPLES, "Detect adding to closed content model for array",
     '{"type":"array","items":[%s,%s],"additionalItems":false}' % (STR, NUM),
     '{"type":"array","items":[%s,%s,{"type":"boolean"}],"additionalItems":true}' % (STR, NUM),
     ["ITEM_ADDED_TO_CLOSED_CONTENT_MODEL #/items/2",
      "ADDITIONAL_ITEMS_ADDED #/additionalItems"], True),
    (EXAMPLES, "Detect change to oneOf schema (string with maxLength)",
     '{"type":"string","maxLength":3}', '{"oneOf":[%s,%s]}' % (NUM, STR),
     ["MAX_LENGTH_REMOVED #/maxLength", "SUM_TYPE_EXTENDED #/"], True),
    (COMBINED, "Detect incompatible change to oneOf schema",
     '{"type":"object","properties":{"prop1":{"oneOf":[%s,%s]}}}' % (NUM, STR),
     '{"type":"object","properties":{"prop1":{"oneOf":[%s]}}}' % STR,
     ["SUM_TYPE_NARROWED #/properties/prop1"], False),
    (COMBINED, "Detect incompatible change to allOf schema",
     '{"type":"object","properties":{"prop1":{"allOf":[%s]}}}' % STR,
     '{"type":"object","properties":{"prop1":{"allOf":[{"enum":["one","two","three"]},%s]}}}'
     % STR, ["PRODUCT_TYPE_EXTENDED #/properties/prop1"], False),
    (COMBINED, "Detect incompatible change from oneOf to anyOf schema with fewer properties",
     '{"type":"object","properties":{"prop1":{"oneOf":[%s,%s]}}}' % (NUM, STR),
     '{"type":"object","properties":{"prop1":{"anyOf":[%s]}}}' % STR,
     ["COMBINED_TYPE_EXTENDED #/properties/prop1", "SUM_TYPE_NARROWED #/properties/prop1"],
     False),
    (COMBINED, "Detect combined schema with duplicates in original",
     '{"type":"object","properties":{"prop1":{"allOf":[%s,%s]}}}' % (STR, STR),
     '{"type":"object","properties":{"prop1":{"allOf":[%s]}}}' % STR, [], True),
    (COMBINED, "Detect incompatible change from non-combined to allOf schema",
     '{"type":"object","properties":{"prop1":%s}}' % STR,
     '{"type":"object","properties":{"prop1":{"allOf":[%s,%s]}}}' % (NUM, STR),
     ["TYPE_CHANGED #/properties/prop1"], False),
]


def _schema(text, references=None):
    return parse(text, references or {})


@pytest.mark.parametrize("case", CASES, ids=[case[1] for case in CASES])
def test_confluent_diff_examples(case):
    source, _description, old_text, new_text, changes, compatible, *lenient = case
    old, new = _schema(old_text), _schema(new_text)
    assert [repr(d) for d in differences(old, new)] == changes
    assert (new.is_backward_compatible(old, STRICT) == []) is compatible
    expected_lenient = lenient[0] if lenient else compatible
    assert (new.is_backward_compatible(old, LENIENT) == []) is expected_lenient
    assert source in (EXAMPLES, COMBINED)


# ---- exact messages ------------------------------------------------------------------------
# Description texts of Confluent's Difference.error(); toString() wraps them as
# {errorType:"<TYPE>", description:"<text>'} (the closing quote is a ' in Confluent too).

def test_type_changed_message():
    messages = _schema('{"type":"array"}').is_backward_compatible(_schema('{"type":"object"}'))
    assert messages == [
        "{errorType:\"TYPE_CHANGED\", description:\"A type at path '#/' is different between "
        "the %s schema and the %s schema'}"]


def test_open_content_model_message_and_lenient_policy():
    old = _schema('{"properties":{"foo":%s}}' % STR)
    new = _schema('{"properties":{"foo":%s,"bar":%s}}' % (STR, NUM))
    assert new.is_backward_compatible(old) == [
        "{errorType:\"OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL\", description:\"The %s "
        "schema has an open content model and has a property or item at path "
        "'#/properties/bar' which is missing in the %s schema'}"]
    assert new.is_backward_compatible(old, LENIENT) == []


def test_keyword_and_value_messages_come_in_confluent_order():
    # checked against Confluent's diff code: items first, then maxItems/minItems/uniqueItems;
    # MIN_ITEMS_REMOVED is compatible and left out
    old = _schema('{"type":"array","items":{"type":"integer"},"minItems":1}')
    new = _schema('{"type":"array","items":%s,"uniqueItems":true,"maxItems":5}' % STR)
    assert new.is_backward_compatible(old) == [
        "{errorType:\"TYPE_CHANGED\", description:\"A type at path '#/items' is different "
        "between the %s schema and the %s schema'}",
        "{errorType:\"MAX_ITEMS_ADDED\", description:\"The keyword at path '#/maxItems' in the "
        "%s schema is not present in the %s schema'}",
        "{errorType:\"UNIQUE_ITEMS_ADDED\", description:\"The keyword at path '#/uniqueItems' "
        "in the %s schema is not present in the %s schema'}"]
    narrower = _schema('{"type":"string","maxLength":12}')
    assert narrower.is_backward_compatible(_schema('{"type":"string","maxLength":20}')) == [
        "{errorType:\"MAX_LENGTH_DECREASED\", description:\"The value at path '#/maxLength' in "
        "the %s schema is less than its value in the %s schema'}"]


def test_properties_are_reported_in_java_hash_set_order():
    # order checked against Confluent's diff code (properties visited as a java.util.HashSet)
    old = _schema('{"type":"object","properties":{"zip":%s,"city":%s,"street":%s},'
                  '"additionalProperties":false}' % (STR, STR, STR))
    new = _schema('{"type":"object","properties":{"name":%s,"email":%s},"required":["email"],'
                  '"additionalProperties":false}' % (STR, STR))
    closed = ("{errorType:\"PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL\", description:\"The %s "
              "has a closed content model and is missing a property or item present at path "
              "'#/properties/{}' in the %s schema'}")
    assert new.is_backward_compatible(old) == [
        closed.replace("{}", "zip"), closed.replace("{}", "city"),
        closed.replace("{}", "street"),
        "{errorType:\"REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL\", description:\"The %s "
        "schema has an unopen content model and has a required property at path "
        "'#/properties/email' which is missing in the %s schema'}"]


def test_required_property_with_default_is_compatible():
    old = _schema('{"type":"object","properties":{"a":%s},"additionalProperties":false}' % STR)
    with_default = _schema('{"type":"object","properties":{"a":%s,"b":{"type":"string",'
                           '"default":"x"}},"required":["b"],"additionalProperties":false}' % STR)
    assert with_default.is_backward_compatible(old) == []


def test_enum_values_compare_as_java_values():
    # 1 and 1.0 are different values for Confluent (Integer vs BigDecimal)
    old, new = _schema('{"enum":[1,2]}'), _schema('{"enum":[1.0,2]}')
    assert [repr(d) for d in differences(old, new)] == ["ENUM_ARRAY_CHANGED #/enum"]
    assert [repr(d) for d in differences(new, _schema('{"enum":[1.0,2,3]}'))] == [
        "ENUM_ARRAY_EXTENDED #/enum"]


def test_different_schema_type_is_incompatible():
    class Other(formats.ParsedSchema):
        schema_type = "AVRO"

        def canonical(self):
            return '"string"'

        def normalized(self):
            return self

        def is_backward_compatible(self, writer, policy=STRICT):
            return []

    assert _schema(STR).is_backward_compatible(Other()) == [
        "Incompatible because of different schema type"]


# ---- recursion and references ----------------------------------------------------------------

NODE = ('{"type":"object","properties":{"value":{"type":"%s"},'
        '"next":{"$ref":"#/definitions/node"}}}')


def test_recursive_schema_compares_and_finds_deep_changes():
    # checked against Confluent's diff code: the change is reported at both depths it reaches
    old = _schema('{"$ref":"#/definitions/node","definitions":{"node":%s}}' % (NODE % "integer"))
    new = _schema('{"$ref":"#/definitions/node","definitions":{"node":%s}}' % (NODE % "string"))
    assert [repr(d) for d in differences(old, new)] == [
        "TYPE_CHANGED #/properties/next/properties/value", "TYPE_CHANGED #/properties/value"]
    assert new.is_backward_compatible(new) == []
    assert old.is_backward_compatible(_schema(old.canonical())) == []


def test_ref_to_definitions_through_defs_and_unresolvable_ref():
    text = '{"properties":{"a":{"$ref":"#/$defs/code"}},"definitions":{"code":%s}}' % STR
    assert _schema(text).is_backward_compatible(_schema(text)) == []
    with pytest.raises(InvalidSchema) as error:
        _schema('{"properties":{"a":{"$ref":"#/definitions/missing"}}}')
    assert str(error.value) == "Invalid JSON"


def test_references_resolve_by_name_and_are_compared():
    customer = '{"type":"object","properties":{"id":%s},"additionalProperties":false}'
    refs_old = {"customer.json": customer % INT}
    refs_new = {"customer.json": customer % STR}
    text = '{"type":"object","properties":{"customer":{"$ref":"customer.json"}}}'
    old, new = _schema(text, refs_old), _schema(text, refs_new)
    assert [repr(d) for d in differences(old, new)] == [
        "TYPE_CHANGED #/properties/customer/properties/id"]
    pointer = '{"properties":{"a":{"$ref":"defs.json#/definitions/code"}}}'
    defs = {"defs.json": '{"definitions":{"code":{"type":"string","maxLength":4}}}'}
    shorter = {"defs.json": '{"definitions":{"code":{"type":"string","maxLength":2}}}'}
    assert [repr(d) for d in differences(_schema(pointer, defs), _schema(pointer, shorter))] == [
        "MAX_LENGTH_DECREASED #/properties/a/maxLength"]
    with pytest.raises(InvalidSchema):
        _schema(text)                      # customer.json not given


# ---- canonical and normalized text -----------------------------------------------------------
# What Confluent stores: JsonSchema.canonicalString() = Jackson writeValueAsString of the tree
# read with USE_BIG_DECIMAL_FOR_FLOATS and exact decimals; normalize() re-reads it into sorted
# (TreeMap) objects.  The expected strings were produced by Jackson with that configuration.

def test_canonical_is_compact_and_keeps_key_order():
    text = '{ "type" : "object",\n  "properties" : { "b" : {"type":"string"}, "a" : {} } }'
    schema = _schema(text)
    assert schema.canonical() == '{"type":"object","properties":{"b":{"type":"string"},"a":{}}}'
    assert schema.formatted(None) == schema.canonical()
    assert schema.normalized().canonical() == (
        '{"properties":{"a":{},"b":{"type":"string"}},"type":"object"}')


def test_canonical_numbers_are_written_like_java_big_decimals():
    schema = _schema('{"const":[1.0, 1e5, 1.5E3, 0.00001, 1e-7, -0.0, -0, 2E0, 1.10, '
                     '12345678901234567890123]}')
    assert schema.canonical() == (
        '{"const":[1.0,1E+5,1.5E+3,0.00001,1E-7,0.0,0,2,1.10,12345678901234567890123]}')


def test_canonical_strings_escape_like_jackson():
    schema = _schema(json.dumps({"description": "\u0001\t\n\u001f\u007f/é\u2028\"\\\U0001F600"},
                                ensure_ascii=True))
    assert schema.canonical() == (
        '{"description":"\\u0001\\t\\n\\u001F\u007f/é\u2028\\"\\\\\U0001F600"}')


def test_normalized_sorts_keys_by_utf16_units_everywhere():
    schema = _schema('{"z":1,"\\uffff":2,"\\ud83d\\ude00":3,"A":{"y":[{"b":1,"a":2}],"x":null}}')
    assert schema.normalized().canonical() == (
        '{"A":{"x":null,"y":[{"a":2,"b":1}]},"z":1,"\U0001F600":3,"\uffff":2}')


def test_jackson_reading_quirks():
    assert _schema('{"type":"string"} trailing').canonical() == '{"type":"string"}'
    assert _schema('{"a":1,"a":2,"b":3}').canonical() == '{"a":2,"b":3}'
    assert _schema('{"default":NaN}').canonical() == '{"default":"NaN"}'
    assert _schema("true").canonical() == "true"


# ---- refused schemas --------------------------------------------------------------------------

def test_text_that_is_not_json_is_refused_like_the_parser_does():
    # the registry wraps it: "Invalid schema of type JSON, details: Invalid schema of type
    # JSON, details: Invalid JSON schema" (tests/clients/test_schema_registry.py)
    with pytest.raises(InvalidSchema) as error:
        _schema('{"type": "string"')
    assert str(error.value) == "Invalid JSON schema"
    assert error.value.stage == "parse"


@pytest.mark.parametrize("text,root", [('"string"', "STRING"), ("[1]", "ARRAY"),
                                       ("null", "NULL"), ("5", "NUMBER")])
def test_root_must_be_an_object_or_a_boolean(text, root):
    with pytest.raises(InvalidSchema) as error:
        _schema(text)
    assert str(error.value) == (
        f"Invalid JSON schema: expected an object or boolean at the root, found {root}")
    assert error.value.stage == "validate"


@pytest.mark.parametrize("text,detail", [
    ('{"type":5}', "#/type: expected type is one of JsonArray or String, found: Integer"),
    ('{"type":"foo"}', "#: unknown type: [foo]"),
    ('{"properties":{"a":5}}',
     "#/properties/a: expected type is one of Boolean or JsonObject, found: Integer"),
    ('{"type":"string","minLength":1.0}', "#/minLength: expected type: Integer, "
                                          "found: BigDecimal"),
    ('{"required":"a"}', "#/required: expected type: JsonArray, found: String"),
    ('{"type":"number","multipleOf":0}', "#: multipleOf should not be 0"),
    ('{"enum":3}', "#/enum: expected type: JsonArray, found: Integer"),
    ('{"allOf":{}}', "#/allOf: expected type: JsonArray, found: JsonObject"),
    ('{"title":5}', "#/title: expected type: String, found: Integer"),
])
def test_structurally_invalid_schemas_are_refused(text, detail):
    # Confluent answers "Invalid JSON" (its IllegalArgumentException around the everit
    # loader's SchemaException); the loader's own words, which we keep as detail, were taken
    # from everit 1.14 run on the same schemas
    with pytest.raises(InvalidSchema) as error:
        _schema(text)
    assert str(error.value) == "Invalid JSON"
    assert error.value.stage == "validate"
    assert error.value.detail == detail


def test_unreferenced_definitions_are_not_checked():
    # everit only loads what is reachable, so Confluent accepts this
    assert _schema('{"definitions":{"x":{"type":5}}}').canonical() == (
        '{"definitions":{"x":{"type":5}}}')


def test_formats_dispatches_json():
    schema = formats.parse("JSON", '{"type": "string"}')
    assert schema.schema_type == "JSON"
    assert schema.canonical() == '{"type":"string"}'
