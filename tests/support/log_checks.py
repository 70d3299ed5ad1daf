"""Structural checks of a loaded log, shared by the crash sweeps (the LogManager sweep in
``tests/test_crash_sweep.py`` and the broker sweep in ``tests/broker_crash``): what must
hold of any log after a crash and its recovery, whatever was written to it.

* :func:`check_log_structure`: every batch CRC-valid (``validate_batch``), offsets strictly
  increasing across the log (every batch present once), each offset-index entry naming the
  last offset of the batch at its position, each time-index entry the last offset and max
  timestamp of a batch, ``translate_offset`` finding every batch, the log end offset
  following the last batch, recovery point and log start offset within the log, and the
  leader epoch cache giving each batch's epoch; returns the batches with their records;
* :func:`check_checkpoints`: every checkpoint file of a log directory (and
  ``meta.properties``) parses.

Callers own the log (these only read it); not for a log that is being appended to.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from kafkacore.log import LeaderEpochFileCache, Log, MetaProperties, OffsetCheckpointFile

__all__ = ["CHECKPOINT_FILES", "Batch", "check_checkpoints", "check_log_structure"]

CHECKPOINT_FILES = (
    "recovery-point-offset-checkpoint",
    "log-start-offset-checkpoint",
    "replication-offset-checkpoint",
    "cleaner-offset-checkpoint",
)


@dataclass
class Batch:
    segment_base: int
    position: int
    size: int
    header: tuple[int, ...]
    records: list[tuple[int, bytes, bytes]]  # (offset, key, value)

    @property
    def base(self) -> int:
        return self.header[0]

    @property
    def last(self) -> int:
        return self.header[0] + self.header[6]


def check_log_structure(backend: ModuleType, log: Log) -> list[Batch]:
    """The batches of ``log``, after asserting the structural invariants above."""
    where = f"{log.topic_partition}"
    batches: list[Batch] = []
    for segment in log.segments:
        native = segment.segment
        data = native.read_bytes(0, segment.size)
        position = 0
        in_segment: list[Batch] = []
        while position < len(data):
            header = tuple(backend.validate_batch(data, position))  # CRC and structure
            records = [(r[0], r[2], r[3]) for r in backend.batch_records(data, position)]
            batch = Batch(segment.base_offset, position, 12 + header[1], header, records)
            assert batch.base >= segment.base_offset, f"{where}: batch below its segment"
            if batches:
                assert batch.base > batches[-1].last, (
                    f"{where}: offsets {batch.base}..{batch.last} after {batches[-1].last}:"
                    " a batch is present twice or out of order"
                )
            batches.append(batch)
            in_segment.append(batch)
            position += batch.size
        by_position = {b.position: b for b in in_segment}
        by_last = {b.last: b for b in in_segment}
        for offset, pos in native.offset_index():
            target = by_position.get(pos)
            assert target is not None and target.last == offset, (
                f"{where}: offset index entry ({offset}, {pos}) of segment "
                f"{segment.base_offset} does not point at the batch ending at {offset}"
            )
        for timestamp, offset in native.time_index():
            target = by_last.get(offset)
            assert target is not None and target.header[8] == timestamp, (
                f"{where}: time index entry ({timestamp}, {offset}) of segment "
                f"{segment.base_offset} names no batch with that max timestamp"
            )
        for b in in_segment:
            found = native.translate_offset(b.last)
            assert found is not None and tuple(found) == (b.last, b.position, b.size), (
                f"{where}: translate_offset({b.last}) = {found}, the batch is at "
                f"{b.position} ({b.size} bytes)"
            )
    end = max(batches[-1].last + 1 if batches else 0, log.active_segment.base_offset)
    assert log.log_end_offset == end, f"{where}: log end offset {log.log_end_offset} != {end}"
    assert log.recovery_point <= log.log_end_offset
    assert log.log_start_offset <= log.log_end_offset
    # The cache is truncated from the start by delete_records_before before the log
    # start offset is checkpointed (as in Kafka): below its first entry, no epoch.
    cache: LeaderEpochFileCache = log.leader_epoch_cache
    earliest = cache.earliest_entry()
    first_epoch_offset = earliest.start_offset if earliest is not None else 0
    for b in batches:
        if b.base >= max(log.log_start_offset, first_epoch_offset) and b.header[2] >= 0:
            epoch = cache.epoch_for_offset(b.base)
            assert epoch == b.header[2], (
                f"{where}: the epoch cache gives epoch {epoch} for offset {b.base}, "
                f"written with epoch {b.header[2]}"
            )
    return batches


def check_checkpoints(log_dir: Path) -> None:
    """Every checkpoint file of ``log_dir`` parses (one that is missing is created empty,
    as the manager would), and so does ``meta.properties`` (which must exist)."""
    for name in CHECKPOINT_FILES:
        OffsetCheckpointFile(str(log_dir / name)).read()
    MetaProperties.read(str(log_dir / "meta.properties"))
