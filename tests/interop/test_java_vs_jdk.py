"""``kafkacore._java`` against the JDK and Kafka's ``Utils`` themselves (``java/JdkHashes.java``,
one JVM for the module): ``String.hashCode``/``length``, ``TopicPartition.hashCode``,
``Utils.abs``/``toPositive``, and the iteration order of ``HashMap`` (``put``, sized,
``computeIfAbsent``) and ``HashSet``, on hypothesis-drawn keys: any text (lone surrogates
too), keys crowding one bucket (``treeifyBin`` doubles a table below 64), and keys with
equal hash codes; and the order of Kafka's own ``TimelineHashMap`` after puts and removes.
These orders are what Kafka's tools print, what a config's valid values list, and the
order of the records Kafka's group coordinator writes; the hashes place groups and
transactional ids on their partitions."""

from __future__ import annotations

import subprocess
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from interop.conftest import Java
from kafkacore._java import (
    TimelineHashMap,
    java_hash_map_order,
    java_hash_set_order,
    java_length,
    java_string_hash,
    to_positive,
    topic_partition_hash,
    utils_abs,
)
from support.kafka_jars import JVM_FLAGS

pytestmark = pytest.mark.interop


class Jdk:
    """A JdkHashes process: one request line in, one answer line out."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc

    def ask(self, *fields: str) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(" ".join(fields) + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        assert answer, f"JdkHashes exited {self.proc.poll()}"
        return answer.rstrip("\n")

    def indexes(self, *fields: str) -> list[int]:
        answer = self.ask(*fields)
        return [int(i) for i in answer.split(",")] if answer else []


def _hex(text: str) -> str:
    return text.encode("utf-16-be", "surrogatepass").hex()


def _hexes(keys: list[str]) -> str:
    return ",".join("s" + _hex(k) for k in keys)


@pytest.fixture(scope="module")
def jdk(java: Java) -> Iterator[Jdk]:
    proc = subprocess.Popen(
        ["java", *JVM_FLAGS, "-cp", java.classpath, "JdkHashes"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="ascii",
    )
    try:
        yield Jdk(proc)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)


any_text = st.text(st.characters(exclude_categories=()), max_size=12)
# single characters whose hash codes share a residue mod 16: one bucket of a 16-slot table
crowding = st.integers(0, 15).flatmap(
    lambda bucket: st.lists(st.integers(0, 11).map(lambda k: chr(bucket + 1 + 16 * k)))
)
# "Aa" and "BB" have the same hash code, and so do all strings of the same such blocks
equal_hashes = st.lists(st.sampled_from(["AaAa", "AaBB", "BBAa", "BBBB"]))


def _fits_without_trees(hashes: list[int]) -> bool:
    """``hashes`` of distinct keys: no bucket of a 64-slot table holds 8 keys (such a
    bucket becomes a tree at 64 slots or more, whose order is not modelled)."""
    spread = Counter(((h & 0xFFFFFFFF) ^ ((h & 0xFFFFFFFF) >> 16)) & 63 for h in hashes)
    return max(spread.values(), default=0) <= 7


@st.composite
def distinct_keys(draw: st.DrawFn) -> list[str]:
    texts = st.lists(any_text, max_size=40)
    mixed = st.tuples(texts, crowding, equal_hashes).map(lambda ps: [k for p in ps for k in p])
    keys = draw(st.one_of(crowding, texts, mixed))
    keys = list(dict.fromkeys(draw(st.permutations(keys))))
    assume(_fits_without_trees([java_string_hash(k) for k in keys]))
    return keys


@given(any_text)
def test_string_hash_code_and_length(jdk: Jdk, text: str) -> None:
    assert jdk.ask("hash", _hex(text)) == f"{java_string_hash(text)} {java_length(text)}"


@given(any_text, st.integers(0, 2**31 - 1))
def test_topic_partition_hash_code(jdk: Jdk, topic: str, partition: int) -> None:
    assert int(jdk.ask("tp", _hex(topic), str(partition))) == topic_partition_hash(topic, partition)


@given(st.integers(-(2**31), 2**31 - 1) | st.sampled_from([-(2**31), -1, 0, 2**31 - 1]))
def test_utils_abs_and_to_positive(jdk: Jdk, n: int) -> None:
    assert jdk.ask("abs", str(n)) == f"{utils_abs(n)} {to_positive(n)}"


@given(distinct_keys(), st.integers(-1, 200))
def test_hash_map_put_order(jdk: Jdk, keys: list[str], capacity: int) -> None:
    if capacity < 0:
        ours = java_hash_map_order(keys, java_string_hash)
    else:
        ours = java_hash_map_order(keys, java_string_hash, capacity)
    assert [keys[i] for i in jdk.indexes("put", str(capacity), _hexes(keys))] == ours


@given(distinct_keys())
def test_hash_map_compute_if_absent_order(jdk: Jdk, keys: list[str]) -> None:
    ours = java_hash_map_order(keys, java_string_hash, compute_if_absent=True)
    assert [keys[i] for i in jdk.indexes("compute", _hexes(keys))] == ours


@given(distinct_keys().flatmap(lambda keys: st.lists(st.sampled_from(keys or [""]))))
def test_hash_set_order(jdk: Jdk, items: list[str]) -> None:
    ours = java_hash_set_order(items, java_string_hash)
    assert [items[i] for i in jdk.indexes("set", _hexes(items))] == ours


@given(st.lists(st.integers(-(2**31), 2**31 - 1) | st.integers(0, 300), max_size=60))
def test_integer_hash_set_order(jdk: Jdk, ints: list[int]) -> None:
    assume(_fits_without_trees(list(set(ints))))
    answer = jdk.ask("intset", ",".join(map(str, ints)))
    assert [int(n) for n in answer.split(",") if answer] == java_hash_set_order(ints, lambda n: n)


_timeline_key = st.one_of(
    any_text.map(lambda t: ("s", t)),
    (st.integers(-(2**31), 2**31 - 1) | st.integers(0, 40)).map(lambda n: ("i", n)),
)


@given(st.lists(st.tuples(st.booleans(), _timeline_key), max_size=60))
def test_timeline_hash_map_order(jdk: Jdk, ops: list[tuple[bool, tuple[str, Any]]]) -> None:
    """Kafka's ``TimelineHashMap`` after puts and removes: the same keys in the same order
    (a put of a key already there, or a remove of one absent, included)."""

    def written(key: tuple[str, Any]) -> str:
        return f"s{_hex(key[1])}" if key[0] == "s" else f"i{key[1]}"

    ours: TimelineHashMap[Any, str] = TimelineHashMap()
    for put, key in ops:
        if put:
            ours[key[1]] = written(key)
        else:
            ours.pop(key[1], None)
    answer = jdk.ask("timeline", ",".join(("+" if put else "-") + written(k) for put, k in ops))
    assert (answer.split(",") if answer else []) == list(ours.values())
