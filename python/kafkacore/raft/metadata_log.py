"""The metadata log on disk: ``<metadata.log.dir>/__cluster_metadata-0`` as Kafka's
``KafkaRaftLog`` (``KafkaMetadataLog``) keeps it.

An ordinary kafkacore :class:`~kafkacore.log.Log` holds the batches (Kafka's format byte
for byte, ``leader-epoch-checkpoint``, ``partition.metadata`` with the metadata topic id
``AAAAAAAAAAAAAAAAAAAAAQ``), configured as Kafka configures it: ``max.message.bytes`` = the
largest Raft batch (8 MiB), ``segment.bytes``/``segment.ms`` from
``metadata.log.segment.bytes``/``.ms``, no time or size retention (snapshots decide what
is dropped), and a full recovery at every start (Kafka opens it with
``lastShutdownClean = false``). Snapshots are ``<offset>-<epoch>.checkpoint`` files in the
same directory, written as ``.checkpoint.part`` then renamed; at start-up partial and
deleted snapshots are removed, and so are snapshots below the log start.

The leader appends with the coordinator origin: offsets assigned, the epoch stamped,
control batches allowed, no client checks (Kafka's ``AppendOrigin.RAFT_LEADER``).

Not thread-safe beyond what :class:`~kafkacore.log.Log` guarantees: one Raft client owns it.
"""

from __future__ import annotations

import logging
import os
import random
from pathlib import Path

from kafkacore.config import LogConfig
from kafkacore.errors import (
    CorruptRecordError,
    InvalidOffsetError,
    InvalidRecordError,
    UnexpectedAppendOffsetError,
)
from kafkacore.log import AppendOrigin, Log, Scheduler, Time
from kafkacore.log.checkpoints import fsync_dir
from kafkacore.log.files import TopicPartition
from kafkacore.raft.config import MAX_BATCH_SIZE_BYTES
from kafkacore.raft.log import LogAppendInfo, RaftLog
from kafkacore.raft.snapshots import (
    DELETED_SUFFIX,
    PARTIAL_SUFFIX,
    SUFFIX,
    parse_snapshot_file_name,
    snapshot_file_name,
)
from kafkacore.raft.types import (
    METADATA_PARTITION,
    METADATA_TOPIC,
    METADATA_TOPIC_ID,
    OffsetAndEpoch,
)

__all__ = ["METADATA_LOG_DIR_NAME", "InvalidFetchedRecordsError", "MetadataLog"]

logger = logging.getLogger("kafkacore.raft")

METADATA_LOG_DIR_NAME = f"{METADATA_TOPIC}-{METADATA_PARTITION}"
#: ``metadata.log.segment.bytes`` and ``metadata.log.segment.ms`` (Kafka 4.3.1 defaults).
DEFAULT_SEGMENT_BYTES = 1073741824
DEFAULT_SEGMENT_MS = 604800000
_MIN_SEGMENT_BYTES = 1 << 20  # segment.bytes' own minimum


class InvalidFetchedRecordsError(ValueError):
    """Fetched batches the log refuses (corrupt, or not at the log end): Kafka logs them
    and goes on with the next fetch."""


