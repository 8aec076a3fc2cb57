"""Compression codecs used inside Kafka record batches (magic v2).

All codec primitives come from :mod:`cramjam`; this module only adds the framing Kafka uses on
top of them and a size guard for decompression.

Wire formats, as the Java client writes them:

* gzip   -- a standard gzip stream (concatenated members are accepted on input).
* snappy -- xerial ``SnappyOutputStream`` framing: a 16-byte header (``0x82 "SNAPPY" 0x00``,
  int32 version, int32 compatible-version) followed by blocks of
  ``[int32 compressed length][raw snappy block]``.  On input, raw (unframed) snappy is accepted
  too, as snappy-java and librdkafka do.
* lz4    -- the standard LZ4 frame format.  Kafka's Java reader rejects frames whose blocks are
  linked, so frames are written with independent blocks.
* zstd   -- standard zstd frames; frames without a declared content size are fine.

``decompress(..., max_size=n)`` never produces (or allocates for) more than ``n`` bytes of
output: the output goes into a buffer that grows geometrically up to ``n`` and the codec stops
as soon as that buffer is full.
"""

from __future__ import annotations

import struct

from .exceptions import CorruptRecordBatchError


class _OnFirstUse:
    """:mod:`cramjam`, imported when first used (a broker that never meets a compressed batch
    starts without it)."""

    def __getattr__(self, name: str):
        import cramjam as module

        globals()["cramjam"] = module
        return getattr(module, name)


cramjam = _OnFirstUse()

__all__ = [
    "NONE", "GZIP", "SNAPPY", "LZ4", "ZSTD", "CODEC_NAMES", "CODEC_IDS",
    "compress", "decompress",
]

NONE = 0
GZIP = 1
SNAPPY = 2
LZ4 = 3
ZSTD = 4

CODEC_NAMES: dict[int, str] = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}
CODEC_IDS: dict[str, int] = {name: codec for codec, name in CODEC_NAMES.items()}

# xerial snappy-java stream header: marker byte, "SNAPPY", NUL, then int32 version and int32
# minimum compatible version (both 1 in practice; some writers get their byte order wrong, so
# only the first 8 bytes are checked on input).
XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_HEADER = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
XERIAL_HEADER_SIZE = 16
XERIAL_BLOCK_SIZE = 32 * 1024  # snappy-java's default block size (uncompressed bytes per block)

_INT32 = struct.Struct(">i")
_LE_U32 = struct.Struct("<I")

# Smallest buffer tried first when the output size is not known in advance.
_MIN_GUESS = 64 * 1024
_GUESS_RATIO = 8

# Upper bounds on how much one input byte can expand (deflate ~1032:1; an lz4 match grows by
# 255 bytes per extra length byte; a zstd RLE block turns 4 bytes into up to 128 KiB; a snappy
# 3-byte copy element produces at most 64 bytes).
_MAX_RATIO = {GZIP: 1032, LZ4: 256, ZSTD: 32 * 1024}
_SNAPPY_MAX_RATIO = 22

# Messages cramjam uses when an output buffer is too small (as opposed to corrupt input).
_OVERFLOW_MARKERS = ("failed to write whole buffer", "smaller than required")


def _as_bytes_like(data):
    if isinstance(data, (bytes, bytearray, memoryview)):
        return data
    raise TypeError(f"expected a bytes-like object, got {type(data).__name__}")


def _byte_view(data) -> memoryview:
    mv = memoryview(data)
    if mv.format != "B" or mv.ndim != 1:
        mv = mv.cast("B")
    return mv


def _unknown(codec: int) -> CorruptRecordBatchError:
    return CorruptRecordBatchError(f"unknown compression codec {codec!r}")


# --------------------------------------------------------------------------------------------
# compression
# --------------------------------------------------------------------------------------------

def _xerial_compress(data) -> bytes:
    mv = memoryview(data)
    parts = [XERIAL_HEADER]
    append = parts.append
    pack = _INT32.pack
    compress_raw = cramjam.snappy.compress_raw
    for start in range(0, len(mv), XERIAL_BLOCK_SIZE):
        block = bytes(compress_raw(mv[start:start + XERIAL_BLOCK_SIZE]))
        append(pack(len(block)))
        append(block)
    return b"".join(parts)


