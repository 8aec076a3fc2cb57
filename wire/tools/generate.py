"""Write :mod:`wire.definitions` from Apache Kafka's message specs.

Kafka publishes its message specs as JSON resources inside its jars (``common/message/*.json``
in ``kafka-clients`` and the group, transaction and share coordinators' jars).  This
tool reads them from those jars and writes the facts a codec needs (names, types, version
ranges, nullability, tags, defaults) in our own compact form, one module per API, dropping
everything else, and an index of them by API key.  It is run by hand when we move to a newer
Kafka; ``tests/wire/test_conformance.py`` holds the result against the jars on every run.

    python -m wire.tools.generate --jar .cache/jars/kafka-clients-4.4.0.jar \
        --jar .cache/jars/kafka-group-coordinator-4.4.0.jar \
        --jar .cache/jars/kafka-transaction-coordinator-4.4.0.jar \
        --jar .cache/jars/kafka-share-coordinator-4.4.0.jar --kafka-version 4.4.0

Those four jars hold every spec we generate from: the requests and responses of every API a
broker listener serves, and the embedded formats in EMBEDDED (the share coordinator's jar holds
its own log records, ``ShareSnapshot`` and ``ShareUpdate`` in ``__share_group_state``).
"""

from __future__ import annotations

import argparse
import json
import re
import zipfile
from pathlib import Path

from wire.schema import snake_case

#: Formats that are not requests or responses but that a broker reads or writes.
EMBEDDED = (
    "RequestHeader", "ResponseHeader",
    "ConsumerProtocolSubscription", "ConsumerProtocolAssignment",
    "LegacyOffsetCommitKey", "LegacyOffsetCommitValue",
    "OffsetCommitKey", "OffsetCommitValue",
    "GroupMetadataKey", "GroupMetadataValue",
    "TransactionLogKey", "TransactionLogValue",
    "ConsumerGroupMetadataKey", "ConsumerGroupMetadataValue",
    "ConsumerGroupMemberMetadataKey", "ConsumerGroupMemberMetadataValue",
    "ConsumerGroupTargetAssignmentMetadataKey", "ConsumerGroupTargetAssignmentMetadataValue",
    "ConsumerGroupTargetAssignmentMemberKey", "ConsumerGroupTargetAssignmentMemberValue",
    "ConsumerGroupCurrentMemberAssignmentKey", "ConsumerGroupCurrentMemberAssignmentValue",
    "ConsumerGroupRegularExpressionKey", "ConsumerGroupRegularExpressionValue",
    "ShareGroupMetadataKey", "ShareGroupMetadataValue",
    "ShareGroupMemberMetadataKey", "ShareGroupMemberMetadataValue",
    "ShareGroupTargetAssignmentMetadataKey", "ShareGroupTargetAssignmentMetadataValue",
    "ShareGroupTargetAssignmentMemberKey", "ShareGroupTargetAssignmentMemberValue",
    "ShareGroupCurrentMemberAssignmentKey", "ShareGroupCurrentMemberAssignmentValue",
    "ShareGroupStatePartitionMetadataKey", "ShareGroupStatePartitionMetadataValue",
    "ShareSnapshotKey", "ShareSnapshotValue", "ShareUpdateKey", "ShareUpdateValue",
    "StreamsGroupMetadataKey", "StreamsGroupMetadataValue",
    "StreamsGroupMemberMetadataKey", "StreamsGroupMemberMetadataValue",
    "StreamsGroupTargetAssignmentMetadataKey", "StreamsGroupTargetAssignmentMetadataValue",
    "StreamsGroupTargetAssignmentMemberKey", "StreamsGroupTargetAssignmentMemberValue",
    "StreamsGroupCurrentMemberAssignmentKey", "StreamsGroupCurrentMemberAssignmentValue",
    "StreamsGroupTopologyKey", "StreamsGroupTopologyValue",
)

_LINE_COMMENT = re.compile(r"^\s*//.*$", re.M)