class MetadataLog(RaftLog):
    """``__cluster_metadata-0`` under ``metadata_log_dir`` (see the module docstring)."""

    def __init__(
        self,
        metadata_log_dir: str | os.PathLike[str],
        *,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        segment_ms: int = DEFAULT_SEGMENT_MS,
        time: Time | None = None,
        scheduler: Scheduler | None = None,
    ) -> None:
        super().__init__()
        self.directory = Path(metadata_log_dir) / METADATA_LOG_DIR_NAME
        self.directory.mkdir(parents=True, exist_ok=True)
        overrides: dict[str, int] = {
            "max.message.bytes": MAX_BATCH_SIZE_BYTES,
            "segment.ms": segment_ms,
            "retention.ms": -1,
            "retention.bytes": -1,
        }
        if segment_bytes < _MIN_SEGMENT_BYTES:
            # tests only, as Kafka's metadata.log.segment.min.bytes
            overrides["internal.segment.bytes"] = segment_bytes
        else:
            overrides["segment.bytes"] = segment_bytes
        config = LogConfig(overrides)
        self.log = Log(
            self.directory,
            config,
            topic_partition=TopicPartition(METADATA_TOPIC, METADATA_PARTITION),
            topic_id=METADATA_TOPIC_ID,
            recover_from=0,
            time=time,
            scheduler=scheduler,
            rng=random.Random(0),
        )
        self._snapshots = self._recover_snapshots()
        # a follower that crashed after downloading a snapshot, before truncating
        self.truncate_to_latest_snapshot()

    def _recover_snapshots(self) -> list[OffsetAndEpoch]:
        keep: list[OffsetAndEpoch] = []
        start = self.log.log_start_offset
        for path in self.directory.iterdir():
            name = path.name
            if name.endswith((PARTIAL_SUFFIX, DELETED_SUFFIX)):
                path.unlink(missing_ok=True)
                logger.info("Deleted unneeded snapshot file %s", path)
                continue
            parsed = parse_snapshot_file_name(name)
            if parsed is None or parsed[1] != SUFFIX:
                continue
            if parsed[0].offset < start:
                path.unlink(missing_ok=True)
                logger.info("Deleted snapshot %s below the log start %d", path, start)
                continue
            keep.append(parsed[0])
        keep.sort(key=OffsetAndEpoch.key)
        if start > 0 and not any(s.offset >= start for s in keep):
            raise RuntimeError(
                "Inconsistent snapshot state: there must be a snapshot at an offset larger "
                f"then the current log start offset {start}, but the latest snapshot is "
                f"{keep[-1] if keep else None}"
            )
        return keep

    # -- the log -----------------------------------------------------------------------

    @property
    def start_offset(self) -> int:
        return self.log.log_start_offset

    @property
    def end_offset(self) -> int:
        return self.log.log_end_offset

    def latest_epoch(self) -> int | None:
        return self.log.latest_epoch

    def _epoch_end_offset(self, epoch: int) -> OffsetAndEpoch | None:
        found = self.log.end_offset_for_epoch(epoch)
        return None if found is None else OffsetAndEpoch(found[1], found[0])

    def _append(self, records: bytes, leader_epoch: int | None) -> LogAppendInfo:
        try:
            if leader_epoch is not None:
                info = self.log.append_as_leader(
                    records, leader_epoch, origin=AppendOrigin.COORDINATOR
                )
            else:
                info = self.log.append_as_follower(records)
        except (
            CorruptRecordError,
            InvalidRecordError,
            InvalidOffsetError,
            UnexpectedAppendOffsetError,
        ) as exc:
            if leader_epoch is not None:
                raise
            raise InvalidFetchedRecordsError(str(exc)) from exc
        if info.first_offset < 0:
            raise RuntimeError("Append failed unexpectedly")
        return LogAppendInfo(info.first_offset, info.last_offset)

    def read(self, offset: int, max_bytes: int) -> bytes:
        return self.log.read(offset, max_bytes).read_bytes()

    def _truncate(self, offset: int) -> None:
        self.log.truncate_to(offset)

    def _truncate_fully_and_start_at(self, offset: int) -> None:
        self.log.truncate_fully_and_start_at(offset)

    def _advance_start_offset(self, offset: int) -> None:
        self.log.delete_records_before(offset)
        self.log.delete_old_segments(self.high_watermark)

    def assign_epoch_start(self, epoch: int, start_offset: int) -> None:
        self.log.maybe_assign_epoch_start_offset(epoch, start_offset)

    def flush(self) -> None:
        self.log.flush()

    def close(self) -> None:
        self.log.close()

    # -- snapshots ---------------------------------------------------------------------

    def snapshot_ids(self) -> list[OffsetAndEpoch]:
        return list(self._snapshots)

    def snapshot_path(self, snapshot_id: OffsetAndEpoch) -> Path:
        return self.directory / snapshot_file_name(snapshot_id)

    def read_snapshot(self, snapshot_id: OffsetAndEpoch) -> bytes | None:
        if snapshot_id not in self._snapshots:
            return None
        try:
            return self.snapshot_path(snapshot_id).read_bytes()
        except FileNotFoundError:
            return None

    def _store_snapshot(self, snapshot_id: OffsetAndEpoch, data: bytes) -> None:
        final = self.snapshot_path(snapshot_id)
        partial = final.with_name(
            f"{snapshot_file_name(snapshot_id, '')}-{os.getpid()}{PARTIAL_SUFFIX}"
        )
        with open(partial, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, final)
        fsync_dir(str(self.directory))
        self._snapshots.append(snapshot_id)
        self._snapshots.sort(key=OffsetAndEpoch.key)

    def maybe_clean(self, retention_bytes: int, retention_ms: int, now_ms: int) -> bool:
        """Kafka's ``KafkaMetadataLog.maybeClean``: while the log and its snapshots hold
        more than ``metadata.max.retention.bytes`` (-1: no limit), or the oldest snapshot
        is older than ``metadata.max.retention.ms`` (-1: no limit), the oldest snapshot
        goes and the log start moves up to the next one; the latest snapshot always stays.
        Whether anything went."""
        cleaned = False
        while len(self._snapshots) > 1:
            oldest, following = self._snapshots[0], self._snapshots[1]
            total = self.log.size + sum(self._snapshot_size(s) for s in self._snapshots)
            too_big = retention_bytes >= 0 and total > retention_bytes
            age = now_ms - self._snapshot_mtime_ms(oldest)
            too_old = retention_ms >= 0 and age > retention_ms
            if not (too_big or too_old):
                break
            if not self.delete_before_snapshot(following):
                self._delete_snapshot(oldest)
            cleaned = True
        return cleaned

    def _snapshot_size(self, snapshot_id: OffsetAndEpoch) -> int:
        try:
            return self.snapshot_path(snapshot_id).stat().st_size
        except FileNotFoundError:
            return 0

    def _snapshot_mtime_ms(self, snapshot_id: OffsetAndEpoch) -> int:
        try:
            return self.snapshot_path(snapshot_id).stat().st_mtime_ns // 1_000_000
        except FileNotFoundError:
            return 0

    def _delete_snapshot(self, snapshot_id: OffsetAndEpoch) -> None:
        if snapshot_id in self._snapshots:
            self._snapshots.remove(snapshot_id)
        path = self.snapshot_path(snapshot_id)
        deleted = path.with_name(snapshot_file_name(snapshot_id, DELETED_SUFFIX))
        try:
            os.replace(path, deleted)
        except FileNotFoundError:
            return
        deleted.unlink(missing_ok=True)
