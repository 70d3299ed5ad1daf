"""Snapshots of the metadata log: file names and contents (Kafka's ``Snapshots``,
``RecordsSnapshotWriter`` and ``RecordsSnapshotReader``).

A snapshot ``<end offset, 20 digits>-<epoch, 10 digits>.checkpoint`` holds everything the
log held below its end offset, as batches numbered from offset 0:

1. one control batch at offset 0: SnapshotHeaderRecord (``LastContainedLogTimestamp``),
   then when kraft.version >= 1 a KRaftVersionRecord, then a VotersRecord if a voter set
   is known;
2. the data batches (each up to ``max_batch_bytes``), stamped with the snapshot's epoch;
3. one control batch with the SnapshotFooterRecord.

``.checkpoint.part`` while it is written, ``.checkpoint.deleted`` once removed. The
bootstrap snapshot that ``kafka-storage format`` writes for a dynamic quorum is 0-0.

Pure functions: thread-safe.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from kafkacore.errors import CorruptRecordError
from kafkacore.protocol.messages.raft_records import ControlRecordType
from kafkacore.raft.config import MAX_BATCH_SIZE_BYTES
from kafkacore.raft.records import (
    ControlRecord,
    build_control_batch,
    build_data_batch,
    iter_batches,
    kraft_version_record,
    snapshot_footer,
    snapshot_header,
)
from kafkacore.raft.types import OffsetAndEpoch
from kafkacore.raft.voters import VoterSet

__all__ = [
    "DELETED_SUFFIX",
    "PARTIAL_SUFFIX",
    "SUFFIX",
    "Snapshot",
    "build_snapshot",
    "parse_snapshot_file_name",
    "read_snapshot",
    "snapshot_file_name",
]

SUFFIX = ".checkpoint"
PARTIAL_SUFFIX = ".checkpoint.part"
DELETED_SUFFIX = ".checkpoint.deleted"
_NAME = re.compile(r"^(\d{20})-(\d{10})(\.checkpoint(?:\.part|\.deleted)?)$")
# a record's framing beside its value, at most (attributes, deltas, lengths, header count)
_RECORD_OVERHEAD = 21


def snapshot_file_name(snapshot_id: OffsetAndEpoch, suffix: str = SUFFIX) -> str:
    return f"{snapshot_id.offset:020d}-{snapshot_id.epoch:010d}{suffix}"


def parse_snapshot_file_name(name: str) -> tuple[OffsetAndEpoch, str] | None:
    """``(id, suffix)`` of a snapshot file name, ``None`` for any other name."""
    match = _NAME.match(name)
    if match is None:
        return None
    return OffsetAndEpoch(int(match.group(1)), int(match.group(2))), match.group(3)


def build_snapshot(
    snapshot_id: OffsetAndEpoch,
    values: Sequence[bytes],
    *,
    timestamp_ms: int,
    last_contained_log_timestamp: int,
    kraft_version: int = 0,
    voters: VoterSet | None = None,
    max_batch_bytes: int = MAX_BATCH_SIZE_BYTES,
) -> bytes:
    """The bytes of a snapshot holding the record ``values`` (the state's records, each a
    serialized metadata record) as Kafka's ``RecordsSnapshotWriter`` lays it out."""
    if voters is not None and kraft_version == 0:
        raise ValueError(f"Voter set ({voters}) not expected when the kraft.version is 0")
    epoch = snapshot_id.epoch
    header = [
        ControlRecord(
            ControlRecordType.SNAPSHOT_HEADER, snapshot_header(last_contained_log_timestamp)
        )
    ]
    if kraft_version >= 1:
        header.append(
            ControlRecord(ControlRecordType.KRAFT_VERSION, kraft_version_record(kraft_version))
        )
        if voters is not None:
            header.append(ControlRecord(ControlRecordType.KRAFT_VOTERS, voters.to_voters_record()))
    parts = [build_control_batch(0, epoch, timestamp_ms, header)]
    offset = len(header)
    batch: list[bytes] = []
    size = 0
    for value in values:
        record_size = len(value) + _RECORD_OVERHEAD
        if batch and size + record_size > max_batch_bytes:
            parts.append(build_data_batch(offset, epoch, timestamp_ms, batch))
            offset += len(batch)
            batch, size = [], 0
        batch.append(value)
        size += record_size
    if batch:
        parts.append(build_data_batch(offset, epoch, timestamp_ms, batch))
        offset += len(batch)
    footer = [ControlRecord(ControlRecordType.SNAPSHOT_FOOTER, snapshot_footer())]
    parts.append(build_control_batch(offset, epoch, timestamp_ms, footer))
    return b"".join(parts)


@dataclass(frozen=True)
class Snapshot:
    """What :func:`read_snapshot` found."""

    last_contained_log_timestamp: int
    kraft_version: int
    voters: VoterSet | None
    values: tuple[bytes, ...]


def read_snapshot(data: bytes) -> Snapshot:
    """The contents of a snapshot; ``CorruptRecordError`` if it does not start with a
    header or end with a footer (Kafka's ``RecordsSnapshotReader`` checks both)."""
    header_ts: int | None = None
    kraft_version = 0
    voters: VoterSet | None = None
    values: list[bytes] = []
    footer = False
    consumed = 0
    for batch in iter_batches(data):
        consumed += batch.header.size_in_bytes
        if footer:
            raise CorruptRecordError("snapshot has batches after its footer")
        if batch.is_control:
            for record in batch.control:
                match record.type:
                    case ControlRecordType.SNAPSHOT_HEADER:
                        header_ts = record.message.last_contained_log_timestamp
                    case ControlRecordType.SNAPSHOT_FOOTER:
                        footer = True
                    case ControlRecordType.KRAFT_VERSION:
                        kraft_version = record.message.k_raft_version
                    case ControlRecordType.KRAFT_VOTERS:
                        voters = VoterSet.from_voters_record(record.message)
                    case _:
                        pass
        else:
            if header_ts is None:
                raise CorruptRecordError("snapshot data before its header")
            values.extend(v for v in batch.values if v is not None)
    if header_ts is None or not footer or consumed != len(data):
        raise CorruptRecordError("snapshot without a header and a footer")
    return Snapshot(header_ts, kraft_version, voters, tuple(values))
