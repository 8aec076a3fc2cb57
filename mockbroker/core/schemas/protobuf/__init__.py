"""The PROTOBUF schema format of the registry.

A schema arrives either as ``.proto`` text or as the base64 of a serialized
``google.protobuf.FileDescriptorProto`` (what confluent-kafka's ``ProtobufSerializer``
registers); Confluent accepts both, trying the text first, and so does :func:`parse`.  Each
reference maps an import path (``other.proto``) to that file's schema in either form; the
well-known ``google/protobuf/*``, ``google/type/*`` and ``confluent/*`` files need none.

What the registry stores is :meth:`ProtobufSchema.canonical`: the file written back as
``.proto`` text in Confluent's layout, whichever form came in.  ``format=serialized`` gives the
descriptor back (:meth:`ProtobufSchema.formatted`), ``normalize=true`` the normalized text.
Compatibility is Confluent's protobuf diff (:mod:`.diff`).

The package is pure Python and needs no ``protobuf`` installation: the ``.proto`` grammar
(:mod:`.text`), the printer (:mod:`.printer`) and the descriptor wire format
(:mod:`.descriptor`) are implemented here.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Mapping, Optional

from mockbroker.core.schemas.formats import STRICT, InvalidSchema, ParsedSchema

from .builtin import PATHS as BUILTIN_PATHS, builtin_files
from .descriptor import DescriptorError, from_descriptor, to_descriptor
from .diff import incompatibilities
from .model import ProtoFile
from .printer import Printer, UnresolvedType, to_normalized_text, to_text
from .scope import Scope
from .text import ProtoSyntaxError, parse_text

__all__ = ["BUILTIN_PATHS", "ProtobufSchema", "parse"]

_BASE64 = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")


def _read(text: str) -> ProtoFile:
    """One file in either form, text first (Confluent's order)."""
    try:
        return parse_text(text)
    except ProtoSyntaxError as text_error:
        failure = text_error
    try:
        if not _BASE64.match(text):
            raise DescriptorError("not base64")
        padded = text + "=" * (-len(text) % 4)
        return from_descriptor(base64.b64decode(padded, validate=True))
    except (DescriptorError, binascii.Error, ValueError):
        pass
    raise InvalidSchema(f"Could not parse Protobuf - {failure}")


class ProtobufSchema(ParsedSchema):
    schema_type = "PROTOBUF"

    def __init__(self, file: ProtoFile, dependencies: list[tuple[str, ProtoFile]],
                 canonical_text: Optional[str] = None):
        self.file = file
        #: (import path, file) for each reference, then the built-in files not overridden
        self.dependencies = dependencies
        self.scope = Scope(file, dependencies)
        self._canonical = canonical_text

    def canonical(self) -> str:
        if self._canonical is None:
            self._canonical = to_text(self.file)
        return self._canonical

    def normalized(self) -> "ProtobufSchema":
        text = self._normalized_text()
        return ProtobufSchema(parse_text(text), self.dependencies, text)

    def _normalized_text(self) -> str:
        return to_normalized_text(self.file, self.scope)

    def formatted(self, fmt: Optional[str]) -> str:
        kind = (fmt or "").strip().lower()
        if kind == "serialized":
            available = {path for path, _ in self.dependencies}
            data = to_descriptor(self.file, self.scope, available)
            return base64.b64encode(data).decode("ascii")
        if kind == "ignore_extensions":
            return Printer(ignore_extensions=True).file(self.file)
        return self.canonical()

    def descriptor(self) -> bytes:
        """The serialized ``FileDescriptorProto`` (what ``format=serialized`` encodes)."""
        return base64.b64decode(self.formatted("serialized"))

    def is_backward_compatible(self, writer: ParsedSchema, policy: str = STRICT) -> list[str]:
        if not isinstance(writer, ProtobufSchema):
            return ["Incompatible because of different schema type"]
        return incompatibilities(writer.file, self.file, writer.scope, self.scope)


def parse(text: str, references: Mapping[str, str] | None = None) -> ProtobufSchema:
    """Parse a PROTOBUF schema (``.proto`` text or base64 ``FileDescriptorProto``) whose
    imports are given by ``references`` (import path -> schema text).  Raises
    :class:`InvalidSchema` with Confluent's parser message (``Could not parse Protobuf -
    Syntax error in :3:9: ...``) or, when a type cannot be resolved, ``Could not resolve type:
    X`` (what Confluent's validation reports)."""
    if not isinstance(text, str):
        raise InvalidSchema("Could not parse Protobuf - schema is not a string")
    file = _read(text)
    dependencies = [(name, _read(ref)) for name, ref in (references or {}).items()]
    given = {name for name, _ in dependencies}
    dependencies += [(path, f) for path, f in builtin_files() if path not in given]
    schema = ProtobufSchema(file, dependencies)
    try:
        schema.canonical()
        schema._normalized_text()                # resolves every type, as Confluent validates
    except (UnresolvedType, ValueError) as e:
        error = InvalidSchema(str(e))
        error.stage = "validate"  # Confluent finds it validating a parsed schema
        raise error from None
    return schema

