"""Frames: request and response headers around a message body.

A request frame (after the 4-byte size prefix) is a request header — v1, or v2 for a flexible
request version, whose client id stays a classic nullable string — followed by the body.  A
response frame is a response header — v0, or v1 for a flexible version, except that ApiVersions
always answers with v0 so a client that guessed a too-new version can still read the error — and
the body.
"""

from __future__ import annotations

import struct
from typing import Any

from msgspec import Struct

from wire.codec import EMBEDDED, REQUEST, RESPONSE, api, embedded_codec, message_codec
from wire.exceptions import DecodeError, TruncatedError, UnknownApiKeyError, \
    UnsupportedVersionError
from wire.types import Frame

API_VERSIONS_KEY = 18

_FIXED_HEADER = struct.Struct(">hhi")
_SIZE = struct.Struct(">i")
_INT16 = struct.Struct(">h")

#: (api key, version) -> the codecs of its request header and body, and whether the header is
#: flexible, for every request version decoded so far: a version is looked up and checked
#: once, not for every request
_REQUEST_CODECS: dict[tuple[int, int], tuple[Any, Any, bool]] = {}
#: (api key, version) -> (whether its response header has a tag section, the body's codec,
#: whether the body may carry record batches)
_RESPONSE_CODECS: dict[tuple[int, int], tuple[bool, Any, bool]] = {}


class RequestHeader(Struct, repr_omit_defaults=True):
    """A request header (v1 or v2, by the API and version)."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None = None
    unknown_tags: dict[int, bytes] | None = None


class Request(Struct):
    """A decoded request: its header and its body."""

    header: RequestHeader
    body: Any
    #: bytes the frame held after the body (Kafka ignores them; librdkafka sends some)
    trailing_bytes: int = 0

    @property
    def api_key(self) -> int:
        return self.header.api_key

    @property
    def api_version(self) -> int:
        return self.header.api_version


def request_header_version(api_key: int, api_version: int) -> int:
    return 2 if api(api_key).request.is_flexible(api_version) else 1


def response_header_version(api_key: int, api_version: int) -> int:
    if api_key == API_VERSIONS_KEY:
        return 0
    return 1 if api(api_key).response.is_flexible(api_version) else 0


def peek_header(frame: bytes) -> tuple[int, int, int]:
    """(api key, api version, correlation id): the part of every request header that never
    changes shape, readable even when the rest of the frame is not."""
    if len(frame) < _FIXED_HEADER.size:
        raise TruncatedError(f"request frame of {len(frame)} bytes is shorter than a header")
    return _FIXED_HEADER.unpack_from(frame, 0)


def decode_request_header(frame: bytes) -> tuple[RequestHeader, int]:
    """Decode the request header; returns it and the offset where the body starts.

    Raises :class:`UnknownApiKeyError` or :class:`UnsupportedVersionError` (with the partly
    decoded header attached as ``.header``) when the codec has no definition for the request.
    """
    header, pos, _ = _decode_header(frame)
    return header, pos


def _decode_header(frame: bytes) -> tuple[RequestHeader, int, tuple[Any, Any, bool]]:
    """The header, where the body starts, and the request version's codecs."""
    api_key, api_version, correlation_id = peek_header(frame)
    codecs = _REQUEST_CODECS.get((api_key, api_version))
    if codecs is None:
        codecs = _request_codecs(frame, api_key, api_version, correlation_id)
    # What clients send: a client id and, in a flexible header, no tagged field.  This reads
    # that at once; a null client id, tags or a short frame are left to the codec.
    if len(frame) >= 10:
        n, = _INT16.unpack_from(frame, 8)
        end = 10 + n
        if n >= 0 and ((end < len(frame) and frame[end] == 0) if codecs[2] else
                       end <= len(frame)):
            return RequestHeader(api_key, api_version, correlation_id,
                                 frame[10:end].decode("utf-8", "surrogateescape")), \
                end + codecs[2], codecs
    decoded, pos = codecs[0].decode(frame)
    return RequestHeader(api_key, api_version, correlation_id, decoded.client_id,
                         decoded._unknown_tags), pos, codecs


