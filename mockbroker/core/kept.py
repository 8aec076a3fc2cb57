"""Values worked out from some state, kept until that state changes.

The core keeps two kinds: the encoded Metadata answers, until something a Metadata answer shows
changes (:attr:`Cluster.metadata_answers <mockbroker.core.cluster.Cluster.metadata_answers>`),
and the values the data path reads from configs on every append, until a config changes
(:meth:`BrokerConfigs.kept <mockbroker.core.config.broker.BrokerConfigs.kept>`).  Whoever
changes the state says so with :meth:`Kept.changed`.
"""

from __future__ import annotations

from typing import Any, Callable


class Kept:
    """Values by key, each worked out once (``compute()``) and kept until :meth:`changed`."""

    __slots__ = ("_values", "generation", "_limit")

    def __init__(self, limit: int | None = None) -> None:
        self._values: dict[Any, Any] = {}
        #: how many times the state has changed
        self.generation = 0
        #: the most values kept (None: no bound); a new one past it starts the table afresh
        self._limit = limit

    def changed(self) -> None:
        """The state changed: every value kept so far is stale."""
        self.generation += 1
        self._values.clear()

    def get(self, key: Any, compute: Callable[[], Any]) -> Any:
        found = self._values.get(key)
        if found is None:
            generation = self.generation
            found = compute()
            if self.generation == generation:  # working it out did not change what it rests on
                if self._limit is not None and len(self._values) >= self._limit:
                    self._values.clear()
                self._values[key] = found
        return found