def compress(codec: int, data, level: int | None = None) -> bytes:
    """Compress ``data`` the way a Kafka client would for a v2 batch using ``codec``.

    ``level`` is passed to gzip, lz4 and zstd (cramjam's defaults otherwise); snappy has none.
    """
    data = _as_bytes_like(data)
    if codec == NONE:
        return bytes(data)
    try:
        if codec == GZIP:
            return bytes(cramjam.gzip.compress(data, level=level))
        if codec == SNAPPY:
            return _xerial_compress(data)
        if codec == LZ4:
            # Kafka's Lz4BlockInputStream refuses dependent (linked) blocks.
            comp = cramjam.lz4.Compressor(level=level, content_checksum=False, block_linked=False)
            comp.compress(data if isinstance(data, bytes) else bytes(data))
            return bytes(comp.finish())
        if codec == ZSTD:
            return bytes(cramjam.zstd.compress(data, level=level))
    except cramjam.CompressionError as exc:  # pragma: no cover - cramjam does not fail on input
        raise ValueError(f"{CODEC_NAMES[codec]} compression failed: {exc}") from exc
    raise _unknown(codec)


# --------------------------------------------------------------------------------------------
# decompression
# --------------------------------------------------------------------------------------------

def _is_overflow(exc: Exception) -> bool:
    msg = str(exc)
    return any(marker in msg for marker in _OVERFLOW_MARKERS)


def _too_big(codec: int, max_size: int) -> CorruptRecordBatchError:
    return CorruptRecordBatchError(
        f"{CODEC_NAMES[codec]} payload decompresses to more than max_size={max_size} bytes")


def _size_hint(codec: int, data) -> int | None:
    """The output size a frame declares, if it declares one (only a starting guess)."""
    n = len(data)
    if codec == GZIP:
        # ISIZE trailer: uncompressed size mod 2**32 of the last member.
        if n >= 18:
            return _LE_U32.unpack_from(data, n - 4)[0]
        return None
    if codec == LZ4:
        # magic(4) FLG(1) BD(1) [content size (8, little endian)] HC(1)
        if n >= 15 and data[4] & 0x08:
            return int.from_bytes(data[6:14], "little")
        return None
    if codec == ZSTD:
        # magic(4) FHD(1) [window descriptor] [dictionary id] [frame content size]
        if n < 6 or bytes(data[0:4]) != b"\x28\xb5\x2f\xfd":
            return None
        fhd = data[4]
        fcs_flag = fhd >> 6
        single_segment = (fhd >> 5) & 1
        did_size = (0, 1, 2, 4)[fhd & 3]
        fcs_size = (1 if single_segment else 0, 2, 4, 8)[fcs_flag]
        if fcs_size == 0:
            return None
        pos = 5 + (0 if single_segment else 1) + did_size
        if pos + fcs_size > n:
            return None
        value = int.from_bytes(data[pos:pos + fcs_size], "little")
        return value + 256 if fcs_size == 2 else value
    return None


def _bounded(codec: int, data, max_size: int) -> bytes:
    """Decompress gzip/lz4/zstd into a buffer never larger than ``max_size``."""
    into = getattr(cramjam, _DECOMPRESSED_BY[codec]).decompress_into
    # First guess: the size the frame declares if it has one (capped by what the input could
    # possibly expand to, so a lying header cannot make us allocate), else a multiple of the
    # input.  The buffer then only grows after the codec proved it has more real output.
    hint = _size_hint(codec, data)
    if hint is not None:
        cap = min(max_size, hint, max(_MIN_GUESS, _MAX_RATIO[codec] * len(data)))
    else:
        cap = min(max_size, max(_MIN_GUESS, _GUESS_RATIO * len(data)))
    while True:
        out = bytearray(cap)
        try:
            n = into(data, out)
        except cramjam.DecompressionError as exc:
            if not _is_overflow(exc):
                raise CorruptRecordBatchError(
                    f"invalid {CODEC_NAMES[codec]} payload: {exc}") from None
            if cap >= max_size:
                raise _too_big(codec, max_size) from None
            cap = min(max_size, max(cap * 2, _MIN_GUESS))
            continue
        del out[n:]
        return bytes(out)