def _request_codecs(frame: bytes, api_key: int, api_version: int, correlation_id: int):
    """The header and body codecs of a request version, checked and kept; raises the errors
    :func:`decode_request_header` documents."""
    header = RequestHeader(api_key, api_version, correlation_id)
    try:
        spec = api(api_key)
    except UnknownApiKeyError as exc:
        exc.header = header
        raise
    if api_version not in spec.request.valid:
        exc = UnsupportedVersionError(api_key, api_version, spec.name, spec.request.valid.lo,
                                      spec.request.valid.hi)
        exc.header = header
        # The client id is readable whatever the version: it sits right after the fixed part.
        try:
            header.client_id = embedded_codec("RequestHeader", 1).decode(frame)[0].client_id
        except DecodeError:
            pass
        raise exc
    flexible = request_header_version(api_key, api_version) == 2
    codecs = _REQUEST_CODECS[api_key, api_version] = (
        embedded_codec("RequestHeader", 2 if flexible else 1),
        message_codec(api_key, api_version, REQUEST), flexible)
    return codecs


class SharedBodies:
    """Request bodies decoded once and handed out again whenever the same bytes come back, for
    the requests a client repeats word for word (an idle consumer's Fetch, a member's
    Heartbeat): the header, with its correlation id, is decoded every time; the body by its
    bytes.  Whoever decodes with it shares each body among requests and must never change one.
    """

    __slots__ = ("api_keys", "limit", "_bodies")

    def __init__(self, api_keys: frozenset[int] | set[int], limit: int = 4096) -> None:
        #: the requests whose bodies are shared
        self.api_keys = frozenset(api_keys)
        #: the most bodies kept; one more starts the table afresh
        self.limit = limit
        #: (api key, version, body bytes) -> (body, its length)
        self._bodies: dict[tuple[int, int, bytes], tuple[Any, int]] = {}

    def __len__(self) -> int:
        return len(self._bodies)

    def decode(self, codec: Any, header: RequestHeader, frame: bytes,
               pos: int) -> tuple[Any, int]:
        """(the body, where it ends) of ``frame``'s body at ``pos``, decoded by ``codec``."""
        key = (header.api_key, header.api_version, frame[pos:])
        found = self._bodies.get(key)
        if found is None:
            body, end = codec.decode(frame, pos)
            if len(self._bodies) >= self.limit:
                self._bodies.clear()
            self._bodies[key] = found = (body, end - pos)
        return found[0], pos + found[1]


def decode_request(frame: bytes, *, strict: bool = False,
                   shared: SharedBodies | None = None) -> Request:
    """Decode a whole request frame (without its size prefix).

    Like Kafka's broker, bytes left after the body are ignored (librdkafka's all-topics
    Metadata request carries three); ``strict`` makes them an error instead.  With ``shared``,
    the bodies of the requests it names come from it (see :class:`SharedBodies`).
    """
    if not isinstance(frame, bytes):
        frame = bytes(frame)
    header, pos, codecs = _decode_header(frame)
    codec = codecs[1]
    if shared is not None and header.api_key in shared.api_keys:
        body, end = shared.decode(codec, header, frame, pos)
    else:
        body, end = codec.decode(frame, pos)
    if strict and end != len(frame):
        raise DecodeError(f"{codec.name}: {len(frame) - end} unexpected bytes after the request")
    return Request(header, body, len(frame) - end)


def encode_request(api_key: int, api_version: int, correlation_id: int, client_id: str | None,
                   body: Any, *, size_prefix: bool = True) -> bytes:
    """A request frame as a client sends it."""
    out = bytearray(4 if size_prefix else 0)
    header_codec = embedded_codec("RequestHeader", request_header_version(api_key, api_version))
    header = header_codec.cls(request_api_key=api_key, request_api_version=api_version,
                              correlation_id=correlation_id, client_id=client_id)
    header_codec.encode(header, out)
    message_codec(api_key, api_version, REQUEST).encode(body, out)
    if size_prefix:
        _SIZE.pack_into(out, 0, len(out) - 4)
    return bytes(out)


class Encoded(bytes):
    """A response body encoded once in one version, for an answer sent again and again (a
    broker's cache): :func:`encode_response` copies its bytes.  ``message`` is the response it
    encodes, and reading a field of it reads the message's (``encoded.topics``)."""

    message: Any

    def __new__(cls, data: bytes, message: Any) -> "Encoded":
        encoded = super().__new__(cls, data)
        encoded.message = message
        return encoded

    def __getattr__(self, name: str) -> Any:
        return getattr(self.message, name)


