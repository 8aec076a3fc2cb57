"""The iteration order of Java's ``HashMap`` and ``HashSet``, which Kafka walks where the order
shows: a Python port of an assignor that visits members or partitions in another order hands
out the same partitions to other members than Kafka does, and of a check that stops at the first
failure names another culprit (UpdateFeatures).

A Java hash table iterates by bucket (``h ^ (h >>> 16)`` masked by the table size, a power of
two that doubles while the table is over three quarters full), and within a bucket by
insertion (a resize keeps that order).  The hashes are Java's: ``String.hashCode``,
``Uuid.hashCode``, ``Integer.hashCode`` (the value) and Kafka's ``TopicIdPartition.hashCode``.
Java's ``String.length`` (UTF-16 code units) sits beside its hash code.
"""

from __future__ import annotations

import uuid
from typing import Callable, Hashable, Iterable, TypeVar

K = TypeVar("K", bound=Hashable)
_MASK = 0xFFFFFFFF


#: hash codes already computed: a group id or transactional id is hashed again by every
#: request that names it (which coordinator, which shard), and most are short-lived names of
#: one test; cleared whole when full
_HASHES: dict[str, int] = {}
_HASHES_KEPT = 1 << 16


def java_string_hashcode(text: str) -> int:
    """``String.hashCode()`` over UTF-16 code units, as a signed 32-bit int."""
    h = _HASHES.get(text)
    if h is None:
        h = 0
        if text.isascii():
            for ch in text.encode():
                h = (31 * h + ch) & 0xFFFFFFFF
        else:
            for unit in _utf16_units(text):
                h = (31 * h + unit) & 0xFFFFFFFF
        if h >= 1 << 31:
            h -= 1 << 32
        if len(_HASHES) >= _HASHES_KEPT:
            _HASHES.clear()
        _HASHES[text] = h
    return h


def java_length(text: str) -> int:
    """``String.length()``: UTF-16 code units (a lone surrogate counts as one)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _utf16_units(text: str):
    for ch in text:
        code = ord(ch)
        if code >= 0x10000:
            code -= 0x10000
            yield 0xD800 + (code >> 10)
            yield 0xDC00 + (code & 0x3FF)
        else:
            yield code


def _int32(value: int) -> int:
    value &= _MASK
    return value - (1 << 32) if value & 0x80000000 else value


def uuid_hash(topic: uuid.UUID) -> int:
    """``Uuid.hashCode``: the xor of its two halves, folded to 32 bits."""
    x = (topic.int >> 64) ^ (topic.int & ((1 << 64) - 1))
    return _int32((x >> 32) ^ x)


def topic_id_partition_hash(key: tuple[uuid.UUID, int]) -> int:
    """``TopicIdPartition.hashCode`` of (topic id, partition), with no topic name."""
    topic, partition = key
    return _int32(31 * (31 + uuid_hash(topic)) + 31 * (31 + partition))


def table_size(initial: int) -> int:
    """The table a ``new HashMap<>(initial)`` starts with (``tableSizeFor``)."""
    size = 1
    while size < initial:
        size *= 2
    return max(size, 1)


def expected_capacity(mappings: int) -> int:
    """The initial capacity Kafka's ``AssignorHelpers.newHashMap(n)`` asks for."""
    return int(((mappings + 1) / 0.75) + 1)


def hashmap_order(keys: Iterable[K], hash_of: Callable[[K], int], *,
                  initial: int = 16) -> list[K]:
    """``keys`` (in insertion order) in the order a Java hash table of them iterates."""
    keys = list(dict.fromkeys(keys))
    capacity = table_size(initial)
    while len(keys) > capacity * 0.75:
        capacity *= 2

    def bucket(key: K) -> int:
        h = hash_of(key) & _MASK
        return (h ^ (h >> 16)) & (capacity - 1)

    return [key for _, _, key in sorted((bucket(k), i, k) for i, k in enumerate(keys))]


def string_order(keys: Iterable[str], *, initial: int = 16) -> list[str]:
    """Strings in the order of a Java ``HashMap<String, ...>`` of them."""
    return hashmap_order(keys, java_string_hashcode, initial=initial)


def int_order(keys: Iterable[int], *, initial: int = 16) -> list[int]:
    """Integers in the order of a Java ``HashMap<Integer, ...>`` of them."""
    return hashmap_order(keys, lambda k: k, initial=initial)


def uuid_order(keys: Iterable[uuid.UUID], *, initial: int = 16) -> list[uuid.UUID]:
    """Topic ids in the order of a Java ``HashSet<Uuid>``."""
    return hashmap_order(keys, uuid_hash, initial=initial)
