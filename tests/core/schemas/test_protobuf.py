"""The registry's PROTOBUF format: both forms Confluent accepts (``.proto`` text and a base64
``FileDescriptorProto``), the text it stores (``ProtobufSchema.canonicalString``) and stores when
normalizing (``ProtobufSchemaUtils.toNormalizedString``), ``format=serialized``, references and
the built-in well-known files, Wire's parse errors, and Confluent's compatibility verdicts and
messages.

Sources, in Confluent's schema-registry repository (paths relative to its root):
``protobuf-provider/src/test/resources/diff-schema-examples.json`` (cited by each case's
``description``; the schemas below are our own restatements of each case),
``protobuf-provider/src/main/java/.../protobuf/diff/Difference.java`` (message texts),
``.../protobuf/ProtobufSchemaUtils.java`` and ``ProtobufSchemaTest.java`` (layout of the stored
text: ``testNormalization``, ``testEnumReserved``, ``testComplexCustomOptions``).  Parse errors
follow Square Wire 6.4.5 (``ProtoParserTest.kt``).  While writing the module, its canonical and
normalized output was checked against every expected string of ``ProtobufSchemaTest.java`` and
its diff against all 54 cases of ``diff-schema-examples.json`` (kinds, paths and order).
"""

from __future__ import annotations

import base64

import pytest

from mockbroker.core.schemas import formats
from mockbroker.core.schemas.formats import InvalidSchema, ParsedSchema
from mockbroker.core.schemas.protobuf import BUILTIN_PATHS, ProtobufSchema, parse
from mockbroker.core.schemas.protobuf.diff import COMPATIBLE, compare, java_order

try:                                   # only to double-check; the tests do not need it
    from google.protobuf import descriptor_pb2
except ImportError:
    descriptor_pb2 = None


def p3(body: str, package: str = "") -> str:
    head = 'syntax = "proto3";\n' + (f"package {package};\n" if package else "")
    return head + body


def p2(body: str) -> str:
    return 'syntax = "proto2";\n' + body


# -- compatibility ------------------------------------------------------------------------------
# (description in diff-schema-examples.json, writer (original), reader (update), every difference
# Confluent records in its order, compatible?).  References are given as (schema, {path: text}).

HOME = "message Home { int32 id = 1; bool on = 2; }"
HOME_STRING_ID = "message Home { string id = 1; bool on = 2; }"
OUTER_HOME = "message outer { message Home { int32 id = 1; } }"
OUTER_HOME_STRING = "message outer { message Home { string id = 1; } }"

