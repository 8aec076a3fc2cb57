"""Exceptions raised by the codec.

Every failure to read bytes is a :class:`DecodeError` (or a subclass), raised as soon as the
problem is seen, so a broker can answer or drop the connection without guessing what went wrong.
"""

from __future__ import annotations


class WireError(Exception):
    """Base class for everything the codec raises."""


class DecodeError(WireError):
    """Bytes that do not form a valid message of the expected shape."""


class TruncatedError(DecodeError):
    """A length or field runs past the end of the available bytes."""


class UnknownApiKeyError(DecodeError):
    """A request header names an API key the codec has no definition for."""

    def __init__(self, api_key: int):
        super().__init__(f"unknown API key {api_key}")
        self.api_key = api_key


class UnsupportedVersionError(DecodeError):
    """An API key is known but the requested version is outside its defined range."""

    def __init__(self, api_key: int, api_version: int, name: str | None = None,
                 min_version: int | None = None, max_version: int | None = None):
        what = name or f"API key {api_key}"
        rng = f" (defined: {min_version}-{max_version})" if min_version is not None else ""
        super().__init__(f"{what} has no version {api_version}{rng}")
        self.api_key = api_key
        self.api_version = api_version
        self.min_version = min_version
        self.max_version = max_version


class CorruptRecordBatchError(DecodeError):
    """A record batch whose framing, magic, CRC or records are not valid."""


class EncodeError(WireError):
    """A value that cannot be written in the requested message version."""
