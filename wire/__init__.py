"""The Kafka wire codec: bytes to typed messages and back, and nothing else.

Definitions (:mod:`wire.definitions`) are data generated from Kafka's own message specs;
:mod:`wire.codec` turns one (API, version, direction) into generated decode and encode
functions, and :mod:`wire.builder` gives the same codec as a ``construct`` Struct;
:mod:`wire.protocol` adds the request and response headers; :mod:`wire.records` reads and writes
record batches; :mod:`wire.errors` is Kafka's error-code table.

Importing the package loads none of them: each name of ``__all__`` is imported on first use
(PEP 562), so ``from wire import errors`` costs neither the codecs nor the definitions, and
only the construct Structs (``message_struct``, ``embedded_struct``, ``KafkaMessage``) load
``construct``.  The codec knows no broker: nothing here imports ``mockbroker`` (an
import-linter contract holds it).
"""

from __future__ import annotations

from importlib import import_module

# typing.TYPE_CHECKING without importing typing, which costs a millisecond
TYPE_CHECKING = False

if TYPE_CHECKING:  # what type checkers see; __getattr__ below loads the same names on first use
    from wire import errors, records
    from wire.builder import KafkaMessage, embedded_struct, message_struct
    from wire.codec import REQUEST, RESPONSE, MessageCodec, embedded_codec, message_codec, \
        request_class, response_class
    from wire.exceptions import CorruptRecordBatchError, DecodeError, EncodeError, \
        TruncatedError, UnknownApiKeyError, UnsupportedVersionError, WireError
    from wire.protocol import Encoded, Request, RequestHeader, SharedBodies, decode_embedded, \
        decode_request, decode_request_header, decode_response, encode_embedded, \
        encode_request, encode_response, encode_response_body, peek_header, \
        request_header_version, response_header_version
    from wire.apis import API_KEYS, API_NAMES, resolve_api

__all__ = [
    "errors", "records", "REQUEST", "RESPONSE", "MessageCodec", "message_codec", "embedded_codec",
    "KafkaMessage", "embedded_struct", "message_struct", "request_class", "response_class", "CorruptRecordBatchError", "DecodeError", "EncodeError", "TruncatedError",
    "UnknownApiKeyError", "UnsupportedVersionError", "WireError", "Request", "RequestHeader",
    "decode_embedded", "decode_request", "decode_request_header", "decode_response",
    "encode_embedded", "encode_request", "encode_response", "encode_response_body", "Encoded",
    "peek_header", "SharedBodies",
    "request_header_version", "response_header_version", "API_KEYS", "API_NAMES",
    "resolve_api",
]


#: where __getattr__ looks for a name of __all__, cheapest first: ``from wire import errors``
#: (the core's most common import) loads no definitions, and only the names of wire.builder
#: load construct
_SUBMODULES = ("errors", "records")
_SOURCES = ("wire.exceptions", "wire.apis", "wire.codec", "wire.protocol", "wire.builder")


def __getattr__(name: str) -> object:
    if name in _SUBMODULES:
        value = import_module(f"wire.{name}")
    elif name in __all__:
        for source in _SOURCES:
            module = import_module(source)
            if hasattr(module, name):
                value = getattr(module, name)
                break
        else:  # a name in __all__ that no source defines: a bug here
            raise AttributeError(f"module 'wire' has no attribute {name!r}")
    else:
        raise AttributeError(f"module 'wire' has no attribute {name!r}")
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
