"""Each broker's log directories, and which of them holds each of its replicas: what
DescribeLogDirs shows and AlterReplicaLogDirs moves (``kafka-log-dirs.sh``,
``kafka-reassign-partitions.sh`` with ``log_dirs``, the Admin's ``alterReplicaLogDirs`` and
``describeReplicaLogDirs``).

The directories are the ``log_dirs`` setting (Kafka's ``log.dirs``: absolute paths, comma
separated), or Kafka's ``log.dir`` default ``/tmp/kafka-logs`` alone; every broker has the same
ones, as brokers started from the same ``server.properties`` on different hosts would.  No
directory exists on the mock's host: records stay in memory.

A replica is placed when first seen in the directory that holds the fewest of the broker's
replicas (ties: the first in ``log.dirs`` order), as Kafka's ``LogManager.nextLogDirs`` places a
new log, unless AlterReplicaLogDirs named a directory for it beforehand.  Placements are worked
out when asked for, in the order topics were created: a replica the broker no longer has (its
topic deleted, or reassigned away) is forgotten, and placed anew if it comes back.

AlterReplicaLogDirs moves a replica at once.  Kafka copies it into a *future* replica in the
new directory (``-future``, shown with ``is_future_key`` by DescribeLogDirs) and swaps the two
once the copy has caught up, which for the logs of a test takes a moment; the mock has no copy
to wait for, so DescribeLogDirs shows the replica in its new directory right away.  The checks
and their order are Kafka's (``ReplicaManager.alterReplicaLogDirs``): a topic name too long for
the future directory's name, a directory not among the broker's, an offline directory, a replica
the broker does not host (REPLICA_NOT_AVAILABLE when the partition exists, UNKNOWN_TOPIC_OR_
PARTITION otherwise; either way the directory is remembered for when the replica comes), and a
move while any of the broker's directories is offline.

A directory can be taken offline (:meth:`LogDirs.set_offline`), as when Kafka meets a disk
error: DescribeLogDirs reports it with KAFKA_STORAGE_ERROR, and AlterReplicaLogDirs refuses
moves into it, out of it, and on its broker.  Only these two APIs notice; the data path goes on
serving its replicas.

The model belongs to the cluster, which builds it as it starts (``cluster.log_dirs``;
:func:`log_dirs_of` reads it).
"""

from __future__ import annotations

import uuid
from typing import Any

from mockbroker.core.config.values import InvalidValue
from mockbroker.core.javaorder import java_length
from wire import errors

#: Kafka's ``log.dir`` default, the one directory when ``log.dirs`` is not set
DEFAULT_LOG_DIR = "/tmp/kafka-logs"
#: what Kafka appends to ``<topic>-<partition>`` to name a future replica's directory: a dot, a
#: UUID's 32 hex digits and ``-future``; the whole name must fit a file name (255 characters)
FUTURE_SUFFIX_CHARS = 1 + 32 + len("-future")
MAX_FILE_NAME_CHARS = 255


def parse_log_dirs(value: str | None) -> list[str]:
    """The directories a ``log.dirs`` value names, in order (Kafka's comma-separated list,
    blanks around each trimmed); None or blank: the ``log.dir`` default."""
    dirs = [d.strip() for d in (value or "").split(",") if d.strip()]
    return dirs or [DEFAULT_LOG_DIR]


class LogDirsSetting:
    """The ``log_dirs`` setting's rule: absolute paths, none twice (Kafka refuses to start on
    a duplicate log directory)."""

    requirement = "a comma-separated list of distinct absolute paths"

    def check(self, name: str, value: Any) -> None:
        dirs = [d.strip() for d in str(value).split(",")]
        if not dirs or any(not d.startswith("/") for d in dirs) or len(set(dirs)) < len(dirs):
            raise InvalidValue(name, value, f"{name} must be {self.requirement}")


