"""The order in which Kafka's tools print sets: a ``java.util.HashSet``'s iteration order
(a ``HashMap`` of the default capacity underneath), so that kafkacore's tools and console
print the same bytes as Kafka's.

Thread-safety: pure functions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from kafkacore._java import java_hash_map_order, java_string_hash, topic_partition_hash
from kafkacore.admin.client import TP

__all__ = [
    "int_set_order",
    "java_set_order",
    "partition_hash",
    "partition_set_order",
    "string_hash",
    "string_set_order",
]

_T = TypeVar("_T")


def string_hash(s: str) -> int:
    """``String.hashCode`` as an unsigned 32-bit value."""
    return java_string_hash(s) & 0xFFFFFFFF


def partition_hash(tp: TP) -> int:
    """``TopicPartition.hashCode`` as an unsigned 32-bit value."""
    return topic_partition_hash(*tp) & 0xFFFFFFFF


def java_set_order(items: Iterable[_T], hash_of: Callable[[_T], int]) -> list[_T]:
    """``items`` added one by one to a ``java.util.HashSet`` (a ``HashMap`` of the default
    capacity underneath), in its iteration order."""
    return java_hash_map_order(list(dict.fromkeys(items)), hash_of)


def int_set_order(ids: Iterable[int]) -> list[int]:
    """A ``HashSet<Integer>``'s order (an ``Integer`` hashes to itself)."""
    return java_set_order(ids, lambda i: i & 0xFFFFFFFF)


def string_set_order(names: Iterable[str]) -> list[str]:
    """A ``HashSet<String>``'s order."""
    return java_set_order(names, string_hash)


def partition_set_order(tps: Iterable[TP]) -> list[TP]:
    """A ``HashSet<TopicPartition>``'s order."""
    return java_set_order(tps, partition_hash)
