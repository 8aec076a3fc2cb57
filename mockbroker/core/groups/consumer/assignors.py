"""The server-side assignors of KIP-848: ``uniform`` (the default) and ``range``, as Kafka 4.x
computes them (``UniformAssignor``, ``RangeAssignor``).

An assignor sees every member's subscription (topic ids) and the group's current target
assignment, and returns the next target: member id -> {topic id: partitions}.

* ``uniform`` balances first (member sizes differ by at most one) and is sticky second (a
  member keeps what it had, up to its quota).  With every member subscribed to the same topics
  it fills quotas member by member; otherwise each free partition goes to the least-loaded
  subscriber and the topics are then rebalanced.  Members are visited in the order Kafka's
  ``HashMap`` of member ids gives, so the same group gets the same assignment as on Kafka.
* ``range`` gives each member a contiguous range of each topic it subscribes to, members
  sorted (static members by instance id first, then the others by member id), the first ones
  taking one more when the partitions do not divide evenly.  It is not sticky.
"""

from __future__ import annotations

import uuid

from msgspec import Struct

from mockbroker.core.javaorder import string_order as java_hashmap_order

Target = dict[str, dict[uuid.UUID, set[int]]]


class AssignorError(Exception):
    pass


class MemberSpec(Struct, frozen=True):
    member_id: str
    instance_id: str | None
    subscribed: frozenset[uuid.UUID]


def _topic_order(topics: set[uuid.UUID]) -> list[uuid.UUID]:
    """Topic ids in the order of a Java ``HashSet<Uuid>`` (``Uuid.hashCode``)."""
    capacity = 16
    while len(topics) > capacity * 0.75:
        capacity *= 2

    def bucket(topic: uuid.UUID) -> int:
        msb, lsb = topic.int >> 64, topic.int & ((1 << 64) - 1)
        x = msb ^ lsb
        h = ((x >> 32) ^ x) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(topics, key=lambda t: (bucket(t), t.int))


def uniform(members: list[MemberSpec], partitions: dict[uuid.UUID, int],
            current: Target) -> Target:
    if not members:
        return {}
    order = java_hashmap_order([m.member_id for m in members])
    by_id = {m.member_id: m for m in members}
    subscriptions = {m.subscribed for m in members}
    if len(subscriptions) == 1:
        return _uniform_homogeneous([by_id[i] for i in order], partitions, current)
    return _uniform_heterogeneous([by_id[i] for i in order], partitions, current)


def _uniform_homogeneous(members: list[MemberSpec], partitions: dict[uuid.UUID, int],
                         current: Target) -> Target:
    topics = [t for t in _topic_order(set(members[0].subscribed)) if t in partitions]
    if not topics:
        return {m.member_id: {} for m in members}
    held = {(t, p) for m in members for t, ps in current.get(m.member_id, {}).items()
            for p in ps}
    unassigned = [(t, p) for t in topics for p in range(partitions[t]) if (t, p) not in held]
    total = sum(partitions[t] for t in topics)
    count = len(members)
    min_quota, extra = divmod(total, count)
    target: Target = {m.member_id: {} for m in members}
    unfilled: list[tuple[str, int]] = []
    for i, member in enumerate(members):
        has_extra = extra > 0
        quota = min_quota + (1 if has_extra else 0)
        for topic, ps in current.get(member.member_id, {}).items():
            if topic not in partitions or topic not in member.subscribed:
                continue
            ordered = sorted(p for p in ps if p < partitions[topic])
            kept, given_back = ordered[:quota], ordered[quota:]
            if kept:
                target[member.member_id][topic] = set(kept)
            quota -= len(kept)
            unassigned.extend((topic, p) for p in given_back)
        if quota > 0 and has_extra and count - i > extra:
            quota -= 1
            has_extra = False
        if quota > 0:
            unfilled.append((member.member_id, quota))
        if has_extra:
            extra -= 1
    position = 0
    for member_id, quota in unfilled:
        for topic, p in unassigned[position:position + quota]:
            target[member_id].setdefault(topic, set()).add(p)
        position += quota
    if position < len(unassigned):
        raise AssignorError("Partitions were left unassigned")
    return target


def _uniform_heterogeneous(members: list[MemberSpec], partitions: dict[uuid.UUID, int],
                           current: Target) -> Target:
    index = {m.member_id: i for i, m in enumerate(members)}
    subscribers = {t: [m.member_id for m in members if t in m.subscribed]
                   for t in partitions if any(t in m.subscribed for m in members)}
    target: Target = {m.member_id: {} for m in members}
    load = {m.member_id: 0 for m in members}
    owner: dict[tuple[uuid.UUID, int], str] = {}
    for member in members:
        for topic, ps in current.get(member.member_id, {}).items():
            if topic in subscribers and topic in member.subscribed:
                kept = {p for p in ps if p < partitions[topic]}
                if kept:
                    target[member.member_id][topic] = set(kept)
                    load[member.member_id] += len(kept)
                    owner.update({(topic, p): member.member_id for p in kept})

    def topic_key(t: uuid.UUID):
        return (-partitions[t] / len(subscribers[t]), len(subscribers[t]), t.int)

    topics = sorted(subscribers, key=topic_key)
    for topic in topics:
        for p in range(partitions[topic]):
            if (topic, p) in owner:
                continue
            chosen = min(subscribers[topic], key=lambda m: (load[m], index[m]))
            target[chosen].setdefault(topic, set()).add(p)
            load[chosen] += 1
            owner[(topic, p)] = chosen
    for _ in range(16):
        moved = False
        for topic in topics:
            subs = subscribers[topic]
            if len(subs) < 2:
                continue
            while True:
                busiest = max((m for m in subs if target[m].get(topic)),
                              key=lambda m: (load[m], -index[m]), default=None)
                idlest = min(subs, key=lambda m: (load[m], index[m]))
                if busiest is None or load[busiest] - load[idlest] <= 1:
                    break
                p = max(target[busiest][topic])
                target[busiest][topic].discard(p)
                if not target[busiest][topic]:
                    del target[busiest][topic]
                target[idlest].setdefault(topic, set()).add(p)
                load[busiest] -= 1
                load[idlest] += 1
                moved = True
        if not moved:
            break
    return target


def range_(members: list[MemberSpec], partitions: dict[uuid.UUID, int],
           current: Target) -> Target:
    ordered = sorted((m for m in members if m.instance_id is not None),
                     key=lambda m: m.instance_id) + \
        sorted((m for m in members if m.instance_id is None), key=lambda m: m.member_id)
    target: Target = {m.member_id: {} for m in members}
    for topic in sorted(partitions, key=lambda t: t.int):
        subs = [m for m in ordered if topic in m.subscribed]
        if not subs:
            continue
        quota, extra = divmod(partitions[topic], len(subs))
        start = 0
        for member in subs:
            size = quota + (1 if extra > 0 else 0)
            extra -= 1 if extra > 0 else 0
            if size:
                target[member.member_id][topic] = set(range(start, start + size))
            start += size
    return target


#: the assignors by the names clients use (``group.remote.assignor``)
ASSIGNORS = {"uniform": uniform, "range": range_}
