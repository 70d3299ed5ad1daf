"""The JDK's behaviour where Kafka's bytes or output depend on it, in Python: the one
place for it (every package imports it from here).

- Hashing and iteration order: ``String.hashCode``, ``TopicPartition.hashCode``,
  ``Utils.abs``/``Utils.toPositive`` (a group's ``__consumer_offsets`` partition, a
  transactional id's ``__transaction_state`` partition), and the iteration order of a
  ``java.util.HashMap``/``HashSet`` (Kafka's tools print maps and sets as they iterate;
  a config's valid values are listed from a ``HashSet``).
- Strings: ``String.length()`` (UTF-16 code units), ``new String(bytes, UTF_8)``,
  ``String.split``, ``Long.parseLong``, Jackson's JSON strings.
- ``java.io.File`` path handling and Java ``int`` arithmetic, as Kafka's
  ``DumpLogSegments`` does them.

Kafka's ``Utils.murmur2`` is not here: it is on the hot path, in the native core with its
pure twin (:mod:`kafkacore.partitioner`). Pure functions: thread-safe.
"""

from __future__ import annotations

import codecs
import os
import re
import uuid
from collections.abc import (
    Callable,
    Hashable,
    Iterable,
    Iterator,
    Mapping,
    MutableMapping,
    MutableSet,
    Sequence,
)
from typing import Any, TypeVar

from kafkacore.errors import KafkaCoreError

__all__ = [
    "INT_MAX",
    "JavaException",
    "JavaHashMap",
    "JavaHashSet",
    "absolute_path",
    "base_offset_of",
    "decode_utf8",
    "decrement_sequence",
    "file_name",
    "i32",
    "increment_sequence",
    "java_bool",
    "java_float_div_int",
    "java_hash_code",
    "java_hash_map_order",
    "java_hash_set_order",
    "java_length",
    "java_path",
    "java_split",
    "java_string_hash",
    "java_string_key",
    "json_string",
    "kafka_uuid_compare",
    "kafka_uuid_hash",
    "kafka_uuid_key",
    "parent",
    "parse_java_integer",
    "read_unsigned_varint",
    "table_size_for",
    "to_positive",
    "topic_partition_hash",
    "utils_abs",
]

_T = TypeVar("_T")

INT_MAX = 2**31 - 1


class JavaException(KafkaCoreError):
    """An exception Kafka's Java code throws at this point. ``kind`` is the simple name of
    the Java exception; the message is Kafka's where Kafka builds one."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


def java_path(arg: str) -> str:
    """``new File(arg).toString()``: repeated slashes collapsed, a trailing one dropped."""
    path = re.sub("/+", "/", arg)
    return path[:-1] if len(path) > 1 and path.endswith("/") else path


def file_name(path: str) -> str:
    """``File.getName()``."""
    return path[path.rfind("/") + 1 :]


def absolute_path(path: str) -> str:
    """``File.getAbsolutePath()``: resolved against the working directory, not normalised."""
    if path.startswith("/"):
        return path
    cwd = os.getcwd()
    return f"{cwd}/{path}" if path else cwd


def parent(path: str) -> str:
    """``File.getParent()`` of an absolute path."""
    cut = path.rfind("/")
    return path[:cut] if cut > 0 else "/"


def java_split(text: str, separator: str) -> list[str]:
    """``String.split`` on a literal separator: trailing empty strings are removed."""
    if separator not in text:
        return [text]
    parts = text.split(separator)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


_JAVA_INTEGER = re.compile(r"[+-]?[0-9]+\Z")


def parse_java_integer(text: str, bits: int) -> int:
    """``Long.parseLong`` / ``Integer.parseInt`` (radix 10)."""
    if _JAVA_INTEGER.match(text):
        value = int(text)
        if -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
            return value
    raise JavaException("NumberFormatException", f'For input string: "{text}"')


def base_offset_of(name: str) -> int:
    """``Long.parseLong(name.split("\\\\.")[0])``, Kafka's reading of a segment file name."""
    parts = java_split(name, ".")
    if not parts:
        raise JavaException("ArrayIndexOutOfBoundsException", "Index 0 out of bounds for length 0")
    return parse_java_integer(parts[0], 64)


def i32(value: int) -> int:
    """Java ``int`` overflow."""
    return (value + 2**31) % 2**32 - 2**31


