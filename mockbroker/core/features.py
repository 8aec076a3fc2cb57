"""The cluster's feature levels (KIP-584), as ApiVersions reports them.

Kafka 4.4 finalizes, on a fresh cluster, ``metadata.version`` 33, ``transaction.version`` 2 (the
Java producer then speaks transaction version 2: implicit partitions, an epoch bump at every
EndTxn), ``group.version`` 1, and ``share.version``, ``streams.version`` and
``eligible.leader.replicas.version``.  We report the features whose meaning we serve:
``share.version`` at level 2 (share groups, and from level 2 their dead-letter queue),
``streams.version`` at 1 (KIP-1071's streams groups) and ``eligible.leader.replicas.version`` at
1 (KIP-966, :mod:`mockbroker.core.controller`).  A finalized level is reported as min = max =
the level, and a feature at level 0 is left out, as Kafka does.

The levels are the cluster's (:class:`FeatureLevels`, ``Cluster.features``): UpdateFeatures
(``kafka-features.sh``) raises and lowers them with Kafka's checks and messages, and each change
moves the finalized features' epoch on, which is how a client learns of it (the Java producer
takes up or gives up transaction version 2 when the epoch it sees grows).  Kafka 4.4 hides no API
at a lower level; it refuses a request whose feature is off, as :data:`GATES` says.

A cluster emulating an older release (``kafka_version``, :mod:`mockbroker.core.kafka_version`)
has that release's features: the ranges its broker supports and the levels a new cluster of it
finalizes (:func:`features_of`).  A feature the release does not have is at level 0, so its APIs
are refused as that release refuses them: before 4.0 there is no ``group.version`` (Kafka 3.x
answers ConsumerGroupHeartbeat and ConsumerGroupDescribe UNSUPPORTED_VERSION with its default
``group.coordinator.rebalance.protocols``), 4.1 supports ``share.version`` but a new cluster
finalizes it at 0, and an UpdateFeatures beyond the release's range is refused with Kafka's
message.  Of what a release lists, ``kraft.version`` (3.9 on) is left out, as it is at 4.4: the
mock's quorum is static and never upgrades it.
"""

from __future__ import annotations

from msgspec import Struct

from mockbroker.core import kafka_version
from mockbroker.core.javaorder import string_order


class Feature(Struct, frozen=True):
    """A feature ApiVersions reports: the range it supports and the level a new cluster
    finalizes."""

    name: str
    min_supported: int
    max_supported: int
    finalized: int


#: the features whose meaning the mock serves, in the order ApiVersions lists them
MODELLED = ("metadata.version", "transaction.version", "group.version", "share.version",
            "streams.version", "eligible.leader.replicas.version")


def features_of(release: str | None = None) -> tuple[Feature, ...]:
    """The features of Kafka ``release`` (``kafka_version``; None: the newest) that the mock
    serves, with its supported ranges and a new cluster's levels."""
    found = kafka_version.release(release)
    return tuple(Feature(name, *found.supported_features[name],
                         found.finalized_features.get(name, 0))
                 for name in MODELLED if name in found.supported_features)


#: the newest release's (4.4: ``metadata.version`` 7-33 at 33, ``transaction.version`` 0-2 at
#: 2, ``group.version`` 0-1 at 1, ``share.version`` 0-2 at 2, ``streams.version`` and
#: ``eligible.leader.replicas.version`` 0-1 at 1)
FEATURES: tuple[Feature, ...] = features_of()

#: Kafka's epoch of the finalized features is the metadata offset that set them; a new cluster's
#: is 1, and every change adds one
FINALIZED_FEATURES_EPOCH = 1

#: ``share.version`` from which share groups have a dead-letter queue (KIP-1191)
SHARE_DEAD_LETTER_LEVEL = 2

#: API key -> the feature that must be at level 1 or more for it to be served: below, Kafka
#: answers UNSUPPORTED_VERSION without a message, before any other check (KafkaApis)
GATES = {68: "group.version", 69: "group.version",
         **{key: "share.version" for key in (76, 77, 78, 79, 90, 91, 92)},
         **{key: "streams.version" for key in (88, 89, 93)}}

UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3


def supported(api_version: int, features: tuple[Feature, ...] = FEATURES) -> list[Feature]:
    """The supported features an ApiVersions response of ``api_version`` lists: before v4 Kafka
    drops every feature whose minimum is 0 (older clients cannot read such a range)."""
    return [f for f in features if api_version >= 4 or f.min_supported > 0]


class FeatureUpdateError(Exception):
    """An UpdateFeatures Kafka refuses (INVALID_UPDATE_VERSION): the message it answers with."""


