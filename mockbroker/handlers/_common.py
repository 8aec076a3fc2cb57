"""Small pieces several handlers share."""

from __future__ import annotations

from mockbroker.core.cluster import Cluster
from wire import errors


#: What an int32 authorized-operations field holds when the client did not ask for it.
NO_OPERATIONS = -2147483648
#: With no authorizer Kafka allows, and reports when asked, every operation a resource has.
#: Topic: READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS.
TOPIC_OPERATIONS = sum(1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11))
#: Cluster: CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS,
#: IDEMPOTENT_WRITE.
CLUSTER_OPERATIONS = sum(1 << op for op in (5, 7, 8, 9, 10, 11, 12))


def address(broker, listener: str) -> dict:
    """``host`` and ``port`` of ``broker`` for clients of ``listener``."""
    host, port = broker.address(listener)
    return {"host": host, "port": port}


def node_endpoints(cluster: Cluster, node_ids, endpoint_cls, listener: str) -> list:
    """Endpoints of the given brokers, for responses that point clients at a new leader."""
    out = []
    for node_id in sorted(set(node_ids)):
        broker = cluster.brokers.get(node_id)
        if broker is not None and broker.alive:
            out.append(endpoint_cls(node_id=node_id, rack=broker.rack,
                                    **address(broker, listener)))
    return out


def once_each(items, name=lambda item: item.name):
    """Each item of a request once, in order, with whether its name was given more than once
    (Kafka answers a repeated topic once, with INVALID_REQUEST)."""
    names = [name(item) for item in items]
    seen = set()
    for item, key in zip(items, names):
        if key in seen:
            continue
        seen.add(key)
        yield item, names.count(key) > 1


def find_topic(cluster: Cluster, by_id: bool, name: str | None, topic_id):
    """A topic a request names, by id (newer versions) or by name, and the error for a topic
    that is not there: (topic or None, error code to give when it is None)."""
    if by_id:
        return cluster.topics_by_id.get(topic_id), errors.UNKNOWN_TOPIC_ID
    return cluster.topics.get(name), errors.UNKNOWN_TOPIC_OR_PARTITION