def read_unsigned_varint(data: bytes, pos: int) -> tuple[int, int]:
    """``ByteUtils.readUnsignedVarint`` at ``pos``: the value as a Java ``int`` (five
    bytes may overflow it) and the position after it; ``JavaException`` as Java throws
    (``BufferUnderflowException`` past the end, ``IllegalArgumentException`` for a fifth
    byte with its high bit set)."""
    result = 0
    for shift in (0, 7, 14, 21):
        byte = _java_byte(data, pos)
        pos += 1
        if byte >= 0:
            return i32(result | byte << shift), pos
        result |= (byte & 0x7F) << shift
    byte = _java_byte(data, pos)
    pos += 1
    result = i32(result | (byte << 28 & 0xFFFFFFFF))
    if byte < 0:
        raise JavaException(
            "IllegalArgumentException",
            "Varint is too long, the most significant bit in the 5th byte is set, "
            f"converted value: {result & 0xFFFFFFFF:x}",
        )
    return result, pos


def _java_byte(data: bytes, pos: int) -> int:
    """``ByteBuffer.get()``: a signed byte, ``BufferUnderflowException`` past the end."""
    if pos >= len(data):
        raise JavaException("BufferUnderflowException", "null")
    byte = data[pos]
    return byte - 256 if byte >= 0x80 else byte


def java_string_hash(text: str) -> int:
    """``String.hashCode()``: ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code units, a
    signed 32-bit Java ``int`` (a lone surrogate counts as the code unit it is)."""
    units = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def topic_partition_hash(topic: str, partition: int) -> int:
    """``TopicPartition.hashCode()``: ``31 * (31 + partition) + topic.hashCode()``."""
    return i32(31 * (31 + partition) + java_string_hash(topic))


def utils_abs(n: int) -> int:
    """Kafka's ``Utils.abs``: the absolute value of a Java ``int``, except that
    ``Integer.MIN_VALUE`` (whose absolute value does not fit) gives 0."""
    return 0 if n == -(2**31) else abs(n)


def to_positive(n: int) -> int:
    """Kafka's ``Utils.toPositive``: ``n & 0x7fffffff`` (the sign bit cleared, which is
    not the absolute value)."""
    return n & 0x7FFFFFFF


