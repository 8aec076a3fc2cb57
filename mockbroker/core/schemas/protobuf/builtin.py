"""Files every protobuf schema may use without a reference.

Confluent's provider always knows the well-known types (``google/protobuf/*.proto``), the
common ``google/type/*.proto`` types and its own ``confluent/meta.proto`` and
``confluent/type/*.proto``; clients never register them (confluent-kafka skips them as
"known types").  What matters here is which messages and enums exist under which full names,
their fields (compatibility checks compare the messages a field refers to) and the ``extend``
fields of ``confluent/meta.proto`` (custom options).  The declarations below are a compact
summary written for this registry, not the published files: no comments, no options, and
``descriptor.proto``'s messages only by name.  Type references are fully qualified, as in the
descriptors Confluent reads these files from.
"""

from __future__ import annotations

from functools import lru_cache

from .model import ProtoFile


def _wrappers() -> str:
    kinds = (("Double", "double"), ("Float", "float"), ("Int64", "int64"), ("UInt64", "uint64"),
             ("Int32", "int32"), ("UInt32", "uint32"), ("Bool", "bool"), ("String", "string"),
             ("Bytes", "bytes"))
    return "".join(f"message {name}Value {{ {t} value = 1; }}\n" for name, t in kinds)


def _enum(name: str, *constants: str) -> str:
    body = " ".join(f"{c} = {i};" for i, c in enumerate(constants))
    return f"enum {name} {{ {body} }}\n"


_DESCRIPTOR_MESSAGES = (
    "FileDescriptorSet", "FileDescriptorProto", "DescriptorProto", "ExtensionRangeOptions",
    "FieldDescriptorProto", "OneofDescriptorProto", "EnumDescriptorProto",
    "EnumValueDescriptorProto", "ServiceDescriptorProto", "MethodDescriptorProto", "FileOptions",
    "MessageOptions", "FieldOptions", "OneofOptions", "EnumOptions", "EnumValueOptions",
    "ServiceOptions", "MethodOptions", "UninterpretedOption", "FeatureSet",
    "FeatureSetDefaults", "SourceCodeInfo", "GeneratedCodeInfo")

_P = ".google.protobuf."

