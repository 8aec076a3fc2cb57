"""TLS for a listener's connections, run by us over the plain stream with :class:`ssl.SSLObject`
and memory BIOs, rather than by asyncio's TLS transport.

The reason is the failed handshake.  When a client is refused (no certificate where
``ssl.client.auth=required``, a certificate from another CA, no common protocol), OpenSSL
writes a fatal alert saying why; Kafka's broker sends it, and a client fails at once with that
reason (the Java client's ``SslAuthenticationException``).  asyncio's TLS transport drops the
connection without sending the alert (python/cpython#98078), which a client takes for a network
blip and retries until its timeouts run out: a hang.  Here every byte OpenSSL produces, the
alert included, is written before the connection closes.

:class:`TlsStream` offers what the listener uses of asyncio's streams: ``readexactly``,
``write``, ``drain``, ``close``, ``get_extra_info`` and ``transport``.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

_CHUNK = 64 * 1024


class TlsHandshakeFailed(ConnectionError):
    """The handshake failed; the alert, if OpenSSL made one, has been sent."""


class TlsStream:
    """One server-side TLS connection over a plain (reader, writer) pair."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 context: ssl.SSLContext):
        self._reader = reader
        self._writer = writer
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._tls = context.wrap_bio(self._incoming, self._outgoing, server_side=True)
        self._plain = bytearray()
        self._eof = False

    # -- the handshake -------------------------------------------------------------------------

    async def handshake(self) -> None:
        """Complete the handshake, or raise :class:`TlsHandshakeFailed` once whatever OpenSSL
        had to say (the alert) is written."""
        while True:
            try:
                self._tls.do_handshake()
                self._flush()
                return
            except ssl.SSLWantReadError:
                self._flush()
                await self._writer.drain()
                if not await self._receive():
                    raise TlsHandshakeFailed("the client closed during the TLS handshake") \
                        from None
            except ssl.SSLError as exc:
                self._flush()
                try:
                    await self._writer.drain()
                except ConnectionError:
                    pass
                raise TlsHandshakeFailed(f"TLS handshake failed: {exc.reason or exc}") from exc

    # -- what the listener uses ------------------------------------------------------------------

    async def readexactly(self, n: int) -> bytes:
        while len(self._plain) < n:
            if self._eof:
                partial = bytes(self._plain)
                self._plain.clear()
                raise asyncio.IncompleteReadError(partial, n)
            try:
                chunk = self._tls.read(_CHUNK)
            except ssl.SSLWantReadError:
                chunk = None  # nothing to decrypt until more bytes arrive
            except ssl.SSLZeroReturnError:
                chunk = b""
            except ssl.SSLError as exc:
                raise ConnectionError(f"TLS error: {exc.reason or exc}") from exc
            if chunk == b"":
                self._eof = True  # the client's close_notify (read gives b"" for it)
                continue
            if chunk is not None:
                self._plain += chunk
                continue
            self._flush()  # a key update or session ticket may be waiting to go out
            if not await self._receive():
                self._eof = True
        out = bytes(self._plain[:n])
        del self._plain[:n]
        return out

    def write(self, data: bytes) -> None:
        try:
            self._tls.write(data)
        except ssl.SSLError as exc:
            raise ConnectionError(f"TLS error: {exc.reason or exc}") from exc
        self._flush()

    async def drain(self) -> None:
        await self._writer.drain()

    def close(self) -> None:
        try:
            self._tls.unwrap()  # close_notify; the client's reply is not waited for
        except (ssl.SSLError, ValueError):
            pass
        self._flush()
        self._writer.close()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        if name == "ssl_object":
            return self._tls
        if name == "peercert":
            return self._tls.getpeercert()
        return self._writer.get_extra_info(name, default)

    @property
    def transport(self) -> asyncio.Transport:
        return self._writer.transport

    # -- bytes to and from the socket ------------------------------------------------------------

    def _flush(self) -> None:
        pending = self._outgoing.read()
        if pending and not self._writer.is_closing():
            self._writer.write(pending)

    async def _receive(self) -> bool:
        """Feed what the socket has next into OpenSSL; False at end of stream."""
        try:
            data = await self._reader.read(_CHUNK)
        except ConnectionError:
            data = b""
        if not data:
            self._incoming.write_eof()
            return False
        self._incoming.write(data)
        return True
