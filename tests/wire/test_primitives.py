"""Kafka's primitive types, standalone as constructs, and golden bytes of whole frames."""

from __future__ import annotations

import struct
import uuid

import pytest
from hypothesis import given, strategies as st

import wire
from wire.exceptions import DecodeError, EncodeError, TruncatedError
from wire.primitives import Bytes, Fixed, Records, String, UVarInt, Uuid
from wire.types import Frame
from wire.types import read_uvarint, read_varint, read_varlong, write_uvarint, write_varint, \
    write_varlong


@pytest.mark.parametrize("value,encoded", [
    (0, b"\x00"), (1, b"\x01"), (127, b"\x7f"), (128, b"\x80\x01"), (300, b"\xac\x02"),
    (2**32 - 1, b"\xff\xff\xff\xff\x0f"),
])
def test_unsigned_varint_golden(value, encoded):
    assert write_uvarint(value) == encoded
    assert read_uvarint(encoded, 0) == (value, len(encoded))
    assert UVarInt().build(value) == encoded
    assert UVarInt().parse(encoded) == value


@pytest.mark.parametrize("value,encoded", [
    (0, b"\x00"), (-1, b"\x01"), (1, b"\x02"), (-64, b"\x7f"), (64, b"\x80\x01"),
    (2**31 - 1, b"\xfe\xff\xff\xff\x0f"), (-(2**31), b"\xff\xff\xff\xff\x0f"),
])
def test_zigzag_varint_golden(value, encoded):
    assert write_varint(value) == encoded
    assert read_varint(encoded, 0) == (value, len(encoded))


@given(st.integers(-(2**63), 2**63 - 1))
def test_varlong_round_trip(value):
    data = write_varlong(value)
    assert len(data) <= 10
    assert read_varlong(data + b"junk", 0) == (value, len(data))


def test_varint_limits():
    with pytest.raises(EncodeError):
        write_varint(2**31)
    with pytest.raises(EncodeError):
        write_uvarint(-1)
    with pytest.raises(DecodeError, match="longer than 5"):
        read_uvarint(b"\x80\x80\x80\x80\x80\x01", 0)
    with pytest.raises(TruncatedError):
        read_uvarint(b"\x80\x80", 0)


@pytest.mark.parametrize("construct,value,encoded", [
    (String(), "kafka", b"\x00\x05kafka"),
    (String(nullable=True), None, b"\xff\xff"),
    (String(compact=True), "kafka", b"\x06kafka"),
    (String(compact=True, nullable=True), None, b"\x00"),
    (String(compact=True), "", b"\x01"),
    (String(), "é", b"\x00\x02\xc3\xa9"),
    (Bytes(), b"\x01\x02", b"\x00\x00\x00\x02\x01\x02"),
    (Bytes(nullable=True), None, b"\xff\xff\xff\xff"),
    (Bytes(compact=True), b"", b"\x01"),
    (Uuid(), uuid.UUID(int=1), b"\x00" * 15 + b"\x01"),
    (Fixed("int32"), -2, b"\xff\xff\xff\xfe"),
    (Fixed("uint16"), 65535, b"\xff\xff"),
    (Fixed("bool"), True, b"\x01"),
])
def test_standalone_constructs(construct, value, encoded):
    assert construct.build(value) == encoded
    assert construct.parse(encoded) == value
    assert construct.compile().parse(encoded) == value


@pytest.mark.parametrize("compact", [False, True])
def test_records_built_from_batches_kept_apart(compact):
    construct = Records(compact=compact, nullable=True)
    assert construct.build([b"ab", b"", b"cde"]) == construct.build(b"abcde")
    assert construct.build([]) == construct.build(b"")
    assert construct.parse(construct.build([b"ab", b"cde"])) == b"abcde"


@pytest.mark.parametrize("version", [4, 11, 12, 17])  # classic and compact records fields
def test_a_fetch_answer_encodes_its_batches_back_to_back(version):
    cls = wire.response_class(1)
    batches = [b"\x01" * 70, b"\x02" * 200, b"\x03" * 5]

    def answer(records):
        return cls(responses=[cls.FetchableTopicResponse(
            topic="t", topic_id=uuid.UUID(int=7), partitions=[
                cls.PartitionData(partition_index=0, high_watermark=3, records=records)])])

    joined = wire.encode_response(1, version, 5, answer(b"".join(batches)))
    assert wire.encode_response(1, version, 5, answer(batches)) == joined
    _, body = wire.decode_response(1, version, joined[4:])
    assert body.responses[0].partitions[0].records == b"".join(batches)
    empty = wire.encode_response(1, version, 5, answer(b""))
    assert wire.encode_response(1, version, 5, answer([])) == empty


