"""Kafka's primitive wire types as the message code generator sees them.

Each type knows how to emit straight-line Python for :mod:`wire.codegen`: decode code reads a
``bytes`` buffer by position, encode code appends to a bytearray.  Emitted decode code may use
the locals ``data`` (the buffer), ``pos`` (the read position) and ``end`` (``len(data)``);
emitted encode code appends to the bytearray ``out``.  Nothing here needs ``construct``: the
codec that serves requests is generated code alone.  The same types as standalone constructs
are in :mod:`wire.primitives`.
"""

from __future__ import annotations

import struct
import uuid
from functools import lru_cache
from typing import TYPE_CHECKING

from wire.exceptions import DecodeError, EncodeError, TruncatedError

if TYPE_CHECKING:  # pragma: no cover
    from wire.codegen import Gen

_UUID = uuid.UUID
ZERO_UUID = _UUID(int=0)


@lru_cache(maxsize=4096)
def uuid_of(raw: bytes) -> uuid.UUID:
    """The UUID of 16 bytes read off the wire.  The same few topic ids come in request after
    request, and a UUID is immutable: each is built once (building one costs a microsecond)."""
    return _UUID(bytes=raw)


# --- varints --------------------------------------------------------------------------------


def read_uvarint(data, pos: int, max_bytes: int = 5, end: int | None = None) -> tuple[int, int]:
    """Read an unsigned LEB128 varint of at most ``max_bytes`` bytes from ``data[pos:end]``;
    returns (value, new pos)."""
    if end is None:
        end = len(data)
    value = 0
    shift = 0
    for i in range(max_bytes):
        if pos + i >= end:
            raise TruncatedError(f"varint runs past the end of the buffer at offset {pos}")
        byte = data[pos + i]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos + i + 1
        shift += 7
    raise DecodeError(f"varint at offset {pos} is longer than {max_bytes} bytes")


def write_uvarint(value: int) -> bytes:
    """Unsigned LEB128 encoding of a non-negative int."""
    if value < 0:
        raise EncodeError(f"unsigned varint cannot hold {value}")
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_varint(data, pos: int, end: int | None = None) -> tuple[int, int]:
    """A zigzag-encoded signed 32-bit varint (bits past 32 wrap, as in Java)."""
    raw, pos = read_uvarint(data, pos, 5, end)
    raw &= 0xFFFFFFFF
    return (raw >> 1) ^ -(raw & 1), pos


def read_varlong(data, pos: int, end: int | None = None) -> tuple[int, int]:
    """A zigzag-encoded signed 64-bit varint (bits past 64 wrap, as in Java)."""
    raw, pos = read_uvarint(data, pos, 10, end)
    raw &= 0xFFFFFFFFFFFFFFFF
    return (raw >> 1) ^ -(raw & 1), pos


