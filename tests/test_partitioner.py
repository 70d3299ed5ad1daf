"""Kafka's murmur2 partitioner: known vectors, native == pure, the facade's rules."""

from __future__ import annotations

from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkacore import partitioner

# Kafka's UtilsTest.testMurmur2 vectors.
VECTORS = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    b"abc": 479470107,
}


@pytest.mark.parametrize(("key", "expected"), VECTORS.items())
def test_known_vectors(backend: ModuleType, key: bytes, expected: int) -> None:
    assert backend.murmur2(key) == expected


@given(st.binary(max_size=2000))
def test_backends_agree(native: ModuleType, pure: ModuleType, key: bytes) -> None:
    h = native.murmur2(key)
    assert h == pure.murmur2(key)
    assert -(2**31) <= h < 2**31


def test_facade() -> None:
    assert partitioner.murmur2(b"21") == -973932308
    assert partitioner.to_positive(-973932308) == -973932308 & 0x7FFFFFFF
    assert partitioner.to_positive(-(2**31)) == 0  # not abs(): the sign bit is cleared
    assert partitioner.to_positive(-1) == 2**31 - 1
    assert partitioner.to_positive(5) == 5
    assert partitioner.partition_for_key(b"21", 10) == (-973932308 & 0x7FFFFFFF) % 10
    assert partitioner.partition_for_key(b"anything", 1) == 0
    for bad in (0, -3):
        with pytest.raises(ValueError, match="num_partitions"):
            partitioner.partition_for_key(b"k", bad)


@given(st.binary(max_size=64), st.integers(min_value=1, max_value=2**31 - 1))
def test_partition_in_range(key: bytes, n: int) -> None:
    assert 0 <= partitioner.partition_for_key(key, n) < n
