"""Share sessions (Kafka's ``ShareSessionCache``): what a share consumer fetches from one
broker, and the epoch its next request must carry.

A session is keyed by broker, group and member.  Epoch 0 opens one (replacing any, whose
acquired records stay acquired until their locks expire or the member acknowledges them) with
the partitions the request names; each later request must carry the epoch the broker expects,
which then moves on (wrapping to 1, never 0), and may add partitions or forget them; epoch -1
closes it, and the member's acquired records are released.  A broker holds at most
``group.share.max.share.sessions`` sessions and makes no room by evicting one.  A session ends
with its connection too.
"""

from __future__ import annotations

import uuid

from msgspec import Struct, field

from mockbroker.core.errors import ApiException
from wire import errors

INITIAL, FINAL = 0, -1
INT_MAX = 2 ** 31 - 1

Key = tuple[int, str, str]  # broker id, group id, member id
TopicPartition = tuple[uuid.UUID, int]


def next_epoch(epoch: int) -> int:
    """The epoch after ``epoch`` (Kafka's ``ShareRequestMetadata.nextEpoch``)."""
    if epoch < 0:
        return FINAL
    return 1 if epoch == INT_MAX else epoch + 1


class ShareSession(Struct):
    broker_id: int
    group_id: str
    member_id: str
    #: the epoch the next request must carry
    epoch: int
    connection_id: int
    #: the partitions it fetches, in order (a dict as an ordered set)
    partitions: dict[TopicPartition, None] = field(default_factory=dict)

    @property
    def key(self) -> Key:
        return (self.broker_id, self.group_id, self.member_id)


class ShareSessions:
    def __init__(self, limit):
        #: () -> the most sessions a broker may hold
        self._limit = limit
        self.sessions: dict[Key, ShareSession] = {}

    def _count(self, broker_id: int) -> int:
        return sum(1 for key in self.sessions if key[0] == broker_id)

    def open(self, broker_id: int, group_id: str, member_id: str, connection_id: int,
             partitions: list[TopicPartition]) -> ShareSession:
        """Epoch 0: a new session with ``partitions``, replacing the member's last one."""
        key = (broker_id, group_id, member_id)
        self.sessions.pop(key, None)
        if self._count(broker_id) >= self._limit():
            raise ApiException(errors.SHARE_SESSION_LIMIT_REACHED)
        session = ShareSession(broker_id, group_id, member_id, next_epoch(INITIAL),
                               connection_id, dict.fromkeys(partitions))
        self.sessions[key] = session
        return session

    def find(self, broker_id: int, group_id: str, member_id: str) -> ShareSession:
        session = self.sessions.get((broker_id, group_id, member_id))
        if session is None:
            raise ApiException(errors.SHARE_SESSION_NOT_FOUND)
        return session

    def advance(self, broker_id: int, group_id: str, member_id: str, epoch: int, *,
                add: list[TopicPartition] = (),
                forget: list[TopicPartition] = ()) -> ShareSession:
        """A request at ``epoch`` > 0: it must be the one expected; the session then takes
        ``add``, drops ``forget`` and expects the next epoch."""
        session = self.find(broker_id, group_id, member_id)
        if session.epoch != epoch:
            raise ApiException(errors.INVALID_SHARE_SESSION_EPOCH)
        for tp in add:
            session.partitions.setdefault(tp, None)
        for tp in forget:
            session.partitions.pop(tp, None)
        session.epoch = next_epoch(session.epoch)
        return session

    def close(self, session: ShareSession) -> None:
        if self.sessions.get(session.key) is session:
            del self.sessions[session.key]

    def of_connection(self, broker_id: int, connection_id: int) -> list[ShareSession]:
        """The sessions a connection opened (they end with it)."""
        return [s for s in self.sessions.values()
                if s.broker_id == broker_id and s.connection_id == connection_id]

    def of_broker(self, broker_id: int) -> list[ShareSession]:
        return [s for s in self.sessions.values() if s.broker_id == broker_id]

    def of_group(self, group_id: str) -> list[ShareSession]:
        return [s for s in self.sessions.values() if s.group_id == group_id]
