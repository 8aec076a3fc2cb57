"""A streams group's topology (Kafka's ``StreamsTopology``), the checks a heartbeat's topology
passes before the coordinator takes it, and the topology configured against the cluster's
topics (Kafka's ``InternalTopicManager``).

A Kafka Streams application describes itself as subtopologies: each reads source topics and
repartition topics, writes repartition topics, and keeps state in changelog topics.  The broker
works out how many partitions each internal topic needs (a repartition topic as many as the
subtopology that writes it reads, a changelog as many as its subtopology's tasks, copartitioned
topics alike), says which are missing so the broker can create them, and how many tasks each
subtopology has.  What it cannot configure is a :class:`TopicConfigurationError` with the status
code Kafka answers it with; a topology that can never work is
:class:`~mockbroker.core.errors.ApiException` STREAMS_INVALID_TOPOLOGY.
"""

from __future__ import annotations

from typing import Callable

from msgspec import Struct

from mockbroker.core.errors import ApiException
from wire import errors

#: heartbeat status codes (``StreamsGroupHeartbeatResponse.Status``)
STALE_TOPOLOGY, MISSING_SOURCE_TOPICS, INCORRECTLY_PARTITIONED_TOPICS, \
    MISSING_INTERNAL_TOPICS, SHUTDOWN_APPLICATION, ASSIGNMENT_DELAYED, \
    MISSING_CLIENT_TAGS = range(7)


class TopicInfo(Struct, frozen=True):
    """An internal topic the topology names: 0 partitions means "work it out"; a replication
    factor of 0 the broker's default."""

    name: str
    partitions: int = 0
    replication_factor: int = 0
    configs: tuple[tuple[str, str], ...] = ()


class CopartitionGroup(Struct, frozen=True):
    """Indexes into the subtopology's source topics and repartition source topics."""

    source_topics: tuple[int, ...] = ()
    source_topic_regex: tuple[int, ...] = ()
    repartition_source_topics: tuple[int, ...] = ()


class Subtopology(Struct, frozen=True):
    subtopology_id: str
    source_topics: tuple[str, ...] = ()
    source_topic_regex: tuple[str, ...] = ()
    state_changelog_topics: tuple[TopicInfo, ...] = ()
    repartition_sink_topics: tuple[str, ...] = ()
    repartition_source_topics: tuple[TopicInfo, ...] = ()
    copartition_groups: tuple[CopartitionGroup, ...] = ()

    def sources(self) -> list[str]:
        """Source and repartition source topics: what the subtopology's tasks read."""
        return list(self.source_topics) + [t.name for t in self.repartition_source_topics]

    @property
    def stateful(self) -> bool:
        return bool(self.state_changelog_topics)


class Topology(Struct, frozen=True):
    """The topology as the group keeps it; equal topologies are equal in every list's order
    and in their epoch, as Kafka compares them."""

    epoch: int
    subtopologies: tuple[Subtopology, ...]

    def by_id(self) -> dict[str, Subtopology]:
        return {s.subtopology_id: s for s in self.subtopologies}

    def required_topics(self) -> set[str]:
        """Sources, repartition sources and changelogs: the topics its metadata hash
        covers."""
        return {t for s in self.subtopologies
                for t in (*s.sources(), *(c.name for c in s.state_changelog_topics))}

    def source_topics(self) -> set[str]:
        """What its tasks read (the topics whose offsets the group commits)."""
        return {t for s in self.subtopologies for t in s.sources()}


def _topic_info(info) -> TopicInfo:
    return TopicInfo(info.name, info.partitions, info.replication_factor,
                     tuple((c.key, c.value) for c in info.topic_configs or ()))


def from_wire(topology) -> Topology:
    """A heartbeat's (or a record's) topology, which share field names."""
    return Topology(topology.epoch, tuple(Subtopology(
        s.subtopology_id, tuple(s.source_topics or ()), tuple(s.source_topic_regex or ()),
        tuple(_topic_info(t) for t in s.state_changelog_topics or ()),
        tuple(s.repartition_sink_topics or ()),
        tuple(_topic_info(t) for t in s.repartition_source_topics or ()),
        tuple(CopartitionGroup(tuple(g.source_topics or ()), tuple(g.source_topic_regex or ()),
                               tuple(g.repartition_source_topics or ()))
              for g in s.copartition_groups or ()))
        for s in topology.subtopologies or ()))


# -- what the broker checks before the coordinator sees it -------------------------------------

