"""The replicated log as the Raft client sees it (Kafka's ``RaftLog``/``ReplicatedLog``,
with the rules of ``KafkaRaftLog``), and an in-memory implementation for the simulation.

:class:`RaftLog` states Kafka's rules once - which fetch position is valid, where a
diverging follower truncates, the last fetched epoch of an empty log, when a downloaded
snapshot replaces the log - over a few storage primitives. Two storages implement them:
:class:`MemoryRaftLog` (batches in memory; the simulation, with a crash losing what was
not flushed) and :class:`kafkacore.raft.metadata_log.MetadataLog` (the real
``__cluster_metadata-0`` directory: a kafkacore :class:`~kafkacore.log.Log` and
``.checkpoint`` snapshot files).

Snapshots are raw bytes here: the batches of a snapshot file. A follower downloads one
through a :class:`SnapshotWriter` (appended in chunks, then frozen: only a frozen snapshot
exists).

Thread-safety: none; a log belongs to the one Raft client that drives it.
"""

from __future__ import annotations

import abc
import bisect
from collections.abc import Callable
from dataclasses import dataclass

from kafkacore.log.epoch import LeaderEpochFileCache
from kafkacore.native import backend
from kafkacore.raft.records import complete_prefix, iter_batches
from kafkacore.raft.types import OffsetAndEpoch, ValidKind, ValidOffsetAndEpoch
from kafkacore.record import BatchHeader

__all__ = [
    "BOOTSTRAP_SNAPSHOT_ID",
    "LogAppendInfo",
    "MemoryRaftLog",
    "RaftLog",
    "SnapshotWriter",
]

#: ``Snapshots.BOOTSTRAP_SNAPSHOT_ID``: the 0-0 snapshot ``kafka-storage format`` writes.
BOOTSTRAP_SNAPSHOT_ID = OffsetAndEpoch(0, 0)


@dataclass(frozen=True)
class LogAppendInfo:
    first_offset: int
    last_offset: int


class SnapshotWriter:
    """A snapshot being written (Kafka's ``RawSnapshotWriter``): bytes appended in order,
    then :meth:`freeze` makes it exist in the log; :meth:`close` before that drops it."""

    def __init__(self, snapshot_id: OffsetAndEpoch, on_freeze: Callable[[SnapshotWriter], None]):
        self.snapshot_id = snapshot_id
        self._data = bytearray()
        self._on_freeze = on_freeze
        self.frozen = False
        self.closed = False

    @property
    def size(self) -> int:
        return len(self._data)

    def append(self, data: bytes) -> None:
        if self.frozen or self.closed:
            raise ValueError(f"snapshot {self.snapshot_id} is no longer writable")
        self._data += data

    def data(self) -> bytes:
        return bytes(self._data)

    def freeze(self) -> None:
        if self.closed:
            raise ValueError(f"snapshot {self.snapshot_id} was closed")
        if not self.frozen:
            self.frozen = True
            self._on_freeze(self)

    def close(self) -> None:
        self.closed = True


