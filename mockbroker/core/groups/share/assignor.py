"""The ``simple`` share assignor of Kafka 4.x (``SimpleAssignor``), the one a share group uses.

Unlike a consumer group's, a share group's partitions may be shared: with more members than
partitions each partition goes to ``ceil(members / partitions)`` members, and with fewer each
member gets its even part.  The assignor is sticky: it starts from the current target, drops
what members no longer subscribe to, takes from members with too much and from partitions
shared too widely, then hands out what is missing.  Only partitions whose share state is
initialized are assignable.

When every member subscribes to the same topics the group is balanced over all their
partitions at once (``SimpleHomogeneousAssignmentBuilder``); otherwise topic by topic over the
members that subscribe to each (``SimpleHeterogeneousAssignmentBuilder``).  Members are
numbered in the order of Kafka's member map, and partitions visited in the order of its hash
maps (:mod:`~mockbroker.core.javaorder`), so a group gets the assignment Kafka
would give it.
"""

from __future__ import annotations

import math
import uuid

from msgspec import Struct

from mockbroker.core import javaorder

NAME = "simple"
Target = dict[str, dict[uuid.UUID, set[int]]]
TP = tuple[uuid.UUID, int]


class AssignorError(Exception):
    pass


class MemberSpec(Struct, frozen=True):
    member_id: str
    subscribed: frozenset[uuid.UUID]


def _desired_counts(sharing: int, partitions: int, members: int) -> list[int]:
    """How many partitions the i-th of ``members`` should get (Kafka's spread of the
    remainder: ``ceil(p * (i + 1)) - ceil(p * i)``)."""
    precise = sharing * partitions / members
    return [math.ceil(precise * (i + 1)) - math.ceil(precise * i) for i in range(members)]


def assign(members: list[MemberSpec], partitions: dict[uuid.UUID, int],
           assignable, current: Target) -> Target:
    """The next target: member id -> {topic id: partitions}.  ``partitions`` gives each
    subscribed topic's partition count, ``assignable(topic, partition)`` whether a partition's
    share state is initialized, ``current`` the current target."""
    if not members:
        return {}
    ids = javaorder.string_order([m.member_id for m in members])
    subs = {m.member_id: m.subscribed for m in members}
    for topics in subs.values():
        for topic in topics:
            if topic not in partitions:
                raise AssignorError(f"Members are subscribed to topic {topic} which doesn't "
                                    f"exist in the topic metadata.")
    old = {i: {t: set(ps) for t, ps in current.get(member_id, {}).items()}
           for i, member_id in enumerate(ids)}
    if len({subs[m] for m in ids}) == 1:
        new = _homogeneous(subs[ids[0]], partitions, assignable, old, len(ids))
    else:
        new = _heterogeneous(ids, subs, partitions, assignable, old)
    return {member_id: {t: ps for t, ps in new.get(i, old[i]).items()}
            for i, member_id in enumerate(ids)}


def _targets(topics, partitions, assignable) -> list[TP]:
    return [(t, p) for t in javaorder.uuid_order(topics) for p in range(partitions[t])
            if assignable(t, p)]


def _homogeneous(topics: frozenset[uuid.UUID], partitions, assignable, old, count: int):
    if not topics:
        return {}
    targets = _targets(topics, partitions, assignable)
    sharing = (count + len(targets) - 1) // len(targets) if targets else 0
    desired = _desired_counts(sharing, len(targets), count)
    new: dict[int, dict[uuid.UUID, set[int]]] = {}
    by_partition: dict[TP, list[int]] = {}
    by_member: dict[int, list[TP]] = {}
    unfilled: list[int] = []
    overfilled: list[int] = []

    def copy_of(i: int) -> dict[uuid.UUID, set[int]]:
        if i not in new:
            new[i] = {t: set(ps) for t, ps in old[i].items()}
        return new[i]

    # drop what is no longer subscribed; note who has too little or too much
    for i in javaorder.int_order(old):
        held = 0
        for topic, ps in list(old[i].items()):
            if topic in topics:
                for p in ps:
                    held += 1
                    by_partition.setdefault((topic, p), []).append(i)
                    by_member.setdefault(i, []).append((topic, p))
                    if held >= desired[i]:
                        copy_of(i)
            else:
                copy_of(i).pop(topic, None)
        if held < desired[i]:
            unfilled.append(i)
        elif held > desired[i]:
            overfilled.append(i)
    # take from members with too much
    for i in overfilled:
        mine = by_member[i]
        while len(mine) > desired[i]:
            topic, p = mine.pop(0)
            new[i][topic].discard(p)
            by_partition[(topic, p)].remove(i)
    # take from partitions shared too widely
    for tp in _partition_order(by_partition):
        holders = by_partition[tp]
        for i in list(holders):
            if len(holders) <= sharing:
                break
            ps = copy_of(i).get(tp[0])
            if ps is not None and tp[1] in ps:
                ps.discard(tp[1])
                holders.remove(i)
                by_member[i].remove(tp)
                if i not in unfilled:
                    unfilled.append(i)
    for tp in targets:
        by_partition.setdefault(tp, [])
    _fill(_partition_order(by_partition), by_partition, by_member, unfilled, desired, sharing,
          copy_of)
    return new


