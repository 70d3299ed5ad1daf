"""The leader epoch cache of one partition (Kafka's ``LeaderEpochFileCache``, KIP-101 and
KIP-279): ``(epoch, start offset)`` entries, the first offset written under each leader
epoch, persisted in ``leader-epoch-checkpoint``.

Followers truncate by asking the leader for the end offset of their latest epoch
(OffsetForLeaderEpoch) rather than by high watermark; :meth:`LeaderEpochFileCache.end_offset_for`
answers that request as Kafka does, returning the largest epoch <= the one requested
together with its end offset.

Rules (Kafka's):

* Entries are strictly increasing in both epoch and start offset. ``assign(e, o)`` does
  nothing when ``e`` is the latest epoch and ``o`` is not below its start offset;
  otherwise it first removes, from the end, every entry with epoch >= ``e`` or start
  offset >= ``o``, then adds ``(e, o)``. A negative epoch or offset is a ``ValueError``.
* Every change is written to the checkpoint before the method returns. (Kafka writes
  truncations asynchronously to keep fsync off the replica fetcher; the file is small and
  truncations rare, so here every write is synchronous and the file is never stale.)

Thread-safety: every method may be called from any thread (one lock).
"""

from __future__ import annotations

import bisect
import logging
import threading

from kafkacore.log.checkpoints import EpochEntry, LeaderEpochCheckpointFile

__all__ = ["UNDEFINED_EPOCH", "UNDEFINED_EPOCH_OFFSET", "EpochEntry", "LeaderEpochFileCache"]

#: No epoch (Kafka's ``RecordBatch.NO_PARTITION_LEADER_EPOCH`` / ``UNDEFINED_EPOCH``).
UNDEFINED_EPOCH = -1
#: No end offset (Kafka's ``UNDEFINED_EPOCH_OFFSET``).
UNDEFINED_EPOCH_OFFSET = -1

logger = logging.getLogger("kafkacore.log")


