"""Which Apache Kafka release the cluster behaves as (the ``kafka_version`` setting).

``MockCluster(kafka_version="4.0")`` (``mockbroker serve --kafka-version 4.0``) makes every
broker a broker of that release, as far as a client can tell: ApiVersions lists that release's
API keys and version ranges and its features (:mod:`wire.releases`, generated from
the release's own jars and checked against its real broker), a request in an API or version the
release does not serve is refused as that release refuses it, and the cluster starts with the
feature levels a new cluster of that release finalizes (which decide, among other things,
whether the consumer group protocol, share groups, streams groups and transaction version 2
are on: :mod:`mockbroker.core.features`).  The codec stays the newest release's: emulating an
older one only narrows what is served.

A release is named by its minor version (``4.0``) or a patch release of it (``4.0.2``): Kafka
changes its protocol only in minor releases, and each table is that of the minor's newest
patch.  The default is :data:`LATEST`, the release the codec is generated from.
"""

from __future__ import annotations

import re

from mockbroker.core.config.values import InvalidValue
from wire.releases import LATEST, RELEASES, Release

_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.\d+)?")

#: how the known releases are named in messages
KNOWN = ", ".join(RELEASES)


def release_name(value: str) -> str:
    """The release (``4.0``) ``value`` names: ``4.0`` or ``4.0.2``; ValueError naming the
    known releases otherwise."""
    found = _VERSION.fullmatch(value.strip()) if isinstance(value, str) else None
    name = f"{int(found[1])}.{int(found[2])}" if found else None
    if name not in RELEASES:
        raise ValueError(f"unknown Kafka version {value!r}: mockbroker emulates {KNOWN}")
    return name


def release(name: str | None) -> Release:
    """The release ``name`` (as :func:`release_name` reads it; None: :data:`LATEST`)."""
    return RELEASES[release_name(name) if name is not None else LATEST]


class KafkaVersionSetting:
    """The ``kafka_version`` setting's check: one of the known releases."""

    requirement = f"one of the Kafka releases {KNOWN} (or a patch release of one: 4.0.2)"

    def check(self, name: str, value) -> None:
        try:
            release_name(value)
        except ValueError:
            raise InvalidValue(name, value, f"{name} must be {self.requirement}") from None


__all__ = ["LATEST", "KNOWN", "release", "release_name", "KafkaVersionSetting"]
