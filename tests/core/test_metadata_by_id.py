"""Metadata requests that name topics by id, answered as Kafka 4.4 answers them, through
:meth:`Core.receive` so that the answer must also encode (a fuzzer found one that did not)."""

from __future__ import annotations

import uuid

import pytest

import wire
from mockbroker.core.dispatch import Connection
from tests.core.harness import make_core
from wire import errors

METADATA = 3
ZERO = uuid.UUID(int=0)
R = wire.request_class(METADATA)


@pytest.fixture
def core():
    core = make_core(1)
    core.cluster.create_topic("orders", 2)
    return core


def _ask(core, version: int, *topics: tuple[str | None, uuid.UUID]):
    body = R(topics=[R.MetadataRequestTopic(name=n, topic_id=i) for n, i in topics],
             allow_auto_topic_creation=False)
    frame = wire.encode_request(METADATA, version, 5, "fuzz", body, size_prefix=False)
    outcome = core.receive(frame, Connection(0, 1))
    assert outcome.done and isinstance(outcome.value, (bytes, bytearray)), outcome.value
    return wire.decode_response(METADATA, version, outcome.value[4:])[1]


def _topics(response):
    return [(t.error_code, t.name, t.topic_id, len(t.partitions)) for t in response.topics]


@pytest.mark.parametrize("version", [10, 11])
def test_before_v12_a_topic_by_id_fails_the_whole_request_with_invalid_request(core, version):
    some_id = uuid.uuid4()
    response = _ask(core, version, (None, some_id))
    assert (response.brokers, response.controller_id) == ([], -1)
    assert _topics(response) == [(errors.INVALID_REQUEST, "", some_id, 0)]
    # a good topic beside it is refused too, and a null name without an id as well
    response = _ask(core, version, ("orders", ZERO), (None, ZERO))
    assert _topics(response) == [(errors.INVALID_REQUEST, "orders", ZERO, 0),
                                 (errors.INVALID_REQUEST, "", ZERO, 0)]
    # by name alone, as before
    assert _topics(_ask(core, version, ("orders", ZERO)))[0][:2] == (errors.NONE, "orders")


@pytest.mark.parametrize("version", [12, 13])
def test_from_v12_ids_are_answered_and_names_beside_them_ignored(core, version):
    known = core.cluster.topics["orders"].topic_id
    unknown = uuid.uuid4()
    response = _ask(core, version, (None, known), ("elsewhere", ZERO), (None, unknown),
                    ("wrong-name", known))
    assert [b.node_id for b in response.brokers] == [0]
    assert _topics(response) == [(errors.UNKNOWN_TOPIC_ID, None, unknown, 0),
                                 (errors.NONE, "orders", known, 2)]


@pytest.mark.parametrize("version", [12, 13])
def test_from_v12_a_topic_with_neither_name_nor_id_fails_the_request(core, version):
    response = _ask(core, version, (None, ZERO), ("orders", ZERO))
    assert response.brokers == []
    assert _topics(response) == [(errors.UNKNOWN_SERVER_ERROR, "", ZERO, 0),
                                 (errors.UNKNOWN_SERVER_ERROR, "orders", ZERO, 0)]
