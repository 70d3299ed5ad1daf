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
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from kafkacore.errors import KafkaCoreError

__all__ = [
    "INT_MAX",
    "JavaException",
    "absolute_path",
    "base_offset_of",
    "decode_utf8",
    "decrement_sequence",
    "file_name",
    "i32",
    "increment_sequence",
    "java_bool",
    "java_hash_map_order",
    "java_hash_set_order",
    "java_length",
    "java_path",
    "java_split",
    "java_string_hash",
    "json_string",
    "parent",
    "parse_java_integer",
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