class RaftLog(abc.ABC):
    """Kafka's ``RaftLog`` rules over storage primitives (see the module docstring)."""

    def __init__(self) -> None:
        self._high_watermark = 0

    # -- storage primitives -------------------------------------------------------------

    @property
    @abc.abstractmethod
    def start_offset(self) -> int: ...

    @property
    @abc.abstractmethod
    def end_offset(self) -> int: ...

    @abc.abstractmethod
    def latest_epoch(self) -> int | None:
        """The latest epoch of the epoch cache (``None``: no batch in the log)."""

    @abc.abstractmethod
    def _epoch_end_offset(self, epoch: int) -> OffsetAndEpoch | None:
        """The epoch cache's ``endOffsetFor(epoch, LEO)``, ``None`` when undefined."""

    @abc.abstractmethod
    def _append(self, records: bytes, leader_epoch: int | None) -> LogAppendInfo:
        """Append as leader (``leader_epoch``: assign offsets from the end and stamp) or
        as follower (``None``: offsets and epochs kept)."""

    @abc.abstractmethod
    def read(self, offset: int, max_bytes: int) -> bytes:
        """Whole batches from the one holding ``offset``: at least one, then as many as fit
        in ``max_bytes``; empty at the log end."""

    @abc.abstractmethod
    def _truncate(self, offset: int) -> None: ...

    @abc.abstractmethod
    def _truncate_fully_and_start_at(self, offset: int) -> None: ...

    @abc.abstractmethod
    def _advance_start_offset(self, offset: int) -> None:
        """Drop everything below ``offset`` (a snapshot now covers it)."""

    @abc.abstractmethod
    def assign_epoch_start(self, epoch: int, start_offset: int) -> None: ...

    @abc.abstractmethod
    def flush(self) -> None: ...

    @abc.abstractmethod
    def snapshot_ids(self) -> list[OffsetAndEpoch]:
        """The frozen snapshots, ascending."""

    @abc.abstractmethod
    def read_snapshot(self, snapshot_id: OffsetAndEpoch) -> bytes | None: ...

    @abc.abstractmethod
    def _store_snapshot(self, snapshot_id: OffsetAndEpoch, data: bytes) -> None: ...

    @abc.abstractmethod
    def _delete_snapshot(self, snapshot_id: OffsetAndEpoch) -> None: ...

    # -- Kafka's rules ------------------------------------------------------------------

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    def update_high_watermark(self, offset: int) -> None:
        """The Raft client's high watermark, kept within the log (Kafka's log keeps
        ``min(HW, LEO)``)."""
        self._high_watermark = max(self.start_offset, min(offset, self.end_offset))

    def end_offset_and_epoch(self) -> OffsetAndEpoch:
        return OffsetAndEpoch(self.end_offset, self.last_fetched_epoch)

    @property
    def last_fetched_epoch(self) -> int:
        """The epoch of the last batch; on an empty log, the epoch of the snapshot it starts
        at; else 0 (``KafkaRaftLog.lastFetchedEpoch``)."""
        latest = self.latest_epoch()
        if latest is not None:
            return latest
        snapshot = self.latest_snapshot_id()
        if snapshot is None:
            return 0
        if snapshot.offset == self.start_offset == self.end_offset:
            return snapshot.epoch
        raise RuntimeError(
            f"Log doesn't have a last fetch epoch and there is a snapshot ({snapshot}). "
            f"Expected the snapshot's end offset to match the log's end offset "
            f"({self.end_offset}) and the log start offset ({self.start_offset})"
        )

    def latest_snapshot_id(self) -> OffsetAndEpoch | None:
        ids = self.snapshot_ids()
        return ids[-1] if ids else None

    def earliest_snapshot_id(self) -> OffsetAndEpoch | None:
        ids = self.snapshot_ids()
        return ids[0] if ids else None

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        """``KafkaRaftLog.endOffsetForEpoch``: the largest epoch <= ``epoch`` with its end
        offset; the oldest snapshot's id when ``epoch`` predates the log; the log end when
        undefined."""
        found = self._epoch_end_offset(epoch)
        earliest = self.earliest_snapshot_id()
        if found is not None:
            if earliest is not None and found.offset == earliest.offset and found.epoch == epoch:
                return earliest
            return found
        return OffsetAndEpoch(self.end_offset, self.last_fetched_epoch)

    def validate_offset_and_epoch(self, offset: int, epoch: int) -> ValidOffsetAndEpoch:
        """``ReplicatedLog.validateOffsetAndEpoch``: what a fetch at ``offset`` whose last
        batch has ``epoch`` is told - valid, diverging (truncate to the returned end), or
        snapshot (below the log start)."""
        if self.start_offset == 0 and offset == 0:
            return ValidOffsetAndEpoch(ValidKind.VALID, OffsetAndEpoch(0, 0))
        earliest = self.earliest_snapshot_id()
        if earliest is not None and (
            offset < self.start_offset
            or (offset == self.start_offset and epoch != earliest.epoch)
            or epoch < earliest.epoch
        ):
            latest = self.latest_snapshot_id()
            assert latest is not None
            return ValidOffsetAndEpoch(ValidKind.SNAPSHOT, latest)
        end = self.end_offset_for_epoch(epoch)
        if end.epoch != epoch or end.offset < offset:
            return ValidOffsetAndEpoch(ValidKind.DIVERGING, end)
        return ValidOffsetAndEpoch(ValidKind.VALID, OffsetAndEpoch(offset, epoch))

    def append_as_leader(self, records: bytes, epoch: int) -> LogAppendInfo:
        if not records:
            raise ValueError("Attempt to append an empty record set")
        return self._append(records, epoch)

    def append_as_follower(self, records: bytes) -> LogAppendInfo | None:
        """Append the whole batches of a fetch response (``None``: there were none)."""
        whole = complete_prefix(records)
        if not whole:
            return None
        return self._append(whole, None)

    def truncate_to(self, offset: int) -> None:
        if offset < self._high_watermark:
            raise ValueError(
                f"Attempt to truncate to offset {offset}, which is below the current high "
                f"watermark {self._high_watermark}"
            )
        self._truncate(offset)

    def truncate_to_end_offset(self, end: OffsetAndEpoch) -> int:
        """``ReplicatedLog.truncateToEndOffset``: cut a diverging log where the leader's
        ``end`` (its end of the epoch) and the local log agree; returns the new end."""
        if end.epoch == 0:
            target = min(end.offset, self.end_offset)
        else:
            local = self.end_offset_for_epoch(end.epoch)
            target = min(local.offset, end.offset) if local.epoch == end.epoch else local.offset
        self.truncate_to(target)
        return target

    def initialize_leader_epoch(self, epoch: int) -> None:
        """A new leader records its epoch starting at the log end."""
        self.assign_epoch_start(epoch, self.end_offset)

    def create_snapshot(self, snapshot_id: OffsetAndEpoch) -> SnapshotWriter | None:
        """A writer for a snapshot of the committed log up to ``snapshot_id`` (Kafka's
        ``createNewSnapshot``); ``None`` if it is below the log start or exists."""
        if snapshot_id.offset < self.start_offset:
            return None
        if snapshot_id.offset > self._high_watermark:
            raise ValueError(
                f"Cannot create a snapshot with an id ({snapshot_id}) greater than the "
                f"high-watermark ({self._high_watermark})"
            )
        valid = self.validate_offset_and_epoch(snapshot_id.offset, snapshot_id.epoch)
        if valid.kind is not ValidKind.VALID:
            raise ValueError(f"Snapshot id ({snapshot_id}) is not valid according to the log")
        return self.create_snapshot_unchecked(snapshot_id)

    def create_snapshot_unchecked(self, snapshot_id: OffsetAndEpoch) -> SnapshotWriter | None:
        if snapshot_id in self.snapshot_ids():
            return None
        return SnapshotWriter(snapshot_id, lambda w: self._store_snapshot(w.snapshot_id, w.data()))

    def truncate_to_latest_snapshot(self) -> bool:
        """After downloading a snapshot: if it is past the log, empty the log at it and
        forget older snapshots (``KafkaRaftLog.truncateToLatestSnapshot``)."""
        latest_epoch = self.latest_epoch() or 0
        snapshot = self.latest_snapshot_id()
        if snapshot is None or not (
            snapshot.epoch > latest_epoch
            or (snapshot.epoch == latest_epoch and snapshot.offset > self.end_offset)
        ):
            return False
        self._truncate_fully_and_start_at(snapshot.offset)
        for old in self.snapshot_ids():
            if old.key() < snapshot.key():
                self._delete_snapshot(old)
        self._high_watermark = max(self._high_watermark, snapshot.offset)
        return True

    def delete_before_snapshot(self, snapshot_id: OffsetAndEpoch) -> bool:
        """Move the log start to the frozen snapshot ``snapshot_id`` and drop older
        snapshots (Kafka's ``deleteBeforeSnapshot``; the log keeps what is above it)."""
        if snapshot_id not in self.snapshot_ids():
            return False
        if snapshot_id.offset <= self.start_offset or snapshot_id.offset > self._high_watermark:
            return False
        self._advance_start_offset(snapshot_id.offset)
        for old in self.snapshot_ids():
            if old.key() < snapshot_id.key():
                self._delete_snapshot(old)
        return True


