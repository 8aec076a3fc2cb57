"""The cluster's feature levels (KIP-584), as ApiVersions reports them.

Kafka 4.4 finalizes, on a fresh cluster, ``metadata.version`` 33, ``transaction.version`` 2 (the
Java producer then speaks transaction version 2: implicit partitions, an epoch bump at every
EndTxn), ``group.version`` 1, and ``share.version``, ``streams.version`` and
``eligible.leader.replicas.version``.  We report the features whose meaning we serve:
``share.version`` at level 2 (share groups, and from level 2 their dead-letter queue); streams
groups and eligible leader replicas are not served, so they are not claimed.  A
finalized level is reported as min = max = the level, and a feature at level 0 is left out,
as Kafka does.
"""

from __future__ import annotations

from msgspec import Struct


class Feature(Struct, frozen=True):
    """A feature ApiVersions reports: the range it supports and the finalized level."""

    name: str
    min_supported: int
    max_supported: int
    finalized: int


FEATURES: tuple[Feature, ...] = (
    Feature("metadata.version", 7, 33, 33),
    Feature("transaction.version", 0, 2, 2),
    Feature("group.version", 0, 1, 1),
    Feature("share.version", 0, 2, 2),
)

#: Kafka's epoch of the finalized features is the metadata offset that set them; ours never move
FINALIZED_FEATURES_EPOCH = 1


def supported(api_version: int) -> list[Feature]:
    """The supported features an ApiVersions response of ``api_version`` lists: before v4 Kafka
    drops every feature whose minimum is 0 (older clients cannot read such a range)."""
    return [f for f in FEATURES if api_version >= 4 or f.min_supported > 0]


def finalized() -> list[Feature]:
    return [f for f in FEATURES if f.finalized > 0]


def level(name: str) -> int:
    """The finalized level of feature ``name`` (0 for one the cluster does not report)."""
    return next((f.finalized for f in FEATURES if f.name == name), 0)


#: ``share.version`` from which share groups have a dead-letter queue (KIP-1191)
SHARE_DEAD_LETTER_LEVEL = 2