def all_topic_names(topology) -> list[str]:
    """Every topic a heartbeat's topology names (sources, repartition sinks and sources,
    changelogs), each once, in the order Kafka's checks list them."""
    seen: dict[str, None] = {}
    for s in topology.subtopologies or ():
        for name in (*(s.source_topics or ()), *(s.repartition_sink_topics or ()),
                     *(t.name for t in s.repartition_source_topics or ()),
                     *(t.name for t in s.state_changelog_topics or ())):
            seen.setdefault(name, None)
    return list(seen)


def invalid_topology(message: str) -> ApiException:
    return ApiException(errors.STREAMS_INVALID_TOPOLOGY, message)


# -- configuring the topology against the topics there are --------------------------------------

class TopicConfigurationError(Exception):
    """The topics as they are do not fit the topology yet: a status, not an error."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class ConfiguredSubtopology(Struct):
    number_of_tasks: int
    source_topics: set[str]
    repartition_source_topics: dict[str, TopicInfo]
    state_changelog_topics: dict[str, TopicInfo]

    def sources(self) -> set[str]:
        return self.source_topics | set(self.repartition_source_topics)


class ConfiguredTopology(Struct):
    """The topology with its partition counts worked out: ``subtopologies`` None when the
    source topics are missing or the partitioning is wrong; ``to_create`` the internal topics
    still missing; ``problem`` what keeps it from being ready."""

    epoch: int
    metadata_hash: int
    subtopologies: dict[str, ConfiguredSubtopology] | None
    to_create: dict[str, TopicInfo]
    problem: TopicConfigurationError | None = None

    @property
    def ready(self) -> bool:
        return self.problem is None


def summarize(names) -> str:
    """At most three names, then how many more (Kafka's ``summarizeTopics``)."""
    names = list(names)
    if not names:
        return "<none>"
    more = f" and {len(names) - 3} additional topics" if len(names) > 3 else ""
    return ", ".join(names[:3]) + more


def configure(topology: Topology, metadata_hash: int, partitions_of: Callable[[str], int | None],
              order: Callable[[list[str]], list[str]] = list) -> ConfiguredTopology:
    """The topology against the topics there are (``partitions_of(name)``: a topic's partition
    count, None when there is no such topic).  ``order`` puts the missing internal topics'
    names in the order Kafka's hash map lists them.  Raises STREAMS_INVALID_TOPOLOGY for a
    topology no topics can satisfy."""
    try:
        missing = sorted({t for s in topology.subtopologies for t in s.source_topics
                          if partitions_of(t) is None})
        if missing:
            raise TopicConfigurationError(MISSING_SOURCE_TOPICS,
                                          f"Source topics {summarize(missing)} are missing.")
        decided = _decide_partitions(topology, partitions_of)
        subtopologies = {s.subtopology_id: _configured(s, partitions_of, decided)
                         for s in sorted(topology.subtopologies, key=lambda s: s.subtopology_id)}
        to_create = _missing_internal(topology, subtopologies, partitions_of)
        problem = TopicConfigurationError(
            MISSING_INTERNAL_TOPICS,
            f"Internal topics are missing: {summarize(order(list(to_create)))}") \
            if to_create else None
        return ConfiguredTopology(topology.epoch, metadata_hash, subtopologies, to_create,
                                  problem)
    except TopicConfigurationError as exc:
        return ConfiguredTopology(topology.epoch, metadata_hash, None, {}, exc)


def _decide_partitions(topology: Topology, partitions_of) -> dict[str, int]:
    decided: dict[str, int] = {}

    def count(topic: str) -> int | None:
        found = partitions_of(topic)
        return found if found is not None else decided.get(topic)

    decided.update(_repartition_counts(topology, count))
    fixed = {t.name for s in topology.subtopologies for t in s.repartition_source_topics
             if t.partitions != 0}
    flexible = {t.name for s in topology.subtopologies for t in s.repartition_source_topics
                if t.partitions == 0}
    for s in topology.subtopologies:
        for group in s.copartition_groups:
            topics = {s.source_topics[i] for i in group.source_topics} | \
                {s.repartition_source_topics[i].name for i in group.repartition_source_topics}
            decided.update(_copartition(topics, fixed, flexible, count))
    for s in topology.subtopologies:
        counts = [count(t) for t in s.sources()]
        if not counts:
            raise invalid_topology(f"No source topics found for subtopology {s.subtopology_id}")
        for changelog in s.state_changelog_topics:
            decided[changelog.name] = max(counts)
    return decided


def _repartition_counts(topology: Topology, count) -> dict[str, int]:
    """A repartition topic gets its fixed count, else the most partitions the subtopology
    writing it reads, worked out until nothing changes."""
    counts = {t.name: t.partitions for s in topology.subtopologies
              for t in s.repartition_source_topics if t.partitions != 0}
    needed = True
    while needed:
        needed = progress = False
        for s in topology.subtopologies:
            for sink in s.repartition_sink_topics:
                if sink in counts:
                    continue
                candidates = [counts[t.name] for t in s.repartition_source_topics
                              if t.name in counts]
                candidates += [c for c in map(count, s.source_topics) if c is not None]
                if candidates:
                    counts[sink] = max(candidates)
                    progress = True
                else:
                    needed = True
        if needed and not progress:
            raise invalid_topology(
                "Failed to compute number of partitions for all repartition topics. There may "
                "be loops in the topology that cannot be resolved.")
    for s in topology.subtopologies:
        if any(t.name not in counts for t in s.repartition_source_topics):
            raise invalid_topology(
                "Failed to compute number of partitions for all repartition topics, because a "
                "repartition source topic is never used as a sink topic.")
    return counts


def _java_map(counts: dict[str, int]) -> str:
    """A sorted map as Java prints one: ``{a=1, b=2}``."""
    return "{" + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())) + "}"