class LeaderEpochFileCache:
    """``(epoch, start offset)`` entries of one partition, backed by its checkpoint file.

    ``checkpoint=None`` keeps the cache in memory only (tests, tools)."""

    def __init__(
        self, checkpoint: LeaderEpochCheckpointFile | None, *, topic_partition: str = ""
    ) -> None:
        self._checkpoint = checkpoint
        self._name = topic_partition
        self._lock = threading.RLock()
        self._entries: list[EpochEntry] = []  # ascending by epoch (and by start offset)
        if checkpoint is not None:
            for entry in checkpoint.read():
                self._assign(EpochEntry(*entry))

    @property
    def checkpoint(self) -> LeaderEpochCheckpointFile | None:
        return self._checkpoint

    # -- updates -------------------------------------------------------------------------

    def assign(self, epoch: int, start_offset: int) -> None:
        """Record that ``epoch`` starts at ``start_offset`` (see the module rules); the
        checkpoint is rewritten if anything changed."""
        entries = self._entries
        if entries and entries[-1].epoch == epoch and entries[-1].start_offset <= start_offset:
            return  # the common case on every append: nothing changes (no lock needed)
        with self._lock:
            if self._assign(EpochEntry(epoch, start_offset)):
                self._write()

    def assign_all(self, entries: list[EpochEntry]) -> None:
        """:meth:`assign` each entry, then write the checkpoint once (if any was given)."""
        with self._lock:
            for entry in entries:
                self._assign(EpochEntry(*entry))
            if entries:
                self._write()

    def _is_update_needed(self, entry: EpochEntry) -> bool:
        if not self._entries:
            return True
        latest = self._entries[-1]
        return entry.epoch != latest.epoch or entry.start_offset < latest.start_offset

    def _assign(self, entry: EpochEntry) -> bool:
        if entry.epoch < 0 or entry.start_offset < 0:
            raise ValueError(f"Received invalid partition leader epoch entry {entry}")
        if not self._is_update_needed(entry):
            return False
        removed: list[EpochEntry] = []
        while self._entries and (
            self._entries[-1].epoch >= entry.epoch
            or self._entries[-1].start_offset >= entry.start_offset
        ):
            removed.append(self._entries.pop())
        if len(removed) > 1 or (removed and removed[0].start_offset != entry.start_offset):
            logger.warning(
                "[LeaderEpochCache %s] New epoch entry %s caused truncation of conflicting "
                "entries %s. Cache now contains %d entries.",
                self._name,
                entry,
                removed,
                len(self._entries),
            )
        self._entries.append(entry)
        return True

    def truncate_from_end(self, end_offset: int) -> list[EpochEntry]:
        """Remove every entry whose start offset >= ``end_offset`` (nothing when
        ``end_offset`` < 0); returns the removed entries."""
        with self._lock:
            removed = self._truncate_from_end(self._entries, end_offset)
            if removed:
                self._write()
            return removed

    def truncate_from_start(self, start_offset: int) -> list[EpochEntry]:
        """Drop the entries that start at or before ``start_offset`` but keep the last of
        them, moved to start at ``start_offset`` (exclusive: an entry at exactly
        ``start_offset`` stays); returns the removed entries."""
        with self._lock:
            removed = self._truncate_from_start(self._entries, start_offset)
            if removed:
                self._write()
            return removed

    @staticmethod
    def _truncate_from_end(entries: list[EpochEntry], end_offset: int) -> list[EpochEntry]:
        removed: list[EpochEntry] = []
        if end_offset >= 0 and entries and entries[-1].start_offset >= end_offset:
            while entries and entries[-1].start_offset >= end_offset:
                removed.append(entries.pop())
        return removed

    @staticmethod
    def _truncate_from_start(entries: list[EpochEntry], start_offset: int) -> list[EpochEntry]:
        removed: list[EpochEntry] = []
        while entries and entries[0].start_offset <= start_offset:
            removed.append(entries.pop(0))
        if removed:
            entries.insert(0, EpochEntry(removed[-1].epoch, start_offset))
        return removed

    def clear_and_flush(self) -> None:
        """Remove every entry and write the empty checkpoint."""
        with self._lock:
            self._entries.clear()
            self._write()

    def clear(self) -> None:
        """Remove every entry (the checkpoint is left as it is)."""
        with self._lock:
            self._entries.clear()

    def flush(self) -> None:
        """Write the checkpoint now."""
        with self._lock:
            self._write()

    def _write(self) -> None:
        if self._checkpoint is not None:
            self._checkpoint.write_if_dir_exists(list(self._entries))

    # -- queries -------------------------------------------------------------------------

    def entries(self) -> list[EpochEntry]:
        """A copy of the entries, ascending."""
        with self._lock:
            return list(self._entries)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def non_empty(self) -> bool:
        return len(self) > 0

    def latest_entry(self) -> EpochEntry | None:
        with self._lock:
            return self._entries[-1] if self._entries else None

    def latest_epoch(self) -> int | None:
        """The epoch being written to (the largest one), if any."""
        entry = self.latest_entry()
        return None if entry is None else entry.epoch

    def earliest_entry(self) -> EpochEntry | None:
        with self._lock:
            return self._entries[0] if self._entries else None

    def _index_of(self, epoch: int) -> int:
        """Position of the first entry with epoch >= ``epoch``."""
        return bisect.bisect_left([e.epoch for e in self._entries], epoch)

    def previous_epoch(self, epoch: int | None = None) -> int | None:
        """The largest epoch below ``epoch`` (default: below the latest epoch)."""
        entry = self.previous_entry(epoch)
        return None if entry is None else entry.epoch

    def previous_entry(self, epoch: int | None = None) -> EpochEntry | None:
        with self._lock:
            if epoch is None:
                return self._entries[-2] if len(self._entries) >= 2 else None
            i = self._index_of(epoch)
            return self._entries[i - 1] if i > 0 else None

    def next_epoch(self, epoch: int) -> int | None:
        """The smallest epoch above ``epoch``."""
        with self._lock:
            i = bisect.bisect_right([e.epoch for e in self._entries], epoch)
            return self._entries[i].epoch if i < len(self._entries) else None

    def epoch_entry(self, epoch: int) -> EpochEntry | None:
        with self._lock:
            i = self._index_of(epoch)
            if i < len(self._entries) and self._entries[i].epoch == epoch:
                return self._entries[i]
            return None

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """``(epoch, end offset)`` for OffsetForLeaderEpoch v1+ (Kafka's ``endOffsetFor``):

        * ``requested_epoch`` undefined (-1): ``(-1, -1)``;
        * the latest epoch: ``(latest, log_end_offset)``;
        * above every known epoch (should not happen: the latest is the largest):
          ``(-1, -1)``;
        * below every known epoch: ``(requested_epoch, start offset of the first epoch)``;
        * otherwise: ``(largest epoch <= requested, start offset of the next epoch)``.
        """
        with self._lock:
            if requested_epoch == UNDEFINED_EPOCH:
                return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
            if self._entries and self._entries[-1].epoch == requested_epoch:
                return requested_epoch, log_end_offset
            higher = bisect.bisect_right([e.epoch for e in self._entries], requested_epoch)
            if higher >= len(self._entries):
                return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
            if higher == 0:
                return requested_epoch, self._entries[0].start_offset
            return self._entries[higher - 1].epoch, self._entries[higher].start_offset

    def epoch_for_offset(self, offset: int) -> int | None:
        """The epoch ``offset`` was written under: that of the last entry starting at or
        before it (``None`` if it is before every entry)."""
        with self._lock:
            previous: int | None = None
            for entry in self._entries:
                if entry.start_offset == offset:
                    return entry.epoch
                if entry.start_offset > offset:
                    return previous
                previous = entry.epoch
            return previous

    def epoch_entries_in_range(self, start_offset: int, end_offset: int) -> list[EpochEntry]:
        """The entries as they would be after ``truncate_from_start(start_offset)`` (when
        ``start_offset`` >= 0) and ``truncate_from_end(end_offset)``, without changing
        the cache."""
        with self._lock:
            entries = list(self._entries)
        if start_offset >= 0:
            self._truncate_from_start(entries, start_offset)
        self._truncate_from_end(entries, end_offset)
        return entries

    def __repr__(self) -> str:
        return f"LeaderEpochFileCache({self._name!r}, {self.entries()})"
