"""Kafka's default partitioner for keyed records, so keys land where the Java client
(``BuiltInPartitioner.partitionForKey``) would put them: ``murmur2`` (``Utils.murmur2``,
from the selected backend), ``to_positive`` (``Utils.toPositive``) and
``partition_for_key``.

Records without a key are not covered: the Java client spreads them with its sticky
partitioner, which depends on timing, not on the record.

Thread-safe (pure functions).
"""

from __future__ import annotations

from kafkacore._java import to_positive
from kafkacore.native import backend

__all__ = ["murmur2", "partition_for_key", "to_positive"]


def murmur2(key: bytes) -> int:
    """Kafka's ``Utils.murmur2`` of ``key``, as the signed 32-bit Java int."""
    return backend.murmur2(key)


def partition_for_key(key: bytes, num_partitions: int) -> int:
    """The partition the Java client picks for a record with ``key`` on a topic with
    ``num_partitions`` partitions: ``to_positive(murmur2(key)) % num_partitions``.
    ``ValueError`` if ``num_partitions`` < 1."""
    if num_partitions < 1:
        raise ValueError(f"num_partitions={num_partitions} must be >= 1")
    return to_positive(backend.murmur2(key)) % num_partitions