def _copartition(topics: set[str], fixed: set[str], flexible: set[str], count
                 ) -> dict[str, int]:
    """Copartitioned topics must have one partition count: the repartition topics among them
    take the others' (Kafka's ``CopartitionedTopicsEnforcer``)."""
    if not topics:
        return {}
    repartition = {t: count(t) for t in topics if t in fixed or t in flexible}
    others = {t: count(t) for t in topics if t not in repartition}
    if set(repartition) == topics:
        if fixed:
            first = count(next(iter(fixed)))
            if any(count(t) != first for t in fixed):
                raise TopicConfigurationError(
                    INCORRECTLY_PARTITIONED_TOPICS,
                    "Following topics do not have the same number of partitions: "
                    f"[{_java_map(repartition)}]")
            wanted = first
        else:
            wanted = max(repartition.values(), default=0)
            if wanted == 0:
                raise invalid_topology("All topics in the copartition group had undefined "
                                       f"partition number: {sorted(repartition)}")
    else:
        values = set(others.values())
        if len(values) > 1:
            raise TopicConfigurationError(
                INCORRECTLY_PARTITIONED_TOPICS,
                "Following topics do not have the same number of partitions: "
                f"[{_java_map(others)}]")
        wanted = values.pop()
    for topic, have in repartition.items():
        if topic in fixed and have != wanted:
            raise TopicConfigurationError(
                INCORRECTLY_PARTITIONED_TOPICS,
                f"Number of partitions [{have}] of repartition topic [{topic}] doesn't match "
                f"number of partitions [{wanted}] of the source topic.")
    return dict.fromkeys(repartition, wanted)


def _configured(s: Subtopology, partitions_of, decided: dict[str, int]) -> ConfiguredSubtopology:
    def count(topic: str) -> int:
        found = partitions_of(topic)
        return found if found is not None else decided[topic]

    def internal(info: TopicInfo) -> TopicInfo:
        return TopicInfo(info.name, info.partitions or decided[info.name],
                         info.replication_factor, info.configs)

    return ConfiguredSubtopology(
        max(count(t) for t in s.sources()), set(s.source_topics),
        {t.name: internal(t) for t in s.repartition_source_topics},
        {t.name: internal(t) for t in s.state_changelog_topics})


def _missing_internal(topology: Topology, subtopologies: dict[str, ConfiguredSubtopology],
                      partitions_of) -> dict[str, TopicInfo]:
    wanted: dict[str, TopicInfo] = {}
    for s in subtopologies.values():
        wanted.update(s.repartition_source_topics)
        wanted.update(s.state_changelog_topics)
    for topic in sorted(topology.required_topics()):
        have = partitions_of(topic)
        expected = wanted.pop(topic, None) if have is not None else None
        if expected is not None and have != expected.partitions:
            raise TopicConfigurationError(
                INCORRECTLY_PARTITIONED_TOPICS,
                f"Existing topic {topic} has different number of partitions: expected "
                f"{expected.partitions}, found {have}")
    return wanted
