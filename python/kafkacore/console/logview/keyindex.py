"""The key search (:class:`KeyIndex`): the first search of a partition reads every segment
once and keeps, per segment, sorted ``array('Q')`` runs of ``crc32(key) << 32 | (offset -
base offset)`` - 8 bytes per keyed record, all partitions together under
:attr:`KeyIndex.max_memory_bytes`; a later lookup is a binary search per run plus the reads
that check each candidate's key (so a hash collision never returns a wrong record, and the
answer is complete). Closed segments are indexed once (and again if the file is replaced -
the cleaner's swap gives a new inode - or shrinks), and their runs are stored on disk
outside the log directories (see :func:`_cache_dir`), so a restarted broker's first search
scans only the active segment; the active segment is indexed incrementally from the
position where the last scan stopped.

Thread-safety: a :class:`KeyIndex` locks itself (one update at a time per partition); the
registry of indexes too.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import struct
import threading
import time
import zlib
from array import array
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kafkacore.console.logview.records import last_offset_of, le_array, record_at
from kafkacore.console.logview.scan import (
    KEY_CHUNK,
    NO_END,
    TASK_BYTES,
    Budget,
    ScanCancelled,
    file_identity,
    run_task,
    walk_headers,
)
from kafkacore.console.logview.sources import PartitionSource, SegmentRef
from kafkacore.native import backend
from kafkacore.record import Record, iter_batches

__all__ = ["KeyIndex", "KeySearchResult"]


def _key_hash(key: bytes | memoryview) -> int:
    return zlib.crc32(key)


def _key_task(
    log_path: str, position: int, max_bytes: int, base_offset: int
) -> tuple[bytes, int, tuple[int, int]]:
    """Worker task: ``crc32(key) << 32 | (offset - base_offset)`` of every keyed data record
    of the whole batches of ``log_path`` from ``position`` (about ``max_bytes`` of them), as
    the bytes of an ``array('Q')``; the position reached; the file's identity."""
    out = array("Q")
    fd = os.open(log_path, os.O_RDONLY)
    try:
        st = os.fstat(fd)
        stop = min(st.st_size, position + max_bytes)
        while position < stop:
            data = os.pread(fd, min(KEY_CHUNK, st.st_size - position), position)
            end = 0
            for pos, _magic, size in iter_batches(data):
                end = pos + size
            if end == 0:  # one batch larger than the chunk, or a torn tail
                first = next(walk_headers(fd, position, position + 1, st.st_size), None)
                if first is None:
                    break
                data = os.pread(fd, first[1], position)
                end = first[1]
            count, _next, keys, _values, offsets, _ts, _types, _headers = backend.decode_columns(
                data[:end], 0, NO_END, False
            )
            validity, key_offsets_raw, key_data = keys
            key_offsets = le_array(key_offsets_raw, "i")
            record_offsets = le_array(offsets, "q")
            view = memoryview(key_data)
            crc32 = zlib.crc32
            for i in range(count):
                if validity is not None and not validity[i >> 3] >> (i & 7) & 1:
                    continue
                out.append(
                    crc32(view[key_offsets[i] : key_offsets[i + 1]]) << 32
                    | (record_offsets[i] - base_offset)
                )
            position += end
        return array("Q", sorted(out)).tobytes(), position, (st.st_dev, st.st_ino)
    finally:
        os.close(fd)


_SMALL_RUN = 4096  # merged in the broker process: only the active segment's small increments


# The key runs of closed segments are also kept on disk, outside the log directories (Kafka
# refuses to start on a log directory holding a directory that is not a partition's), so a
# restarted broker's first search reads them instead of the segments. A file is named by the
# segment file's path, device, inode and size and the run's start position: a segment that
# changes (the cleaner's swap, a truncation) gets new names, and old files are pruned after
# a week. KAFKACORE_CONSOLE_KEY_CACHE names the directory ("" turns it off).
_RUN_HEADER = struct.Struct("<q")
_CACHE_MAX_AGE_S = 7 * 24 * 3600


def _cache_dir() -> str | None:
    path = os.environ.get("KAFKACORE_CONSOLE_KEY_CACHE")
    if path == "":
        return None
    if path is None:
        import tempfile

        path = os.path.join(tempfile.gettempdir(), f"kafkacore-console-keys-{os.getuid()}")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.stat(path)
    except OSError:
        return None
    if st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None  # not ours alone: never trust what is in it
    return path


def _run_path(ref: SegmentRef, identity: tuple[int, int], size: int, position: int) -> str | None:
    directory = _cache_dir()
    if directory is None:
        return None
    import hashlib

    name = hashlib.sha1(os.path.abspath(ref.log_path).encode()).hexdigest()[:20]
    return os.path.join(directory, f"{name}-{identity[0]}-{identity[1]}-{size}-{position}.keys")