class LogDirs:
    """The log directories of every broker of one cluster (build it with :func:`log_dirs_of`)."""

    def __init__(self, cluster):
        self.cluster = cluster
        #: the directories every broker has, in ``log.dirs`` order
        self.paths: tuple[str, ...] = tuple(parse_log_dirs(cluster.settings.get("log_dirs")))
        #: broker id -> (topic id, partition) -> the directory holding that replica
        self._placed: dict[int, dict[tuple[uuid.UUID, int], str]] = {}
        #: broker id -> (topic, partition) -> the directory a replica not hosted yet goes to
        self._preferred: dict[int, dict[tuple[str, int], str]] = {}
        #: broker id -> its offline directories
        self._offline: dict[int, set[str]] = {}

    # -- offline directories -------------------------------------------------------------------

    def is_offline(self, broker_id: int, path: str) -> bool:
        return path in self._offline.get(broker_id, ())

    def set_offline(self, broker_id: int, path: str, offline: bool = True) -> None:
        """Take one of a broker's directories offline (or bring it back)."""
        if path not in self.paths:
            raise KeyError(f"broker {broker_id} has no log directory {path!r} (it has "
                           f"{', '.join(self.paths)})")
        dirs = self._offline.setdefault(broker_id, set())
        if offline:
            dirs.add(path)
        else:
            dirs.discard(path)

    # -- placement -----------------------------------------------------------------------------

    def _hosted(self, broker_id: int) -> dict[tuple[uuid.UUID, int], Any]:
        return {(topic.topic_id, p.index): p for topic in self.cluster.topics.values()
                for p in topic.partitions if broker_id in p.replicas}

    def _sync(self, broker_id: int) -> dict[tuple[uuid.UUID, int], Any]:
        """Place the broker's new replicas and forget the ones it no longer has; returns its
        replicas by (topic id, partition)."""
        placed = self._placed.setdefault(broker_id, {})
        hosted = self._hosted(broker_id)
        for key in [k for k in placed if k not in hosted]:
            del placed[key]
        for key, partition in hosted.items():
            if key not in placed:
                placed[key] = self._new_log_dir(broker_id, partition)
        return hosted

    def _new_log_dir(self, broker_id: int, partition) -> str:
        preferred = self._preferred.get(broker_id, {}).pop(
            (partition.topic.name, partition.index), None)
        online = [d for d in self.paths if not self.is_offline(broker_id, d)]
        if preferred is not None and preferred in online:
            return preferred
        if not online:
            return self.paths[0]
        counts = {d: 0 for d in online}
        for path in self._placed.get(broker_id, {}).values():
            if path in counts:
                counts[path] += 1
        return min(online, key=lambda d: counts[d])  # the first of the fewest, in order

    def replicas(self, broker_id: int) -> dict[str, list]:
        """Directory -> the broker's replicas (partitions) in it, by topic name and index."""
        hosted = self._sync(broker_id)
        out: dict[str, list] = {path: [] for path in self.paths}
        placed = self._placed[broker_id]
        for key in sorted(hosted, key=lambda k: (hosted[k].topic.name, k[1])):
            out[placed[key]].append(hosted[key])
        return out

    def dir_of(self, broker_id: int, partition) -> str | None:
        """The directory holding the broker's replica of ``partition`` (None: not hosted)."""
        self._sync(broker_id)
        return self._placed[broker_id].get((partition.topic.topic_id, partition.index))

    # -- moving a replica ----------------------------------------------------------------------

    def alter(self, broker_id: int, topic: str, index: int, path: str) -> int:
        """Move the broker's replica of ``topic``-``index`` to the directory ``path``; the
        error code Kafka answers (NONE when moved, or already there)."""
        if java_length(f"{topic}-{index}") + FUTURE_SUFFIX_CHARS > MAX_FILE_NAME_CHARS:
            return errors.INVALID_TOPIC_EXCEPTION  # "The topic name is too long."
        if path not in self.paths:
            return errors.LOG_DIR_NOT_FOUND  # "Log dir <path> is not found in the config."
        if self.is_offline(broker_id, path):
            return errors.KAFKA_STORAGE_ERROR  # "Log directory <path> is offline"
        self._sync(broker_id)
        partition = self.cluster.partition(topic, index)
        hosted = partition is not None and broker_id in partition.replicas
        if not hosted:
            # remembered: the replica will be created there when the broker gets it
            self._preferred.setdefault(broker_id, {})[(topic, index)] = path
            return errors.REPLICA_NOT_AVAILABLE if partition is not None else \
                errors.UNKNOWN_TOPIC_OR_PARTITION
        key = (partition.topic.topic_id, index)
        placed = self._placed[broker_id]
        current = placed[key]
        if self.is_offline(broker_id, current):
            return errors.KAFKA_STORAGE_ERROR  # "Partition <tp> is offline"
        if current == path:
            return errors.NONE
        if self._offline.get(broker_id):
            # Kafka creates no future replica while a directory of the broker is offline
            return errors.KAFKA_STORAGE_ERROR
        placed[key] = path
        return errors.NONE


def log_dirs_of(cluster) -> LogDirs:
    """The cluster's log directories (the cluster builds them as it starts)."""
    return cluster.log_dirs