DIFF_CASES = [
    ("Detect package change",
     p3("message M { string s = 1; }", "alpha"), p3("message M { string s = 1; }", "beta"),
     ["PACKAGE_CHANGED #/"], False),
    ("Detect change to name qualification",
     p3("message M { Inner i = 1; message Inner { string s = 1; } }"),
     p3("message M { .M.Inner i = 1; message Inner { string s = 1; } }"), [], True),
    ("Detect change to name qualification with package",
     p3("message M { Inner i = 1; message Inner { string s = 1; } }", "pk"),
     p3("message M { .pk.M.Inner i = 1; message Inner { string s = 1; } }", "pk"), [], True),
    ("Detect added field",
     p3("message M { string a = 1; }"), p3("message M { string a = 1; string b = 2; }"),
     ["FIELD_ADDED #/M/2"], True),
    ("Detect added required field",
     p2("message M { optional string a = 1; }"),
     p2("message M { optional string a = 1; required string b = 2; }"),
     ["REQUIRED_FIELD_ADDED #/M/2"], False),
    ("Detect added field to nested type",
     p3("message Outer { int32 n = 1; message Inner { string a = 1; } }"),
     p3("message Outer { int32 n = 1; message Inner { string a = 1; string b = 2; } }"),
     ["FIELD_ADDED #/Outer/Inner/2"], True),
    ("Detect removed field",
     p3("message M { string a = 1; string b = 2; }"), p3("message M { string a = 1; }"),
     ["FIELD_REMOVED #/M/2"], True),
    ("Detect removed required field",
     p2("message M { optional string a = 1; required string b = 2; }"),
     p2("message M { optional string a = 1; }"),
     ["REQUIRED_FIELD_REMOVED #/M/2"], False),
    ("Detect changed field number",
     p3("message M { string a = 1; }"), p3("message M { string a = 2; }"),
     ["FIELD_REMOVED #/M/1", "FIELD_ADDED #/M/2"], True),
    ("Detect compatible field number type change",
     p3("message M { int32 n = 1; }"), p3("message M { int64 n = 1; }"), [], True),
    ("Detect compatible field string type change",
     p3("message M { string s = 1; }"), p3("message M { bytes s = 1; }"), [], True),
    ("Detect field number type to enum change",
     p3("message M { int32 n = 1; }"),
     p3("message M { Status n = 1; } enum Status { ON = 0; OFF = 1; }"),
     ["ENUM_ADDED #/Status"], True),
    ("Detect enum type to field number change",
     p3("message M { Status n = 1; } enum Status { ON = 0; OFF = 1; }"),
     p3("message M { int32 n = 1; }"),
     ["ENUM_REMOVED #/Status"], True),
    ("Detect field number type to message with same name as enum",
     p3("message M { int32 n = 1; }"),
     p3("message M { .M.Status n = 1; message Status { string s = 1; } }"
        " enum Status { ON = 0; }"),
     ["FIELD_KIND_CHANGED #/M/1", "MESSAGE_ADDED #/M/Status", "ENUM_ADDED #/Status"], False),
    ("Detect enum const change",
     p3("message M { Status s = 1; } enum Status { ACTIVE = 0; INACTIVE = 1; }"),
     p3("message M { Status s = 1; } enum Status { ACTIVE = 0; NOT_ACTIVE = 1; }"),
     ["ENUM_CONST_CHANGED #/Status/1"], True),
    ("Detect compatible field to oneof change",
     p3("message M { string a = 1; string b = 2; }"),
     p3("message M { string a = 1; oneof pick { string b = 2; int32 c = 3; } }"),
     ["ONEOF_ADDED #/M/pick", "ONEOF_FIELD_ADDED #/M/pick/3"], True),
    ("Detect incompatible field to oneof change",
     p3("message M { string a = 1; string b = 2; }"),
     p3("message M { oneof pick { string a = 1; string b = 2; int32 c = 3; } }"),
     ["MULTIPLE_FIELDS_MOVED_TO_ONEOF #/M/pick", "ONEOF_ADDED #/M/pick",
      "ONEOF_FIELD_ADDED #/M/pick/3"], False),
    ("Detect compatible add field to oneof",
     p3("message M { oneof pick { string a = 1; } }"),
     p3("message M { oneof pick { string a = 1; int32 c = 3; } }"),
     ["ONEOF_FIELD_ADDED #/M/pick/3"], True),
    ("Detect incompatible remove field from oneof",
     p3("message M { oneof pick { string a = 1; int32 c = 3; } }"),
     p3("message M { oneof pick { string a = 1; } }"),
     ["ONEOF_FIELD_REMOVED #/M/pick/3"], False),
    ("Detect compatible move field to oneof",
     p3("message M { string a = 1; string b = 2; }"),
     p3("message M { string a = 1; oneof pick { string b = 2; } }"),
     ["ONEOF_ADDED #/M/pick"], True),
    ("Detect incompatible move field to oneof",
     p3("message M { string a = 1; oneof pick { string b = 2; string c = 3; } }"),
     p3("message M { oneof pick { string a = 1; string b = 2; string c = 3; } }"),
     ["FIELD_MOVED_TO_EXISTING_ONEOF #/M/pick"], False),
    # several messages: Confluent walks their names in Java HashSet order, so the names of the
    # original case are kept where the order of the findings depends on them
    ("Detect incompatible field type change (scalar to message)",
     p3("message TestMessage { int32 n = 2; }"),
     p3("message TestMessage { TestMessage2 n = 2; } message TestMessage2 { string s = 1; }"),
     ["MESSAGE_ADDED #/TestMessage2", "FIELD_KIND_CHANGED #/TestMessage/2"], False),
    ("Detect incompatible field type change (renamed, scalar kind)",
     p3("message M { int32 count = 2; }"), p3("message M { string label = 2; }"),
     ["FIELD_NAME_CHANGED #/M/2", "FIELD_SCALAR_KIND_CHANGED #/M/2"], False),
    ("Detect incompatible field type change (other message)",
     p3("message TestMessage { TestMessage2 m = 2; } message TestMessage2 { string s = 1; }"),
     p3("message TestMessage { TestMessage3 m = 2; } message TestMessage3 { string s = 1; }"),
     ["MESSAGE_REMOVED #/TestMessage2", "MESSAGE_ADDED #/TestMessage3",
      "FIELD_NAMED_TYPE_CHANGED #/TestMessage/2"], False),
    ("Detect incompatible field type change (map value)",
     p3("message M { map<string, int32> counts = 2; }"),
     p3("message M { map<string, string> labels = 2; }"),
     ["FIELD_NAME_CHANGED #/M/2", "FIELD_SCALAR_KIND_CHANGED #/M/2"], False),
    ("Detect compatible name qualification in map",
     p3("message M { map<string, Inner> m = 1; message Inner { string s = 1; } }"),
     p3("message M { map<string, M.Inner> m = 1; message Inner { string s = 1; } }"),
     [], True),
    ("Detect compatible field label change for message",
     p3("message M { optional Inner i = 1; message Inner { string s = 1; } }"),
     p3("message M { repeated Inner i = 1; message Inner { string s = 1; } }"), [], True),
    ("Detect compatible field label change for string",
     p3("message M { optional string s = 1; }"), p3("message M { repeated string s = 1; }"),
     ["FIELD_STRING_OR_BYTES_LABEL_CHANGED #/M/1"], True),
    ("Detect incompatible field label change for number",
     p3("message M { optional int32 n = 1; }"), p3("message M { repeated int32 n = 1; }"),
     ["FIELD_NUMERIC_LABEL_CHANGED #/M/1"], False),
    ("Detect compatible message addition",
     p3("message M { string s = 1; }"), p3("message M { string s = 1; } message N { }"),
     ["MESSAGE_ADDED #/N"], True),
    ("Detect compatible message index change (inserted before)",
     p3("message TestMessage { string s = 1; }"),
     p3("message TestMessage2 { string s = 1; } message TestMessage { string s = 1; }"),
     ["MESSAGE_ADDED #/TestMessage2", "MESSAGE_MOVED #/TestMessage"], True),
    ("Detect compatible message index change (swapped)",
     p3("message TestMessage { string s = 1; } message TestMessage2 { string s = 1; }"),
     p3("message TestMessage2 { string s = 1; } message TestMessage { string s = 1; }"),
     ["MESSAGE_MOVED #/TestMessage2", "MESSAGE_MOVED #/TestMessage"], True),
    ("Detect incompatible import change",
     (p3('import "home.proto";\nmessage M { .demo.Home h = 1; }'),
      {"home.proto": p3(HOME, "demo")}),
     (p3('import "home2.proto";\nmessage M { .demo.Home h = 1; }'),
      {"home2.proto": p3(HOME_STRING_ID, "demo")}),
     ["FIELD_SCALAR_KIND_CHANGED #/Home/1", "FIELD_NAMED_TYPE_CHANGED #/M/1"], False),
    ("Detect moving to import",
     p3("message M { Home h = 1; } " + HOME, "demo"),
     (p3('import "home.proto";\nmessage M { Home h = 1; }', "demo"),
      {"home.proto": p3(HOME, "demo")}),
     ["MESSAGE_REMOVED #/Home"], False),
    ("Detect moving from import",
     (p3('import "home.proto";\nmessage M { Home h = 1; }', "demo"),
      {"home.proto": p3(HOME, "demo")}),
     p3("message M { Home h = 1; } " + HOME, "demo"),
     ["MESSAGE_ADDED #/Home"], True),
    ("Detect import change with different remote package name",
     (p3('import "home.proto";\nmessage M { .demo.Home h = 1; }'),
      {"home.proto": p3(HOME, "demo")}),
     (p3('import "home.proto";\nmessage M { .demo2.Home h = 1; }'),
      {"home.proto": p3(HOME, "demo2")}),
     [], True),
    ("Detect incompatible import change with different remote package nested name",
     (p3('import "home.proto";\nmessage M { .demo.outer.Home h = 1; }'),
      {"home.proto": p3(OUTER_HOME, "demo")}),
     (p3('import "home2.proto";\nmessage M { .demo2.outer.Home h = 1; }'),
      {"home2.proto": p3(OUTER_HOME_STRING, "demo2")}),
     ["FIELD_SCALAR_KIND_CHANGED #/outer/Home/1", "FIELD_NAMED_TYPE_CHANGED #/M/1"], False),
    ("Detect incompatible field type change when enclosing oneof is renamed",
     p3("message M { oneof old { float f = 1; int32 n = 2; } }"),
     p3("message M { oneof renamed { float f = 1; string n = 2; } }"),
     ["ONEOF_REMOVED #/M/old", "ONEOF_ADDED #/M/renamed",
      "FIELD_SCALAR_KIND_CHANGED #/M/renamed/2"], False),
    ("Detect incompatible field type change when field is moved out of a removed oneof",
     p3("message M { oneof old { float f = 1; int32 n = 2; } }"),
     p3("message M { float f = 1; sint64 n = 2; }"),
     ["ONEOF_REMOVED #/M/old", "ONEOF_FIELD_MOVED_TO_TOP_LEVEL #/M/1",
      "ONEOF_FIELD_MOVED_TO_TOP_LEVEL #/M/2", "FIELD_SCALAR_KIND_CHANGED #/M/2"], False),
    ("Detect incompatible field move between two differently-named oneofs",
     p3("message M { oneof a { int32 x = 1; int32 y = 2; } oneof b { int32 z = 3; } }"),
     p3("message M { oneof a { int32 x = 1; } oneof b { int32 z = 3; int32 y = 2; } }"),
     ["FIELD_MOVED_TO_EXISTING_ONEOF #/M/b"], False),
    ("Detect incompatible merge of two oneofs into a new oneof",
     p3("message M { oneof a { int32 x = 1; } oneof b { int32 y = 2; } }"),
     p3("message M { oneof c { int32 x = 1; int32 y = 2; } }"),
     ["FIELD_MOVED_TO_EXISTING_ONEOF #/M/c", "ONEOF_REMOVED #/M/a", "ONEOF_REMOVED #/M/b",
      "ONEOF_ADDED #/M/c"], False),
    ("Detect incompatible drop of a oneof member while renaming the oneof",
     p3("message M { oneof g { int32 a = 1; int32 b = 2; } }"),
     p3("message M { oneof g2 { int32 a = 1; } }"),
     ["ONEOF_REMOVED #/M/g", "ONEOF_ADDED #/M/g2", "ONEOF_FIELD_REMOVED #/M/g/2"], False),
    ("Detect compatible move field out of a oneof to top level",
     p3("message M { oneof x { int32 a = 1; int32 b = 2; } }"),
     p3("message M { oneof x { int32 a = 1; } int32 b = 2; }"),
     ["ONEOF_FIELD_MOVED_TO_TOP_LEVEL #/M/2"], True),
]