def _load_run(
    ref: SegmentRef, identity: tuple[int, int], size: int, position: int
) -> tuple[bytes, int] | None:
    """``(run bytes, end position)`` stored for this segment file from ``position``."""
    path = _run_path(ref, identity, size, position)
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if len(data) < _RUN_HEADER.size or (len(data) - _RUN_HEADER.size) % 8:
        return None
    (end,) = _RUN_HEADER.unpack_from(data)
    if not position < end <= size:
        return None
    return data[_RUN_HEADER.size :], end


def _store_run(
    ref: SegmentRef, identity: tuple[int, int], size: int, position: int, end: int, raw: bytes
) -> None:
    path = _run_path(ref, identity, size, position)
    if path is None:
        return
    temp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        with open(temp, "wb") as f:
            f.write(_RUN_HEADER.pack(end))
            f.write(raw)
        os.replace(temp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.remove(temp)
        return
    if position == 0:
        _prune(os.path.dirname(path))


def _prune(directory: str) -> None:
    """Remove the stored runs not read or written for a week."""
    cutoff = time.time() - _CACHE_MAX_AGE_S
    with contextlib.suppress(OSError), os.scandir(directory) as entries:
        for entry in entries:
            with contextlib.suppress(OSError):
                if entry.stat().st_atime < cutoff and entry.stat().st_mtime < cutoff:
                    os.remove(entry.path)


class _SegmentKeys:
    """One segment's key hashes: sorted runs of ``crc32(key) << 32 | relative offset``,
    one per worker task (sorted there, so the broker process only copies them); small runs
    (the active segment's increments) are merged as they come, two of similar size at a
    time, so a segment keeps a few runs and each entry is merged O(log n) times."""

    __slots__ = ("identity", "position", "runs")

    def __init__(self, identity: tuple[int, int]) -> None:
        self.identity = identity
        self.position = 0
        self.runs: list[array[int]] = []

    def add(self, raw: bytes) -> None:
        run = array("Q")
        run.frombytes(raw)
        if not run:
            return
        runs = self.runs
        runs.append(run)
        while len(runs) > 1 and len(runs[-1]) < _SMALL_RUN and 2 * len(runs[-1]) >= len(runs[-2]):
            newer = runs.pop()
            older = runs.pop()
            runs.append(array("Q", sorted(older + newer)))

    def relative_offsets(self, h: int) -> list[int]:
        found: list[int] = []
        for run in self.runs:
            lo = bisect.bisect_left(run, h << 32)
            hi = bisect.bisect_left(run, (h + 1) << 32, lo)
            found.extend(p & 0xFFFFFFFF for p in run[lo:hi])
        return found

    @property
    def entries(self) -> int:
        return sum(len(run) for run in self.runs)

    @property
    def memory_bytes(self) -> int:
        return 8 * self.entries


@dataclass(frozen=True)
class KeySearchResult:
    """A key search: every record with that key in ``[log start offset, high watermark)``
    when ``complete`` (up to ``limit`` of them in ``records``, oldest first, ``total`` all
    of them), else what the indexed part held (``indexed_bytes`` of ``total_bytes``)."""

    records: list[Record]
    total: int
    complete: bool
    indexed_bytes: int
    total_bytes: int
    candidates: int
    elapsed_ms: float
    stopped: str | None = None


class KeyIndex:
    """The key index of one partition directory (see the module docstring). Build or bring
    up to date with :meth:`update` (bounded, cancellable, resumable: what was indexed
    stays), look up with :meth:`search`. Thread-safe: one update at a time per partition."""

    _registry: OrderedDict[str, KeyIndex] = OrderedDict()
    _registry_lock = threading.Lock()
    max_memory_bytes = int(os.environ.get("KAFKACORE_CONSOLE_KEY_INDEX_BYTES", 512 << 20))
    """All partitions' indexes together stay under this (the least recently searched
    partitions' indexes are dropped first; a later search rebuilds them)."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._segments: dict[int, _SegmentKeys] = {}
        self._lock = threading.Lock()

    @classmethod
    def of(cls, source: PartitionSource) -> KeyIndex:
        """The index of ``source``'s directory (one per directory per process)."""
        with cls._registry_lock:
            index = cls._registry.get(source.directory)
            if index is None:
                index = cls._registry[source.directory] = cls(source.directory)
            cls._registry.move_to_end(source.directory)
            return index

    @classmethod
    def _evict(cls, keep: KeyIndex) -> None:
        """Drop the least recently used indexes (never ``keep``) while all of them hold
        more than :attr:`max_memory_bytes`."""
        with cls._registry_lock:
            total = sum(index.memory_bytes for index in cls._registry.values())
            for directory, index in list(cls._registry.items()):
                if total <= cls.max_memory_bytes:
                    break
                if index is not keep:
                    total -= index.memory_bytes
                    del cls._registry[directory]

    @classmethod
    def forget(cls, directory: str | None = None) -> None:
        """Drop the index of ``directory`` (every index when ``None``)."""
        with cls._registry_lock:
            if directory is None:
                cls._registry.clear()
            else:
                cls._registry.pop(directory, None)

    @property
    def entries(self) -> int:
        return sum(s.entries for s in list(self._segments.values()))

    @property
    def memory_bytes(self) -> int:
        """Bytes held by the sorted runs: 8 per keyed record."""
        return sum(s.memory_bytes for s in list(self._segments.values()))

    def update(
        self,
        refs: Sequence[SegmentRef],
        budget: Budget,
        progress: Callable[[int, int], None] | None = None,
    ) -> tuple[int, int]:
        """Index what is not yet indexed of ``refs`` (a partition's segments), oldest
        first, each from where it stopped. ``(indexed bytes, total bytes)``; raises
        :class:`ScanCancelled` when the budget runs out (what was done stays)."""
        with self._lock:
            live = {ref.base_offset for ref in refs}
            for base in list(self._segments):
                if base not in live:
                    del self._segments[base]
            files = [(ref, file_identity(ref.log_path)) for ref in refs]
            total = sum(found[1] for _ref, found in files if found is not None)
            indexed = sum(
                min(self._segments[ref.base_offset].position, found[1])
                for ref, found in files
                if found is not None
                and ref.base_offset in self._segments
                and self._segments[ref.base_offset].identity == found[0]
            )
            for ref, found in files:
                if found is None:
                    continue
                identity, size = found
                keys = self._segments.get(ref.base_offset)
                if keys is None or keys.identity != identity or keys.position > size:
                    if keys is not None:
                        indexed -= min(keys.position, size) if keys.identity == identity else 0
                    keys = self._segments[ref.base_offset] = _SegmentKeys(identity)
                while keys.position < size:
                    stored = None if ref.active else _load_run(ref, identity, size, keys.position)
                    if stored is not None:
                        raw, position = stored
                        seen = identity
                    else:
                        raw, position, seen = run_task(
                            budget,
                            _key_task,
                            ref.log_path,
                            keys.position,
                            TASK_BYTES,
                            ref.base_offset,
                        )
                        if not ref.active and seen == identity and position > keys.position:
                            _store_run(ref, identity, size, keys.position, position, raw)
                    if seen != identity or position == keys.position:
                        break
                    budget.spend(position - keys.position)
                    keys.add(raw)
                    indexed += position - keys.position
                    keys.position = position
                    if progress is not None:
                        progress(indexed, total)
            return indexed, total

    def candidates(self, key: bytes) -> list[int]:
        """Offsets whose key hashes as ``key`` does, ascending (a superset of the
        offsets with that key, within what is indexed)."""
        h = _key_hash(key)
        found: list[int] = []
        for base, keys in sorted(self._segments.items()):
            found.extend(base + rel for rel in keys.relative_offsets(h))
        found.sort()
        return found

    def search(
        self,
        source: PartitionSource,
        key: bytes,
        *,
        limit: int = 500,
        budget: Budget | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> KeySearchResult:
        """Every record of ``source`` whose key is ``key`` (see :class:`KeySearchResult`):
        the index brought up to date first, then each candidate read and checked."""
        began = time.monotonic()
        budget = budget or Budget.of(seconds=60)
        stopped: str | None = None
        try:
            indexed, total = self.update(source.segments(), budget, progress)
            KeyIndex._evict(self)
        except ScanCancelled as exc:
            stopped = str(exc)
            indexed, total = (
                self.indexed_bytes(source.segments()),
                sum(
                    found[1]
                    for found in (file_identity(r.log_path) for r in source.segments())
                    if found is not None
                ),
            )
        offsets = source.offsets()
        candidates = [
            o
            for o in self.candidates(key)
            if offsets.log_start_offset <= o < offsets.high_watermark
        ]
        found: list[Record] = []
        total_found = 0
        data = b""
        batch_end = -1
        for offset in candidates:
            if offset > batch_end or not data:
                data = source.read_chunk(offset, 1, offsets.high_watermark)
                if not data:
                    continue
                last = last_offset_of(data)
                batch_end = offset if last is None else last
            r = record_at(data, offset)
            if r is not None and r.key == key:
                total_found += 1
                if len(found) < limit:
                    found.append(r)
        return KeySearchResult(
            found,
            total_found,
            stopped is None and indexed >= total,
            indexed,
            total,
            len(candidates),
            (time.monotonic() - began) * 1000,
            stopped,
        )

    def indexed_bytes(self, refs: Sequence[SegmentRef]) -> int:
        done = 0
        for ref in refs:
            keys = self._segments.get(ref.base_offset)
            if keys is not None:
                done += keys.position
        return done
