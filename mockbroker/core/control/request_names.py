"""What a request names: its topics and partitions, and its groups (for control rules and the
request log's filters), whether it names topics by name or by id."""

from __future__ import annotations


def topic_name(cluster, item, name_field: str) -> str | None:
    name = getattr(item, name_field, None)
    if name:
        return name
    topic_id = getattr(item, "topic_id", None)
    if topic_id is not None:
        topic = cluster.topics_by_id.get(topic_id)
        if topic is not None:
            return topic.name
    return name


def named_partitions(cluster, shape, body) -> set[tuple[str, int | None]]:
    """Every (topic, partition or None) a request names; ``shape`` is its API's declared error
    shape, which says where a partitioned request names them."""
    from mockbroker.core.control import error_responses  # loaded already by a handler with a shape

    if isinstance(shape, error_responses.PartitionShape):
        return set(error_responses.request_partitions(
            shape, body, lambda item, name_field: topic_name(cluster, item, name_field)))
    found: set[tuple[str, int | None]] = set()
    _walk_names(cluster, body, found, depth=2)
    return found


def named_groups(body) -> set[str]:
    """Every group a request names (a group id, or a list of groups)."""
    found = set()
    group_id = getattr(body, "group_id", None)
    if isinstance(group_id, str):
        found.add(group_id)
    for name in ("groups", "groups_names", "group_ids"):
        for item in getattr(body, name, None) or ():
            found.add(item if isinstance(item, str) else getattr(item, "group_id", None))
    return found


def _walk_names(cluster, struct, found: set, depth: int) -> None:
    for name in ("topics", "topic_data"):
        for item in getattr(struct, name, None) or ():
            if isinstance(item, str):
                found.add((item, None))
                continue
            topic = topic_name(cluster, item, "name") or topic_name(cluster, item, "topic") \
                or topic_name(cluster, item, "topic_name")
            partitions = getattr(item, "partitions", None) or getattr(item, "partition_indexes",
                                                                      None) or ()
            if not partitions:
                found.add((topic, None))
            for partition in partitions:
                index = partition if isinstance(partition, int) else \
                    getattr(partition, "partition_index", None)
                found.add((topic, index))
    for name in getattr(struct, "topic_names", None) or ():
        found.add((name, None))
    if depth:
        for group in getattr(struct, "groups", None) or ():
            if not isinstance(group, str):
                _walk_names(cluster, group, found, depth - 1)