def _parse(spec) -> ProtobufSchema:
    text, refs = spec if isinstance(spec, tuple) else (spec, {})
    return parse(text, refs)


@pytest.mark.parametrize("description, writer, reader, changes, ok", DIFF_CASES,
                         ids=[case[0] for case in DIFF_CASES])
def test_compatibility_table(description, writer, reader, changes, ok):
    old, new = _parse(writer), _parse(reader)
    found = compare(old.file, new.file, old.scope, new.scope)
    assert [f"{kind} {path}" for kind, path in found] == changes
    messages = new.is_backward_compatible(old)
    assert (messages == []) is ok
    assert len(messages) == len([c for c in changes if c.split()[0] not in COMPATIBLE])


def test_incompatibility_messages():
    # Difference.toString: {errorType:"TYPE", description:"..."}, %s = reader then writer
    def messages(writer, reader):
        return _parse(reader).is_backward_compatible(_parse(writer))

    assert messages(p3("message M { string s = 1; }", "alpha"),
                    p3("message M { string s = 1; }", "beta")) == [
        '{errorType:"PACKAGE_CHANGED", description:"The package at \'#/\' in the %s schema '
        'does not match the package in the %s schema"}']
    assert messages(p2("message M { optional string a = 1; }"),
                    p2("message M { optional string a = 1; required string b = 2; }")) == [
        '{errorType:"REQUIRED_FIELD_ADDED", description:"A required field  at path '
        '\'#/M/2\' in the %s schema is missing in the %s schema"}']
    assert messages(p3("message M { int32 count = 2; }"),
                    p3("message M { string label = 2; }")) == [
        '{errorType:"FIELD_SCALAR_KIND_CHANGED", description:"The kind of a SCALAR field at '
        'path \'#/M/2\' in the %s schema does not match its kind in the %s schema"}']
    # MESSAGE_ADDED is compatible and left out; the others keep Confluent's order
    assert messages(
        p3("message TestMessage { TestMessage2 m = 2; } message TestMessage2 { string s = 1; }"),
        p3("message TestMessage { TestMessage3 m = 2; } message TestMessage3 { string s = 1; }"),
    ) == [
        '{errorType:"MESSAGE_REMOVED", description:"The %s schema is missing a MESSAGE type at '
        'path \'#/TestMessage2\' in the %s schema"}',
        '{errorType:"FIELD_NAMED_TYPE_CHANGED", description:"The type of a MESSAGE field at '
        'path \'#/TestMessage/2\' in the %s schema does not match its type in the %s schema"}']
    assert messages(p3("message M { oneof pick { string a = 1; int32 c = 3; } }"),
                    p3("message M { oneof pick { string a = 1; } }")) == [
        '{errorType:"ONEOF_FIELD_REMOVED", description:"The %s schema is missing a oneof field '
        'at path \'#/M/pick/3\' in the %s schema"}']
    assert messages(p3("message M { string a = 1; oneof pick { string b = 2; } }"),
                    p3("message M { oneof pick { string a = 1; string b = 2; } }")) == [
        '{errorType:"FIELD_MOVED_TO_EXISTING_ONEOF", description:"A field in the oneof at path '
        '\'#/M/pick\' in the %s schema is outside an existing oneof in the %s schema"}']


