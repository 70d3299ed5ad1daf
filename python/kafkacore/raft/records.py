"""The batches of the metadata log, laid out as Kafka's Raft writes them.

* Data batches (Kafka's ``BatchBuilder``): RecordBatch v2, CreateTime, no producer, every
  record with a null key, timestamp delta 0 (base and max timestamp = the append time),
  no headers; ``partitionLeaderEpoch`` = the Raft epoch.
* Control batches (``MemoryRecordsBuilder`` with ``isControlBatch``, not transactional):
  key ``int16 version=0, int16 type``, value the control message (LeaderChangeMessage,
  SnapshotHeaderRecord, SnapshotFooterRecord, KRaftVersionRecord, VotersRecord) serialized
  at version 0 (``ControlRecordUtils.*_CURRENT_VERSION``); every record stamped with the
  batch's timestamp.

Pure functions: thread-safe.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from kafkacore.errors import CorruptRecordError
from kafkacore.native import backend
from kafkacore.protocol.messages.raft_records import (
    CONTROL_RECORD_KEY,
    CONTROL_VALUES,
    KRAFT_VERSION,
    LEADER_CHANGE,
    SNAPSHOT_FOOTER,
    SNAPSHOT_HEADER,
    ControlRecordType,
)
from kafkacore.protocol.types import MalformedMessage
from kafkacore.raft.types import voter_id_order
from kafkacore.record import BatchHeader, batch_header
from kafkacore.record.layout import (
    CONTROL_FLAG_MASK,
    LENGTH_OFFSET,
    LOG_OVERHEAD,
    RECORD_BATCH_OVERHEAD,
)

__all__ = [
    "ControlRecord",
    "RaftBatch",
    "build_control_batch",
    "build_data_batch",
    "control_batch_size",
    "iter_batches",
    "kraft_version_record",
    "leader_change_message",
    "snapshot_footer",
    "snapshot_header",
]

#: The version each control message is written at (``ControlRecordUtils``).
CONTROL_WRITE_VERSION = 0
_LENGTH = struct.Struct(">i")


@dataclass(frozen=True)
class ControlRecord:
    """A decoded KRaft control record: its type and message (a ``raft_records`` struct)."""

    type: ControlRecordType
    message: Any


@dataclass(frozen=True)
class RaftBatch:
    """One batch of the metadata log: its header and either its data record values
    (``control`` empty) or its control records."""

    header: BatchHeader
    values: tuple[bytes | None, ...]
    control: tuple[ControlRecord, ...]

    @property
    def base_offset(self) -> int:
        return self.header.base_offset

    @property
    def last_offset(self) -> int:
        return self.header.last_offset

    @property
    def epoch(self) -> int:
        return self.header.partition_leader_epoch

    @property
    def is_control(self) -> bool:
        return self.header.is_control


def build_data_batch(
    base_offset: int, epoch: int, append_time_ms: int, values: Sequence[bytes]
) -> bytes:
    """One data batch of ``values`` at ``base_offset`` (Kafka's ``BatchBuilder``)."""
    return backend.build_batch(
        [(base_offset + i, append_time_ms, None, value, []) for i, value in enumerate(values)],
        base_offset=base_offset,
        partition_leader_epoch=epoch,
    )


def build_control_batch(
    base_offset: int, epoch: int, timestamp_ms: int, records: Sequence[ControlRecord]
) -> bytes:
    """One control batch holding ``records`` in order (each message written at version 0)."""
    rows: list[tuple[int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]] = []
    for i, record in enumerate(records):
        key = CONTROL_RECORD_KEY.encode(CONTROL_RECORD_KEY.cls(version=0, type=int(record.type)), 0)
        value = CONTROL_VALUES[record.type].encode(record.message, CONTROL_WRITE_VERSION)
        rows.append((base_offset + i, timestamp_ms, key, value, []))
    return backend.build_batch(
        rows, base_offset=base_offset, partition_leader_epoch=epoch, control=True
    )


def control_batch_size(records: Sequence[ControlRecord]) -> int:
    """The size of :func:`build_control_batch` of ``records`` (its bytes, measured)."""
    return len(build_control_batch(0, 0, 0, records))


def leader_change_message(leader_id: int, voters: Sequence[int], granting: Sequence[int]) -> Any:
    """The LeaderChangeMessage a new leader writes (Kafka's ``LeaderState``: version 0;
    the voters in Kafka's ``HashMap`` order, the granting voters - a ``Set.copyOf``, whose
    order varies from JVM to JVM - ascending)."""
    cls: Any = LEADER_CHANGE.cls
    return cls(
        version=CONTROL_WRITE_VERSION,
        leader_id=leader_id,
        voters=[cls.Voter(voter_id=v) for v in voter_id_order(voters)],
        granting_voters=[cls.Voter(voter_id=v) for v in sorted(granting)],
    )


def snapshot_header(last_contained_log_timestamp: int) -> Any:
    return SNAPSHOT_HEADER.cls(
        version=CONTROL_WRITE_VERSION, last_contained_log_timestamp=last_contained_log_timestamp
    )


def snapshot_footer() -> Any:
    return SNAPSHOT_FOOTER.cls(version=CONTROL_WRITE_VERSION)


def kraft_version_record(kraft_version: int) -> Any:
    return KRAFT_VERSION.cls(version=CONTROL_WRITE_VERSION, k_raft_version=kraft_version)


def _decode_control(key: bytes | None, value: bytes | None, where: str) -> ControlRecord | None:
    """The KRaft control record of a control batch's record (``None`` for transaction
    markers, which Raft ignores)."""
    if key is None or len(key) < 4:
        raise CorruptRecordError(f"{where}: control record without a valid key")
    control_type = struct.unpack_from(">h", key, 2)[0]
    try:
        kind = ControlRecordType(control_type)
    except ValueError:
        return None  # Kafka's UNKNOWN: skipped
    schema = CONTROL_VALUES.get(kind)
    if schema is None:
        return None  # ABORT/COMMIT markers
    if value is None or len(value) < 2:
        raise CorruptRecordError(f"{where}: control record {kind.name} without a value")
    # the message carries its own version first; Kafka reads it at that version
    version = struct.unpack_from(">h", value, 0)[0]
    if version not in schema.valid:
        version = schema.valid.hi
    try:
        return ControlRecord(kind, schema.decode(value, version))
    except MalformedMessage as exc:
        raise CorruptRecordError(f"{where}: bad {kind.name} record: {exc}") from None


def iter_batches(
    buf: bytes | memoryview, *, decode: bool = True, values: bool = True
) -> Iterator[RaftBatch]:
    """The complete batches of ``buf`` in order (a partial batch at the end is left out,
    as a fetch response may end in one). ``decode=False`` leaves values and control
    records empty (headers only); ``values=False`` decodes control batches only."""
    data = bytes(buf)
    pos = 0
    while pos + RECORD_BATCH_OVERHEAD <= len(data):
        size = _LENGTH.unpack_from(data, pos + LENGTH_OFFSET)[0] + LOG_OVERHEAD
        if size < RECORD_BATCH_OVERHEAD:
            raise CorruptRecordError(f"batch size {size} too small at position {pos}")
        if pos + size > len(data):
            return
        header = batch_header(data, pos)
        record_values: tuple[bytes | None, ...] = ()
        control: tuple[ControlRecord, ...] = ()
        is_control = bool(header.attributes & CONTROL_FLAG_MASK)
        if decode and (values or is_control):
            records = backend.batch_records(data, pos)
            if is_control:
                decoded = (
                    _decode_control(r[2], r[3], f"batch at offset {header.base_offset}")
                    for r in records
                )
                control = tuple(c for c in decoded if c is not None)
            else:
                record_values = tuple(r[3] for r in records)
        yield RaftBatch(header, record_values, control)
        pos += size


def complete_prefix(buf: bytes) -> bytes:
    """The whole batches at the start of ``buf`` (a fetch may end in a partial one)."""
    pos = 0
    while pos + RECORD_BATCH_OVERHEAD <= len(buf):
        size = _LENGTH.unpack_from(buf, pos + LENGTH_OFFSET)[0] + LOG_OVERHEAD
        if size < RECORD_BATCH_OVERHEAD or pos + size > len(buf):
            break
        pos += size
    return buf[:pos]
