"""Kafka's primitive wire types as ``construct`` classes.

Each class is the type of :mod:`wire.types` that the code generator emits code for, made a
construct: it works on its own (``UVarInt().parse(b"\\x96\\x01") == 150``) and under
``Construct.compile()``, for building Kafka's formats with construct.  The message codecs
(:mod:`wire.codec`) are generated code and need none of this, nor construct itself.
"""

from __future__ import annotations

import struct

from construct import Construct, SizeofError, stream_read, stream_write

from wire import types
from wire.exceptions import DecodeError, EncodeError
from wire.types import _UUID, PRIMITIVE_FIXED, write_uvarint


def _stream_uvarint(stream, path, max_bytes=5) -> int:
    value = shift = 0
    for _ in range(max_bytes):
        byte = stream_read(stream, 1, path)[0]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value
        shift += 7
    raise DecodeError(f"varint longer than {max_bytes} bytes")


class KafkaType(Construct):
    """What every type adds as a construct: its size when fixed, and, under compile(), a call
    to its own _parse/_build where it has no code of its own."""

    def _sizeof(self, context, path):
        if self.fmt is None:
            raise SizeofError("variable size", path=path)
        return struct.calcsize(">" + self.fmt)

    def _emitparse(self, code):
        return f"linkedinstances[{id(self)}]._parse(io, this, '(compiled)')" if \
            self._link(code) else ""

    def _emitbuild(self, code):
        return f"linkedinstances[{id(self)}]._build(obj, io, this, '(compiled)')" if \
            self._link(code) else ""

    def _link(self, code) -> bool:
        self._compileinstance(code)
        return True


class Fixed(types.Fixed, KafkaType):
    """By its Kafka name: ``Fixed("int32")`` (the names are :data:`PRIMITIVE_FIXED`'s)."""

    def __init__(self, kafka_name: str):
        super().__init__(kafka_name, PRIMITIVE_FIXED[kafka_name].fmt)
        self._struct = struct.Struct(">" + self.fmt)

    def _parse(self, stream, context, path):
        return self._struct.unpack(stream_read(stream, self.size, path))[0]

    def _build(self, obj, stream, context, path):
        try:
            stream_write(stream, self._struct.pack(obj), self.size, path)
        except struct.error as exc:
            raise EncodeError(f"{self.kafka_name} cannot hold {obj!r}: {exc}") from None
        return obj

    def _emitparse(self, code):
        return f"struct.unpack('>{self.fmt}', io.read({self.size}))[0]"

    def _emitbuild(self, code):
        return f"(io.write(struct.pack('>{self.fmt}', obj)), obj)[1]"


class Uuid(types.Uuid, KafkaType):
    def _parse(self, stream, context, path):
        return _UUID(bytes=stream_read(stream, 16, path))

    def _build(self, obj, stream, context, path):
        stream_write(stream, obj.bytes, 16, path)
        return obj


class UVarInt(types.UVarInt, KafkaType):
    def _parse(self, stream, context, path):
        return _stream_uvarint(stream, path)

    def _build(self, obj, stream, context, path):
        raw = write_uvarint(obj)
        stream_write(stream, raw, len(raw), path)
        return obj


class _Sized(types.Sized, KafkaType):
    # value <-> bytes conversions, overridden by String
    def _to_value(self, raw: bytes):
        return raw

    def _from_value(self, value) -> bytes:
        return value

    def _parse(self, stream, context, path):
        if self.compact:
            n = _stream_uvarint(stream, path) - 1
        else:
            fmt = ">" + self.length_fmt
            n = struct.unpack(fmt, stream_read(stream, struct.calcsize(fmt), path))[0]
        if n < 0:
            if n == -1 and self.nullable:
                return None
            raise DecodeError(f"invalid {self.what} length {n}")
        return self._to_value(stream_read(stream, n, path))

    def _build(self, obj, stream, context, path):
        if obj is None:
            if not self.nullable:
                raise EncodeError(f"non-nullable {self.what} is None")
            raw, n = b"", -1
        else:
            raw = self._from_value(obj)
            n = len(raw)
        prefix = write_uvarint(n + 1) if self.compact else struct.pack(">" + self.length_fmt, n)
        stream_write(stream, prefix + raw, len(prefix) + len(raw), path)
        return obj


class String(types.String, _Sized):
    def _to_value(self, raw):
        return raw.decode("utf-8", "surrogateescape")

    def _from_value(self, value):
        return value.encode("utf-8", "surrogateescape")


class Bytes(types.Bytes, _Sized):
    def _to_value(self, raw):
        return bytes(raw)


class Records(types.Records, Bytes):
    def _from_value(self, value):
        return b"".join(value) if isinstance(value, list) else value