def java_length(text: str) -> int:
    """``String.length()``: UTF-16 code units (a character outside the BMP counts 2)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


_TREEIFY_THRESHOLD = 8
_MIN_TREEIFY_CAPACITY = 64


def java_hash_map_order(
    keys: Sequence[_T],
    hash_of: Callable[[_T], int],
    initial_capacity: int = 16,
    *,
    compute_if_absent: bool = False,
) -> list[_T]:
    """The iteration order of a ``java.util.HashMap`` made with ``initial_capacity``
    (``new HashMap<>(n)``; 16 for ``new HashMap<>()``) and filled with the distinct
    ``keys`` in this order, ``hash_of`` giving each key's ``hashCode()``.

    Replayed insertion by insertion, as ``HashMap`` does it: the table holds the
    capacity rounded up to a power of two; a key goes to bucket ``(h ^ h >>> 16) &
    (capacity - 1)``. With ``put`` (the default; ``HashSet.add`` too) it is appended to
    its bucket, a bucket that already held 8 keys makes ``treeifyBin`` double a table
    smaller than 64 instead of making a tree, and the table doubles once the size
    exceeds 3/4 of it. With ``computeIfAbsent`` (``compute_if_absent=True``, as Kafka's
    tools fill their report maps) the table doubles *before* an insertion that finds
    the size above 3/4, the key goes to the head of its bucket, and a bucket that
    already held 7 keys doubles a small table. A doubling keeps the order within each
    bucket. Buckets that become trees (in a table of 64 or more) are not modelled."""
    capacity = 1
    while capacity < initial_capacity:
        capacity *= 2
    table: list[list[tuple[int, _T]]] = [[] for _ in range(capacity)]

    def grow() -> None:
        nonlocal capacity, table
        capacity *= 2
        grown: list[list[tuple[int, _T]]] = [[] for _ in range(capacity)]
        for bucket in table:
            for entry in bucket:
                grown[entry[0] & (capacity - 1)].append(entry)
        table = grown

    for size, key in enumerate(keys):
        if compute_if_absent and size > capacity * 3 // 4:
            grow()
        h = hash_of(key) & 0xFFFFFFFF
        h ^= h >> 16
        bucket = table[h & (capacity - 1)]
        held = len(bucket)
        if compute_if_absent:
            bucket.insert(0, (h, key))
            crowded = held >= _TREEIFY_THRESHOLD - 1
        else:
            bucket.append((h, key))
            crowded = held >= _TREEIFY_THRESHOLD
        if crowded and capacity < _MIN_TREEIFY_CAPACITY:
            grow()
        if not compute_if_absent and size + 1 > capacity * 3 // 4:
            grow()
    return [key for bucket in table for _, key in bucket]


def java_hash_set_order(items: Iterable[_T], hash_of: Callable[[_T], int]) -> list[_T]:
    """``items`` added one by one to a ``java.util.HashSet`` (a default ``HashMap``
    underneath; a repeated item is not added again), in its iteration order."""
    return java_hash_map_order(list(dict.fromkeys(items)), hash_of)


def increment_sequence(sequence: int, increment: int) -> int:
    """``DefaultRecordBatch.incrementSequence`` (wraps past ``Integer.MAX_VALUE`` to 0)."""
    if sequence > i32(INT_MAX - increment):
        return i32(increment - i32(INT_MAX - sequence) - 1)
    return i32(sequence + increment)


def decrement_sequence(sequence: int, decrement: int) -> int:
    """``DefaultRecordBatch.decrementSequence``."""
    if sequence < decrement:
        return i32(INT_MAX - i32(decrement - sequence) + 1)
    return i32(sequence - decrement)


def java_bool(value: bool) -> str:
    return "true" if value else "false"


def decode_utf8(data: bytes) -> str:
    """``new String(bytes, UTF_8)`` (Kafka's ``StringDecoder``).

    Valid UTF-8 decodes as usual. Malformed input becomes U+FFFD as the JDK replaces it,
    which is not always Python's way: an encoded surrogate (``ED A0 80``) is one U+FFFD
    for its three bytes, and a truncated sequence at the very end is one U+FFFD for all
    the bytes left. Python's decoder finds the malformed input (both agree on what is
    valid); :func:`_java_malformed_length` says how much of it the JDK replaces.
    """
    return data.decode("utf-8", _JAVA_REPLACE)


def _is_continuation(b: int) -> bool:
    return b & 0xC0 == 0x80


def _java_malformed_length(data: bytes, start: int) -> int:
    """The bytes from ``start``, where malformed UTF-8 begins, that the JDK's decoder
    (``String(byte[], UTF_8)``) replaces with one U+FFFD."""
    n = len(data)
    b1 = data[start]
    sp = start + 1
    if b1 >> 4 == 0b1110:  # a 3-byte lead
        if sp + 1 < n:
            b2, b3 = data[sp], data[sp + 1]
            if (b1 == 0xE0 and b2 & 0xE0 == 0x80) or not _is_continuation(b2):
                return 1
            return 2 if not _is_continuation(b3) else 3  # 3: an encoded surrogate
        if sp < n and ((b1 == 0xE0 and data[sp] & 0xE0 == 0x80) or not _is_continuation(data[sp])):
            return 1
        return n - start  # truncated at the end: everything left
    if b1 >> 3 == 0b11110:  # a 4-byte lead (F0..F7)
        if sp + 2 < n:
            if not _first_of_four_ok(b1, data[sp]):
                return 1
            return 2 if not _is_continuation(data[sp + 1]) else 3
        if b1 > 0xF4 or (sp < n and not _first_of_four_ok(b1, data[sp])):
            return 1
        if sp + 1 < n and not _is_continuation(data[sp + 1]):
            return 2
        return n - start
    return 1  # a continuation byte, C0/C1, F8..FF, or a 2-byte lead without continuation


def _java_replace(error: UnicodeError) -> tuple[str, int]:
    assert isinstance(error, UnicodeDecodeError)
    return "\ufffd", error.start + _java_malformed_length(error.object, error.start)


_JAVA_REPLACE = "kafkacore.java_replace"
codecs.register_error(_JAVA_REPLACE, _java_replace)


def _first_of_four_ok(b1: int, b2: int) -> bool:
    """The first two bytes could start a valid 4-byte sequence."""
    if b1 > 0xF4 or not _is_continuation(b2):
        return False
    if b1 == 0xF0:
        return 0x90 <= b2 <= 0xBF
    if b1 == 0xF4:
        return b2 & 0xF0 == 0x80
    return True


_JSON_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n"}
_JSON_SHORT_ESCAPES.update({"\f": "\\f", "\r": "\\r"})


def json_string(text: str) -> str:
    """A JSON string as Jackson writes it (control characters as ``\\u00XX``)."""
    out = ['"']
    for ch in text:
        if ch in _JSON_SHORT_ESCAPES:
            out.append(_JSON_SHORT_ESCAPES[ch])
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


# --- java.util.HashMap as a stateful container ----------------------------------------------
#
# Kafka's group coordinator keeps assignments in HashMaps and HashSets, and what it decides
# (which partitions a member keeps when over its quota) and what it writes (the order of a
# record's topics and partitions) follow their iteration order. These containers replay it.

_LOAD_FACTOR = 0.75
_MAX_CAPACITY = 1 << 30


def table_size_for(cap: int) -> int:
    """``HashMap.tableSizeFor``: the power of two at or above ``cap`` (1 for 0 or less)."""
    n = 1
    while n < cap and n < _MAX_CAPACITY:
        n *= 2
    return n


def java_float_div_int(n: int, divisor: float = _LOAD_FACTOR) -> int:
    """``(int) (n / 0.75f)`` in Java ``float`` arithmetic (the capacity Kafka asks for)."""
    import struct

    quotient = struct.unpack("f", struct.pack("f", n / divisor))[0]
    return int(quotient)


def kafka_uuid_hash(value: uuid.UUID) -> int:
    """Kafka's ``Uuid.hashCode``: ``(int) (h >> 32) ^ (int) h`` of ``msb ^ lsb``."""
    h = (value.int >> 64) ^ (value.int & 0xFFFFFFFFFFFFFFFF)
    return i32((h >> 32) ^ (h & 0xFFFFFFFF))


