"""A segment's transaction index, ``<base offset>.txnindex``: the aborted transactions
whose ABORT marker lies in the segment (Kafka's ``TransactionIndex`` and ``AbortedTxn``).

Format: a sequence of 34-byte big-endian entries, no header::

    version int16 (0) | producerId int64 | firstOffset int64 | lastOffset int64 |
    lastStableOffset int64

``lastOffset`` is the ABORT marker's offset and strictly increases from entry to entry;
``firstOffset`` may lie in an earlier segment; ``lastStableOffset`` is the log's LSO once
the marker was appended (the first offset of the earliest transaction still open, of
another producer, else the marker's offset + 1). Only aborted transactions are indexed.

The file is created on the first append (Kafka opens the channel lazily), so a segment
without aborted transactions has none. A trailing partial entry (a crash mid-append) is
ignored by readers and cut by :meth:`TransactionIndex.truncate_to`.

Thread-safety: one writer (the log's append or recovery, under the log's lock); readers
(:meth:`TransactionIndex.collect`) read whole entries below the size they saw, so a
concurrent append is either seen completely or not at all. An index remembers that its
file is missing until it appends one (the file is only ever written through it), so
reading the many indexes without a file costs no system call.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from typing import NamedTuple

from kafkacore.errors import CorruptIndexError

__all__ = [
    "ABORTED_TXN_SIZE",
    "AbortedTxn",
    "TransactionIndex",
    "TxnIndexSearchResult",
]

ABORTED_TXN_SIZE = 34
_ENTRY = struct.Struct(">hqqqq")
CURRENT_VERSION = 0


class AbortedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int
    version: int = CURRENT_VERSION

    def encode(self) -> bytes:
        return _ENTRY.pack(
            self.version,
            self.producer_id,
            self.first_offset,
            self.last_offset,
            self.last_stable_offset,
        )

    @classmethod
    def decode(cls, data: bytes | memoryview, position: int = 0) -> AbortedTxn:
        version, pid, first, last, lso = _ENTRY.unpack_from(data, position)
        return cls(pid, first, last, lso, version)

    def __str__(self) -> str:  # Kafka's AbortedTxn.toString
        return (
            f"AbortedTxn(version={self.version}, producerId={self.producer_id}, "
            f"firstOffset={self.first_offset}, lastOffset={self.last_offset}, "
            f"lastStableOffset={self.last_stable_offset})"
        )


class TxnIndexSearchResult(NamedTuple):
    """What :meth:`TransactionIndex.collect` found; ``complete`` means no later segment
    can hold a transaction overlapping the range (Kafka's ``TxnIndexSearchResult``)."""

    aborted: list[AbortedTxn]
    complete: bool


class TransactionIndex:
    """The ``.txnindex`` of the segment starting at ``start_offset``, at ``path``."""

    def __init__(self, start_offset: int, path: str) -> None:
        self.start_offset = start_offset
        self.path = path
        self._last_offset: int | None = None
        self._loaded_last = False
        # False once the file was found missing and not written since: a read_committed
        # fetch scans the indexes of many segments, most of which have no file (Kafka
        # keeps the channel, or its absence, in memory)
        self._present: bool | None = None

    # -- reading -------------------------------------------------------------------------

    def _read(self) -> bytes:
        if self._present is False:
            return b""
        try:
            with open(self.path, "rb") as f:
                return f.read()
        except FileNotFoundError:
            self._present = False
            return b""

    def entries(self) -> Iterator[AbortedTxn]:
        """Every whole entry, in file order; ``CorruptIndexError`` for an entry whose
        version is not 0 (Kafka: "Unexpected aborted transaction version")."""
        data = self._read()
        for position in range(0, len(data) - ABORTED_TXN_SIZE + 1, ABORTED_TXN_SIZE):
            entry = AbortedTxn.decode(data, position)
            if entry.version != CURRENT_VERSION:
                raise CorruptIndexError(
                    f"Unexpected aborted transaction version {entry.version} in "
                    f"transaction index {self.path}, current version is {CURRENT_VERSION}"
                )
            yield entry

    def all_aborted(self) -> list[AbortedTxn]:
        return list(self.entries())

    def collect(self, fetch_offset: int, upper_bound_offset: int) -> TxnIndexSearchResult:
        """The aborted transactions overlapping ``[fetch_offset, upper_bound_offset)``
        (``lastOffset >= fetch_offset and firstOffset < upper``); complete at the first
        entry whose ``lastStableOffset >= upper`` (Kafka's ``collectAbortedTxns``)."""
        found: list[AbortedTxn] = []
        for entry in self.entries():
            if entry.last_offset >= fetch_offset and entry.first_offset < upper_bound_offset:
                found.append(entry)
            if entry.last_stable_offset >= upper_bound_offset:
                return TxnIndexSearchResult(found, True)
        return TxnIndexSearchResult(found, False)

    def last_offset(self) -> int | None:
        if not self._loaded_last:
            last = None
            for entry in self.entries():
                last = entry.last_offset
            self._last_offset = last
            self._loaded_last = True
        return self._last_offset

    @property
    def known_absent(self) -> bool:
        """The file was found missing and nothing was written since (no disk access)."""
        return self._present is False

    def exists(self) -> bool:
        present = os.path.exists(self.path)
        self._present = present
        return present

    def size_bytes(self) -> int:
        try:
            return os.path.getsize(self.path)
        except FileNotFoundError:
            return 0

    # -- writing -------------------------------------------------------------------------

    def append(self, entry: AbortedTxn) -> None:
        """Append one entry (creating the file); ``ValueError`` unless its ``last_offset``
        is above the last one (Kafka's "The last offset of appended transactions must
        increase sequentially")."""
        last = self.last_offset()
        if last is not None and last >= entry.last_offset:
            raise ValueError(
                f"The last offset of appended transactions must increase sequentially, but "
                f"{entry.last_offset} is not greater than current last offset {last} of "
                f"index {self.path}"
            )
        with open(self.path, "ab") as f:
            size = f.tell()
            if size % ABORTED_TXN_SIZE:  # drop a torn entry before appending
                f.truncate(size - size % ABORTED_TXN_SIZE)
            f.write(entry.encode())
        self._present = True
        self._last_offset = entry.last_offset
        self._loaded_last = True

    def flush(self) -> None:
        if not self.exists():
            return
        fd = os.open(self.path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def truncate_to(self, offset: int) -> None:
        """Remove the entries with ``last_offset >= offset`` and any torn tail (Kafka's
        ``truncateTo``)."""
        if not self.exists():
            return
        keep = 0
        for entry in self.entries():
            if entry.last_offset >= offset:
                break
            keep += ABORTED_TXN_SIZE
        with open(self.path, "r+b") as f:
            f.truncate(keep)
        self._loaded_last = False

    def reset(self) -> None:
        """Empty the index (recovery rebuilds it)."""
        if self.exists():
            with open(self.path, "r+b") as f:
                f.truncate(0)
        self._last_offset = None
        self._loaded_last = True

    def delete(self) -> bool:
        try:
            os.remove(self.path)
        except FileNotFoundError:
            self._present = False
            return False
        self._present = False
        self._last_offset = None
        self._loaded_last = True
        return True

    def rename_to(self, path: str) -> None:
        if self.exists():
            os.replace(self.path, path)
        self.path = path
        self._present = None

    def sanity_check(self) -> None:
        """Kafka's ``sanityCheck``: ``CorruptIndexError`` if an entry's ``last_offset``
        lies below the segment's start offset."""
        for entry in self.entries():
            if entry.last_offset < self.start_offset:
                raise CorruptIndexError(
                    f"Last offset of aborted transaction {entry} in index {self.path} is "
                    f"less than start offset {self.start_offset}"
                )
