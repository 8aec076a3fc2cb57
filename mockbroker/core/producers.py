"""Producer ids and epochs (what InitProducerId hands out).

An idempotent producer gets a fresh id at epoch 0 every time, even when it asks to have its
current epoch bumped (KIP-360): Kafka keeps no state for producers without a transactional id.
A transactional id keeps its producer id and gets the next epoch each time, until the epoch
would overflow and a new id is given instead.
"""

from __future__ import annotations

import itertools

#: the largest epoch a producer may hold (Short.MAX_VALUE, one kept back for the last bump)
MAX_EPOCH = 32767
FIRST_PRODUCER_ID = 1000


class ProducerIds:
    def __init__(self) -> None:
        self._ids = itertools.count(FIRST_PRODUCER_ID)
        #: transactional id -> (producer id, epoch)
        self.transactional: dict[str, tuple[int, int]] = {}

    def next_id(self) -> int:
        return next(self._ids)

    def init(self, transactional_id: str | None) -> tuple[int, int]:
        """(producer id, epoch) for an InitProducerId."""
        if transactional_id is None:
            return self.next_id(), 0
        known = self.transactional.get(transactional_id)
        if known is None or known[1] >= MAX_EPOCH - 1:
            current = (self.next_id(), 0)
        else:
            current = (known[0], known[1] + 1)
        self.transactional[transactional_id] = current
        return current
