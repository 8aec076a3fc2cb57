"""Kafka's rule for topic names, in Kafka's words.

One check (:func:`topic_name_error`, after Kafka's ``Topic.validate``) for every place a name
comes in: CreateTopics, Metadata's auto-creation, DescribeConfigs and the other config APIs,
DescribeTopicPartitions, the admin HTTP API and fault specs.  It lives on its own so that both
the cluster and the config package can use it without importing each other.
"""

from __future__ import annotations

import re

MAX_TOPIC_NAME_LENGTH = 249
_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")


def topic_name_error(name: str | None) -> str | None:
    """Why Kafka refuses ``name`` as a topic name (the message it answers with), or None if
    the name is legal."""
    if name is None:
        return "Topic name is invalid: null"
    if not name:
        reason = "the empty string is not allowed"
    elif name in (".", ".."):
        reason = f"'{name}' is not allowed"
    elif len(name) > MAX_TOPIC_NAME_LENGTH:
        reason = (f"the length of '{name}' is longer than the max allowed length "
                  f"{MAX_TOPIC_NAME_LENGTH}")
    elif not _LEGAL.fullmatch(name):
        reason = (f"'{name}' contains one or more characters other than ASCII alphanumerics, "
                  "'.', '_' and '-'")
    else:
        return None
    return f"Topic name is invalid: {reason}"


def colliding_topic(name: str, existing) -> str | None:
    """The existing topic ``name`` would collide with because Kafka's metric names treat
    ``.`` and ``_`` alike, or None."""
    if "." not in name and "_" not in name:
        return None
    unified = name.replace(".", "_")
    for other in existing:
        if other.replace(".", "_") == unified:
            return other
    return None
