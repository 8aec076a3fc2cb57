"""The Kafka wire codec: bytes to typed messages and back, and nothing else.

Definitions (:mod:`wire.definitions`) are data generated from Kafka's own message specs;
:mod:`wire.builder` turns one (API, version, direction) into a ``construct`` codec;
:mod:`wire.protocol` adds the request and response headers; :mod:`wire.records` reads and writes
record batches; :mod:`wire.errors` is Kafka's error-code table.
"""

from wire import errors, records
from wire.builder import REQUEST, RESPONSE, KafkaMessage, embedded_struct, message_struct, \
    request_class, response_class
from wire.exceptions import CorruptRecordBatchError, DecodeError, EncodeError, TruncatedError, \
    UnknownApiKeyError, UnsupportedVersionError, WireError
from wire.protocol import Request, RequestHeader, decode_embedded, decode_request, \
    decode_request_header, decode_response, encode_embedded, encode_request, encode_response, \
    peek_header, request_header_version, response_header_version
from wire.apis import API_KEYS, API_NAMES, resolve_api

__all__ = [
    "errors", "records", "REQUEST", "RESPONSE", "KafkaMessage", "embedded_struct", "message_struct", "request_class",
    "response_class", "CorruptRecordBatchError", "DecodeError", "EncodeError", "TruncatedError",
    "UnknownApiKeyError", "UnsupportedVersionError", "WireError", "Request", "RequestHeader",
    "decode_embedded", "decode_request", "decode_request_header", "decode_response",
    "encode_embedded", "encode_request", "encode_response", "peek_header",
    "request_header_version", "response_header_version", "API_KEYS", "API_NAMES",
    "resolve_api",
]