def test_other_schema_type_is_incompatible():
    class Other(ParsedSchema):
        schema_type = "AVRO"

        def canonical(self):
            return "{}"

        def normalized(self):
            return self

        def is_backward_compatible(self, writer, policy=formats.STRICT):
            return []

    assert parse(p3("message M {}"), {}).is_backward_compatible(Other()) == [
        "Incompatible because of different schema type"]


def test_java_hash_order():
    # java.util.HashSet<String> of these names iterates TestMessage2, TestMessage3, TestMessage
    assert java_order(["TestMessage", "TestMessage2", "TestMessage3"]) == [
        "TestMessage2", "TestMessage3", "TestMessage"]
    # Integer keys hash to themselves: 17 shares bucket 1 with 1 in a 16-slot table
    assert java_order([17, 1, 2]) == [17, 1, 2]
    # past 12 entries the table doubles to 32 slots: 20 back in its own bucket
    assert java_order(list(range(20, 0, -1))) == list(range(1, 21))


# -- canonical and normalized text ----------------------------------------------------------------
# Layout per ProtobufSchemaUtils.toString (see ProtobufSchemaTest.testNormalization): syntax and
# package lines, then imports, options and types each after a blank line; all messages before
# all enums; inside a message reserved, options, fields, oneofs, extensions, nested types, each
# block after a blank line (indented blank lines keep the indent); comments dropped.