def load_specs(jars: list[Path]) -> dict[str, dict]:
    """Every message spec in the jars, by spec name (``ProduceRequest``)."""
    specs: dict[str, dict] = {}
    for jar in jars:
        with zipfile.ZipFile(jar) as zf:
            for info in zf.infolist():
                if info.filename.startswith("common/message/") and info.filename.endswith(".json"):
                    text = _LINE_COMMENT.sub("", zf.read(info).decode("utf-8"))
                    spec = json.loads(text)
                    specs[spec["name"]] = spec
    return specs


def client_facing_apis(specs: dict[str, dict]) -> list[tuple[dict, dict]]:
    """(request, response) spec pairs of every API a broker listener serves."""
    pairs = []
    for name, spec in specs.items():
        if spec.get("type") != "request" or "broker" not in spec.get("listeners", ()):
            continue
        if spec.get("validVersions") == "none":
            continue
        response = specs[name[: -len("Request")] + "Response"]
        pairs.append((spec, response))
    pairs.sort(key=lambda pair: pair[0]["apiKey"])
    return pairs


def _default_literal(field: dict) -> str | None:
    """The default as Python source, or None when it is the type's implicit default."""
    if "default" not in field:
        return None
    raw = field["default"]
    ftype = field["type"]
    if raw is None or (isinstance(raw, str) and raw.lower() in ("null", "none")):
        return "None"
    if ftype.startswith("[]") or ftype[0].isupper():
        return None  # arrays and structs only ever default to empty or null
    if ftype in ("int8", "int16", "uint16", "int32", "uint32", "int64"):
        value = int(str(raw), 0)
        return None if value == 0 else repr(value)
    if ftype == "float64":
        value = float(raw)
        return None if value == 0.0 else repr(value)
    if ftype == "bool":
        value = str(raw).lower() == "true"
        return "True" if value else None
    if ftype == "string":
        return None if raw == "" else repr(raw)
    raise ValueError(f"unexpected default {raw!r} for {field['name']} ({ftype})")


class _Writer:
    """Writes fields; ``common`` maps a struct name of the spec being written to the constant
    that holds its fields (``used_common`` collects the constants it refers to)."""

    def __init__(self, common: dict[str, str]):
        self.common = common
        self.used_common: list[str] = []

    def fields(self, fields: list[dict], indent: str) -> list[str]:
        lines = []
        for field in fields:
            lines.extend(self.field(field, indent))
        return lines

    def field(self, f: dict, indent: str) -> list[str]:
        versions = f.get("versions") or f.get("taggedVersions")
        args = [repr(snake_case(f["name"])), repr(f["type"]), repr(versions)]
        if f.get("nullableVersions"):
            args.append(f"nullable={f['nullableVersions']!r}")
        default = _default_literal(f)
        if default is not None:
            args.append(f"default={default}")
        if "tag" in f:
            args.append(f"tag={int(f['tag'])}")
            args.append(f"tagged={f['taggedVersions']!r}")
        if f.get("ignorable"):
            args.append("ignorable=True")
        if "flexibleVersions" in f:
            args.append(f"flexible={f['flexibleVersions']!r}")
        element = f["type"][2:] if f["type"].startswith("[]") else f["type"]
        if "fields" in f:
            head = f"{indent}F({', '.join(args)}, fields=["
            return [head, *self.fields(f["fields"], indent + "    "), f"{indent}]),"]
        if element in self.common:
            const = self.common[element]
            if const not in self.used_common:
                self.used_common.append(const)
            return [f"{indent}F({', '.join(args)}, fields={const}),"]
        return [f"{indent}F({', '.join(args)}),"]

    def message(self, var: str, spec: dict, kind: str) -> list[str]:
        api_key = spec.get("apiKey")
        head = (f"{var} = M({spec['name']!r}, {kind!r}, {spec['validVersions']!r}, "
                f"{spec.get('flexibleVersions', 'none')!r}, [")
        tail = f"], api_key={api_key})" if api_key is not None else "])"
        return [head, *self.fields(spec.get("fields", []), "    "), tail]


def _const(struct_name: str) -> str:
    return snake_case(struct_name).upper()