def _partition_order(by_partition: dict[TP, list[int]]) -> list[TP]:
    return javaorder.hashmap_order(by_partition, javaorder.topic_id_partition_hash,
                                   initial=javaorder.expected_capacity(len(by_partition)))


def _fill(order, by_partition, by_member, unfilled: list[int], desired, sharing, copy_of):
    """Hand partitions with too few members to members with too little, round robin."""
    if not unfilled:
        return
    unfilled = javaorder.int_order(unfilled)
    cursor = 0
    assigned_this_round = False
    for tp in order:
        holders = by_partition[tp]
        to_make = sharing - len(holders)
        while to_make > 0:
            if cursor >= len(unfilled):
                if not assigned_this_round:
                    break
                cursor, assigned_this_round = 0, False
            if not unfilled:
                break
            i = unfilled[cursor]
            if i in holders:
                cursor += 1
                continue
            copy_of(i).setdefault(tp[0], set()).add(tp[1])
            holders.append(i)
            by_member.setdefault(i, []).append(tp)
            to_make -= 1
            assigned_this_round = True
            if len(by_member[i]) >= desired[i]:
                unfilled.pop(cursor)
            else:
                cursor += 1
        if not unfilled:
            break


def _heterogeneous(ids: list[str], subs, partitions, assignable, old):
    new: dict[int, dict[uuid.UUID, set[int]]] = {}
    topics = set().union(*subs.values())
    if not topics:
        return {}

    def copy_of(i: int) -> dict[uuid.UUID, set[int]]:
        if i not in new:
            new[i] = {t: set(ps) for t, ps in old[i].items()}
        return new[i]

    for topic in javaorder.uuid_order(topics):
        targets = [p for p in range(partitions[topic]) if assignable(topic, p)]
        subscribed = [i for i, member_id in enumerate(ids) if topic in subs[member_id]]
        sharing = (len(subscribed) + len(targets) - 1) // len(targets) if targets else 0
        desired = [0] * len(ids)
        for n, count in enumerate(_desired_counts(sharing, len(targets), len(subscribed))):
            desired[subscribed[n]] = count
        by_partition: dict[int, list[int]] = {}
        by_member: dict[int, list[int]] = {}
        for i in javaorder.int_order(old):
            held = old[i].get(topic)
            if held:
                for p in held:
                    by_partition.setdefault(p, []).append(i)
                    by_member.setdefault(i, []).append(p)
        for i in javaorder.int_order(by_member):
            mine = by_member[i]
            while len(mine) > desired[i]:
                p = mine.pop(0)
                by_partition[p].remove(i)
                copy_of(i)[topic].discard(p)
        for p in javaorder.int_order(by_partition):
            holders = by_partition[p]
            for i in list(holders):
                if len(holders) <= sharing:
                    break
                ps = copy_of(i).get(topic)
                if ps is not None and p in ps:
                    ps.discard(p)
                    holders.remove(i)
                    by_member[i].remove(p)
        for p in targets:
            by_partition.setdefault(p, [])
        unfilled = [i for i in subscribed if len(by_member.get(i, ())) < desired[i]]
        _fill([(topic, p) for p in javaorder.int_order(by_partition)],
              {(topic, p): hs for p, hs in by_partition.items()},
              {i: [(topic, p) for p in ps] for i, ps in by_member.items()},
              unfilled, desired, sharing, copy_of)
    return new
