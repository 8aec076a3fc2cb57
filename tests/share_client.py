"""A share consumer spoken over a socket with the codec, for tests that need a share group on a
running broker without a JVM: it joins with ShareGroupHeartbeat and fetches and acknowledges
with ShareFetch in one share session, on one connection to the partitions' leader."""

from __future__ import annotations

import socket
import uuid

import wire
from wire import records

HEARTBEAT, FETCH, FIND_COORDINATOR = 76, 78, 10
#: NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS
COORDINATOR_ERRORS = (16, 15, 14)


def acquired_records(partition) -> list[tuple[int, bytes]]:
    """(offset, value) of the records a ShareFetch answer's partition acquired, as a client
    keeps them: the data records of its batches within its acquired ranges."""
    ranges = [(a.first_offset, a.last_offset) for a in partition.acquired_records]
    out = []
    for header, batch in records.split_batches(bytes(partition.records or b"")):
        if not header.is_control:
            out += [(r.offset, bytes(r.value)) for r in records.decode_records(batch)
                    if any(lo <= r.offset <= hi for lo, hi in ranges)]
    return out


class RawShareConsumer:
    def __init__(self, bootstrap: str, group: str, topic: str, topic_id: uuid.UUID):
        host, port = bootstrap.split(",")[0].rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        self.group, self.topic, self.topic_id = group, topic, topic_id
        self.member_id = str(uuid.uuid4())
        self.member_epoch = 0
        self.session_epoch = 0
        self._correlation = 0

    def _call(self, api_key: int, version: int, **fields):
        self._correlation += 1
        frame = wire.encode_request(api_key, version, self._correlation, "raw-share",
                                    wire.request_class(api_key)(**fields))
        self.sock.sendall(frame)
        size = int.from_bytes(self._read(4), "big")
        correlation, body = wire.decode_response(api_key, version, self._read(size))
        assert correlation == self._correlation
        return body

    def _read(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            assert chunk, "the broker closed the connection"
            data += chunk
        return data

    def heartbeat(self) -> list[int]:
        """One heartbeat (joining first); the partitions it is assigned, if it was told.  A
        coordinator not found yet (Kafka answers so until ``__consumer_offsets`` exists, which
        a FindCoordinator creates) gets a FindCoordinator, as a client sends, and no
        partitions."""
        answer = self._call(HEARTBEAT, 1, group_id=self.group, member_id=self.member_id,
                            member_epoch=self.member_epoch,
                            subscribed_topic_names=[self.topic] if self.member_epoch == 0
                            else None)
        if answer.error_code in COORDINATOR_ERRORS:
            self._call(FIND_COORDINATOR, 4, key_type=0, coordinator_keys=[self.group])
            return []
        assert answer.error_code == 0, answer
        self.member_epoch = answer.member_epoch
        return [] if answer.assignment is None else \
            [p for tp in answer.assignment.topic_partitions for p in tp.partitions]

    def fetch(self, partitions, acks=None) -> dict[int, list[tuple[int, bytes]]]:
        """One ShareFetch (no waiting): partition -> [(offset, value)] acquired.  ``acks``:
        partition -> [(first, last, [types])]."""
        cls = wire.request_class(FETCH)
        acks = acks or {}
        named = sorted(set(partitions) | set(acks))
        answer = self._call(FETCH, 1, group_id=self.group, member_id=self.member_id,
                            share_session_epoch=self.session_epoch, max_wait_ms=0, min_bytes=1,
                            max_bytes=1 << 20, max_records=500, batch_size=500,
                            topics=[cls.FetchTopic(topic_id=self.topic_id, partitions=[
                                cls.FetchPartition(partition_index=p, acknowledgement_batches=[
                                    cls.AcknowledgementBatch(first_offset=f, last_offset=la,
                                                             acknowledge_types=t)
                                    for f, la, t in acks.get(p, ())]) for p in named])])
        assert answer.error_code == 0, answer
        self.session_epoch += 1
        out: dict[int, list[tuple[int, bytes]]] = {}
        for topic in answer.responses:
            for p in topic.partitions:
                got = acquired_records(p)
                if got:
                    out.setdefault(p.partition_index, []).extend(got)
        return out

    def leave(self) -> None:
        """Leave the group (a heartbeat at epoch -1)."""
        answer = self._call(HEARTBEAT, 1, group_id=self.group, member_id=self.member_id,
                            member_epoch=-1)
        assert answer.error_code == 0, answer

    def close(self) -> None:
        """Drop the connection, as a consumer that dies does."""
        self.sock.close()
