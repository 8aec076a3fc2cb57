"""The record a classic group writes to ``__consumer_offsets``, in Kafka's format, and the
groups rebuilt from it.

One record type: 2, group metadata (``GroupMetadataKey`` and ``GroupMetadataValue``), the whole
group as its last generation left it, written again by every change; a null value (a
tombstone) deletes the group, not its offsets.  The shared records (offsets, and appending a
batch) are :mod:`mockbroker.core.groups.records`'.
"""

from __future__ import annotations

import struct

from mockbroker.core.groups.classic.group import ClassicGroup
from wire import decode_embedded, embedded_codec

GROUP_METADATA = 2
RECORD_TYPES = (GROUP_METADATA,)
GROUP_METADATA_VALUE_VERSION = 3

_TYPE = struct.Struct(">h")


def _group_key(group_id: str) -> bytes:
    codec = embedded_codec("GroupMetadataKey", 0)
    return _TYPE.pack(GROUP_METADATA) + bytes(codec.encode(codec.cls(group=group_id)))


def group_tombstone(group_id: str) -> tuple[bytes, None]:
    return _group_key(group_id), None


def group_metadata_record(group: ClassicGroup, assignments: dict[str, bytes], now_ms: int):
    codec = embedded_codec("GroupMetadataValue", GROUP_METADATA_VALUE_VERSION)
    cls = codec.cls
    members = []
    for member in group.members.values():
        subscription = member.metadata(group.protocol_name) if group.protocol_name else b""
        members.append(cls.MemberMetadata(
            member_id=member.member_id, group_instance_id=member.group_instance_id,
            client_id=member.client_id, client_host=member.client_host,
            rebalance_timeout=member.rebalance_timeout_ms,
            session_timeout=member.session_timeout_ms, subscription=subscription,
            assignment=assignments.get(member.member_id, b"")))
    value = cls(protocol_type=group.protocol_type or "", generation=group.generation_id,
                protocol=group.protocol_name, leader=group.leader_id,
                current_state_timestamp=now_ms, members=members)
    return _group_key(group.group_id), _TYPE.pack(GROUP_METADATA_VALUE_VERSION) + bytes(
        codec.encode(value))


class Replayer:
    """The classic groups of one partition: the last group-metadata record of each group id
    wins, and a tombstone deletes it."""

    def __init__(self, now_ms: int):
        self._now = now_ms
        self._values: dict = {}

    def record(self, kind: int, key: bytes, value: bytes | None) -> None:
        group_id = embedded_codec("GroupMetadataKey", 0).decode(key)[0].group
        if value is None:
            self._values.pop(group_id, None)
        else:
            self._values[group_id] = decode_embedded("GroupMetadataValue", value)[1]

    def groups(self) -> dict[str, ClassicGroup]:
        return {group_id: ClassicGroup.from_record(group_id, value, self._now)
                for group_id, value in self._values.items()}