ORDER = '''// an order
syntax = "proto3";
option java_package = "com.shop";
package shop.v1;
import "google/protobuf/timestamp.proto";

enum Kind { KIND_UNKNOWN = 0; RUSH = 1; }
message Order {
  option deprecated = true;
  reserved 9, 11 to 12, "legacy";
  oneof payment { string voucher = 5; string card = 4; }
  string id = 1;
  map<string, Item> items = 2 [json_name = "lineItems"];
  google.protobuf.Timestamp placed_at = 3;
  message Item { option deprecated = true; int32 qty = 1; }
  enum Status { NEW = 0; PAID = 1; }
}
service Shop { rpc Place (Order) returns (Order); }
'''

ORDER_CANONICAL = '''syntax = "proto3";
package shop.v1;

import "google/protobuf/timestamp.proto";

option java_package = "com.shop";

message Order {
  reserved 9, 11 to 12, "legacy";

  option deprecated = true;

  string id = 1;
  map<string, Item> items = 2 [json_name = "lineItems"];
  google.protobuf.Timestamp placed_at = 3;

  oneof payment {
    string voucher = 5;
    string card = 4;
  }

  message Item {
    option deprecated = true;
  
    int32 qty = 1;
  }
  enum Status {
    NEW = 0;
    PAID = 1;
  }
}
enum Kind {
  KIND_UNKNOWN = 0;
  RUSH = 1;
}

service Shop {
  rpc Place (Order) returns (Order);
}
'''

# toNormalizedString: names fully qualified, reserved one per line, oneof members by number
ORDER_NORMALIZED = '''syntax = "proto3";
package shop.v1;

import "google/protobuf/timestamp.proto";

option java_package = "com.shop";

message Order {
  reserved 9;
  reserved 11 to 12;
  reserved "legacy";

  option deprecated = true;

  string id = 1;
  map<string, .shop.v1.Order.Item> items = 2 [json_name = "lineItems"];
  .google.protobuf.Timestamp placed_at = 3;

  oneof payment {
    string card = 4;
    string voucher = 5;
  }

  message Item {
    option deprecated = true;
  
    int32 qty = 1;
  }
  enum Status {
    NEW = 0;
    PAID = 1;
  }
}
enum Kind {
  KIND_UNKNOWN = 0;
  RUSH = 1;
}

service Shop {
  rpc Place (.shop.v1.Order) returns (.shop.v1.Order);
}
'''


def test_canonical_text():
    schema = parse(ORDER, {})
    assert schema.schema_type == "PROTOBUF"
    assert schema.canonical() == ORDER_CANONICAL
    assert parse(ORDER_CANONICAL, {}).canonical() == ORDER_CANONICAL
    assert formats.parse("PROTOBUF", ORDER).canonical() == ORDER_CANONICAL


def test_normalized_text():
    normalized = parse(ORDER, {}).normalized()
    assert normalized.canonical() == ORDER_NORMALIZED
    assert normalized.normalized().canonical() == ORDER_NORMALIZED


def test_normalize_proto2_sorts_and_merges():
    # proto2: no syntax line once normalized; imports sorted and de-duplicated; options by
    # name; enum constants by number (ProtobufSchemaTest.testEnumReserved/testNormalization);
    # confluent.field_meta settings merged into one aggregate (testComplexCustomOptions2)
    text = p2('import "confluent/meta.proto";\nimport "b.proto";\nimport "b.proto";\n'
              'option java_outer_classname = "Z";\noption java_package = "a";\n'
              'message M {\n'
              '  optional int32 n = 2 [(confluent.field_meta).tags = "x", '
              '(confluent.field_meta).tags = "y", default = 4];\n'
              '  optional int32 m = 1;\n}\n'
              'enum E { B = 2; A = 1; }\n')
    assert parse(text, {"b.proto": p2("")}).normalized().canonical() == (
        '\nimport "b.proto";\nimport "confluent/meta.proto";\n\n'
        'option java_outer_classname = "Z";\noption java_package = "a";\n\n'
        'message M {\n'
        '  optional int32 m = 1;\n'
        '  optional int32 n = 2 [\n'
        '    (confluent.field_meta) = {\n'
        '      tags: [\n        "x",\n        "y"\n      ]\n    },\n'
        '    default = 4\n'
        '  ];\n}\n'
        'enum E {\n  A = 1;\n  B = 2;\n}\n')


def test_text_options_escapes_and_aggregates():
    # string options are written with double quotes and Java-style escapes
    # (ProtobufSchemaTest.testOptionEscape); text-format aggregates one entry per line
    text = p3("option go_package = 'a\\tb\"c';\nmessage M {\n"
              "  string s = 1 [(confluent.field_meta) = { doc: 'd', tags: ['t1', 't2'] }];\n}\n")
    assert parse(text, {}).canonical() == (
        'syntax = "proto3";\n\noption go_package = "a\\tb\\"c";\n\nmessage M {\n'
        '  string s = 1 [(confluent.field_meta) = {\n    doc: "d",\n    tags: [\n'
        '      "t1",\n      "t2"\n    ]\n  }];\n}\n')


