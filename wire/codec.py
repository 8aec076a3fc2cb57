"""One generic codec: a message definition and a version become generated decode and encode
functions.

:func:`message_codec` returns the :class:`MessageCodec` of any (api key, version,
request|response), built on first use from the definitions in :mod:`wire.definitions` and
cached; :func:`embedded_codec` does the same for the embedded formats (headers, the consumer
protocol, ``__consumer_offsets`` records).  This is what the broker encodes and decodes with.
The same codecs as ``construct`` Structs, for building and parsing with construct, are
:func:`wire.builder.message_struct` and :func:`wire.builder.embedded_struct`; nothing here
imports construct.
"""

from __future__ import annotations

import struct
from functools import lru_cache
from typing import Any

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


class MessageCodec:
    """The codec of one message in one version: its generated functions, and its class."""

    def __init__(self, message: Message, version: int):
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
        #: whether its encoder notes lists of record batches in a :class:`~wire.types.Frame`
        #: rather than copying them (a message with a records field)
        self.defers_batches = "out.defer(" in self.source
        #: what the generated functions refer to besides builtins
        self.env = env
        self.name = f"{message.name}v{version}"

    def __repr__(self) -> str:
        return f"<MessageCodec {self.message.name} v{self.version}>"

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


def api(api_key: int) -> Api:
    try:
        return APIS[api_key]
    except KeyError:
        raise UnknownApiKeyError(api_key) from None


@lru_cache(maxsize=None)
def message_codec(api_key: int, version: int, direction: str) -> MessageCodec:
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
    return MessageCodec(message, version)


@lru_cache(maxsize=None)
def embedded_codec(name: str, version: int) -> MessageCodec:
    """The codec for an embedded format (``ConsumerProtocolSubscription``, ``OffsetCommitValue``, ...)."""
    try:
        message = EMBEDDED[name]
    except KeyError:
        raise KeyError(f"no embedded format named {name!r}") from None
    return MessageCodec(message, version)


def request_class(api_key: int) -> type[Struct]:
    return message_class(api(api_key).request)


def response_class(api_key: int) -> type[Struct]:
    return message_class(api(api_key).response)
