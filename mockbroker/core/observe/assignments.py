"""A consumer group's assignment as a reader wants it: {topic name: sorted partitions}, from
either protocol's form (a classic member's ConsumerProtocolAssignment bytes, a KIP-848
member's partitions by topic id).  Shared by the admin views and the group watch."""

from __future__ import annotations

from wire import WireError, decode_embedded


def decode_assignment(protocol_type: str | None, data: bytes) -> dict[str, list[int]] | None:
    if protocol_type != "consumer" or not data:
        return {} if protocol_type == "consumer" else None
    try:
        _, assignment = decode_embedded("ConsumerProtocolAssignment", data)
    except WireError:
        return None
    out: dict[str, list[int]] = {}
    for entry in assignment.assigned_partitions:
        out.setdefault(entry.topic, []).extend(entry.partitions)
    return {t: sorted(ps) for t, ps in sorted(out.items())}


def assignment_by_name(core, parts) -> dict[str, list[int]]:
    """{topic name: partitions} of a consumer-group assignment kept by topic id."""
    by_id = core.cluster.topics_by_id
    return {by_id[t].name: sorted(ps) for t, ps in sorted(
        parts.items(), key=lambda kv: by_id[kv[0]].name if kv[0] in by_id else "")
        if t in by_id and ps}
