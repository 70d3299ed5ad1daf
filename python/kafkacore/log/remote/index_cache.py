"""The bounded cache of remote indexes (Kafka's ``RemoteIndexCache``): the offset, time
and transaction indexes of tiered segments, fetched once from the bucket on first use
and kept as files under ``<log dir>/remote-log-index-cache/`` (Kafka's directory and its
``<start offset>_<segment id>.<suffix>`` names), memory-mapped for lookups, evicted least
recently used once their total size passes ``remote.log.index.file.cache.total.size.bytes``
(or after ``remote.log.index.file.cache.ttl.ms`` unused, when set).

A fetch of the three indexes happens once per segment even when many readers miss at
once (a lock per segment id); a corrupt index (CRC mismatch) raises
:class:`~kafkacore.log.remote.errors.CorruptRemoteDataError` and is not cached.

Thread-safety: one lock for the LRU order and a lock per entry being loaded; the mapped
files are read-only. Entries evicted while a reader holds their bytes stay readable by it.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import shutil
import struct
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass

from kafkacore.log.checkpoints import uuid_to_base64
from kafkacore.log.files import INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX
from kafkacore.log.remote.layout import IndexType
from kafkacore.log.remote.model import RemoteLogSegmentMetadata
from kafkacore.log.remote.storage import RemoteStorageManager
from kafkacore.log.txn_index import ABORTED_TXN_SIZE, AbortedTxn
from kafkacore.pure.index import largest_lower_bound_slot

__all__ = ["REMOTE_INDEX_CACHE_DIR", "RemoteIndexCache", "RemoteIndexes"]

REMOTE_INDEX_CACHE_DIR = "remote-log-index-cache"
"""Kafka's ``RemoteIndexCache.DIR_NAME``."""

_OFFSET_ENTRY = struct.Struct(">II")
_TIME_ENTRY = struct.Struct(">qI")


def _map(data: bytes, path: str) -> bytes | mmap.mmap:
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.replace(path + ".tmp", path)
    if not data:
        return b""
    with open(path, "rb") as f:
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


@dataclass
class RemoteIndexes:
    """One segment's three indexes (read-only buffers)."""

    metadata: RemoteLogSegmentMetadata
    offset_index: bytes | mmap.mmap
    time_index: bytes | mmap.mmap
    txn_index: bytes | mmap.mmap
    last_used: float = 0.0

    @property
    def size(self) -> int:
        return len(self.offset_index) + len(self.time_index) + len(self.txn_index)

    def position_for(self, offset: int) -> int:
        """The ``.log`` position of the largest indexed offset <= ``offset`` (0 if none)."""
        base = self.metadata.start_offset
        buf = self.offset_index
        entries = len(buf) // _OFFSET_ENTRY.size

        def key_at(slot: int) -> int:
            return int(_OFFSET_ENTRY.unpack_from(buf, slot * _OFFSET_ENTRY.size)[0])

        slot = largest_lower_bound_slot(entries, entries, key_at, offset - base)
        return 0 if slot < 0 else int(_OFFSET_ENTRY.unpack_from(buf, slot * _OFFSET_ENTRY.size)[1])

    def offset_for_timestamp(self, timestamp: int) -> int:
        """The offset of the largest time-index entry with timestamp <= ``timestamp``
        (the segment's start offset if none): where a search for ``timestamp`` begins."""
        buf = self.time_index
        entries = len(buf) // _TIME_ENTRY.size

        def key_at(slot: int) -> int:
            return int(_TIME_ENTRY.unpack_from(buf, slot * _TIME_ENTRY.size)[0])

        slot = largest_lower_bound_slot(entries, entries, key_at, timestamp)
        if slot < 0:
            return self.metadata.start_offset
        return self.metadata.start_offset + int(
            _TIME_ENTRY.unpack_from(buf, slot * _TIME_ENTRY.size)[1]
        )

    def aborted(self) -> list[AbortedTxn]:
        buf = self.txn_index
        return [
            AbortedTxn.decode(memoryview(buf), p)
            for p in range(0, len(buf) - ABORTED_TXN_SIZE + 1, ABORTED_TXN_SIZE)
        ]

    def close(self) -> None:
        for b in (self.offset_index, self.time_index, self.txn_index):
            if isinstance(b, mmap.mmap):
                # a reader still holding a view: the GC closes it
                with contextlib.suppress(BufferError):
                    b.close()