def render(specs: list[tuple[str, dict]], api: tuple[int, str, dict] | None,
           title: str, kafka_version: str) -> str:
    """One definition module: a docstring, common structs, then each message.

    Specs written into one module may each have a common struct of the same name
    (``TopicPartitions``); they share one constant when their fields agree, and a later one that
    differs gets a constant named after its spec."""
    structs: dict[str, dict] = {}  # constant -> the struct it holds
    bodies = []
    for var, spec in specs:
        names: dict[str, str] = {}
        for struct in spec.get("commonStructs", ()):
            const = _const(struct["name"])
            if structs.get(const, struct)["fields"] != struct["fields"]:
                const = f"{_const(spec['name'])}_{const}"
            structs[const] = struct
            names[struct["name"]] = const
        writer = _Writer(names)
        bodies.append((writer, writer.message(var, spec, spec["type"])))
    # Common structs may refer to each other: emit them in dependency order.
    ordered: list[str] = []
    writers: dict[str, _Writer] = {}

    def visit(const: str, names: dict[str, str]) -> None:
        if const in ordered:
            return
        for inner in _struct_refs(structs[const]["fields"]):
            if inner in names:
                visit(names[inner], names)
        writers[const] = _Writer(names)
        ordered.append(const)

    for writer, _ in bodies:
        for const in list(writer.used_common):
            visit(const, writer.common)
    lines = [f'"""{title}: generated by wire.tools.generate from Apache Kafka {kafka_version}\'s'
             f' message specs."""', "", "from wire.schema import " +
             ("Api, F, M" if api else "F, M"), ""]
    for const in ordered:
        lines.append(f"{const} = [")
        lines.extend(writers[const].fields(structs[const]["fields"], "    "))
        lines.append("]")
        lines.append("")
    for _, body in bodies:
        lines.extend(body)
        lines.append("")
    if api:
        key, name, request = api
        extra = ""
        listeners = tuple(request.get("listeners", ()))
        if listeners != ("broker",):
            extra += f", listeners={listeners!r}"
        if request.get("latestVersionUnstable"):
            extra += ", latest_version_unstable=True"
        lines.append(f"API = Api({key}, {name!r}, REQUEST, RESPONSE{extra})")
        lines.append("")
    return "\n".join(lines)


def _struct_refs(fields: list[dict]):
    for f in fields:
        element = f["type"][2:] if f["type"].startswith("[]") else f["type"]
        if element[:1].isupper():
            yield element
        yield from _struct_refs(f.get("fields", ()))


def generate(jars: list[Path], out_dir: Path, kafka_version: str) -> list[str]:
    specs = load_specs(jars)
    out_dir.mkdir(parents=True, exist_ok=True)
    modules = []
    entries = []  # the index's lines: key, Kafka's name, module
    for request, response in client_facing_apis(specs):
        name = request["name"][: -len("Request")]
        module = snake_case(name)
        text = render([("REQUEST", request), ("RESPONSE", response)],
                      (request["apiKey"], name, request), f"{name} (API key {request['apiKey']})",
                      kafka_version)
        (out_dir / f"{module}.py").write_text(text)
        modules.append(module)
        entries.append(f"    {request['apiKey']}: ({name!r}, {module!r}),")
    embedded = [(snake_case(n).upper(), specs[n]) for n in EMBEDDED]
    (out_dir / "embedded.py").write_text(
        render(embedded, None, "Headers and the formats a broker embeds in messages and logs",
               kafka_version))
    index = ['"""Every message definition, by API key; generated by wire.tools.generate.', "",
             "An API's module is imported the first time its key is looked up in :data:`APIS`.",
             '"""', "", "from wire.schema import ApiIndex", "",
             f"KAFKA_VERSION = {kafka_version!r}", "",
             "#: API key → (Kafka's name, the module that defines it)",
             "INDEX = {", *entries, "}", "", "APIS = ApiIndex(__name__, INDEX)", ""]
    (out_dir / "__init__.py").write_text("\n".join(index))
    return modules


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jar", action="append", type=Path, required=True)
    parser.add_argument("--kafka-version", required=True)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent.parent / "definitions")
    args = parser.parse_args(argv)
    modules = generate(args.jar, args.out, args.kafka_version)
    print(f"wrote {len(modules)} APIs and the embedded formats to {args.out}")


if __name__ == "__main__":
    main()
