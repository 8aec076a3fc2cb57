"""One generic builder: a message definition and a version become a ``construct`` codec.

:func:`message_struct` returns a :class:`KafkaMessage` — a ``construct.Construct`` — for any
(api key, version, request|response), built on first use from the definitions in
:mod:`wire.definitions` and cached.  It parses and builds like any construct, ``compile()`` turns
it into construct's compiled form carrying the same generated code, and the broker's hot path
calls :meth:`KafkaMessage.decode` / :meth:`KafkaMessage.encode` directly, skipping construct's
per-call context set-up.
"""

from __future__ import annotations

import struct
from functools import lru_cache
from typing import Any

from construct import Construct, SizeofError

from wire import codegen
from wire.definitions import APIS
from wire.definitions import embedded as _embedded
from wire.exceptions import DecodeError, EncodeError, TruncatedError, UnknownApiKeyError, \
    UnsupportedVersionError
from wire.model import Struct, message_class
from wire.schema import Api, Message

REQUEST = "request"
RESPONSE = "response"

#: Embedded formats by name: headers, the consumer protocol, ``__consumer_offsets`` records.
EMBEDDED: dict[str, Message] = {
    value.name: value for value in vars(_embedded).values() if isinstance(value, Message)
}

_DECODE_FAILURES = (struct.error, IndexError, ValueError, UnicodeError, OverflowError)
_ENCODE_FAILURES = (struct.error, AttributeError, TypeError, ValueError, OverflowError,
                    UnicodeError)


class KafkaMessage(Construct):
    """The codec of one message in one version."""

    def __init__(self, message: Message, version: int):
        super().__init__()
        if version not in message.valid:
            raise UnsupportedVersionError(message.api_key or -1, version, message.name,
                                          message.valid.lo, message.valid.hi)
        self.message = message
        self.version = version
        self.cls: type[Struct] = message_class(message)
        self.source, env = codegen.generate(message, version, self.cls)
        namespace = dict(env)
        exec(compile(self.source, f"<wire {message.name} v{version}>", "exec"), namespace)
        self._decode = namespace["decode"]
        self._encode = namespace["encode"]
        self._env = env
        self.name = f"{message.name}v{version}"

    def __repr__(self) -> str:
        return f"<KafkaMessage {self.message.name} v{self.version}>"

    # -- the fast path -------------------------------------------------------------------------

    def decode(self, data: bytes, pos: int = 0, end: int | None = None) -> tuple[Any, int]:
        """Decode one message from ``data[pos:end]``; returns (message, position after it)."""
        if not isinstance(data, bytes):
            data = bytes(data)
        if end is None:
            end = len(data)
        try:
            return self._decode(data, pos, end)
        except DecodeError as exc:
            raise type(exc)(f"{self.name}: {exc}") from None
        except IndexError:
            raise TruncatedError(f"{self.name}: message runs past the end of the frame") from None
        except struct.error:
            raise TruncatedError(f"{self.name}: message runs past the end of the frame") from None
        except _DECODE_FAILURES as exc:
            raise DecodeError(f"{self.name}: {exc}") from None

    def decode_exact(self, data: bytes) -> Any:
        """Decode a buffer that must hold exactly one message and nothing after it."""
        obj, pos = self.decode(data)
        if pos != len(data):
            raise DecodeError(f"{self.name}: {len(data) - pos} unexpected bytes after the message")
        return obj

    def encode(self, obj: Any, out: bytearray | None = None) -> bytearray:
        """Append the encoding of ``obj`` (an instance of :attr:`cls`, or a dict) to ``out``."""
        if out is None:
            out = bytearray()
        if not isinstance(obj, self.cls):
            if isinstance(obj, dict):
                obj = self.cls.from_dict(obj)
            else:
                raise EncodeError(f"{self.name}: expected {self.cls.__name__}, got {type(obj).__name__}")
        try:
            self._encode(obj, out)
        except EncodeError as exc:
            raise EncodeError(f"{self.name}: {exc}") from None
        except _ENCODE_FAILURES as exc:
            raise EncodeError(f"{self.name}: {type(exc).__name__}: {exc}") from None
        return out

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
        _EMITTED[fname] = self._env
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


def api(api_key: int) -> Api:
    try:
        return APIS[api_key]
    except KeyError:
        raise UnknownApiKeyError(api_key) from None


@lru_cache(maxsize=None)
def message_struct(api_key: int, version: int, direction: str) -> KafkaMessage:
    """The codec for a request or response of ``api_key`` at ``version`` (cached)."""
    spec = api(api_key)
    if direction == REQUEST:
        message = spec.request
    elif direction == RESPONSE:
        message = spec.response
    else:
        raise ValueError(f"direction must be {REQUEST!r} or {RESPONSE!r}, not {direction!r}")
    if version not in message.valid:
        raise UnsupportedVersionError(api_key, version, spec.name, message.valid.lo,
                                      message.valid.hi)
    return KafkaMessage(message, version)


@lru_cache(maxsize=None)
def embedded_struct(name: str, version: int) -> KafkaMessage:
    """The codec for an embedded format (``ConsumerProtocolSubscription``, ``OffsetCommitValue``, ...)."""
    try:
        message = EMBEDDED[name]
    except KeyError:
        raise KeyError(f"no embedded format named {name!r}") from None
    return KafkaMessage(message, version)


def request_class(api_key: int) -> type[Struct]:
    return message_class(api(api_key).request)


def response_class(api_key: int) -> type[Struct]:
    return message_class(api(api_key).response)