class RemoteIndexCache:
    """See the module docstring."""

    def __init__(
        self,
        log_dir: str,
        rsm: RemoteStorageManager,
        *,
        max_bytes: int = 1 << 30,
        ttl_ms: int = 900_000,
    ) -> None:
        self.directory = os.path.join(log_dir, REMOTE_INDEX_CACHE_DIR)
        # Kafka empties the directory on start: entries are rebuilt from the bucket
        shutil.rmtree(self.directory, ignore_errors=True)
        os.makedirs(self.directory, exist_ok=True)
        self._rsm = rsm
        self.max_bytes = max_bytes
        self._ttl_s = ttl_ms / 1000 if ttl_ms >= 0 else None
        self._lock = threading.Lock()
        self._entries: OrderedDict[uuid.UUID, RemoteIndexes] = OrderedDict()
        self._loading: dict[uuid.UUID, threading.Lock] = {}
        self._bytes = 0
        self.hits = 0
        self.misses = 0

    @property
    def size_bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def _path(self, metadata: RemoteLogSegmentMetadata, suffix: str) -> str:
        return os.path.join(
            self.directory,
            f"{metadata.start_offset}_{uuid_to_base64(metadata.segment_id.id)}{suffix}",
        )

    def get(self, metadata: RemoteLogSegmentMetadata) -> RemoteIndexes:
        """The segment's indexes, fetched from the bucket on a miss."""
        key = metadata.segment_id.id
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                found.last_used = time.monotonic()
                self.hits += 1
                return found
            loading = self._loading.setdefault(key, threading.Lock())
        with loading:
            with self._lock:
                found = self._entries.get(key)
                if found is not None:
                    self.hits += 1
                    return found
                self.misses += 1
            try:
                entry = self._load(metadata)
            finally:
                with self._lock:
                    self._loading.pop(key, None)
            with self._lock:
                self._entries[key] = entry
                self._bytes += entry.size
                self._evict_locked()
            return entry

    def _load(self, metadata: RemoteLogSegmentMetadata) -> RemoteIndexes:
        offset = self._rsm.fetch_index(metadata, IndexType.OFFSET)
        timeindex = self._rsm.fetch_index(metadata, IndexType.TIMESTAMP)
        txn = self._rsm.fetch_index(metadata, IndexType.TRANSACTION)
        return RemoteIndexes(
            metadata,
            _map(offset, self._path(metadata, INDEX_FILE_SUFFIX)),
            _map(timeindex, self._path(metadata, TIME_INDEX_FILE_SUFFIX)),
            _map(txn, self._path(metadata, TXN_INDEX_FILE_SUFFIX)),
            time.monotonic(),
        )

    def _drop_locked(self, key: uuid.UUID) -> None:
        entry = self._entries.pop(key)
        self._bytes -= entry.size
        entry.close()
        for suffix in (INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._path(entry.metadata, suffix))

    def _evict_locked(self) -> None:
        now = time.monotonic()
        if self._ttl_s is not None:
            for key in [k for k, e in self._entries.items() if now - e.last_used > self._ttl_s]:
                if len(self._entries) > 1:
                    self._drop_locked(key)
        while self._bytes > self.max_bytes and len(self._entries) > 1:
            self._drop_locked(next(iter(self._entries)))

    def remove(self, segment_ids: list[uuid.UUID]) -> None:
        """Forget deleted segments."""
        with self._lock:
            for key in segment_ids:
                if key in self._entries:
                    self._drop_locked(key)

    def close(self) -> None:
        with self._lock:
            for key in list(self._entries):
                self._drop_locked(key)
