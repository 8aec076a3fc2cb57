"""Compatibility levels: which earlier versions a new schema is checked against, and which way
round, with the messages Confluent's registry answers a refusal with.

A level checks the new schema against the latest version (BACKWARD, FORWARD, FULL) or against
every version, newest first, stopping at the first that fails (the ``_TRANSITIVE`` forms).
BACKWARD asks whether the new schema reads what the old one wrote; FORWARD whether the old one
reads what the new one writes; FULL both, the forward half first.  A format answers one way
only (:meth:`~mockbroker.core.schemas.formats.ParsedSchema.is_backward_compatible`, reader
then writer); its messages get "new" and "old" for their two ``%s`` in the order the check ran,
then the old version's number and text, and the registry ends the list with the level it
applied.
"""

from __future__ import annotations

from typing import Sequence

from mockbroker.core.schemas.formats import STRICT, ParsedSchema

LEVELS = ("NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL",
          "FULL_TRANSITIVE")
DIFFERENT_TYPE = "Incompatible because of different schema type"
#: an old schema longer than this is cut in a message (Confluent's logging limit)
_MAX_SCHEMA_IN_MESSAGE = 10 * 1024


class Earlier:
    """An earlier version of the subject: its number and its parsed schema."""

    __slots__ = ("version", "schema")

    def __init__(self, version: int | None, schema: ParsedSchema):
        self.version = version
        self.schema = schema


def _fill(templates: list[str], reader: str, writer: str) -> list[str]:
    return [t.replace("%s", reader, 1).replace("%s", writer, 1) for t in templates]


def _described(messages: list[str], old: Earlier) -> list[str]:
    if old.version is not None:
        messages.append(f"{{oldSchemaVersion: {old.version}}}")
    text = old.schema.canonical()
    if len(text) <= _MAX_SCHEMA_IN_MESSAGE:
        messages.append(f"{{oldSchema: '{text}'}}")
    else:
        messages.append(f"{{oldSchema: <truncated> '{text[:_MAX_SCHEMA_IN_MESSAGE]}...'}}")
    return messages


def _pair(level: str, new: ParsedSchema, old: Earlier, policy: str) -> list[str]:
    if new.schema_type != old.schema.schema_type:
        return [DIFFERENT_TYPE]
    out: list[str] = []
    if level.startswith(("FORWARD", "FULL")):
        messages = _fill(old.schema.is_backward_compatible(new, policy), "old", "new")
        if messages:
            out += messages if level.startswith("FULL") else _described(messages, old)
    if level.startswith(("BACKWARD", "FULL")):
        messages = _fill(new.is_backward_compatible(old.schema, policy), "new", "old")
        if messages:
            out += _described(messages, old)
    return out


def check(level: str, new: ParsedSchema, earlier: Sequence[Earlier],
          policy: str = STRICT) -> list[str]:
    """Why ``new`` may not follow ``earlier`` (oldest first) at ``level``: empty when it may."""
    if level == "NONE" or not earlier:
        return []
    if level.endswith("_TRANSITIVE"):
        for old in reversed(earlier):
            found = _pair(level, new, old, policy)
            if found:
                return found
        return []
    return _pair(level, new, earlier[-1], policy)
