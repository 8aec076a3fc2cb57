"""The codecs as ``construct`` Structs: a message definition and a version become a construct.

:func:`message_struct` returns a :class:`KafkaMessage` — a ``construct.Construct`` — for any
(api key, version, request|response), and :func:`embedded_struct` one for an embedded format,
each cached.  It parses and builds like any construct, and ``compile()`` puts its generated code
into construct's compiled form.  Underneath is the :class:`~wire.codec.MessageCodec` of the same
message and version, the one the broker's hot path calls directly (:mod:`wire.codec`, which
loads no construct).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from construct import Construct, SizeofError

from wire.codec import EMBEDDED, REQUEST, RESPONSE, MessageCodec, api, embedded_codec, \
    message_codec, request_class, response_class
from wire.schema import Message

__all__ = ["KafkaMessage", "message_struct", "embedded_struct", "EMBEDDED", "REQUEST",
           "RESPONSE", "api", "request_class", "response_class"]


class KafkaMessage(Construct):
    """The codec of one message in one version, as a construct."""

    def __init__(self, message: Message, version: int, codec: MessageCodec | None = None):
        super().__init__()
        self.codec = codec if codec is not None else MessageCodec(message, version)
        self.message = message
        self.version = version
        self.cls = self.codec.cls
        self.source = self.codec.source
        self.name = self.codec.name

    def __repr__(self) -> str:
        return f"<KafkaMessage {self.message.name} v{self.version}>"

    # -- the codec's own calls -----------------------------------------------------------------

    def decode(self, data: bytes, pos: int = 0, end: int | None = None) -> tuple[Any, int]:
        """Decode one message from ``data[pos:end]``; returns (message, position after it)."""
        return self.codec.decode(data, pos, end)

    def decode_exact(self, data: bytes) -> Any:
        """Decode a buffer that must hold exactly one message and nothing after it."""
        return self.codec.decode_exact(data)

    def encode(self, obj: Any, out: bytearray | None = None) -> bytearray:
        """Append the encoding of ``obj`` (an instance of :attr:`cls`, or a dict) to ``out``."""
        return self.codec.encode(obj, out)

    # -- construct's protocol ------------------------------------------------------------------

    def _parse(self, stream, context, path):
        data, start = _stream_buffer(stream)
        obj, pos = self.decode(data, start)
        stream.seek(pos - start, 1)
        return obj

    def _build(self, obj, stream, context, path):
        stream.write(bytes(self.encode(obj)))
        return obj

    def _sizeof(self, context, path):
        raise SizeofError("Kafka messages have variable size", path=path)

    def _emitparse(self, code):
        """Put this version's generated decoder into construct's compiled module."""
        fname = self._emit_functions(code)
        code.append(f"""
            def parse_{fname}(io, this):
                data = io.getvalue()
                start = io.tell()
                obj, pos = {fname}_decode(data, start, len(data))
                io.seek(pos)
                return obj
        """)
        return f"parse_{fname}(io, this)"

    def _emitbuild(self, code):
        fname = self._emit_functions(code)
        code.append(f"""
            def build_{fname}(obj, io, this):
                out = bytearray()
                {fname}_encode(obj, out)
                io.write(out)
                return obj
        """)
        return f"build_{fname}(obj, io, this)"

    def _emit_functions(self, code) -> str:
        # Generated names are unique process-wide, so several messages can share one compiled
        # module; the helpers they refer to are put into its globals when it is executed.
        fname = f"kafka_{self.message.name}_v{self.version}"
        _EMITTED[fname] = self.codec.env
        code.append(f"""
            from wire.builder import _EMITTED
            globals().update(_EMITTED[{fname!r}])
        """)
        code.append(self.source.replace("def decode(", f"def {fname}_decode(")
                    .replace("def encode(", f"def {fname}_encode("))
        return fname


#: Environments of generated code, for modules built by ``Construct.compile()``.
_EMITTED: dict[str, dict[str, Any]] = {}


def _stream_buffer(stream) -> tuple[bytes, int]:
    getvalue = getattr(stream, "getvalue", None)
    if getvalue is not None:
        return getvalue(), stream.tell()
    start = stream.tell()
    data = stream.read()
    stream.seek(start)
    return data, 0


@lru_cache(maxsize=None)
def message_struct(api_key: int, version: int, direction: str) -> KafkaMessage:
    """The construct for a request or response of ``api_key`` at ``version`` (cached)."""
    codec = message_codec(api_key, version, direction)
    return KafkaMessage(codec.message, version, codec)


@lru_cache(maxsize=None)
def embedded_struct(name: str, version: int) -> KafkaMessage:
    """The construct for an embedded format (``ConsumerProtocolSubscription``, ...)."""
    codec = embedded_codec(name, version)
    return KafkaMessage(codec.message, version, codec)
