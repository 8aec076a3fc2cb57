"""The native record walk (``wire/_walk.c``) against the pure-Python walk it stands in for:
the same verdict on every records section — well-formed ones, each byte of them changed, cut
short or lengthened, offset deltas out of order, and random bytes — in both offset modes; and
its CRC-32C against the crc32c package's."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crc32c

from wire import records
from wire.exceptions import CorruptRecordBatchError
from wire.records import BATCH_HEADER_SIZE, Record, encode_batch, read_batch_header

native = records._native_check


def test_the_set_up_builds_the_native_walk():
    # the package's own set-up (pip install -e .) compiles it; without a compiler the
    # pure-Python walk would do everything, correctly but far slower
    assert native is not None, "wire._walk was not built"


def python_verdict(data: bytes, count: int, strict: bool, last_delta: int) -> bool:
    """The reference: the pure-Python walk and check_batch's offset-delta rules."""
    try:
        deltas = records._walk_records(data, count)
    except CorruptRecordBatchError:
        return False
    if strict:
        return deltas == list(range(len(deltas)))
    previous = -1
    for delta in deltas:
        if delta <= previous or delta > last_delta:
            return False
        previous = delta
    return True


def same_verdict(data: bytes, count: int, strict: bool, last_delta: int) -> bool:
    expected = python_verdict(data, count, strict, last_delta)
    assert native(data, count, strict, last_delta) is expected, \
        (data.hex(), count, strict, last_delta)
    return expected


headers = st.lists(st.tuples(st.text(max_size=8),
                             st.one_of(st.none(), st.binary(max_size=12))), max_size=3)
a_record = st.tuples(st.one_of(st.none(), st.binary(max_size=20)),
                     st.one_of(st.none(), st.binary(max_size=200)), headers,
                     st.integers(0, 2**40))


def records_section(batch: bytes) -> tuple[bytes, int, int]:
    header = read_batch_header(batch)
    return batch[BATCH_HEADER_SIZE:], header.records_count, header.last_offset_delta


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(a_record, min_size=1, max_size=8), st.data())
def test_every_change_to_a_records_section_gets_the_same_verdict(recs, data):
    batch = encode_batch(recs, base_timestamp=0)
    section, count, last_delta = records_section(batch)
    assert same_verdict(section, count, True, last_delta)
    assert same_verdict(section, count, False, last_delta)
    # each kind of damage, somewhere
    at = data.draw(st.integers(0, len(section) - 1))
    flipped = bytearray(section)
    flipped[at] = data.draw(st.integers(0, 255))
    for candidate in (bytes(flipped), section[:at], section + data.draw(st.binary(
            min_size=1, max_size=4))):
        for strict in (True, False):
            same_verdict(candidate, count, strict, last_delta)
    for wrong_count in (count - 1, count + 1, 0):
        same_verdict(section, wrong_count, True, last_delta)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.binary(max_size=64), st.integers(-1, 5), st.booleans(), st.integers(-1, 5))
def test_random_bytes_get_the_same_verdict(section, count, strict, last_delta):
    same_verdict(section, count, strict, last_delta)


def test_offset_deltas_are_held_to_each_mode():
    # a compacted log's batch: deltas 0, 2, 5 of last delta 5
    batch = encode_batch([Record(offset, 0, b"k", b"v", []) for offset in (0, 2, 5)],
                         base_timestamp=0)
    section, count, last_delta = records_section(batch)
    assert (count, last_delta) == (3, 5)
    assert not same_verdict(section, count, True, last_delta)  # a producer's must be 0, 1, 2
    assert same_verdict(section, count, False, last_delta)
    assert not same_verdict(section, count, False, 4)  # past the last offset delta


@pytest.mark.parametrize("varint", [
    b"\xff\xff\xff\xff\x7f",            # 5 bytes: the longest varint, wrapping past 32 bits
    b"\xff\xff\xff\xff\xff\x01",        # 6 bytes: too long
    b"\x80",                            # cut short
])
def test_varint_edges_get_the_same_verdict(varint):
    for count in (0, 1):
        same_verdict(varint + b"\x00" * 8, count, True, 0)


def test_check_batch_refuses_with_the_reference_walks_words():
    batch = bytearray(encode_batch([(b"k", b"v")], base_timestamp=0))
    batch[BATCH_HEADER_SIZE] = 0x7E  # the record's length: far more than is there
    fixed = records.compute_crc(bytes(batch))
    batch[17:21] = fixed.to_bytes(4, "big")
    with pytest.raises(CorruptRecordBatchError, match="record 0 length 63 invalid"):
        records.check_batch(bytes(batch))


# -- the CRC-32C -------------------------------------------------------------------------------

def test_the_crc_of_the_standard_check_string():
    assert records._crc32c(b"123456789") == 0xE3069283  # CRC-32C's published check value
    assert records._crc32c(b"") == 0


@pytest.mark.parametrize("size", [1, 7, 8, 9, 1535, 1536, 1537, 3071, 4608, 10240, 70_000])
def test_the_crc_agrees_with_the_crc32c_package_at_block_edges(size):
    # 1536 bytes: the three 512-byte streams the instruction path runs side by side
    data = bytes((i * 131 + size) % 251 for i in range(size))
    assert records._crc32c(data) == crc32c.crc32c(data)
    assert records._crc32c(memoryview(data)[5:]) == crc32c.crc32c(data[5:])


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=5000))
def test_the_crc_agrees_with_the_crc32c_package(data):
    assert records._crc32c(data) == crc32c.crc32c(data)


def test_a_batch_with_one_byte_changed_fails_its_crc():
    batch = bytearray(encode_batch([Record(0, 0, b"k", b"v" * 3000, [])]))
    assert records.crc_ok(bytes(batch))
    batch[-1] ^= 0x01
    assert not records.crc_ok(bytes(batch))
