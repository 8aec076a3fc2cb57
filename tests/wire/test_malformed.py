"""Malformed input gives a typed error at once: never a hang, never a big allocation."""

from __future__ import annotations

import struct
import tracemalloc
import uuid

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import wire
from wire import REQUEST, RESPONSE, DecodeError, TruncatedError, message_struct
from wire.builder import request_class


def produce_request():
    cls = request_class(0)
    return cls(transactional_id=None, acks=-1, timeout_ms=30000, topic_data=[
        cls.TopicProduceData(name="orders", topic_id=uuid.uuid4(), partition_data=[
            cls.PartitionProduceData(index=i, records=b"\x00" * 40) for i in range(3)])])


def metadata_request():
    cls = request_class(3)
    return cls(topics=[cls.MetadataRequestTopic(name="a"), cls.MetadataRequestTopic(name="b")],
               allow_auto_topic_creation=True)


FRAMES = {
    f"produce-v{v}": wire.encode_request(0, v, 11, "client-é", produce_request(), size_prefix=False)
    for v in (3, 8, 9, 13)
} | {
    f"metadata-v{v}": wire.encode_request(3, v, 12, None, metadata_request(), size_prefix=False)
    for v in (0, 4, 9, 12, 13)
}


@pytest.mark.parametrize("name", sorted(FRAMES))
def test_every_truncation_is_a_decode_error(name):
    frame = FRAMES[name]
    wire.decode_request(frame)  # the whole frame is fine
    for cut in range(len(frame)):
        with pytest.raises(DecodeError):
            wire.decode_request(frame[:cut], strict=True)


@pytest.mark.parametrize("name", sorted(FRAMES))
def test_trailing_bytes_are_ignored_as_kafka_does_unless_strict(name):
    request = wire.decode_request(FRAMES[name] + b"\x00\x01\x00")
    assert request.trailing_bytes == 3
    assert request.body == wire.decode_request(FRAMES[name]).body
    with pytest.raises(DecodeError, match="unexpected bytes"):
        wire.decode_request(FRAMES[name] + b"\x00", strict=True)


def test_unknown_api_key_carries_the_header():
    frame = struct.pack(">hhi", 999, 0, 42) + b"\x00\x00"
    with pytest.raises(wire.UnknownApiKeyError) as info:
        wire.decode_request(frame)
    assert info.value.api_key == 999
    assert info.value.header.correlation_id == 42


def test_unsupported_version_carries_header_and_range():
    frame = struct.pack(">hhih", 18, 99, 7, 3) + b"abc" + b"\x00"
    with pytest.raises(wire.UnsupportedVersionError) as info:
        wire.decode_request(frame)
    exc = info.value
    assert (exc.api_key, exc.api_version, exc.min_version, exc.max_version) == (18, 99, 0, 5)
    assert exc.header.correlation_id == 7
    assert exc.header.client_id == "abc"


def test_removed_old_versions_are_unsupported():
    # Kafka 4 dropped Produce v0-2; a v2 request is not decodable.
    frame = struct.pack(">hhih", 0, 2, 1, -1)
    with pytest.raises(wire.UnsupportedVersionError):
        wire.decode_request(frame)


def test_frame_shorter_than_a_header():
    with pytest.raises(TruncatedError):
        wire.decode_request(b"\x00\x03\x00")


def _metadata_v0_with_topic_count(count: int) -> bytes:
    return struct.pack(">hhih", 3, 0, 1, -1) + struct.pack(">i", count)


@pytest.mark.parametrize("count", [2**31 - 1, 100_000_000, 5])
def test_huge_array_length_fails_before_allocating(count):
    frame = _metadata_v0_with_topic_count(count) + b"\x00\x01a"
    tracemalloc.start()
    try:
        with pytest.raises(TruncatedError, match="array"):
            wire.decode_request(frame)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024


def test_negative_lengths():
    with pytest.raises(DecodeError, match="non-nullable array"):
        wire.decode_request(_metadata_v0_with_topic_count(-2))
    # -1 is null, which Metadata v0 does not allow for its topic list
    with pytest.raises(DecodeError):
        wire.decode_request(_metadata_v0_with_topic_count(-1))
    # a topic name of length -5
    frame = _metadata_v0_with_topic_count(1) + struct.pack(">h", -5)
    with pytest.raises(DecodeError, match="length -5"):
        wire.decode_request(frame)


def test_string_length_past_the_end():
    frame = _metadata_v0_with_topic_count(1) + struct.pack(">h", 30000) + b"abc"
    tracemalloc.start()
    try:
        with pytest.raises(TruncatedError):
            wire.decode_request(frame)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024


def test_bad_varint():
    # Metadata v9 is flexible: the topic array length is an unsigned varint.
    header = struct.pack(">hhih", 3, 9, 1, -1) + b"\x00"
    with pytest.raises(DecodeError, match="varint"):
        wire.decode_request(header + b"\xff\xff\xff\xff\xff\xff\x01")
    with pytest.raises(TruncatedError):
        wire.decode_request(header + b"\xff\xff")


def test_compact_length_past_the_end_in_flexible_version():
    header = struct.pack(">hhih", 3, 9, 1, -1) + b"\x00"
    frame = header + b"\x02" + b"\xff\xff\x03" + b"abc"  # one topic, name of 65534 bytes
    with pytest.raises(TruncatedError):
        wire.decode_request(frame)


def test_tagged_field_overrunning_its_size_is_an_error():
    codec = message_struct(0, 10, RESPONSE)
    cls = codec.cls
    resp = cls(responses=[cls.TopicProduceResponse(name="t", partition_responses=[
        cls.PartitionProduceResponse(index=0, current_leader=cls.LeaderIdAndEpoch(
            leader_id=2, leader_epoch=5))])])
    data = bytearray(codec.encode(resp))
    decoded = codec.decode_exact(bytes(data))
    assert decoded.responses[0].partition_responses[0].current_leader.leader_id == 2
    # The partition's tag section is: count=1, tag=0, size=9, then 4+4 bytes and a 0 byte.
    at = data.index(bytes([1, 0, 9]))
    data[at + 2] = 5  # claim the value is 5 bytes long
    with pytest.raises(DecodeError):
        codec.decode_exact(bytes(data))


def test_out_of_order_tags_are_rejected():
    codec = message_struct(18, 3, REQUEST)
    good = codec.cls(client_software_name="x", client_software_version="1")
    data = bytes(codec.encode(good))[:-1] + b"\x02\x05\x00\x03\x00"
    with pytest.raises(DecodeError, match="out of order"):
        codec.decode_exact(data)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(FRAMES)), st.data())
def test_random_corruption_only_ever_raises_decode_errors(name, data):
    frame = bytearray(FRAMES[name])
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(frame) - 1))
        frame[at] = data.draw(st.integers(0, 255))
    try:
        wire.decode_request(bytes(frame))
    except DecodeError:
        pass


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=64))
def test_random_bytes_only_ever_raise_decode_errors(frame):
    try:
        wire.decode_request(frame)
    except DecodeError:
        pass


def test_encode_errors_are_typed():
    codec = message_struct(3, 0, REQUEST)
    with pytest.raises(wire.EncodeError, match="non-nullable"):
        codec.encode(codec.cls(topics=None))
    with pytest.raises(wire.EncodeError):
        codec.encode(codec.cls(topics=[codec.cls.MetadataRequestTopic(name=None)]))
    with pytest.raises(wire.EncodeError):
        message_struct(0, 9, REQUEST).encode(request_class(0)(acks=1 << 20))
    with pytest.raises(wire.EncodeError, match="expected"):
        codec.encode(42)
