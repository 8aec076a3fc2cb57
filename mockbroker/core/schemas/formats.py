"""What the registry needs of a schema format: parse a schema's text (with the schemas its
references name), write it back in the registry's canonical form and, when asked, normalized,
and say what keeps it from reading data written with another schema of its format.

Each format is a module (:mod:`.avro`, :mod:`.json_schema`, :mod:`.protobuf`) whose ``parse``
returns a :class:`ParsedSchema`.  Compatibility is asked one way only, as Confluent's
``ParsedSchema.isBackwardCompatible`` is: can ``reader`` read what ``writer`` wrote.  Its
answers are Confluent's message templates, with a ``%s`` for the reader's side and then one for
the writer's, which the registry fills with "new" and "old" the way round its compatibility
level asks (:mod:`.compatibility`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, Mapping

#: the schema types the registry serves, in the order ``GET /schemas/types`` lists them
SCHEMA_TYPES = ("JSON", "PROTOBUF", "AVRO")

#: Confluent's compatibility policies (JSON Schema's rules differ between them)
STRICT, LENIENT = "STRICT", "LENIENT"


class InvalidSchema(ValueError):
    """A schema its format's parser refuses: ``str()`` is the parser's own message, which the
    registry's 42201 answer carries after ``details:``."""

    #: "parse": the text could not be read as a schema; "validate": it was read, then found
    #: invalid (Confluent words its 42201 answer differently for the two)
    stage = "parse"


class ParsedSchema(ABC):
    """One parsed schema of a format."""

    #: AVRO, JSON or PROTOBUF
    schema_type: ClassVar[str]

    @abstractmethod
    def canonical(self) -> str:
        """The text the registry stores and answers with (Confluent's ``canonicalString``):
        compact, in the format's own order, whatever spacing it was sent with."""

    @abstractmethod
    def normalized(self) -> "ParsedSchema":
        """The schema as ``normalize=true`` stores it, so that schemas that mean the same get
        the same text (and id)."""

    def formatted(self, fmt: str | None) -> str:
        """The text a ``format`` query parameter asks for (None or unknown: canonical)."""
        return self.canonical()

    @abstractmethod
    def is_backward_compatible(self, writer: "ParsedSchema", policy: str = STRICT) -> list[str]:
        """Why this schema, as a reader, cannot read data written with ``writer`` (a schema of
        the same format): Confluent's messages, each with ``%s`` for the reader then the
        writer; empty when it can."""


def parse(schema_type: str, text: str, references: Mapping[str, str] | None = None
          ) -> ParsedSchema:
    """Parse ``text`` as a schema of ``schema_type`` (AVRO, JSON or PROTOBUF).  ``references``
    maps each reference's name to the schema text it names (already registered); a schema may
    use the types they define.  Raises :class:`InvalidSchema`."""
    refs = dict(references or {})
    if schema_type == "AVRO":
        from mockbroker.core.schemas.avro import parse as parse_format
    elif schema_type == "JSON":
        from mockbroker.core.schemas.json_schema import parse as parse_format
    elif schema_type == "PROTOBUF":
        from mockbroker.core.schemas.protobuf import parse as parse_format
    else:
        raise ValueError(f"unknown schema type {schema_type!r}")
    try:
        return parse_format(text, refs)
    except RecursionError:  # nested deeper than a parser goes: refused as Jackson refuses it
        raise InvalidSchema(TOO_DEEP) from None


#: what Jackson, under Confluent's parsers, says of a document nested too deeply
TOO_DEEP = ("com.fasterxml.jackson.core.exc.StreamConstraintsException: Document nesting depth "
            "(1001) exceeds the maximum allowed (1000, from "
            "`StreamReadConstraints.getMaxNestingDepth()`)")
