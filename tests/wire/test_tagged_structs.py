"""A tagged struct field is written only when it differs from its default (Kafka's generated
writers compare it with a new default struct): an absent tag reads back as the default."""

from __future__ import annotations

import pytest

from wire import RESPONSE, message_codec, response_class

FETCH = response_class(1)


def partition(**tagged):
    out = FETCH.PartitionData(partition_index=0, high_watermark=5, last_stable_offset=5,
                              log_start_offset=0, records=b"")
    for name, value in tagged.items():
        setattr(out, name, value)
    return out


def tags_written(data: FETCH.PartitionData) -> bytes:
    """A v16 response of this one partition, encoded."""
    codec = message_codec(1, 16, RESPONSE)
    response = FETCH(responses=[FETCH.FetchableTopicResponse(partitions=[data])])
    return bytes(codec.encode(response))


def test_default_tagged_structs_are_left_out():
    plain = tags_written(partition())
    defaults = tags_written(partition(current_leader=FETCH.LeaderIdAndEpoch(),
                                      diverging_epoch=FETCH.EpochEndOffset()))
    assert defaults == plain


@pytest.mark.parametrize("tagged", [
    {"current_leader": FETCH.LeaderIdAndEpoch(leader_id=2)},
    {"current_leader": FETCH.LeaderIdAndEpoch(leader_epoch=7)},
    {"diverging_epoch": FETCH.EpochEndOffset(end_offset=3)},
    {"snapshot_id": FETCH.SnapshotId(epoch=1)},
])
def test_a_tagged_struct_differing_in_one_field_is_written_and_read_back(tagged):
    codec = message_codec(1, 16, RESPONSE)
    data = tags_written(partition(**tagged))
    assert len(data) > len(tags_written(partition()))
    decoded, _ = codec.decode(data)
    (name, value), = tagged.items()
    assert getattr(decoded.responses[0].partitions[0], name) == value