# -- the serialized form ------------------------------------------------------------------------
# What confluent-kafka's ProtobufSerializer registers for this file (generated with protoc from
# the .proto below: base64 of order_pb2.DESCRIPTOR.serialized_pb):
#   syntax = "proto3"; package shop.v1; import "google/protobuf/timestamp.proto";
#   message Order { string id = 1; map<string, int32> quantities = 2;
#     google.protobuf.Timestamp placed_at = 3; oneof payment { string card = 4;
#     string voucher = 5; } Status status = 6; enum Status { NEW = 0; PAID = 1; } }
CLIENT_ORDER = (
    "CgtvcmRlci5wcm90bxIHc2hvcC52MRofZ29vZ2xlL3Byb3RvYnVmL3RpbWVzdGFtcC5wcm90byKbAgoFT3JkZXIS"
    "CgoCaWQYASABKAkSMgoKcXVhbnRpdGllcxgCIAMoCzIeLnNob3AudjEuT3JkZXIuUXVhbnRpdGllc0VudHJ5Ei0K"
    "CXBsYWNlZF9hdBgDIAEoCzIaLmdvb2dsZS5wcm90b2J1Zi5UaW1lc3RhbXASDgoEY2FyZBgEIAEoCUgAEhEKB3Zv"
    "dWNoZXIYBSABKAlIABIlCgZzdGF0dXMYBiABKA4yFS5zaG9wLnYxLk9yZGVyLlN0YXR1cxoxCg9RdWFudGl0aWVz"
    "RW50cnkSCwoDa2V5GAEgASgJEg0KBXZhbHVlGAIgASgFOgI4ASIbCgZTdGF0dXMSBwoDTkVXEAASCAoEUEFJRBAB"
    "QgkKB3BheW1lbnRiBnByb3RvMw==")

# ProtobufSchema.toProtoFile(FileDescriptorProto): names stay fully qualified, the map stays a
# repeated field of its map_entry message, proto3 fields lose their "optional"
CLIENT_ORDER_CANONICAL = '''syntax = "proto3";
package shop.v1;

import "google/protobuf/timestamp.proto";

message Order {
  string id = 1;
  repeated .shop.v1.Order.QuantitiesEntry quantities = 2;
  .google.protobuf.Timestamp placed_at = 3;
  .shop.v1.Order.Status status = 6;

  oneof payment {
    string card = 4;
    string voucher = 5;
  }

  message QuantitiesEntry {
    option map_entry = true;
  
    string key = 1;
    int32 value = 2;
  }
  enum Status {
    NEW = 0;
    PAID = 1;
  }
}
'''

CLIENT_ORDER_TEXT = p3('import "google/protobuf/timestamp.proto";\n'
                       "message Order { string id = 1; map<string, int32> quantities = 2;\n"
                       "  google.protobuf.Timestamp placed_at = 3;\n"
                       "  oneof payment { string card = 4; string voucher = 5; }\n"
                       "  Status status = 6; enum Status { NEW = 0; PAID = 1; } }\n", "shop.v1")