class FeatureLevels:
    """The cluster's finalized feature levels and their epoch, for Kafka ``release``
    (``kafka_version``; None: the newest)."""

    def __init__(self, release: str | None = None) -> None:
        #: the features the release has (their supported ranges)
        self.features = features_of(release)
        self._by_name = {f.name: f for f in self.features}
        self.levels: dict[str, int] = {f.name: f.finalized for f in self.features}
        self.epoch = FINALIZED_FEATURES_EPOCH
        #: Kafka 3.x's controller judges each feature of an UpdateFeatures on its own
        #: (:meth:`update_each`); from 4.0 the request passes or fails whole (:meth:`update`)
        self.each_on_its_own = kafka_version.release(release).version.startswith("3.")

    def supported(self, api_version: int) -> list[Feature]:
        """The supported features ApiVersions ``api_version`` lists (:func:`supported`)."""
        return supported(api_version, self.features)

    def level(self, name: str) -> int:
        """The finalized level of ``name`` (0 for one not finalized)."""
        return self.levels.get(name, 0)

    def finalized(self) -> list[tuple[str, int]]:
        """(name, level) of every feature above level 0, as ApiVersions lists them."""
        return [(f.name, self.levels[f.name]) for f in self.features
                if self.levels.get(f.name, 0)]

    def serves(self, api_key: int) -> bool:
        """Whether the feature an API needs (:data:`GATES`) is on."""
        gate = GATES.get(api_key)
        return gate is None or self.level(gate) >= 1

    def update(self, updates: list[tuple[str, int, int]], controller_id: int, *,
               validate_only: bool = False) -> None:
        """Apply (feature, level, upgrade type) updates, all or none, as Kafka's controller
        checks them; raises :class:`FeatureUpdateError` with the message of the first that
        fails, in the order Kafka's controller meets them (a Java hash map's)."""
        wanted: dict[str, tuple[int, int]] = {}
        for name, level, kind in updates:
            wanted[name] = (level, kind)  # the last of a name given twice wins, as in Kafka
        for name in string_order(wanted):
            level, kind = wanted[name]
            reason = self._refusal(name, level, kind, controller_id)
            if reason is not None:
                raise FeatureUpdateError("The update failed for all features since the "
                                         f"following feature had an error: {reason}")
        if validate_only:
            return
        for name in wanted:
            level = wanted[name][0]
            self.levels[name] = level
            self.epoch += 1  # one record each, a level unchanged included, as Kafka writes

    def update_each(self, updates: list[tuple[str, int, int]], controller_id: int, *,
                    validate_only: bool = False) -> dict[str, str | None]:
        """Kafka 3.x's UpdateFeatures: each (feature, level, upgrade type) checked on its own,
        and those that pass applied (unless ``validate_only``) whatever became of the others.
        Returns feature -> the reason it was refused (None: it passed), by name, as Kafka 3.x
        answers them."""
        wanted = {name: (level, kind) for name, level, kind in updates}
        results = {name: self._refusal(name, *wanted[name], controller_id)
                   for name in sorted(wanted)}
        if not validate_only:
            for name, reason in results.items():
                if reason is None:
                    self.levels[name] = wanted[name][0]
                    self.epoch += 1
        return results

    def _refusal(self, name: str, level: int, kind: int, controller_id: int) -> str | None:
        def invalid(reason: str) -> str:
            return f"Invalid update version {level} for feature {name}. {reason}"

        if kind not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
            return invalid("The controller does not support the given upgrade type.")
        if level < 0:
            return invalid("A feature version cannot be less than 0.")
        feature = self._by_name.get(name)
        if feature is None:
            if level != 0:
                return invalid(f"Local controller {controller_id} does not support this "
                               "feature.")
            return invalid(f"Feature {name} not found.")
        if not feature.min_supported <= level <= feature.max_supported:
            span = str(feature.min_supported) if feature.min_supported == \
                feature.max_supported else f"{feature.min_supported}-{feature.max_supported}"
            return invalid(f"Local controller {controller_id} only supports versions {span}")
        current = self.level(name)
        if level < current and kind == UPGRADE:
            return invalid("Can't downgrade the version of this feature without setting the "
                           "upgrade type to either safe or unsafe downgrade.")
        if level > current and kind != UPGRADE:
            return invalid("Can't downgrade to a newer version.")
        if name == "metadata.version" and level < current:
            # every metadata version from 4.4-IV2 down changed the metadata: never lowered
            if kind == SAFE_DOWNGRADE:
                return (f"Unsupported metadata.version downgrade from {current} to {level}. "
                        "Refusing to perform the requested downgrade because it might delete "
                        "metadata information.")
            return (f"Unsupported metadata.version downgrade from {current} to {level}. "
                    "Unsafe metadata downgrade is not supported in this version.")
        return None
