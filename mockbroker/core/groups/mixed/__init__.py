"""What joins the classic and the consumer group types (KIP-848): consumer groups with members
of the classic protocol (mixed groups, :mod:`.classic_members`), and online migration between
the two types, both ways, under ``group.consumer.migration.policy`` (:mod:`.migration`).

It sits above the two types it joins: it may import both
(:mod:`~mockbroker.core.groups.classic`, :mod:`~mockbroker.core.groups.consumer`), and neither
imports it, or each other.  The table of group types (:mod:`~mockbroker.core.groups.types`)
loads it with the first request of one type's protocol that reaches a group of the other type,
or the first members leaving a consumer group, and routes by :data:`SERVES`.
"""

from __future__ import annotations

from mockbroker.core.groups.classic.group import ClassicGroup
from mockbroker.core.groups.consumer.group import ConsumerGroup
from mockbroker.core.groups.mixed.classic_members import ClassicMembers
from mockbroker.core.groups.mixed.migration import Upgrade

#: What this package serves, as the table reads it: (the type whose protocol a request belongs
#: to, the type of the group it reaches) -> what serves it there, built once per coordinator.
#: A server that has a ``leaving`` method is also told when members are about to leave a group
#: of the pair's second type (a consumer group left with classic members only becomes a
#: classic group).
SERVES = {
    (ClassicGroup.type, ConsumerGroup.type): ClassicMembers,
    (ConsumerGroup.type, ClassicGroup.type): Upgrade,
}
