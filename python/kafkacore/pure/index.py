"""Kafka's sparse segment indexes (``AbstractIndex``, ``OffsetIndex``, ``TimeIndex``),
memory-mapped with :mod:`mmap`.

``.index`` entry, 8 bytes, big-endian::

    0 relativeOffset u32   offset - segment base offset
    4 position       u32   byte position of the batch in the .log

``.timeindex`` entry, 12 bytes, big-endian::

    0 timestamp      i64
    8 relativeOffset u32   the batch's last offset - segment base offset

Sizes, as Kafka's ``AbstractIndex``: a new index file is preallocated to
``max_index_size`` rounded down to the entry size; an existing one is mapped at its
length as found (never grown at open) and has ``length // entry size`` entries. Only
:meth:`Index.resize` changes the length (never below the entries): the segment grows the
active segment's indexes and :meth:`Index.trim` cuts them to their entries (roll, close,
recovery). Entries are appended at ``entries * entry size``; the index is full when the
mapped length holds no more (see ``is_full``).

Lookups are Kafka's cache-friendly binary search: when the target is above the first
entry of the *warm* section (the last ``8192 // entry size`` entries) only that section
is searched, else the rest. Kafka's exact midpoint (``(lo + hi + 1) >>> 1``) is kept so
that both backends pick the same slot among equal keys.

Not thread-safe: the owning segment serialises access.
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Callable

from kafkacore.errors import IndexFullError, InvalidOffsetError, StorageIOError

__all__ = ["WARM_SECTION_BYTES", "OffsetIndex", "TimeIndex", "largest_lower_bound_slot"]

# Relative offsets and positions are read unsigned, as the contract draws them (Kafka
# reads Java ints; the two differ only on a corrupt index, which sanity_check refuses).
# an entry reaching into a new page of this size is written with pwrite first (native twin)
_ALLOCATION_PAGE = 4096
OFFSET_ENTRY = struct.Struct(">II")  # relative offset, position
OFFSET_ENTRY_SIZE = OFFSET_ENTRY.size  # 8
TIME_ENTRY = struct.Struct(">qI")  # timestamp, relative offset
TIME_ENTRY_SIZE = TIME_ENTRY.size  # 12
WARM_SECTION_BYTES = 8192
NO_TIMESTAMP = -1
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")


def _storage_error(exc: OSError, path: str, action: str) -> StorageIOError:
    return StorageIOError(exc.errno or 0, f"cannot {action}: {exc.strerror or exc}", path)


class Index:
    """One memory-mapped index file: entry bookkeeping, resize, the warm-section search."""

    ENTRY_SIZE = 8

    def __init__(self, path: str, base_offset: int, max_index_size: int) -> None:
        self.path = path
        self.base_offset = base_offset
        self.max_index_size = max_index_size
        self._mmap: mmap.mmap | None = None
        try:
            existed = os.path.exists(path)
            self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            length = os.fstat(self._fd).st_size if existed else 0
        except OSError as exc:
            raise _storage_error(exc, path, "open index") from exc
        self.entries = length // self.ENTRY_SIZE
        # Kept for sanity_check(): Kafka checks the length it found on disk.
        self.misaligned_length = length if length % self.ENTRY_SIZE else None
        self.length = length
        if not existed:
            self.resize(self.max_index_size)  # preallocated
        elif length > 0:
            # mapped as found: an inactive segment's trimmed index stays untouched
            try:
                self._mmap = mmap.mmap(self._fd, length)
            except OSError as exc:
                os.close(self._fd)
                raise _storage_error(exc, path, "map index") from exc

    # -------------------------------------------------------------- file and map

    @property
    def max_entries(self) -> int:
        return self.length // self.ENTRY_SIZE

    @property
    def warm_entries(self) -> int:
        return WARM_SECTION_BYTES // self.ENTRY_SIZE

    def resize(self, new_size: int) -> None:
        """Set the file (and map) length to ``new_size`` rounded down to the entry size,
        never below the entries held."""
        rounded = max(new_size - new_size % self.ENTRY_SIZE, self.entries * self.ENTRY_SIZE)
        if rounded == self.length and (self._mmap is not None or rounded == 0):
            return
        if self._mmap is not None:
            self._mmap.close()
            self._mmap = None
        try:
            os.ftruncate(self._fd, rounded)
            if rounded > 0:
                self._mmap = mmap.mmap(self._fd, rounded)
        except OSError as exc:
            raise _storage_error(exc, self.path, "resize index") from exc
        self.length = rounded

    def trim(self) -> None:
        """Cut the file to its entries (Kafka's ``trimToValidSize``)."""
        self.resize(self.entries * self.ENTRY_SIZE)

    def reset(self) -> None:
        """Drop every entry and preallocate again (Kafka's ``reset``)."""
        self.truncate_to_entries(0)
        self.resize(self.max_index_size)

    def truncate_to_entries(self, entries: int) -> None:
        """Keep the first ``entries`` entries. The removed entries are zeroed (Kafka only
        moves its position; zeroing keeps the preallocated tail of both backends' files
        identical). The file is rewritten from here on, so a misaligned length found at
        open no longer matters."""
        if entries < self.entries and self._mmap is not None:
            start = entries * self.ENTRY_SIZE
            end = min(self.entries * self.ENTRY_SIZE, self.length)
            self._mmap[start:end] = bytes(end - start)
        self.entries = entries
        self.misaligned_length = None

    def flush(self) -> None:
        try:
            if self._mmap is not None:
                self._mmap.flush()
            os.fsync(self._fd)
        except OSError as exc:
            raise _storage_error(exc, self.path, "flush index") from exc

    def close(self) -> None:
        """Trim, unmap and close."""
        self.trim()
        self.release()

    def release(self) -> None:
        """Unmap and close without trimming (the file stays as a crash leaves it)."""
        if self._mmap is not None:
            self._mmap.close()
            self._mmap = None
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def _buffer(self) -> mmap.mmap:
        assert self._mmap is not None
        return self._mmap

    def _write_entry(self, entry: bytes) -> None:
        """Write the next entry (the native ``write_slot``): one that reaches into a page
        no earlier entry touched is first written with ``pwrite``, which allocates the
        page or fails with ENOSPC - a store through the mapping into an unbacked page of
        a full file system raises SIGBUS and kills the process."""
        start = self.entries * self.ENTRY_SIZE
        end = start + len(entry)
        if start == 0 or (start - 1) // _ALLOCATION_PAGE != (end - 1) // _ALLOCATION_PAGE:
            try:
                os.pwrite(self._fd, entry, start)
            except OSError as exc:
                raise _storage_error(exc, self.path, "write an index entry") from exc
        self._buffer()[start:end] = entry
        self.entries += 1

    def raw_entries(self) -> bytes:
        """The bytes of every entry."""
        if self.entries == 0:
            return b""
        return self._buffer()[: self.entries * self.ENTRY_SIZE]

    # -------------------------------------------------------------- search

    def _largest_lower_bound(self, target: int, key_at: Callable[[int], int]) -> int:
        return largest_lower_bound_slot(self.entries, self.warm_entries, key_at, target)


def largest_lower_bound_slot(
    entries: int, warm_entries: int, key_at: Callable[[int], int], target: int
) -> int:
    """Kafka's ``AbstractIndex.largestLowerBoundSlotFor``: the slot of the largest key <=
    ``target`` among ``entries`` slots (``key_at(slot)``), or -1; the last
    ``warm_entries`` slots are searched first. Exact on an unsorted index too (the dump
    tool searches corrupt ones). Shared by the indexes and the dump tool."""
    if entries == 0:
        return -1
    first_hot = max(0, entries - 1 - warm_entries)
    if key_at(first_hot) < target:
        return _binary_search(target, key_at, first_hot, entries - 1)
    if key_at(0) > target:
        return -1
    return _binary_search(target, key_at, 0, first_hot)


def _binary_search(target: int, key_at: Callable[[int], int], lo: int, hi: int) -> int:
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        found = key_at(mid)
        if found > target:
            hi = mid - 1
        elif found < target:
            lo = mid
        else:
            return mid
    return lo


class OffsetIndex(Index):
    """``.index``: relative offset -> position, one entry per ``index.interval.bytes``."""

    ENTRY_SIZE = OFFSET_ENTRY_SIZE

    @property
    def is_full(self) -> bool:
        return self.entries >= self.max_entries

    def entry(self, slot: int) -> tuple[int, int]:
        relative, position = OFFSET_ENTRY.unpack_from(self._buffer(), slot * OFFSET_ENTRY_SIZE)
        return self.base_offset + relative, position

    def _relative_at(self, slot: int) -> int:
        value: int = _U32.unpack_from(self._buffer(), slot * OFFSET_ENTRY_SIZE)[0]
        return value

    def last_entry(self) -> tuple[int, int]:
        """The last entry, or ``(base_offset, 0)`` when empty."""
        if self.entries == 0:
            return self.base_offset, 0
        return self.entry(self.entries - 1)

    def lookup(self, offset: int) -> tuple[int, int]:
        """Largest entry with offset <= ``offset``, or ``(base_offset, 0)``."""
        slot = self._largest_lower_bound(offset - self.base_offset, self._relative_at)
        if slot == -1:
            return self.base_offset, 0
        return self.entry(slot)

    def append(self, offset: int, position: int) -> None:
        if self.is_full:
            raise IndexFullError(f"{self.path}: offset index full ({self.entries} entries)")
        if self.entries and offset <= self.last_entry()[0]:
            raise InvalidOffsetError(
                f"{self.path}: offset {offset} is not above the last indexed offset "
                f"{self.last_entry()[0]}"
            )
        self._write_entry(OFFSET_ENTRY.pack(offset - self.base_offset, position))

    def truncate_to(self, offset: int) -> None:
        """Remove every entry with offset >= ``offset`` (Kafka's three cases)."""
        slot = self._largest_lower_bound(offset - self.base_offset, self._relative_at)
        if slot < 0:
            self.truncate_to_entries(0)
        elif self._relative_at(slot) == offset - self.base_offset:
            self.truncate_to_entries(slot)
        else:
            self.truncate_to_entries(slot + 1)

    def all_entries(self) -> list[tuple[int, int]]:
        base = self.base_offset
        return [(base + rel, pos) for rel, pos in OFFSET_ENTRY.iter_unpack(self.raw_entries())]


class TimeIndex(Index):
    """``.timeindex``: timestamp -> relative offset, appended only when the timestamp
    grows. Its last slot is kept for the entry added at roll/close."""

    ENTRY_SIZE = TIME_ENTRY_SIZE

    @property
    def is_full(self) -> bool:
        return self.entries >= self.max_entries - 1

    def entry(self, slot: int) -> tuple[int, int]:
        timestamp, relative = TIME_ENTRY.unpack_from(self._buffer(), slot * TIME_ENTRY_SIZE)
        return timestamp, self.base_offset + relative

    def _timestamp_at(self, slot: int) -> int:
        value: int = _I64.unpack_from(self._buffer(), slot * TIME_ENTRY_SIZE)[0]
        return value

    def _relative_at(self, slot: int) -> int:
        value: int = _U32.unpack_from(self._buffer(), slot * TIME_ENTRY_SIZE + 8)[0]
        return value

    def last_entry(self) -> tuple[int, int]:
        """The last entry, or ``(-1, base_offset)`` when empty (Kafka's)."""
        if self.entries == 0:
            return NO_TIMESTAMP, self.base_offset
        return self.entry(self.entries - 1)

    def lookup(self, timestamp: int) -> tuple[int, int]:
        """Largest entry with timestamp <= ``timestamp``, or ``(-1, base_offset)``."""
        slot = self._largest_lower_bound(timestamp, self._timestamp_at)
        if slot == -1:
            return NO_TIMESTAMP, self.base_offset
        return self.entry(slot)

    def maybe_append(self, timestamp: int, offset: int, skip_full_check: bool = False) -> bool:
        """Append ``(timestamp, offset)`` if ``timestamp`` is above the last entry's
        (Kafka's ``maybeAppend``); the full check comes first, as in Kafka."""
        if not skip_full_check and self.is_full:
            raise IndexFullError(f"{self.path}: time index full ({self.entries} entries)")
        last_timestamp, last_offset = self.last_entry()
        if self.entries and offset < last_offset:
            raise InvalidOffsetError(
                f"{self.path}: offset {offset} is below the last time-indexed offset {last_offset}"
            )
        if timestamp <= last_timestamp:
            return False
        if self.entries >= self.max_entries:
            # A trimmed (sealed) index taking a final entry on a second seal/close after
            # more appends: it grows by one entry (Kafka's mmap would overflow and close()
            # would swallow the error, losing the entry).
            self.resize(self.length + TIME_ENTRY_SIZE)
        self._write_entry(TIME_ENTRY.pack(timestamp, offset - self.base_offset))
        return True

    def truncate_to(self, offset: int) -> None:
        """Remove every entry with offset >= ``offset`` (searching by offset, as Kafka)."""
        slot = self._largest_lower_bound(offset - self.base_offset, self._relative_at)
        if slot < 0:
            self.truncate_to_entries(0)
        elif self._relative_at(slot) == offset - self.base_offset:
            self.truncate_to_entries(slot)
        else:
            self.truncate_to_entries(slot + 1)

    def all_entries(self) -> list[tuple[int, int]]:
        base = self.base_offset
        return [(ts, base + rel) for ts, rel in TIME_ENTRY.iter_unpack(self.raw_entries())]
