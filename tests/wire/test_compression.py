"""Tests for wire.compression: round trips, interop with kafka-python's codecs, Kafka's framing
requirements, and the max_size guard."""

from __future__ import annotations

import gzip
import os
import struct
import time
import tracemalloc

import cramjam
import pytest
from hypothesis import given, settings, strategies as st
from kafka import codec as kcodec

from wire import compression as c
from wire.exceptions import CorruptRecordBatchError, DecodeError

CODECS = [c.GZIP, c.SNAPPY, c.LZ4, c.ZSTD]
ALL_CODECS = [c.NONE, *CODECS]


def payload(n: int, seed: int = 0) -> bytes:
    """Deterministic, compressible test data of exactly n bytes."""
    chunk = (b"kafka-record-%d-" % seed) * 7 + bytes(range(256))
    return (chunk * (n // len(chunk) + 1))[:n]


def random_payload(n: int) -> bytes:
    return os.urandom(n)


# ----------------------------------------------------------------------------------------------
# constants
# ----------------------------------------------------------------------------------------------

def test_codec_ids_and_names():
    assert (c.NONE, c.GZIP, c.SNAPPY, c.LZ4, c.ZSTD) == (0, 1, 2, 3, 4)
    assert c.CODEC_NAMES == {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


# ----------------------------------------------------------------------------------------------
# round trips
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("codec", ALL_CODECS, ids=lambda k: c.CODEC_NAMES[k])
@pytest.mark.parametrize("size", [0, 1, 100, 32 * 1024, 32 * 1024 + 1, 200_000])
def test_round_trip(codec, size):
    for data in (payload(size), random_payload(size)):
        packed = c.compress(codec, data)
        assert isinstance(packed, bytes)
        assert c.decompress(codec, packed) == data
        assert c.decompress(codec, packed, max_size=size) == data


@pytest.mark.parametrize("codec", ALL_CODECS, ids=lambda k: c.CODEC_NAMES[k])
def test_accepts_bytearray_and_memoryview(codec):
    data = payload(5000)
    for form in (bytearray(data), memoryview(data), memoryview(b"xx" + data)[2:]):
        packed = c.compress(codec, form)
        assert c.decompress(codec, packed) == data
        assert c.decompress(codec, bytearray(packed)) == data
        assert c.decompress(codec, memoryview(b"..." + packed)[3:], max_size=5000) == data


@pytest.mark.parametrize("codec", CODECS, ids=lambda k: c.CODEC_NAMES[k])
def test_compression_actually_compresses(codec):
    data = b"a" * 100_000
    assert len(c.compress(codec, data)) < 10_000


@settings(max_examples=60, deadline=None)
@given(codec=st.sampled_from(ALL_CODECS), data=st.binary(max_size=3000))
def test_round_trip_property(codec, data):
    assert c.decompress(codec, c.compress(codec, data)) == data
    assert c.decompress(codec, c.compress(codec, data), max_size=len(data)) == data


# ----------------------------------------------------------------------------------------------
# interop with kafka-python's codecs (which use python-snappy, lz4, zstandard)
# ----------------------------------------------------------------------------------------------

KP_ENCODE = {
    c.GZIP: kcodec.gzip_encode,
    c.SNAPPY: kcodec.snappy_encode,
    c.LZ4: kcodec.lz4_encode,
    c.ZSTD: kcodec.zstd_encode,
}
KP_DECODE = {
    c.GZIP: kcodec.gzip_decode,
    c.SNAPPY: kcodec.snappy_decode,
    c.LZ4: kcodec.lz4_decode,
    c.ZSTD: kcodec.zstd_decode,
}


@pytest.mark.parametrize("codec", CODECS, ids=lambda k: c.CODEC_NAMES[k])
@pytest.mark.parametrize("size", [0, 10, 70_000, 300_000])
def test_interop_with_kafka_python(codec, size):
    assert kcodec.has_snappy() and kcodec.has_lz4() and kcodec.has_zstd()
    data = payload(size, seed=size) + random_payload(100)
    assert c.decompress(codec, KP_ENCODE[codec](data)) == data
    assert KP_DECODE[codec](c.compress(codec, data)) == data


# ----------------------------------------------------------------------------------------------
# snappy: xerial framing (as written by the Java client) and raw snappy
# ----------------------------------------------------------------------------------------------

def test_snappy_writes_xerial_framing():
    data = payload(100_000)
    packed = c.compress(c.SNAPPY, data)
    assert packed[:16] == b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
    # Walk the blocks by hand: [int32 length][raw snappy], 32 KiB of input per block.
    pos, out, sizes = 16, [], []
    while pos < len(packed):
        (n,) = struct.unpack_from(">i", packed, pos)
        block = packed[pos + 4:pos + 4 + n]
        out.append(bytes(cramjam.snappy.decompress_raw(block)))
        sizes.append(len(out[-1]))
        pos += 4 + n
    assert pos == len(packed)
    assert b"".join(out) == data
    assert sizes == [32768, 32768, 32768, 100_000 - 3 * 32768]


def test_snappy_accepts_raw_snappy():
    data = payload(50_000)
    raw = bytes(cramjam.snappy.compress_raw(data))
    assert raw[:1] != b"\x82"
    assert c.decompress(c.SNAPPY, raw) == data
    assert c.decompress(c.SNAPPY, raw, max_size=50_000) == data
    assert c.decompress(c.SNAPPY, kcodec.snappy_encode(data, xerial_compatible=False)) == data


def test_snappy_accepts_concatenated_xerial_streams_and_odd_version_fields():
    a, b = payload(40_000, 1), payload(1000, 2)
    assert c.decompress(c.SNAPPY, c.compress(c.SNAPPY, a) + c.compress(c.SNAPPY, b)) == a + b
    # Some producers write version/compat little-endian; only the magic is significant.
    odd = bytearray(c.compress(c.SNAPPY, a))
    odd[8:16] = struct.pack("<ii", 1, 1)
    assert c.decompress(c.SNAPPY, bytes(odd)) == a


def test_snappy_header_only_stream_is_empty():
    assert c.decompress(c.SNAPPY, c.XERIAL_HEADER) == b""


@pytest.mark.parametrize("bad", [
    c.XERIAL_HEADER + b"\x00\x00\x00",                        # truncated block length
    c.XERIAL_HEADER + b"\x00\x00\x00\x10abc",                 # block length past end
    c.XERIAL_HEADER + b"\xff\xff\xff\xff" + b"x" * 8,         # negative block length
    c.XERIAL_HEADER + b"\x00\x00\x00\x00",                    # empty block
    c.XERIAL_HEADER + b"\x00\x00\x00\x04\xff\xff\xff\xff",    # garbage block
    b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01\x82SNA",  # truncated inner header
    b"",                                                       # empty raw snappy
    b"\xff\xff\xff\xff\x0f" + b"\x00" * 20,                   # raw: declares 4 GiB from 25 bytes
])
def test_snappy_malformed(bad):
    with pytest.raises(CorruptRecordBatchError):
        c.decompress(c.SNAPPY, bad)


# ----------------------------------------------------------------------------------------------
# lz4: Kafka's Java reader needs version 1 frames with independent blocks
# ----------------------------------------------------------------------------------------------

def test_lz4_frames_are_kafka_compatible():
    packed = c.compress(c.LZ4, payload(300_000))
    assert packed[:4] == b"\x04\x22\x4d\x18"           # frame magic 0x184D2204, little endian
    flg, bd = packed[4], packed[5]
    assert flg >> 6 == 1                                 # version 01
    assert flg & 0x20                                    # block independence (Java rejects linked)
    assert flg & 0x03 == 0                               # reserved / dictionary id bits clear
    assert bd & 0x8F == 0 and 4 <= (bd >> 4) & 7 <= 7    # block max size 64 KiB .. 4 MiB


def test_lz4_accepts_frames_from_other_writers():
    import lz4.frame

    data = payload(200_000)
    for kwargs in ({}, {"block_linked": False, "content_checksum": True},
                   {"block_checksum": True, "store_size": False}, {"block_linked": True}):
        assert c.decompress(c.LZ4, lz4.frame.compress(data, **kwargs)) == data
        assert c.decompress(c.LZ4, lz4.frame.compress(data, **kwargs), max_size=200_000) == data


# ----------------------------------------------------------------------------------------------
# zstd / gzip specifics
# ----------------------------------------------------------------------------------------------

def test_zstd_frames_without_content_size():
    import zstandard

    data = payload(300_000)
    cobj = zstandard.ZstdCompressor(write_content_size=False).compressobj()
    streamed = cobj.compress(data) + cobj.flush()
    assert c._size_hint(c.ZSTD, streamed) is None
    assert c.decompress(c.ZSTD, streamed) == data
    assert c.decompress(c.ZSTD, streamed, max_size=300_000) == data
    with pytest.raises(CorruptRecordBatchError):
        c.decompress(c.ZSTD, streamed, max_size=299_999)


def test_zstd_content_size_hint_is_read():
    import zstandard

    for n in (0, 100, 300, 70_000, 5_000_000):
        frame = zstandard.ZstdCompressor(write_content_size=True).compress(b"z" * n)
        assert c._size_hint(c.ZSTD, frame) == n


def test_multiple_frames_and_members():
    import zstandard

    a, b = payload(10_000, 1), payload(20_000, 2)
    assert c.decompress(c.GZIP, gzip.compress(a) + gzip.compress(b)) == a + b
    assert c.decompress(c.GZIP, gzip.compress(a) + gzip.compress(b), max_size=30_000) == a + b
    z = zstandard.ZstdCompressor()
    assert c.decompress(c.ZSTD, z.compress(a) + z.compress(b), max_size=30_000) == a + b


# ----------------------------------------------------------------------------------------------
# errors
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("codec", CODECS, ids=lambda k: c.CODEC_NAMES[k])
def test_garbage_is_corrupt(codec):
    garbage = [b"", bytes(range(255, 191, -1)), b"not compressed at all" * 10]
    if codec != c.SNAPPY:
        garbage.append(b"\x00")   # (a lone zero byte is a valid, empty raw snappy stream)
    for bad in garbage:
        with pytest.raises(CorruptRecordBatchError):
            c.decompress(codec, bad)
        with pytest.raises(CorruptRecordBatchError):
            c.decompress(codec, bad, max_size=1 << 20)


@pytest.mark.parametrize("codec", CODECS, ids=lambda k: c.CODEC_NAMES[k])
def test_truncated_is_corrupt(codec):
    packed = c.compress(codec, random_payload(10_000))
    for cut in (1, 5, len(packed) // 2):
        with pytest.raises(CorruptRecordBatchError):
            c.decompress(codec, packed[:-cut])


@pytest.mark.parametrize("codec", [5, 6, 7, -1, 100])
def test_unknown_codec(codec):
    with pytest.raises(CorruptRecordBatchError):
        c.decompress(codec, b"abc")
    with pytest.raises(CorruptRecordBatchError):
        c.compress(codec, b"abc")


def test_errors_are_decode_errors():
    assert issubclass(CorruptRecordBatchError, DecodeError)


# ----------------------------------------------------------------------------------------------
# max_size
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("codec", ALL_CODECS, ids=lambda k: c.CODEC_NAMES[k])
@pytest.mark.parametrize("size", [0, 1000, 100_000, 1_000_000])
def test_max_size_boundary(codec, size):
    data = payload(size)
    packed = c.compress(codec, data)
    assert c.decompress(codec, packed, max_size=size) == data
    assert c.decompress(codec, packed, max_size=size * 3 + 7) == data
    if size:
        with pytest.raises(CorruptRecordBatchError, match="max_size"):
            c.decompress(codec, packed, max_size=size - 1)
        with pytest.raises(CorruptRecordBatchError):
            c.decompress(codec, packed, max_size=0)


def _lie_about_size(codec: int, packed: bytes, claimed: int) -> bytes:
    """Rewrite the uncompressed size a frame declares."""
    buf = bytearray(packed)
    if codec == c.GZIP:
        buf[-4:] = struct.pack("<I", claimed & 0xFFFFFFFF)
    elif codec == c.LZ4:
        assert buf[4] & 0x08, "expected a frame with a content size"
        buf[6:14] = claimed.to_bytes(8, "little")
    elif codec == c.ZSTD:
        assert buf[4] >> 6 == 3, "expected an 8-byte frame content size"
        pos = 5 + (0 if buf[4] & 0x20 else 1)
        buf[pos:pos + 8] = claimed.to_bytes(8, "little")
    return bytes(buf)


def _frame_with_size(codec: int, data: bytes) -> bytes:
    """A frame that declares its uncompressed size (8-byte field for lz4 and zstd)."""
    import lz4.frame

    if codec == c.LZ4:
        return lz4.frame.compress(data, store_size=True)
    if codec == c.ZSTD:
        return _zstd_with_8_byte_size(data)
    return c.compress(codec, data)


def _zstd_with_8_byte_size(data: bytes) -> bytes:
    import zstandard

    frame = zstandard.ZstdCompressor(write_content_size=True).compress(data)
    fhd = frame[4]
    fcs_flag = fhd >> 6
    single = bool(fhd & 0x20)
    assert fhd & 3 == 0
    fcs_size = (1 if single else 0, 2, 4, 8)[fcs_flag]
    pos = 5 + (0 if single else 1)
    size = int.from_bytes(frame[pos:pos + fcs_size], "little") + (256 if fcs_size == 2 else 0)
    # Re-encode the header with an 8-byte content size field (same meaning, widest form).
    new_fhd = (fhd & 0x3F) | 0xC0
    return frame[:4] + bytes([new_fhd]) + frame[5:pos] + size.to_bytes(8, "little") + \
        frame[pos + fcs_size:]


@pytest.mark.parametrize("codec", [c.GZIP, c.LZ4, c.ZSTD], ids=lambda k: c.CODEC_NAMES[k])
def test_size_hints_are_only_guesses(codec):
    """A frame's declared size is a starting guess: a huge claim must not be allocated, and a
    frame with an accurate claim decodes in one go."""
    data = payload(300_000)
    honest = _frame_with_size(codec, data)
    assert c._size_hint(codec, honest) == len(data)
    assert c.decompress(codec, honest, max_size=len(data)) == data

    tiny = _frame_with_size(codec, b"x" * 10)
    claim = 0xFFFFFFFF if codec == c.GZIP else 1 << 40
    liar = _lie_about_size(codec, tiny, claim)
    assert c._size_hint(codec, liar) == claim
    tracemalloc.start()
    try:
        with pytest.raises(CorruptRecordBatchError):
            c.decompress(codec, liar, max_size=256 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, peak


def _bomb(codec: int, size: int) -> bytes:
    """A small payload that decompresses to ``size`` zero bytes, built without a big buffer."""
    chunk = bytes(1 << 20)
    if codec == c.GZIP:
        import zlib

        co = zlib.compressobj(9, zlib.DEFLATED, 31)
        parts = [co.compress(chunk) for _ in range(size >> 20)]
        return b"".join(parts) + co.flush()
    if codec == c.ZSTD:
        import zstandard

        co = zstandard.ZstdCompressor(write_content_size=False).compressobj()
        parts = [co.compress(chunk) for _ in range(size >> 20)]
        return b"".join(parts) + co.flush()
    if codec == c.LZ4:
        import lz4.frame

        co = lz4.frame.LZ4FrameCompressor(block_linked=False)
        parts = [co.begin()] + [co.compress(chunk) for _ in range(size >> 20)]
        return b"".join(parts) + co.flush()
    if codec == c.SNAPPY:
        block = bytes(cramjam.snappy.compress_raw(bytes(32 * 1024)))
        framed = struct.pack(">i", len(block)) + block
        return c.XERIAL_HEADER + framed * (size // (32 * 1024))
    raise AssertionError(codec)


@pytest.mark.parametrize("codec", CODECS, ids=lambda k: c.CODEC_NAMES[k])
def test_decompression_bomb_is_refused_cheaply(codec):
    bomb = _bomb(codec, 256 << 20)           # 256 MiB of zeros
    assert len(bomb) < 16 << 20
    tracemalloc.start()
    try:
        started = time.perf_counter()
        with pytest.raises(CorruptRecordBatchError, match="max_size"):
            c.decompress(codec, bomb, max_size=1 << 20)
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert elapsed < 2.0
    assert peak < 8 << 20, peak


def test_snappy_declared_sizes_checked_before_allocating():
    # Raw snappy whose preamble claims 100 MB: refused from the preamble alone.
    claim = bytearray()
    n = 100_000_000
    while n >= 0x80:
        claim.append((n & 0x7F) | 0x80)
        n >>= 7
    claim.append(n)
    big = bytes(claim) + b"\x00" * 10_000_000
    small = bytes(claim) + b"\x00" * 1000
    tracemalloc.start()
    try:
        with pytest.raises(CorruptRecordBatchError):
            c.decompress(c.SNAPPY, big, max_size=1 << 20)
        with pytest.raises(CorruptRecordBatchError):
            c.decompress(c.SNAPPY, small)   # no max_size: 1 KB cannot expand to 100 MB
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20


def test_negative_max_size_rejected():
    with pytest.raises(ValueError):
        c.decompress(c.GZIP, c.compress(c.GZIP, b"x"), max_size=-1)
