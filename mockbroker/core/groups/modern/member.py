"""A member of a new-style group: the fields every type keeps (Kafka's ``ModernGroupMember``).

What a member is assigned is kept over a generic unit: ``{key: {index: epoch}}``, where a key
is a topic id and an index a partition for consumer and share groups (a subtopology and a task
for streams groups), and the value the epoch at which the member got the unit.  A target
assignment is ``{key: {index, ...}}``.
"""

from __future__ import annotations

import base64
import uuid
from typing import Hashable

from msgspec import Struct, field

#: key (a topic id) -> {index (a partition): the epoch at which the member got it}
Assigned = dict[Hashable, dict[int, int]]
#: key -> indexes: a target assignment of one member
Units = dict[Hashable, set[int]]


class ModernMember(Struct):
    member_id: str
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: list[str] = field(default_factory=list)
    member_epoch: int = 0
    previous_member_epoch: int = 0
    assigned: Assigned = field(default_factory=dict)


def new_member_id() -> str:
    """A member id as Kafka makes one (``Uuid.randomUuid().toString()``: URL-safe base64)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
