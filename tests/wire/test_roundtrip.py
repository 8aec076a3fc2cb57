"""Hypothesis round trips for every (API, version, direction) and every embedded format.

A random value encodes, decodes to an equal value (unknown tagged fields included), and
re-encodes to the very same bytes; construct's own parse/build and its compiled form agree.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.wire.strategies import message_values
from wire import REQUEST, RESPONSE, embedded_struct, message_struct
from wire.builder import EMBEDDED
from wire.definitions import APIS
from wire.model import Struct

CASES = [(key, version, direction) for key, spec in sorted(APIS.items())
         for version in spec.request.versions() for direction in (REQUEST, RESPONSE)]
EMBEDDED_CASES = [(name, version) for name, m in EMBEDDED.items() for version in m.versions()]

SETTINGS = settings(max_examples=12, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def unknown_tags_equal(a, b) -> bool:
    """Unknown tagged fields survive everywhere in the tree, not only at the top."""
    if isinstance(a, Struct):
        if (a._unknown_tags or None) != (b._unknown_tags or None):
            return False
        return all(unknown_tags_equal(getattr(a, n), getattr(b, n)) for n in a._field_names)
    if isinstance(a, list):
        return len(a) == len(b) and all(unknown_tags_equal(x, y) for x, y in zip(a, b))
    return True


def check_round_trip(codec, value):
    data = bytes(codec.encode(value))
    decoded, end = codec.decode(data)
    assert end == len(data)
    assert decoded == value
    assert unknown_tags_equal(decoded, value)
    assert bytes(codec.encode(decoded)) == data
    return data


@pytest.mark.parametrize("api_key,version,direction", CASES,
                         ids=[f"{APIS[k].name}-v{v}-{d}" for k, v, d in CASES])
def test_round_trip(api_key, version, direction):
    codec = message_struct(api_key, version, direction)

    @SETTINGS
    @given(message_values(codec.message, codec.cls, version))
    def run(value):
        check_round_trip(codec, value)

    run()


@pytest.mark.parametrize("name,version", EMBEDDED_CASES,
                         ids=[f"{n}-v{v}" for n, v in EMBEDDED_CASES])
def test_embedded_round_trip(name, version):
    codec = embedded_struct(name, version)

    @SETTINGS
    @given(message_values(codec.message, codec.cls, version))
    def run(value):
        check_round_trip(codec, value)

    run()


# A handful of busy messages also go through construct's own API, plain and compiled.
CONSTRUCT_CASES = [(0, 9, REQUEST), (0, 13, RESPONSE), (1, 17, RESPONSE), (3, 12, RESPONSE),
                   (11, 9, REQUEST), (18, 3, RESPONSE), (8, 2, REQUEST)]


@pytest.mark.parametrize("api_key,version,direction", CONSTRUCT_CASES)
def test_construct_parse_build_and_compile_agree(api_key, version, direction):
    codec = message_struct(api_key, version, direction)
    compiled = codec.compile()

    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(message_values(codec.message, codec.cls, version), st.binary(max_size=4))
    def run(value, trailer):
        data = bytes(codec.encode(value))
        assert codec.build(value) == data
        assert compiled.build(value) == data
        assert codec.parse(data) == value
        assert compiled.parse(data) == value
        # parse_stream leaves the stream right after the message
        import io

        stream = io.BytesIO(data + trailer)
        assert codec.parse_stream(stream) == value
        assert stream.read() == trailer

    run()


def test_defaults_of_absent_fields_come_back_from_old_versions():
    # OffsetCommit v2 has no group_instance_id; decoding gives Kafka's default (null).
    codec = message_struct(8, 2, REQUEST)
    req = codec.cls(group_id="g", generation_id_or_member_epoch=3, member_id="m",
                    group_instance_id="static-1")
    decoded = codec.decode_exact(bytes(codec.encode(req)))
    assert decoded.group_instance_id is None
    assert decoded.generation_id_or_member_epoch == 3


# Request headers: decode_request_header reads the usual header (a client id and, when
# flexible, no tagged field) itself and leaves anything else to the header codec; both must
# read every header the same way.
_HEADER_VERSIONS = {1: (3, 8), 2: (3, 12)}  # Metadata v8 has a classic header, v12 a flexible one


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(version=st.sampled_from([1, 2]),
       client_id=st.none() | st.text(max_size=20) | st.binary(max_size=8).map(
           lambda raw: raw.decode("utf-8", "surrogateescape")),
       tags=st.none() | st.dictionaries(st.integers(0, 300), st.binary(max_size=6), max_size=3),
       body=st.binary(max_size=6), cut=st.integers(0, 40))
def test_request_headers_read_as_the_header_codec_reads_them(version, client_id, tags, body,
                                                             cut):
    from wire.codec import embedded_codec
    from wire.exceptions import WireError
    from wire.protocol import decode_request_header

    api_key, api_version = _HEADER_VERSIONS[version]
    codec = embedded_codec("RequestHeader", version)
    header = codec.cls(request_api_key=api_key, request_api_version=api_version,
                       correlation_id=7, client_id=client_id)
    if version == 2:
        header._unknown_tags = tags
    frame = bytes(codec.encode(header)) + body
    for data in (frame, frame[:max(len(frame) - cut, 0)]):
        try:
            expected, pos = codec.decode(data)
        except WireError as exc:
            with pytest.raises(type(exc)):
                decode_request_header(data)
            continue
        got, got_pos = decode_request_header(data)
        assert (got.api_key, got.api_version, got.correlation_id, got.client_id,
                got.unknown_tags or None, got_pos) == \
            (api_key, api_version, 7, expected.client_id, expected._unknown_tags or None, pos)