def wire_fields(data: bytes) -> list[tuple[int, object]]:
    """A protobuf message's fields, decoded independently of the module under test."""
    out, pos = [], 0

    def varint():
        nonlocal pos
        value = shift = 0
        while True:
            b = data[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return value
    while pos < len(data):
        key = varint()
        if key & 7 == 0:
            out.append((key >> 3, varint()))
        else:
            assert key & 7 == 2
            length = varint()
            out.append((key >> 3, data[pos:pos + length]))
            pos += length
    return out


def named(fields, number):
    return [value for n, value in fields if n == number]


def test_client_descriptor_is_accepted_and_stored_as_text():
    schema = parse(CLIENT_ORDER, {})
    assert schema.canonical() == CLIENT_ORDER_CANONICAL
    # sent as text or as a descriptor, the same schema normalizes to the same text
    assert schema.normalized().canonical() == parse(CLIENT_ORDER_TEXT, {}).normalized().canonical()
    assert parse(CLIENT_ORDER_TEXT, {}).is_backward_compatible(schema) == []
    assert schema.is_backward_compatible(parse(CLIENT_ORDER_TEXT, {})) == []


def test_serialized_format():
    data = base64.b64decode(parse(CLIENT_ORDER_TEXT, {}).formatted("serialized"))
    file = wire_fields(data)
    # DynamicSchema's file: named "default", only resolvable imports, syntax last
    assert named(file, 1) == [b"default"]
    assert named(file, 2) == [b"shop.v1"]
    assert named(file, 3) == [b"google/protobuf/timestamp.proto"]
    assert named(file, 12) == [b"proto3"]
    (order,) = [wire_fields(m) for m in named(file, 4)]
    fields = {dict(wire_fields(f))[1]: dict(wire_fields(f)) for f in named(order, 2)}
    # oneof members first, then the other fields; type names as written
    assert list(fields) == [b"card", b"voucher", b"id", b"quantities", b"placed_at", b"status"]
    assert fields[b"card"][9] == 0 and fields[b"card"][4] == 1        # oneof 0, optional
    # the map's entry message is made up while writing, so (as in Confluent) its field type
    # is left for the reader to infer from the name
    assert fields[b"quantities"][4] == 3 and 5 not in fields[b"quantities"]
    assert fields[b"quantities"][6] == b"quantitiesEntry"
    assert fields[b"placed_at"][6] == b"google.protobuf.Timestamp"
    assert fields[b"status"][5] == 14 and fields[b"status"][6] == b"Status"
    nested = [wire_fields(m) for m in named(order, 3)]
    assert [named(m, 1) for m in nested] == [[b"quantitiesEntry"]]
    assert named(nested[0], 7) == [bytes([0x38, 1])]                   # map_entry = true
    assert [wire_fields(o) for o in named(order, 8)] == [[(1, b"payment")]]
    if descriptor_pb2 is not None:
        proto = descriptor_pb2.FileDescriptorProto.FromString(data)
        assert [f.name for f in proto.message_type[0].field][:2] == ["card", "voucher"]


def test_serialized_round_trip_of_client_descriptor():
    schema = parse(CLIENT_ORDER, {})
    again = parse(schema.formatted("serialized"), {})
    assert again.canonical() == CLIENT_ORDER_CANONICAL
    assert schema.formatted(None) == schema.formatted("default") == CLIENT_ORDER_CANONICAL
    assert schema.formatted("SERIALIZED") == schema.formatted("serialized")
    # proto3 optional: a synthetic "_name" oneof after the real ones, as protoc makes it
    data = parse(p3("message M { optional int32 n = 1; oneof o { int32 a = 2; } }"),
                 {}).descriptor()
    (message,) = [wire_fields(m) for m in named(wire_fields(data), 4)]
    n = [dict(wire_fields(f)) for f in named(message, 2) if dict(wire_fields(f))[1] == b"n"][0]
    assert n[17] == 1 and n[9] == 1
    assert [wire_fields(o) for o in named(message, 8)] == [[(1, b"o")], [(1, b"_n")]]
    assert parse(base64.b64encode(data).decode(), {}).canonical() == (
        'syntax = "proto3";\n\nmessage M {\n  optional int32 n = 1;\n\n'
        '  oneof o {\n    int32 a = 2;\n  }\n}\n')


def test_descriptor_built_by_hand():
    # a proto2 FileDescriptorProto (no syntax field): message Rec { required string id = 1;
    # optional int32 n = 2 [default = 7]; } in package legacy, file options java_package
    def ld(number, payload):
        return bytes([number << 3 | 2, len(payload)]) + payload

    def vi(number, value):
        return bytes([number << 3, value])

    id_field = ld(1, b"id") + vi(3, 1) + vi(4, 2) + vi(5, 9)
    n_field = ld(1, b"n") + vi(3, 2) + vi(4, 1) + vi(5, 5) + ld(7, b"7")
    message = ld(1, b"Rec") + ld(2, id_field) + ld(2, n_field)
    data = ld(1, b"rec.proto") + ld(2, b"legacy") + ld(4, message) + ld(8, ld(1, b"x.y"))
    schema = parse(base64.b64encode(data).decode(), {})
    assert schema.canonical() == (
        'package legacy;\n\noption java_package = "x.y";\n\nmessage Rec {\n'
        '  required string id = 1;\n  optional int32 n = 2 [default = 7];\n}\n')


# -- references and well-known types --------------------------------------------------------------

ADDRESS = p3("message Address { string street = 1; }\nenum Country { NONE = 0; FR = 1; }",
             "geo")


def test_references_resolve_by_full_name():
    text = p3('import "geo/address.proto";\nmessage Person {\n'
              '  geo.Address home = 1;\n  repeated .geo.Country visited = 2;\n}\n', "people")
    schema = parse(text, {"geo/address.proto": ADDRESS})
    assert schema.normalized().canonical() == (
        'syntax = "proto3";\npackage people;\n\nimport "geo/address.proto";\n\n'
        'message Person {\n  .geo.Address home = 1;\n  repeated .geo.Country visited = 2;\n}\n')
    # a reference may itself be given as a serialized descriptor
    serialized = parse(ADDRESS, {}).formatted("serialized")
    assert parse(text, {"geo/address.proto": serialized}).normalized().canonical() == \
        schema.normalized().canonical()
    # the serialized form lists the import, which the reference makes resolvable
    assert named(wire_fields(schema.descriptor()), 3) == [b"geo/address.proto"]


def test_missing_reference_is_refused():
    text = p3('import "geo/address.proto";\nmessage Person { geo.Address home = 1; }')
    with pytest.raises(InvalidSchema) as e:
        parse(text, {})
    assert str(e.value) == "Could not resolve type: geo.Address"


@pytest.mark.parametrize("path, type_name", [
    ("google/protobuf/timestamp.proto", "google.protobuf.Timestamp"),
    ("google/protobuf/wrappers.proto", "google.protobuf.StringValue"),
    ("google/protobuf/any.proto", "google.protobuf.Any"),
    ("google/protobuf/struct.proto", "google.protobuf.Struct"),
    ("google/protobuf/duration.proto", "google.protobuf.Duration"),
    ("google/protobuf/empty.proto", "google.protobuf.Empty"),
    ("google/type/money.proto", "google.type.Money"),
    ("google/type/date.proto", "google.type.Date"),
    ("confluent/type/decimal.proto", "confluent.type.Decimal"),
])
def test_well_known_types_need_no_reference(path, type_name):
    assert path in BUILTIN_PATHS
    schema = parse(p3(f'import "{path}";\nmessage M {{ {type_name} v = 1; }}'), {})
    assert f".{type_name} v = 1;" in schema.normalized().canonical()
    assert named(wire_fields(schema.descriptor()), 3) == [path.encode()]


def test_well_known_enum_is_a_scalar_kind():
    # google.type.DayOfWeek is an enum: int32 <-> enum is within GENERAL_NUMBER
    writer = parse(p3("message M { int32 d = 1; }"), {})
    reader = parse(p3('import "google/type/dayofweek.proto";\n'
                      "message M { google.type.DayOfWeek d = 1; }"), {})
    assert reader.is_backward_compatible(writer) == []


def test_changed_reference_is_followed():
    writer = parse(p3('import "a.proto";\nmessage M { .geo.Address a = 1; }'),
                   {"a.proto": ADDRESS})
    reader = parse(p3('import "a.proto";\nmessage M { .geo.Address a = 1; }'),
                   {"a.proto": p3("message Address { int64 street = 1; }", "geo")})
    assert reader.is_backward_compatible(writer) == [
        '{errorType:"FIELD_SCALAR_KIND_CHANGED", description:"The kind of a SCALAR field at '
        'path \'#/Address/1\' in the %s schema does not match its kind in the %s schema"}',
        '{errorType:"FIELD_NAMED_TYPE_CHANGED", description:"The type of a MESSAGE field at '
        'path \'#/M/1\' in the %s schema does not match its type in the %s schema"}']


# -- what is refused ------------------------------------------------------------------------------
# ProtobufSchema.toProtoFile: text that neither parses (Wire) nor decodes as a descriptor is
# refused with "Could not parse Protobuf - " and Wire's message; the registry answers 42201
# "Invalid schema of type PROTOBUF, details: <this>".

@pytest.mark.parametrize("text, message", [
    ('syntax = "proto3";\nmessage M {\n  strin g h = 1;\n}\n',
     "Syntax error in :3:12: expected '=' but was 'h'"),
    ('message M { string s = 1; }', "Syntax error in :1:13: unexpected label: string"),
    ('syntax = "proto4";', "Syntax error in :1:1: unexpected syntax: proto4"),
    ('syntax = "proto3";\nmessage M { required string s = 1; }',
     "Syntax error in :2:13: 'required' label forbidden in proto3 field declarations"),
    ('syntax = "proto3";\nmessage M { repeated map<string, string> m = 1; }',
     "Syntax error in :2:13: 'map' type cannot have label"),
    ('syntax = "proto3";\nmessage M { string s = x; }',
     "Syntax error in :2:25: expected an integer but was x"),
    ('syntax = "proto3";\nmessage M { string s = 1 }',
     "Syntax error in :2:27: expected ';' but was '}'"),
    ('syntax = "proto3";\nmessage M { string s = 1;',
     "Syntax error in :2:26: unexpected end of file"),
    ('message A {}\nmessage A {}', "A (:2:1) is already defined at :1:1"),
    ('package p;\nsyntax = "proto3";',
     "Syntax error in :2:1: 'syntax' element must be the first declaration in a file"),
    ("bm90IGEgZGVzY3JpcHRvcg==", "Syntax error in :1:1: unexpected label: "
                                 "bm90IGEgZGVzY3JpcHRvcg"),
])
def test_parse_errors(text, message):
    with pytest.raises(InvalidSchema) as e:
        parse(text, {})
    assert str(e.value) == f"Could not parse Protobuf - {message}"


def test_invalid_map_key_is_refused():
    with pytest.raises(InvalidSchema) as e:
        parse(p3("message M { map<double, string> m = 1; }"), {})
    assert str(e.value) == "map key must be non-byte, non-floating point scalar: double"


def test_bad_reference_is_refused():
    with pytest.raises(InvalidSchema) as e:
        parse(p3('import "a.proto";\nmessage M {}'), {"a.proto": "message {"})
    assert str(e.value).startswith("Could not parse Protobuf - Syntax error in :1:")
