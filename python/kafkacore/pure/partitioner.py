"""Kafka's default partitioner for keyed records (the twin of
``kafkacore_core::partitioner``): ``Utils.murmur2`` - MurmurHash2, 32-bit, seed
``0x9747b28c``, little-endian 4-byte blocks, arithmetic wrapping as Java's ``int`` -
and ``partition = (murmur2(key) & 0x7fffffff) % num_partitions``.

Thread-safe (pure functions).
"""

from __future__ import annotations

__all__ = ["murmur2"]

_SEED = 0x9747B28C
_M = 0x5BD1E995
_R = 24
_U32 = 0xFFFFFFFF


def murmur2(data: bytes, /) -> int:
    """Kafka's ``Utils.murmur2`` of ``data``, as the signed 32-bit Java int."""
    length = len(data)
    h = (_SEED ^ length) & _U32
    tail = length & ~3
    for i in range(0, tail, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * _M) & _U32
        k ^= k >> _R
        k = (k * _M) & _U32
        h = ((h * _M) & _U32) ^ k
    rest = length & 3
    if rest:
        # Java's switch falls through: 3 -> 2 -> 1.
        if rest == 3:
            h ^= data[tail + 2] << 16
        if rest >= 2:
            h ^= data[tail + 1] << 8
        h ^= data[tail]
        h = (h * _M) & _U32
    h ^= h >> 13
    h = (h * _M) & _U32
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h
