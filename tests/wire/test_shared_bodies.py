"""Request bodies decoded once and shared (``wire.SharedBodies``): what a request repeated word
for word decodes to, its header read afresh every time."""

from __future__ import annotations

import uuid

import pytest

import wire

FETCH, HEARTBEAT, METADATA = 1, 12, 3
HEARTBEAT_REQUEST = wire.request_class(HEARTBEAT)


def heartbeat(member: str = "m-1", generation: int = 3):
    return HEARTBEAT_REQUEST(group_id="g", generation_id=generation, member_id=member,
                             group_instance_id=None)


def frame(api_key: int, version: int, correlation_id: int, client_id: str, body) -> bytes:
    return bytes(wire.encode_request(api_key, version, correlation_id, client_id, body,
                                     size_prefix=False))


def test_the_same_body_is_decoded_once_under_any_header():
    shared = wire.SharedBodies({HEARTBEAT})
    first = wire.decode_request(frame(HEARTBEAT, 4, 1, "a", heartbeat()), shared=shared)
    again = wire.decode_request(frame(HEARTBEAT, 4, 2, "another-client", heartbeat()),
                                shared=shared)
    assert again.body is first.body and len(shared) == 1
    assert (first.header.correlation_id, first.header.client_id) == (1, "a")
    assert (again.header.correlation_id, again.header.client_id) == (2, "another-client")
    assert again.body == heartbeat() and again.trailing_bytes == 0


def test_other_bytes_or_another_version_decode_anew():
    shared = wire.SharedBodies({HEARTBEAT})
    base = wire.decode_request(frame(HEARTBEAT, 4, 1, "a", heartbeat()), shared=shared)
    later = wire.decode_request(frame(HEARTBEAT, 4, 1, "a", heartbeat(generation=4)),
                                shared=shared)
    older = wire.decode_request(frame(HEARTBEAT, 3, 1, "a", heartbeat()), shared=shared)
    assert later.body.generation_id == 4 and base.body.generation_id == 3
    assert older.body is not base.body and older.header.api_version == 3
    assert len(shared) == 3


def test_requests_it_does_not_name_are_decoded_every_time():
    shared = wire.SharedBodies({HEARTBEAT})
    body = wire.request_class(METADATA)(topics=None, allow_auto_topic_creation=False,
                                        include_topic_authorized_operations=False)
    one, two = (wire.decode_request(frame(METADATA, 12, n, "a", body), shared=shared)
                for n in (1, 2))
    assert one.body == two.body and one.body is not two.body and len(shared) == 0


def test_bytes_after_the_body_are_counted_for_each_frame():
    shared = wire.SharedBodies({HEARTBEAT})
    plain = frame(HEARTBEAT, 4, 1, "a", heartbeat())
    assert wire.decode_request(plain, shared=shared).trailing_bytes == 0
    padded = wire.decode_request(plain + b"\0\0\0", shared=shared)
    assert padded.trailing_bytes == 3 and padded.body == heartbeat()
    with pytest.raises(wire.DecodeError, match="3 unexpected bytes"):
        wire.decode_request(plain + b"\0\0\0", shared=shared, strict=True)


def test_a_full_table_starts_afresh():
    shared = wire.SharedBodies({HEARTBEAT}, limit=2)
    for n in range(3):
        wire.decode_request(frame(HEARTBEAT, 4, 1, "a", heartbeat(member=f"m-{n}")),
                            shared=shared)
    assert len(shared) == 1
    last = wire.decode_request(frame(HEARTBEAT, 4, 9, "a", heartbeat(member="m-2")),
                               shared=shared)
    assert last.body.member_id == "m-2" and len(shared) == 1


def test_a_fetch_body_decodes_as_without_sharing():
    cls = wire.request_class(FETCH)
    body = cls(replica_id=-1, max_wait_ms=500, min_bytes=1, max_bytes=1 << 20, isolation_level=0,
               session_id=0, session_epoch=-1, topics=[cls.FetchTopic(
                   topic_id=uuid.uuid4(), partitions=[cls.FetchPartition(
                       partition=0, fetch_offset=7, partition_max_bytes=1 << 20)])],
               forgotten_topics_data=[], rack_id="")
    data = frame(FETCH, 16, 5, "rdkafka", body)
    shared = wire.SharedBodies({FETCH})
    assert wire.decode_request(data, shared=shared) == wire.decode_request(data)
    assert wire.decode_request(data, shared=shared).body is \
        wire.decode_request(data, shared=shared).body
