"""Producer ids (what InitProducerId hands out).

An idempotent producer gets a fresh id at epoch 0 every time, even when it asks to have its
current epoch bumped (KIP-360): Kafka keeps no state for producers without a transactional id.
A transactional id keeps its producer id and epochs in the transaction coordinator
(:mod:`mockbroker.core.transactions`), which takes new ids from here too.
"""

from __future__ import annotations

import itertools

FIRST_PRODUCER_ID = 1000


class ProducerIds:
    def __init__(self) -> None:
        self._ids = itertools.count(FIRST_PRODUCER_ID)

    def next_id(self) -> int:
        return next(self._ids)