def encode_response_body(api_key: int, api_version: int, body: Any) -> Encoded:
    """A response body alone, encoded to be sent (with any correlation id) many times."""
    out = bytearray()
    message_codec(api_key, api_version, RESPONSE).encode(body, out)
    return Encoded(bytes(out), body)


def encode_response(api_key: int, api_version: int, correlation_id: int, body: Any, *,
                    size_prefix: bool = True, copy: bool = True,
                    pieces: bool = False) -> bytes | bytearray | list:
    """A response frame as a broker sends it; ``body`` is a message, or an :class:`Encoded`
    one of this API and version.  With ``copy=False`` the frame is the buffer it was built in
    (a bytearray), or the bytes its record batches were joined into (:class:`~wire.types.Frame`),
    for a caller that only writes it out: a large Fetch answer is not copied once more.  With
    ``pieces=True``, a frame with record batches is the list of buffers it is made of
    (:meth:`~wire.types.Frame.pieces`), for a caller that writes them out one after another:
    the batches are not copied at all."""
    codecs = _RESPONSE_CODECS.get((api_key, api_version))
    if codecs is None:
        codec = message_codec(api_key, api_version, RESPONSE)
        codecs = _RESPONSE_CODECS[api_key, api_version] = (
            response_header_version(api_key, api_version) == 1, codec, codec.defers_batches)
    tagged, codec, batches = codecs
    if not batches or isinstance(body, Encoded):
        # no record batches to place (most answers): one buffer, built as it goes
        plain = bytearray(4) if size_prefix else bytearray()
        plain += _SIZE.pack(correlation_id)
        if tagged:
            plain.append(0)  # no tagged fields in the header
        if isinstance(body, Encoded):
            plain += body
        else:
            codec.encode(body, plain)
        if size_prefix:
            _SIZE.pack_into(plain, 0, len(plain) - 4)
        return bytes(plain) if copy else plain
    out = Frame(4 if size_prefix else 0)
    out += _SIZE.pack(correlation_id)
    if tagged:
        out.append(0)  # no tagged fields in the header
    codec.encode(body, out)
    if size_prefix:
        _SIZE.pack_into(out, 0, out.final_size() - 4)
    if pieces:
        scattered = out.pieces()
        if scattered is not None:
            return scattered
    frame = out.joined()
    return bytes(frame) if copy and frame is out else frame


def decode_response(api_key: int, api_version: int, frame: bytes) -> tuple[int, Any]:
    """Decode a response frame (without its size prefix); returns (correlation id, body)."""
    if not isinstance(frame, bytes):
        frame = bytes(frame)
    codec = embedded_codec("ResponseHeader", response_header_version(api_key, api_version))
    header, pos = codec.decode(frame)
    body_codec = message_codec(api_key, api_version, RESPONSE)
    body, end = body_codec.decode(frame, pos)
    if end != len(frame):
        raise DecodeError(f"{body_codec.name}: {len(frame) - end} unexpected bytes after the "
                          "response")
    return header.correlation_id, body


def encode_embedded(name: str, version: int, value: Any) -> bytes:
    """An embedded format with its int16 version prefix (consumer protocol, offsets records)."""
    out = bytearray(struct.pack(">h", version))
    embedded_codec(name, version).encode(value, out)
    return bytes(out)


def decode_embedded(name: str, data: bytes, *, exact: bool = False) -> tuple[int, Any]:
    """Read an embedded format's int16 version prefix, then the value in that version.

    Like Kafka, bytes after the value are ignored unless ``exact`` (newer clients may append
    fields an older reader does not know).  A version newer than we define is read with the
    newest definition, as Kafka's consumer protocol does.
    """
    if not isinstance(data, bytes):
        data = bytes(data)
    if len(data) < 2:
        raise TruncatedError(f"{name}: {len(data)} bytes is too short for a version")
    (version,) = struct.unpack_from(">h", data)
    valid = EMBEDDED[name].valid
    if version < valid.lo:
        raise DecodeError(f"{name}: unknown version {version}")
    read_as = min(version, valid.hi)
    value, pos = embedded_codec(name, read_as).decode(data, 2)
    if exact and pos != len(data):
        raise DecodeError(f"{name}: {len(data) - pos} unexpected bytes after the value")
    return version, value