def _snappy_raw_len(block) -> int:
    try:
        size = cramjam.snappy.decompress_raw_len(block)
    except cramjam.DecompressionError as exc:
        raise CorruptRecordBatchError(f"invalid snappy block: {exc}") from None
    if size > _SNAPPY_MAX_RATIO * len(block):
        # No valid snappy block expands this much; refuse before allocating for it.
        raise CorruptRecordBatchError(
            f"snappy block of {len(block)} bytes declares {size} uncompressed bytes")
    return size


def _xerial_blocks(mv: memoryview) -> list[memoryview]:
    """Split an xerial-framed stream into its raw snappy blocks (validating only the framing)."""
    blocks = []
    n = len(mv)
    pos = XERIAL_HEADER_SIZE
    unpack = _INT32.unpack_from
    while pos < n:
        # snappy-java accepts concatenated streams: a new header may start at a block boundary.
        if mv[pos:pos + 8] == XERIAL_MAGIC:
            if n - pos < XERIAL_HEADER_SIZE:
                raise CorruptRecordBatchError("truncated xerial snappy header")
            pos += XERIAL_HEADER_SIZE
            continue
        if n - pos < 4:
            raise CorruptRecordBatchError("truncated xerial snappy block length")
        (size,) = unpack(mv, pos)
        pos += 4
        if size <= 0 or size > n - pos:
            raise CorruptRecordBatchError(
                f"invalid xerial snappy block length {size} ({n - pos} bytes remain)")
        blocks.append(mv[pos:pos + size])
        pos += size
    return blocks


def _snappy_decompress(data, max_size: int | None) -> bytes:
    mv = _byte_view(data)
    if len(mv) >= XERIAL_HEADER_SIZE and mv[:8] == XERIAL_MAGIC:
        blocks = _xerial_blocks(mv)
    else:
        blocks = [mv]  # raw snappy, as librdkafka may send
    # Each raw snappy block starts with its uncompressed length, so the total output size is
    # known (and checked) before anything is allocated.
    sizes = [_snappy_raw_len(block) for block in blocks]
    total = sum(sizes)
    if max_size is not None and total > max_size:
        raise _too_big(SNAPPY, max_size)
    out = bytearray(total)
    view = memoryview(out)
    pos = 0
    into = cramjam.snappy.decompress_raw_into
    try:
        for block, size in zip(blocks, sizes):
            written = into(block, view[pos:pos + size])
            if written != size:
                raise CorruptRecordBatchError(
                    f"snappy block decompressed to {written} bytes, declared {size}")
            pos += size
    except cramjam.DecompressionError as exc:
        raise CorruptRecordBatchError(f"invalid snappy payload: {exc}") from None
    finally:
        view.release()
    return bytes(out)


#: the codecs cramjam decompresses whole: what each one's module is called there
_DECOMPRESSED_BY = {GZIP: "gzip", LZ4: "lz4", ZSTD: "zstd"}


def decompress(codec: int, data, max_size: int | None = None) -> bytes:
    """Decompress a v2 batch's records section compressed with ``codec``.

    Raises :class:`CorruptRecordBatchError` for an unknown codec, input the codec rejects, or
    (when ``max_size`` is given) output that would be larger than ``max_size`` bytes.
    """
    data = _as_bytes_like(data)
    if max_size is not None and max_size < 0:
        raise ValueError("max_size must be >= 0")
    if codec == NONE:
        if max_size is not None and len(data) > max_size:
            raise _too_big(codec, max_size)
        return bytes(data)
    if codec == SNAPPY:
        return _snappy_decompress(data, max_size)
    if codec not in _DECOMPRESSED_BY:
        raise _unknown(codec)
    if max_size is not None:
        return _bounded(codec, data, max_size)
    try:
        return bytes(getattr(cramjam, _DECOMPRESSED_BY[codec]).decompress(data))
    except cramjam.DecompressionError as exc:
        raise CorruptRecordBatchError(f"invalid {CODEC_NAMES[codec]} payload: {exc}") from None
