"""Reading the protobuf wire format, as two parts of the broker need to: client telemetry's OTLP
metrics (KIP-714) and the Schema Registry's serialized ``FileDescriptorProto`` schemas.

A message is a run of fields, each a key (field number and wire type, a varint) then its value:
a varint, 64 or 32 fixed bits, or a length and that many bytes.  :func:`fields` walks one
message; what the fields mean is the caller's.  Malformed input raises :class:`WireError` (or
the caller's subclass of it), never an ``IndexError``.
"""

from __future__ import annotations

from typing import Any, Iterator

VARINT, I64, LEN, I32 = 0, 1, 2, 5


class WireError(ValueError):
    """Bytes that are not a protobuf message."""


def varint(data, pos: int, error: type[WireError] = WireError) -> tuple[int, int]:
    """The varint at ``pos``, and the position after it."""
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise error("truncated or overlong varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def fields(data, error: type[WireError] = WireError) -> Iterator[tuple[int, int, Any]]:
    """(field number, wire type, value) of each field of a message: an int for a varint or a
    fixed-size field (its raw bits, little-endian), a slice of ``data`` for a length-delimited
    one."""
    pos, end = 0, len(data)
    while pos < end:
        key, pos = varint(data, pos, error)
        number, wire_type = key >> 3, key & 7
        if number == 0:
            raise error("field number 0")
        if wire_type == VARINT:
            value, pos = varint(data, pos, error)
        elif wire_type in (I64, I32):
            size = 8 if wire_type == I64 else 4
            if pos + size > end:
                raise error(f"truncated {size * 8}-bit field")
            value = int.from_bytes(data[pos:pos + size], "little")
            pos += size
        elif wire_type == LEN:
            size, pos = varint(data, pos, error)
            if pos + size > end:
                raise error("truncated length-delimited field")
            value = data[pos:pos + size]
            pos += size
        else:
            raise error(f"wire type {wire_type} of field {number}")
        yield number, wire_type, value