@dataclass(frozen=True)
class _Stored:
    base_offset: int
    last_offset: int
    data: bytes


class MemoryRaftLog(RaftLog):
    """Batches in memory (Kafka's ``MockLog``). :meth:`crash` models a process crash: what
    was not flushed is lost (snapshots exist only once frozen)."""

    def __init__(self) -> None:
        super().__init__()
        self._batches: list[_Stored] = []
        self._bases: list[int] = []
        self._start = 0
        self._end = 0
        self._epochs = LeaderEpochFileCache(None)
        self._snapshots: dict[OffsetAndEpoch, bytes] = {}
        self._flushed = 0

    @property
    def start_offset(self) -> int:
        return self._start

    @property
    def end_offset(self) -> int:
        return self._end

    @property
    def flushed_offset(self) -> int:
        return self._flushed

    def latest_epoch(self) -> int | None:
        return self._epochs.latest_epoch()

    def _epoch_end_offset(self, epoch: int) -> OffsetAndEpoch | None:
        found_epoch, offset = self._epochs.end_offset_for(epoch, self._end)
        return None if offset < 0 else OffsetAndEpoch(offset, found_epoch)

    def _append(self, records: bytes, leader_epoch: int | None) -> LogAppendInfo:
        first = None
        offset = self._end
        pos = 0
        for batch in iter_batches(records, decode=False):
            header = batch.header
            size = header.size_in_bytes
            data = records[pos : pos + size]
            pos += size
            if leader_epoch is not None:
                count = header.last_offset_delta + 1
                if header.base_offset != offset or header.partition_leader_epoch != leader_epoch:
                    data = self._restamp(data, header, offset, leader_epoch)
                base, epoch = offset, leader_epoch
                offset += count
            else:
                if header.base_offset < self._end:
                    raise ValueError(
                        f"append at offset {header.base_offset} below the log end {self._end}"
                    )
                base, epoch = header.base_offset, header.partition_leader_epoch
                offset = header.last_offset + 1
            if first is None:
                first = base
            if epoch >= 0:
                self._epochs.assign(epoch, base)
            self._batches.append(_Stored(base, offset - 1, data))
            self._bases.append(base)
            self._end = offset
        if first is None:
            raise ValueError("no batch to append")
        return LogAppendInfo(first, self._end - 1)

    @staticmethod
    def _restamp(data: bytes, header: BatchHeader, base_offset: int, epoch: int) -> bytes:
        """The batch at ``base_offset`` with ``epoch`` (what a leader's log assigns)."""
        rows = backend.batch_records(data, 0)
        return backend.build_batch(
            [(base_offset + (r[0] - header.base_offset), *r[1:]) for r in rows],
            base_offset=base_offset,
            last_offset_delta=header.last_offset_delta,
            partition_leader_epoch=epoch,
            control=header.is_control,
            timestamp_type=int(header.timestamp_type),
        )

    def read(self, offset: int, max_bytes: int) -> bytes:
        index = bisect.bisect_right(self._bases, offset) - 1
        index = max(index, 0)
        while index < len(self._batches) and self._batches[index].last_offset < offset:
            index += 1
        out: list[bytes] = []
        size = 0
        for stored in self._batches[index:]:
            if out and size + len(stored.data) > max_bytes:
                break
            out.append(stored.data)
            size += len(stored.data)
        return b"".join(out)

    def _truncate(self, offset: int) -> None:
        if offset >= self._end:
            self._epochs.truncate_from_end(self._end)
            return
        index = bisect.bisect_left(self._bases, offset)
        # a target inside a batch removes the whole batch (kafkacore's Log does the same)
        if index > 0 and self._batches[index - 1].last_offset >= offset:
            index -= 1
        del self._batches[index:]
        del self._bases[index:]
        self._end = self._batches[-1].last_offset + 1 if self._batches else self._start
        self._epochs.truncate_from_end(self._end)
        self._flushed = min(self._flushed, self._end)

    def _truncate_fully_and_start_at(self, offset: int) -> None:
        self._batches.clear()
        self._bases.clear()
        self._start = self._end = offset
        self._epochs.clear()
        self._flushed = offset

    def _advance_start_offset(self, offset: int) -> None:
        keep = [b for b in self._batches if b.last_offset >= offset]
        self._batches = keep
        self._bases = [b.base_offset for b in keep]
        self._start = offset
        self._epochs.truncate_from_start(offset)

    def assign_epoch_start(self, epoch: int, start_offset: int) -> None:
        self._epochs.assign(epoch, start_offset)

    def flush(self) -> None:
        self._flushed = self._end

    def snapshot_ids(self) -> list[OffsetAndEpoch]:
        return sorted(self._snapshots, key=OffsetAndEpoch.key)

    def read_snapshot(self, snapshot_id: OffsetAndEpoch) -> bytes | None:
        return self._snapshots.get(snapshot_id)

    def _store_snapshot(self, snapshot_id: OffsetAndEpoch, data: bytes) -> None:
        self._snapshots[snapshot_id] = data

    def _delete_snapshot(self, snapshot_id: OffsetAndEpoch) -> None:
        self._snapshots.pop(snapshot_id, None)

    def crash(self) -> None:
        """Lose every batch above the flushed offset, as a crash would; the high watermark
        is not durable either."""
        self._truncate(self._flushed)
        self._high_watermark = 0