def kafka_uuid_compare(a: uuid.UUID, b: uuid.UUID) -> int:
    """Kafka's ``Uuid.compareTo``: the signed most significant 64 bits, then the least."""

    def signed(v: int) -> int:
        return v - (1 << 64) if v >> 63 else v

    ka = (signed(a.int >> 64), signed(a.int & 0xFFFFFFFFFFFFFFFF))
    kb = (signed(b.int >> 64), signed(b.int & 0xFFFFFFFFFFFFFFFF))
    return (ka > kb) - (ka < kb)


def kafka_uuid_key(value: uuid.UUID) -> tuple[int, int]:
    """A sort key ordering Kafka ``Uuid``\\ s as ``Uuid.compareTo`` does."""

    def signed(v: int) -> int:
        return v - (1 << 64) if v >> 63 else v

    return signed(value.int >> 64), signed(value.int & 0xFFFFFFFFFFFFFFFF)


def java_string_key(text: str) -> bytes:
    """A sort key ordering strings as ``String.compareTo`` does (UTF-16 code units)."""
    return text.encode("utf-16-be", "surrogatepass")


def java_hash_code(value: object) -> int:
    """``hashCode()`` of the keys Kafka's coordinator hashes: ``Integer`` (the value),
    ``String`` and Kafka's ``Uuid``."""
    if isinstance(value, bool):
        return 1231 if value else 1237
    if isinstance(value, int):
        return i32(value)
    if isinstance(value, str):
        return java_string_hash(value)
    if isinstance(value, uuid.UUID):
        return kafka_uuid_hash(value)
    raise TypeError(f"no Java hashCode for {type(value).__name__}")


_K = TypeVar("_K", bound=Hashable)
_V = TypeVar("_V")


