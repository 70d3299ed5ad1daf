"""The iteration order of Java's ``HashMap`` for the keys Kafka's tools put in them
(``String``, ``Integer``, ``TopicPartition``): Kafka's admin tools print maps in that
order, and ``kafkacore``'s twins print the same bytes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["java_hash_map_order", "java_string_hash", "topic_partition_hash"]

_T = TypeVar("_T")


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def java_string_hash(text: str) -> int:
    """``String.hashCode`` (over UTF-16 code units)."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return _int32(h)


def topic_partition_hash(topic: str, partition: int) -> int:
    """``TopicPartition.hashCode``: ``31 * (31 + partition) + topic.hashCode()``."""
    return _int32(31 * (31 + partition) + java_string_hash(topic))


def java_hash_map_order(
    items: Sequence[_T], hash_of: Callable[[_T], int], initial_capacity: int = 16
) -> list[_T]:
    """``items`` (distinct keys, in insertion order) in the order a ``java.util.HashMap``
    made with ``initial_capacity`` and filled with them iterates: by bucket (the spread
    hash masked by the table size: the capacity rounded up to a power of two, doubled
    while more than 3/4 full), then insertion order within a bucket (a resize keeps it).
    Buckets turned into trees (8+ colliding keys) are not modelled."""
    capacity = 1
    while capacity < initial_capacity:
        capacity *= 2
    while len(items) > capacity * 3 // 4:
        capacity *= 2

    def bucket(index_item: tuple[int, _T]) -> tuple[int, int]:
        h = hash_of(index_item[1]) & 0xFFFFFFFF
        return ((h ^ (h >> 16)) & (capacity - 1), index_item[0])

    return [item for _, item in sorted(enumerate(items), key=bucket)]