@pytest.mark.parametrize("version", [4, 11, 12, 17])
def test_a_fetch_answer_of_many_partitions_is_joined_in_one_piece(version):
    """Each partition's list of batches is noted where it goes and copied in once the rest
    is encoded: the frame is what joining them first would have made, with copy=False too."""
    cls = wire.response_class(1)
    batches = {(t, p): [bytes([16 * t + p]) * (50 + 30 * p), bytes([p]) * 7]
               for t in range(2) for p in range(3)}

    def answer(joined):
        return cls(responses=[cls.FetchableTopicResponse(
            topic=f"t{t}", topic_id=uuid.UUID(int=t + 1), partitions=[cls.PartitionData(
                partition_index=p, high_watermark=p,
                aborted_transactions=[cls.AbortedTransaction(producer_id=p, first_offset=t)],
                records=b"".join(batches[t, p]) if joined else batches[t, p])
                for p in range(3)]) for t in range(2)])

    expected = wire.encode_response(1, version, 5, answer(joined=True))
    frame = wire.encode_response(1, version, 5, answer(joined=False), copy=False)
    assert type(frame) is bytes  # joined from its pieces, not the buffer it was encoded in
    assert frame == expected
    _, body = wire.decode_response(1, version, frame[4:])
    assert [p.records for t in body.responses for p in t.partitions] == [
        b"".join(batches[t, p]) for t in range(2) for p in range(3)]
    # as its pieces: the same bytes, with the stored batches among them as they are
    pieces = wire.encode_response(1, version, 5, answer(joined=False), copy=False, pieces=True)
    assert b"".join(pieces) == expected
    stored = [batch for t in range(2) for p in range(3) for batch in batches[t, p]]
    shared = [piece for piece in pieces if type(piece) is bytes]
    assert len(shared) == len(stored) and all(a is b for a, b in zip(shared, stored))
    # an answer without batches is its frame all the same
    plain = wire.response_class(18)(error_code=0, api_keys=[])
    assert wire.encode_response(18, 3, 5, plain, copy=False, pieces=True) == \
        wire.encode_response(18, 3, 5, plain)


def test_a_frame_copies_noted_batches_in_where_they_were_noted():
    frame = Frame(b"ab")
    frame.defer([b"12", b"3"], 3)
    frame += b"cd"
    frame.defer([], 0)
    frame.defer([b"45"], 2)
    frame += b"e"
    assert frame.final_size() == 10
    assert frame.joined() == b"ab123cd45e"
    pieces = frame.pieces()
    assert [bytes(piece) for piece in pieces] == [b"ab", b"12", b"3", b"cd", b"45", b"e"]
    assert pieces[1] is frame._deferred[0][1][0]  # a batch is handed out, not copied
    plain = Frame(b"xy")
    assert plain.joined() is plain  # nothing noted: the buffer itself, not a copy
    assert plain.pieces() is None


def test_non_nullable_rejects_null():
    with pytest.raises(EncodeError):
        String().build(None)
    with pytest.raises(DecodeError):
        String().parse(b"\xff\xff")
    with pytest.raises(DecodeError):
        String(compact=True).parse(b"\x00")


def test_golden_metadata_v0_request_frame():
    # Metadata v0, correlation id 1, client id "c", topics ["t"]: laid out by hand.
    expected = (struct.pack(">i", 2 + 2 + 4 + 3 + 4 + 3)
                + struct.pack(">hhi", 3, 0, 1) + b"\x00\x01c"
                + struct.pack(">i", 1) + b"\x00\x01t")
    cls = wire.request_class(3)
    frame = wire.encode_request(3, 0, 1, "c", cls(topics=[cls.MetadataRequestTopic(name="t")]))
    assert frame == expected
    request = wire.decode_request(expected[4:])
    assert request.body.topics[0].name == "t"


def test_golden_api_versions_v3_request_frame():
    # Flexible request: header v2 (non-compact client id + empty tag section), compact strings.
    expected_body = b"\x06mock!" + b"\x040.1" + b"\x00"
    expected = (struct.pack(">hhi", 18, 3, 9) + b"\x00\x02me" + b"\x00" + expected_body)
    cls = wire.request_class(18)
    frame = wire.encode_request(18, 3, 9, "me", cls(client_software_name="mock!",
                                                     client_software_version="0.1"),
                                size_prefix=False)
    assert frame == expected


def test_api_versions_response_header_is_always_v0():
    cls = wire.response_class(18)
    frame = wire.encode_response(18, 3, 5, cls(error_code=0), size_prefix=False)
    # correlation id, then straight into the body: no header tag section before error_code
    assert frame[:6] == struct.pack(">ih", 5, 0)
    other = wire.encode_response(3, 12, 5, wire.response_class(3)(), size_prefix=False)
    assert other[4] == 0  # Metadata v12: response header v1 carries an empty tag section


def test_embedded_formats_carry_their_version():
    sub = wire.embedded_struct("ConsumerProtocolSubscription", 3).cls(
        topics=["a", "b"], user_data=None, generation_id=4, rack_id="r1")
    data = wire.encode_embedded("ConsumerProtocolSubscription", 3, sub)
    assert data[:2] == b"\x00\x03"
    version, decoded = wire.decode_embedded("ConsumerProtocolSubscription", data)
    assert version == 3 and decoded.topics == ["a", "b"] and decoded.rack_id == "r1"
    # a newer version than we know is read with our newest definition, trailing bytes ignored
    newer = b"\x00\x09" + data[2:] + b"\x00\x00\x00\x07"
    version, decoded = wire.decode_embedded("ConsumerProtocolSubscription", newer)
    assert version == 9 and decoded.generation_id == 4