class JavaHashMap(MutableMapping[_K, _V]):
    """A ``java.util.HashMap``: a mapping that iterates in the order the JDK's does.

    The table is replayed, not stored: each key keeps its spread hash and its place in
    its bucket, and iteration sorts by (bucket, place). ``put`` appends to the bucket's
    chain; ``computeIfAbsent`` (:meth:`compute_if_absent`) puts a new key at its head; a
    resize doubles the table and keeps each chain's order; removing never shrinks. The
    table is made at the first insertion with ``initial_capacity`` rounded up to a power
    of two (``new HashMap<>(n)``; 16 by default); it doubles once the size exceeds 3/4 of
    it (``put``: after inserting; ``computeIfAbsent``: on entry, when already past it,
    even for a key that is there), and when a chain that already holds 8 keys (7 for
    ``computeIfAbsent``) grows in a table smaller than 64 (``treeifyBin``). Chains that
    would become trees in a larger table are not modelled (keys hashed like Kafka's ids
    and partitions do not collide that much). Not thread-safe."""

    __slots__ = ("_cap", "_entries", "_initial", "_seq")

    def __init__(
        self, items: Iterable[tuple[_K, _V]] | None = None, *, initial_capacity: int = 16
    ) -> None:
        self._initial = table_size_for(initial_capacity)
        self._cap = 0  # no table yet
        self._seq = 0
        # key -> [value, spread hash, place in its chain]
        self._entries: dict[_K, list[Any]] = {}
        if items is not None:
            for key, value in items:
                self[key] = value

    @classmethod
    def copy_of(cls, source: Mapping[_K, _V]) -> JavaHashMap[_K, _V]:
        """``new HashMap<>(source)``: sized for ``source`` (``putMapEntries``), filled in
        its iteration order."""
        size = len(source)
        made = cls(initial_capacity=max(1, int(size / _LOAD_FACTOR + 1.0)) if size else 16)
        for key, value in source.items():
            made[key] = value
        return made

    @staticmethod
    def _spread(key: object) -> int:
        h = java_hash_code(key) & 0xFFFFFFFF
        return h ^ (h >> 16)

    def _threshold(self) -> int:
        return int(self._cap * _LOAD_FACTOR)

    def _chain_length(self, spread: int) -> int:
        mask = self._cap - 1
        return sum(1 for e in self._entries.values() if e[1] & mask == spread & mask)

    def _insert(self, key: _K, value: _V, *, at_head: bool) -> None:
        if self._cap == 0:
            self._cap = self._initial
        spread = self._spread(key)
        held = self._chain_length(spread) if self._cap < 64 else 0
        self._seq += 1
        self._entries[key] = [value, spread, -self._seq if at_head else self._seq]
        if self._cap < 64 and held >= (7 if at_head else 8):
            self._cap *= 2
        if not at_head and len(self._entries) > self._threshold():
            self._cap *= 2

    def __setitem__(self, key: _K, value: _V) -> None:
        entry = self._entries.get(key)
        if entry is not None:
            entry[0] = value
        else:
            self._insert(key, value, at_head=False)

    def compute_if_absent(self, key: _K, make: Callable[[_K], _V]) -> _V:
        """``computeIfAbsent``: the value of ``key``, made and put first in its chain when
        absent. Like the JDK's, it first makes the table, or doubles one already past 3/4
        full, whether or not ``key`` is there."""
        if self._cap == 0:
            self._cap = self._initial
        elif len(self._entries) > self._threshold():
            self._cap *= 2
        entry = self._entries.get(key)
        if entry is not None:
            value: _V = entry[0]
            return value
        value = make(key)
        self._insert(key, value, at_head=True)
        return value

    def __getitem__(self, key: _K) -> _V:
        value: _V = self._entries[key][0]
        return value

    def __delitem__(self, key: _K) -> None:
        del self._entries[key]

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[_K]:
        mask = self._cap - 1
        order = sorted(self._entries.items(), key=lambda kv: (kv[1][1] & mask, kv[1][2]))
        return iter([k for k, _ in order])

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k}={v}" for k, v in self.items()) + "}"


class JavaHashSet(MutableSet[_K]):
    """A ``java.util.HashSet`` (a :class:`JavaHashMap` underneath): iterates as the JDK's.
    ``JavaHashSet(items)`` is ``new HashSet<>(collection)`` (sized for it, at least 16);
    ``JavaHashSet(initial_capacity=n)`` is ``new HashSet<>(n)``. Not thread-safe."""

    __slots__ = ("_map",)

    def __init__(self, items: Iterable[_K] | None = None, *, initial_capacity: int = 16) -> None:
        if items is not None:
            listed = list(items)
            initial_capacity = max(java_float_div_int(len(listed)) + 1, 16)
            self._map: JavaHashMap[_K, bool] = JavaHashMap(initial_capacity=initial_capacity)
            for item in listed:
                self._map[item] = True
        else:
            self._map = JavaHashMap(initial_capacity=initial_capacity)

    def add(self, value: _K) -> None:
        if value not in self._map:
            self._map[value] = True

    def discard(self, value: _K) -> None:
        self._map.pop(value, None)

    def __contains__(self, value: object) -> bool:
        return value in self._map

    def __len__(self) -> int:
        return len(self._map)

    def __iter__(self) -> Iterator[_K]:
        return iter(self._map)

    def __repr__(self) -> str:
        return "[" + ", ".join(str(v) for v in self) + "]"
