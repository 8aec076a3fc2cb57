"""The form every new-style group's records in ``__consumer_offsets`` take: the record type
(an int16) and the key struct, and a value struct after its version (0).  Each type names its
own record types and their formats (``ConsumerGroupMetadata``, ``ShareGroupMetadata``, ...)."""

from __future__ import annotations

import struct

from wire import decode_embedded, embedded_codec

_SHORT = struct.Struct(">h")


def key(kind: int, name: str, **fields) -> bytes:
    """The key of a record of type ``kind`` whose format is ``name`` (``ShareGroupMetadata``)."""
    codec = embedded_codec(name + "Key", 0)
    return _SHORT.pack(kind) + bytes(codec.encode(codec.cls(**fields)))


def value(name: str, **fields) -> bytes:
    """The value of a record whose format is ``name``, at version 0."""
    codec = embedded_codec(name + "Value", 0)
    return _SHORT.pack(0) + bytes(codec.encode(codec.cls(**fields)))


class Formats:
    """One group type's record formats by record type (``{17: "StreamsGroupMetadata"}``): its
    keys and values written, its value structs, and a record read back."""

    def __init__(self, names: dict[int, str]):
        self.names = names

    def key(self, kind: int, **fields) -> bytes:
        return key(kind, self.names[kind], **fields)

    def value(self, kind: int, **fields) -> bytes:
        return value(self.names[kind], **fields)

    def cls(self, kind: int):
        """The value struct of record type ``kind`` (its nested structs are attributes)."""
        return embedded_codec(self.names[kind] + "Value", 0).cls

    def read(self, kind: int, key_bytes: bytes, value_bytes: bytes | None) -> tuple:
        """(key, value) of a record of type ``kind`` (value None: a tombstone)."""
        k = embedded_codec(self.names[kind] + "Key", 0).decode(key_bytes)[0]
        v = None if value_bytes is None else \
            decode_embedded(self.names[kind] + "Value", value_bytes)[1]
        return k, v