# import path -> (syntax, package, declarations)
_FILES = {
    "google/protobuf/any.proto": ("proto3", "google.protobuf",
                                  "message Any { string type_url = 1; bytes value = 2; }"),
    "google/protobuf/api.proto": ("proto3", "google.protobuf", f"""
        message Api {{ string name = 1; repeated {_P}Method methods = 2;
          repeated {_P}Option options = 3; string version = 4;
          {_P}SourceContext source_context = 5; repeated {_P}Mixin mixins = 6;
          {_P}Syntax syntax = 7; }}
        message Method {{ string name = 1; string request_type_url = 2;
          bool request_streaming = 3; string response_type_url = 4;
          bool response_streaming = 5; repeated {_P}Option options = 6;
          {_P}Syntax syntax = 7; }}
        message Mixin {{ string name = 1; string root = 2; }}"""),
    "google/protobuf/descriptor.proto": ("proto2", "google.protobuf", "".join(
        f"message {name} {{}}\n" for name in _DESCRIPTOR_MESSAGES) + _enum(
        "Edition", "EDITION_UNKNOWN")),
    "google/protobuf/duration.proto": ("proto3", "google.protobuf",
                                       "message Duration { int64 seconds = 1; int32 nanos = 2; }"),
    "google/protobuf/empty.proto": ("proto3", "google.protobuf", "message Empty {}"),
    "google/protobuf/field_mask.proto": ("proto3", "google.protobuf",
                                         "message FieldMask { repeated string paths = 1; }"),
    "google/protobuf/source_context.proto": ("proto3", "google.protobuf",
                                             "message SourceContext { string file_name = 1; }"),
    "google/protobuf/struct.proto": ("proto3", "google.protobuf", f"""
        message Struct {{ map<string, {_P}Value> fields = 1; }}
        message Value {{ oneof kind {{ {_P}NullValue null_value = 1; double number_value = 2;
          string string_value = 3; bool bool_value = 4; {_P}Struct struct_value = 5;
          {_P}ListValue list_value = 6; }} }}
        message ListValue {{ repeated {_P}Value values = 1; }}
        enum NullValue {{ NULL_VALUE = 0; }}"""),
    "google/protobuf/timestamp.proto": ("proto3", "google.protobuf",
                                        "message Timestamp { int64 seconds = 1; "
                                        "int32 nanos = 2; }"),
    "google/protobuf/type.proto": ("proto3", "google.protobuf", f"""
        message Type {{ string name = 1; repeated {_P}Field fields = 2;
          repeated string oneofs = 3; repeated {_P}Option options = 4;
          {_P}SourceContext source_context = 5; {_P}Syntax syntax = 6; string edition = 7; }}
        message Field {{ {_P}Field.Kind kind = 1; {_P}Field.Cardinality cardinality = 2;
          int32 number = 3; string name = 4; string type_url = 6; int32 oneof_index = 7;
          bool packed = 8; repeated {_P}Option options = 9; string json_name = 10;
          string default_value = 11;
          {_enum("Kind", "TYPE_UNKNOWN")}
          {_enum("Cardinality", "CARDINALITY_UNKNOWN")} }}
        message Enum {{ string name = 1; repeated {_P}EnumValue enumvalue = 2;
          repeated {_P}Option options = 3; {_P}SourceContext source_context = 4;
          {_P}Syntax syntax = 5; string edition = 6; }}
        message EnumValue {{ string name = 1; int32 number = 2;
          repeated {_P}Option options = 3; }}
        message Option {{ string name = 1; {_P}Any value = 2; }}
        {_enum("Syntax", "SYNTAX_PROTO2", "SYNTAX_PROTO3", "SYNTAX_EDITIONS")}"""),
    "google/protobuf/wrappers.proto": ("proto3", "google.protobuf", _wrappers()),
    "google/type/calendar_period.proto": ("proto3", "google.type", _enum(
        "CalendarPeriod", "CALENDAR_PERIOD_UNSPECIFIED", "DAY", "WEEK", "FORTNIGHT", "MONTH",
        "QUARTER", "HALF", "YEAR")),
    "google/type/color.proto": ("proto3", "google.type", f"""
        message Color {{ float red = 1; float green = 2; float blue = 3;
          {_P}FloatValue alpha = 4; }}"""),
    "google/type/date.proto": ("proto3", "google.type",
                               "message Date { int32 year = 1; int32 month = 2; int32 day = 3; }"),
    "google/type/datetime.proto": ("proto3", "google.type", f"""
        message DateTime {{ int32 year = 1; int32 month = 2; int32 day = 3; int32 hours = 4;
          int32 minutes = 5; int32 seconds = 6; int32 nanos = 7;
          oneof time_offset {{ {_P}Duration utc_offset = 8;
            .google.type.TimeZone time_zone = 9; }} }}
        message TimeZone {{ string id = 1; string version = 2; }}"""),
    "google/type/dayofweek.proto": ("proto3", "google.type", _enum(
        "DayOfWeek", "DAY_OF_WEEK_UNSPECIFIED", "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY",
        "FRIDAY", "SATURDAY", "SUNDAY")),
    "google/type/decimal.proto": ("proto3", "google.type",
                                  "message Decimal { string value = 1; }"),
    "google/type/expr.proto": ("proto3", "google.type", """
        message Expr { string expression = 1; string title = 2; string description = 3;
          string location = 4; }"""),
    "google/type/fraction.proto": ("proto3", "google.type",
                                   "message Fraction { int64 numerator = 1; "
                                   "int64 denominator = 2; }"),
    "google/type/interval.proto": ("proto3", "google.type", f"""
        message Interval {{ {_P}Timestamp start_time = 1; {_P}Timestamp end_time = 2; }}"""),
    "google/type/latlng.proto": ("proto3", "google.type",
                                 "message LatLng { double latitude = 1; double longitude = 2; }"),
    "google/type/money.proto": ("proto3", "google.type", """
        message Money { string currency_code = 1; int64 units = 2; int32 nanos = 3; }"""),
    "google/type/month.proto": ("proto3", "google.type", _enum(
        "Month", "MONTH_UNSPECIFIED", "JANUARY", "FEBRUARY", "MARCH", "APRIL", "MAY", "JUNE",
        "JULY", "AUGUST", "SEPTEMBER", "OCTOBER", "NOVEMBER", "DECEMBER")),
    "google/type/phone_number.proto": ("proto3", "google.type", """
        message PhoneNumber {
          oneof kind { string e164_number = 1;
            .google.type.PhoneNumber.ShortCode short_code = 2; }
          string extension = 3;
          message ShortCode { string region_code = 1; string number = 2; } }"""),
    "google/type/postal_address.proto": ("proto3", "google.type", """
        message PostalAddress { int32 revision = 1; string region_code = 2;
          string language_code = 3; string postal_code = 4; string sorting_code = 5;
          string administrative_area = 6; string locality = 7; string sublocality = 8;
          repeated string address_lines = 9; repeated string recipients = 10;
          string organization = 11; }"""),
    "google/type/quaternion.proto": ("proto3", "google.type", """
        message Quaternion { double x = 1; double y = 2; double z = 3; double w = 4; }"""),
    "google/type/timeofday.proto": ("proto3", "google.type", """
        message TimeOfDay { int32 hours = 1; int32 minutes = 2; int32 seconds = 3;
          int32 nanos = 4; }"""),
    "confluent/meta.proto": ("proto3", "confluent", "".join([
        "message Meta { string doc = 1; map<string, string> params = 2; "
        "repeated string tags = 3; repeated .confluent.Rule rules = 4; }\n",
        "message Rule { string name = 1; string doc = 2; string expr = 3; string sql = 4; }\n",
    ] + [f"extend {_P}{options}Options {{ .confluent.Meta {meta}_meta = 1088; }}\n"
         for options, meta in (("File", "file"), ("Message", "message"), ("Field", "field"),
                               ("Enum", "enum"), ("EnumValue", "enum_value"))])),
    "confluent/type/decimal.proto": ("proto3", "confluent.type", """
        message Decimal { bytes value = 1; uint32 precision = 2; int32 scale = 3; }"""),
    "confluent/type/variant.proto": ("proto3", "confluent.type",
                                     "message Variant { bytes metadata = 1; bytes value = 2; }"),
}

#: the import paths that need no reference
PATHS = frozenset(_FILES)


@lru_cache(maxsize=None)
def builtin_files() -> tuple[tuple[str, ProtoFile], ...]:
    from .text import parse_text
    files = []
    for path in sorted(_FILES):
        syntax, package, declarations = _FILES[path]
        text = f'syntax = "{syntax}";\npackage {package};\n{declarations}\n'
        files.append((path, parse_text(text)))
    return tuple(files)
