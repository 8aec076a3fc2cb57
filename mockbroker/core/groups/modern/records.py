"""The form every new-style group's records in ``__consumer_offsets`` take: the record type
(an int16) and the key struct, and a value struct after its version (0).  Each type names its
own record types and their formats (``ConsumerGroupMetadata``, ``ShareGroupMetadata``, ...)."""

from __future__ import annotations

import struct

from wire import embedded_codec

_SHORT = struct.Struct(">h")


def key(kind: int, name: str, **fields) -> bytes:
    """The key of a record of type ``kind`` whose format is ``name`` (``ShareGroupMetadata``)."""
    codec = embedded_codec(name + "Key", 0)
    return _SHORT.pack(kind) + bytes(codec.encode(codec.cls(**fields)))


def value(name: str, **fields) -> bytes:
    """The value of a record whose format is ``name``, at version 0."""
    codec = embedded_codec(name + "Value", 0)
    return _SHORT.pack(0) + bytes(codec.encode(codec.cls(**fields)))