def write_varint(value: int) -> bytes:
    if not -(1 << 31) <= value < (1 << 31):
        raise EncodeError(f"varint cannot hold {value}")
    return write_uvarint(((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def write_varlong(value: int) -> bytes:
    if not -(1 << 63) <= value < (1 << 63):
        raise EncodeError(f"varlong cannot hold {value}")
    return write_uvarint(((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)


# --- the types ---------------------------------------------------------------------------------


class WireType:
    """Base class of the types the generator emits code for.

    ``fmt`` is the ``struct`` format of fixed-size types (which the generator batches into one
    ``unpack_from`` per run of adjacent fixed fields); variable-size types leave it None.
    Subclasses emit code with ``emit_decode(g, ind, target)`` (read one value into the local
    ``target``) and ``emit_encode(g, ind, expr)`` (append ``expr``).
    """

    fmt: str | None = None
    min_size: int = 0  # the fewest bytes one value can take (bounds array lengths)

    # For values read by a batched unpack that need converting (uuid) or checking.
    def post_decode(self, expr: str) -> str | None:
        return None

    def pre_encode(self, expr: str) -> str:
        return expr


class Fixed(WireType):
    """Big-endian fixed-size numbers and booleans: int8..int64, uint16, uint32, float64, bool."""

    def __init__(self, kafka_name: str, fmt: str):
        super().__init__()
        self.kafka_name = kafka_name
        self.fmt = fmt
        self.size = struct.calcsize(">" + fmt)
        self.min_size = self.size

    def emit_decode(self, g, ind, target):
        g.emit(ind, f"{target}, = {g.unpacker(self.fmt)}(data, pos)")
        g.emit(ind, f"pos += {self.size}")

    def emit_encode(self, g, ind, expr):
        g.emit(ind, f"out += {g.packer(self.fmt)}({expr})")

    def __repr__(self):
        return self.kafka_name


class Uuid(WireType):
    """A 16-byte UUID, as :class:`uuid.UUID`."""

    fmt = "16s"
    min_size = 16

    def post_decode(self, expr):
        return f"_uuid_of({expr})"

    def pre_encode(self, expr):
        return f"{expr}.bytes"

    def emit_decode(self, g, ind, target):
        g.emit(ind, "if pos + 16 > end: raise _Truncated('uuid runs past the end')")
        g.emit(ind, f"{target} = _uuid_of(data[pos:pos + 16])")
        g.emit(ind, "pos += 16")

    def emit_encode(self, g, ind, expr):
        g.emit(ind, f"out += {expr}.bytes")


class UVarInt(WireType):
    """Unsigned varint (32-bit range), used for compact lengths and tags."""

    min_size = 1

    def emit_decode(self, g, ind, target):
        emit_uvarint_decode(g, ind, target)

    def emit_encode(self, g, ind, expr):
        emit_uvarint_encode(g, ind, expr)


def emit_uvarint_decode(g: "Gen", ind: str, target: str) -> None:
    g.emit(ind, f"{target} = data[pos]")
    g.emit(ind, f"if {target} < 128: pos += 1")
    g.emit(ind, f"else: {target}, pos = _read_uvarint(data, pos)")


def emit_uvarint_encode(g: "Gen", ind: str, expr: str) -> None:
    # ``expr`` is evaluated twice; callers pass a simple name or a cheap expression.
    g.emit(ind, f"if {expr} < 128: out.append({expr})")
    g.emit(ind, f"else: out += _write_uvarint({expr})")


class Sized(WireType):
    """Shared parts of strings and byte strings: classic (int16/int32 length, -1 = null) or
    compact (unsigned varint length + 1, 0 = null)."""

    length_fmt = "h"
    what = "string"

    def __init__(self, compact: bool = False, nullable: bool = False):
        super().__init__()
        self.compact = compact
        self.nullable = nullable
        self.min_size = 1 if compact else struct.calcsize(">" + self.length_fmt)

    def emit_length_decode(self, g, ind, n):
        if self.compact:
            emit_uvarint_decode(g, ind, n)
            g.emit(ind, f"{n} -= 1")
        else:
            g.emit(ind, f"{n}, = {g.unpacker(self.length_fmt)}(data, pos)")
            g.emit(ind, f"pos += {struct.calcsize('>' + self.length_fmt)}")

    def emit_null_length_encode(self, g, ind):
        if self.compact:
            g.emit(ind, "out.append(0)")
        else:
            g.emit(ind, f"out += {g.const(struct.pack('>' + self.length_fmt, -1))}")

    def emit_length_encode(self, g, ind, n):
        if self.compact:
            g.emit(ind, f"if {n} < 127: out.append({n} + 1)")
            g.emit(ind, f"else: out += _write_uvarint({n} + 1)")
        else:
            g.emit(ind, f"out += {g.packer(self.length_fmt)}({n})")

    def emit_decode(self, g, ind, target):
        n = g.var("n")
        self.emit_length_decode(g, ind, n)
        g.emit(ind, f"if {n} < 0:")
        if self.nullable:
            g.emit(ind, f"    if {n} != -1: raise _DecodeError('invalid {self.what} length %d' % {n})")
            g.emit(ind, f"    {target} = None")
        else:
            g.emit(ind, f"    raise _DecodeError('non-nullable {self.what} has length %d' % {n})")
        g.emit(ind, "else:")
        e = g.var("e")
        g.emit(ind, f"    {e} = pos + {n}")
        g.emit(ind, f"    if {e} > end: raise _Truncated('{self.what} of %d bytes runs past the end' % {n})")
        g.emit(ind, f"    {target} = {self.emit_slice(e)}")
        g.emit(ind, f"    pos = {e}")

    def emit_slice(self, e: str) -> str:
        return f"data[pos:{e}]"

    def emit_encode(self, g, ind, expr):
        v = g.var("s")
        g.emit(ind, f"{v} = {expr}")
        g.emit(ind, f"if {v} is None:")
        if self.nullable:
            self.emit_null_length_encode(g, ind + "    ")
        else:
            g.emit(ind, f"    raise _EncodeError('non-nullable {self.what} is None')")
        g.emit(ind, "else:")
        self.emit_value_encode(g, ind + "    ", v)

    def emit_value_encode(self, g, ind, v):
        n = g.var("n")
        g.emit(ind, f"{n} = len({v})")
        self.emit_length_encode(g, ind, n)
        g.emit(ind, f"out += {v}")


class String(Sized):
    """UTF-8 text.  Invalid UTF-8 survives a round trip (as Java keeps what it was sent)."""

    what = "string"

    def emit_slice(self, e):
        return f"data[pos:{e}].decode('utf-8', 'surrogateescape')"

    def emit_value_encode(self, g, ind, v):
        b = g.var("b")
        g.emit(ind, f"{b} = {v}.encode('utf-8', 'surrogateescape')")
        super().emit_value_encode(g, ind, b)


class Bytes(Sized):
    """Opaque bytes."""

    length_fmt = "i"
    what = "bytes"


class Records(Bytes):
    """Record batches, which the codec never looks inside: bytes when decoded.  To encode, a list of whole batches also does; they
    go into the message back to back, so a Fetch answer is built without joining them first.
    Encoded into a :class:`Frame`, the list is only noted where it goes, and the frame copies
    it in when it is done."""

    def emit_value_encode(self, g, ind, v):
        n, piece = g.var("n"), g.var("p")
        g.emit(ind, f"if {v}.__class__ is list:")
        g.emit(ind, f"    {n} = sum(map(len, {v}))")
        self.emit_length_encode(g, ind + "    ", n)
        g.emit(ind, f"    if {n} and out.__class__ is _Frame:")  # (nothing to place: no note)
        g.emit(ind, f"        out.defer({v}, {n})")
        g.emit(ind, "    else:")
        g.emit(ind, f"        for {piece} in {v}: out += {piece}")
        g.emit(ind, "else:")
        super().emit_value_encode(g, ind + "    ", v)


class Frame(bytearray):
    """A frame being encoded whose record batches are copied in once it is complete.

    Appending a Fetch answer's batches one by one grows the frame a step at a time, and a step
    that cannot grow its block in place moves everything encoded so far.  Where deleted topics
    had left the heap's free memory in pieces, 12 MB answers cost the broker three times the
    CPU that way.  Here each list of batches is noted with its place instead (:meth:`defer`,
    called by the generated encoders), and :meth:`joined` makes the frame in one allocation
    of its final size, copying each byte once; or :meth:`pieces` hands out the frame as the
    buffers it is made of, for a writer that sends them one after another and copies none."""

    #: (where in this buffer, the batches that go there), once there are any
    _deferred: list[tuple[int, list]] | None = None
    _deferred_size = 0

    def defer(self, batches: list, size: int) -> None:
        if self._deferred is None:
            self._deferred = []
        self._deferred.append((len(self), batches))
        self._deferred_size += size

    def final_size(self) -> int:
        """The size of the whole frame: what is in this buffer and the batches noted."""
        return len(self) + self._deferred_size

    def pieces(self) -> list | None:
        """The whole frame as the buffers it is made of, in order: views of this buffer between
        the batches noted, and the batches themselves (shared, not copied); None when no
        batches were noted.  The views keep this buffer from being resized while they live."""
        if self._deferred is None:
            return None
        return self._pieces(memoryview(self))

    def joined(self) -> bytes | bytearray:
        """The whole frame: this buffer itself when no batches were noted."""
        if self._deferred is None:
            return self
        with memoryview(self) as view:
            return b"".join(self._pieces(view))

    def _pieces(self, view: memoryview) -> list:
        pieces: list = []
        start = 0
        for at, batches in self._deferred:
            if at > start:
                pieces.append(view[start:at])
            pieces.extend(batches)
            start = at
        if len(view) > start:
            pieces.append(view[start:])
        return pieces


PRIMITIVE_FIXED = {
    "bool": Fixed("bool", "?"),
    "int8": Fixed("int8", "b"),
    "int16": Fixed("int16", "h"),
    "uint16": Fixed("uint16", "H"),
    "int32": Fixed("int32", "i"),
    "uint32": Fixed("uint32", "I"),
    "int64": Fixed("int64", "q"),
    "float64": Fixed("float64", "d"),
    "uuid": Uuid(),
}


def primitive(type_name: str, *, compact: bool, nullable: bool) -> WireType:
    """The type of a primitive type name of the message definitions."""
    fixed = PRIMITIVE_FIXED.get(type_name)
    if fixed is not None:
        return fixed
    if type_name == "string":
        return String(compact, nullable)
    if type_name == "bytes":
        return Bytes(compact, nullable)
    if type_name == "records":
        return Records(compact, nullable)
    raise KeyError(f"not a primitive type: {type_name}")


RUNTIME = {
    "_UUID": _UUID,
    "_uuid_of": uuid_of,
    "_read_uvarint": read_uvarint,
    "_write_uvarint": write_uvarint,
    "_DecodeError": DecodeError,
    "_EncodeError": EncodeError,
    "_Truncated": TruncatedError,
    "_Frame": Frame,
}
