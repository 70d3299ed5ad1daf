"""``kafka-dump-log``, offline: Apache Kafka's ``DumpLogSegments``, line for line.

Reads segment files (``.log``, ``.index``, ``.timeindex``, ``.txnindex``, producer-state
``.snapshot``, KRaft ``.checkpoint`` snapshots) and prints exactly what Kafka 4.x's
``org.apache.kafka.tools.DumpLogSegments`` prints for the same files and options (checked
line for line against Kafka 4.3.1 by ``tests/interop/test_dump_log_vs_kafka.py``):

* ``Dumping <file>`` per file (the path as ``java.io.File`` normalises it), then
  ``Log starting offset: N`` (or the snapshot line) for data files;
* one line per batch: v2 batches with ``baseOffset: … isvalid: …`` (``deleteHorizonMs``
  as ``OptionalLong[..]``/``OptionalLong.empty``), legacy v0/v1 message sets with
  ``offset: …``; ``isvalid`` is the CRC check (CRC-32C over bytes 21..end for v2, CRC-32
  over magic..end for v0/v1), nothing more, as in Kafka;
* with ``deep_iteration``/``print_data_log``: one ``| offset: …`` line per record (keys
  and values decoded as UTF-8 with replacement, like Kafka's ``StringDecoder``), control
  records rendered as Kafka renders them (``endTxnMarker: COMMIT coordinatorEpoch: N``,
  and the KRaft control records as JSON), legacy records with ``isValid``/``crc``;
* with ``offsets_decoder`` (``--offsets-decoder``): keys and values as ``__consumer_offsets``
  records, in the JSON of Kafka's ``OffsetsMessageParser``
  (:func:`~kafkacore.tools.offsets_records.offsets_message_text`);
* with ``transaction_log_decoder`` (``--transaction-log-decoder``): keys and values as
  ``__transaction_state`` records, in the JSON of Kafka 4.x's
  ``TransactionLogMessageParser``
  (:func:`~kafkacore.coordinator.txn_records.transaction_log_message_text`);
* index entries (``offset: N position: P``), time-index entries (``timestamp: T offset:
  O``), the verification and sanity-check messages, and at the end, on stderr, the
  collected ``Mismatches in :…``, ``Found timestamp mismatch in :…``, ``Found out of
  order timestamp in :…``, ``The following indexed offsets are not found in :…`` and
  ``Non-consecutive offsets in …`` reports, in the order Kafka's ``java.util.HashMap``
  and ``TreeMap`` iterate them.

kafkacore's one addition: the checkpoint files of a log directory
(``recovery-point-offset-checkpoint``, ``leader-epoch-checkpoint``, ``partition.metadata``,
``meta.properties``, …), which Kafka's tool ignores, are printed parsed, in the format of
:mod:`kafkacore.tools._checkpoint_files`.

Where Kafka's tool throws (a corrupt batch size, an index entry pointing past the log,
a malformed record, …) and the JVM exits with a stack trace, :func:`dump_files` raises
:class:`DumpFailure` after the same partial output; its ``kind`` names the Java
exception and its message is Kafka's where Kafka builds one.

The backend reads the headers (``batch_header``, ``legacy_header``), decodes v2 records
(``batch_records``), decompresses legacy wrappers and computes the CRCs. Records of a
batch whose CRC does not match are still printed (Kafka does not check the CRC when
iterating): the batch is decoded with the CRC patched in a private copy. Legacy messages
are walked here, as Kafka's ``AbstractLegacyRecordBatch`` walks them, because Kafka prints
each inner message's own CRC and validity.

Files are read in windows of a few MiB, never whole (indexes excepted, which Kafka
memory-maps); on a terminal, files over 64 MiB show their progress on stderr.

Not thread-safe: one :func:`dump_files` call per thread, each with its own streams.
"""

from __future__ import annotations

import bisect
import os
import struct
import sys
import time
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, TextIO

from kafkacore._java import (
    INT_MAX,
    JavaException,
    absolute_path,
    base_offset_of,
    decode_utf8,
    decrement_sequence,
    file_name,
    i32,
    increment_sequence,
    java_bool,
    java_hash_map_order,
    java_path,
    java_split,
    java_string_hash,
    parent,
    parse_java_integer,
)
from kafkacore.coordinator.txn_records import transaction_log_message_text
from kafkacore.errors import (
    CorruptCheckpointError,
    CorruptRecordError,
    StorageIOError,
    UnsupportedCompressionError,
)
from kafkacore.log.producer_state import CorruptSnapshotError, parse_snapshot
from kafkacore.native import Backend
from kafkacore.native import backend as _default_backend
from kafkacore.pure.compression import LZ4, fix_lz4_header_checksum
from kafkacore.pure.index import WARM_SECTION_BYTES, largest_lower_bound_slot
from kafkacore.record import BatchHeader
from kafkacore.record.layout import (
    ATTRIBUTES_OFFSET,
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    CRC_OFFSET,
    DELETE_HORIZON_FLAG_MASK,
    HEADER_SIZE_UP_TO_MAGIC,
    LEGACY_MAGIC_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    RECORD_BATCH_OVERHEAD,
    RECORD_OVERHEAD_V0,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)
from kafkacore.tools._checkpoint_files import CHECKPOINT_FILE_NAMES, dump_checkpoint_file
from kafkacore.tools._control_records import control_record_text
from kafkacore.tools.offsets_records import offsets_message_text

if TYPE_CHECKING:
    from kafkacore._native import LegacyHeaderTuple, RecordTuple

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "INT_MAX",
    "DumpFailure",
    "DumpOptions",
    "DumpUsageError",
    "dump_files",
    "files_option",
]


def _report_order(report: Mapping[str, object]) -> list[str]:
    """The paths of one of ``DumpLogSegments``' report maps in its iteration order (a
    ``HashMap`` filled with ``computeIfAbsent``)."""
    return java_hash_map_order(list(report), java_string_hash, compute_if_absent=True)


# --- Kafka's layout constants (Records, DefaultRecordBatch, LegacyRecord) ----------------


DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024  # --max-message-size default
OFFSET_INDEX_ENTRY = 8
TIME_INDEX_ENTRY = 12
TXN_INDEX_ENTRY = 34
PROGRESS_MIN_BYTES = 64 * 1024 * 1024

_CODEC_NAMES = ("none", "gzip", "snappy", "lz4", "zstd")
_BOOTSTRAP_SNAPSHOT = "bootstrap.checkpoint"
_SNAPSHOT_OFFSET_WIDTH = 20
_SNAPSHOT_EPOCH_WIDTH = 10

_LOG_HEADER = struct.Struct(">qi")  # offset, size
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_OFFSET_ENTRY = struct.Struct(">ii")  # relative offset, position
_TIME_ENTRY = struct.Struct(">qi")  # timestamp, relative offset
_TXN_ENTRY = struct.Struct(">bxqqqq")  # version (first byte only, as AbortedTxn reads it), …


class DumpUsageError(ValueError):
    """The request cannot start (a named file is missing, a size is out of range):
    raised before anything is printed."""


class DumpFailure(JavaException):
    """Where Kafka's ``DumpLogSegments`` throws and stops (the JVM exits with status 1).
    ``kind`` is the simple name of the Java exception; the message is Kafka's where Kafka
    builds one."""


@dataclass(frozen=True)
class DumpOptions:
    """Kafka's options, by their Kafka names (``--print-data-log`` → ``print_data_log``)."""

    print_data_log: bool = False
    deep_iteration: bool = False
    verify_index_only: bool = False
    index_sanity_check: bool = False
    skip_record_metadata: bool = False
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    max_bytes: int = INT_MAX
    offsets_decoder: bool = False
    """``--offsets-decoder``: print records as ``__consumer_offsets`` records
    (:func:`~kafkacore.tools.offsets_records.offsets_message_text`)."""
    transaction_log_decoder: bool = False
    """``--transaction-log-decoder``: print records as ``__transaction_state`` records
    (:func:`~kafkacore.coordinator.txn_records.transaction_log_message_text`); the
    offsets decoder wins when both are set, as in Kafka."""
    progress: bool | None = None
    """Progress of large files on ``err``: ``None`` shows it when ``err`` is a terminal."""

    @property
    def prints_data(self) -> bool:
        """Kafka: a decoder option implies ``--print-data-log``."""
        return self.print_data_log or self.offsets_decoder or self.transaction_log_decoder

    @property
    def is_deep_iteration(self) -> bool:
        """Kafka: ``--print-data-log`` (or a decoder) implies ``--deep-iteration``."""
        return self.deep_iteration or self.prints_data


# --- files ---------------------------------------------------------------------------


class _BatchRef(NamedTuple):
    """A batch (or legacy message) located by ``FileLogInputStream``."""

    position: int
    offset: int  # the offset field of the log header (v2: base offset; v0/v1: the offset)
    size: int  # bytes in the file, LOG_OVERHEAD included
    magic: int  # signed, as Java reads the byte


class _LogFile:
    """A ``.log`` opened read-only, with ``FileRecords``' batch walk.

    Reads go through a window of ``WINDOW`` bytes (or one batch, if larger), so a
    sequential walk reads the file once in large chunks and never holds it whole.
    """

    WINDOW = 4 * 1024 * 1024

    def __init__(self, path: str) -> None:
        self.path = path
        try:
            self._file = open(path, "rb")  # noqa: SIM115 — closed by close()
        except FileNotFoundError:
            raise DumpFailure("NoSuchFileException", path) from None
        except OSError as exc:
            raise DumpFailure("IOException", f"{path}: {exc.strerror}") from None
        self.size = os.fstat(self._file.fileno()).st_size
        self._window = b""
        self._window_start = 0

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> _LogFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def view(self, position: int, length: int) -> tuple[bytes, int]:
        """A buffer holding the file's bytes ``[position, position + length)`` (fewer at
        the end of the file), and the index of ``position`` in it."""
        end = min(position + length, self.size)
        start = self._window_start
        if start <= position and end <= start + len(self._window):
            return self._window, position - start
        self._file.seek(position)
        self._window = self._file.read(max(end - position, self.WINDOW))
        self._window_start = position
        return self._window, 0

    def read(self, position: int, length: int) -> bytes:
        buf, i = self.view(position, length)
        return buf[i : i + length]

    def check_slice(self, position: int, size: int) -> int:
        """``FileRecords.slice(position, size)``: its end position, or Kafka's exception."""
        if position < 0:
            raise DumpFailure(
                "IllegalArgumentException", f"Invalid position: {position} in read from {self}"
            )
        if position > self.size:
            raise DumpFailure(
                "IllegalArgumentException",
                f"Slice from position {position} exceeds end position of {self}",
            )
        if size < 0:
            raise DumpFailure(
                "IllegalArgumentException", f"Invalid size: {size} in read from {self}"
            )
        end = position + size
        return self.size if end > self.size or end > INT_MAX else end

    def batches(self, start: int, end: int) -> Iterator[_BatchRef]:
        """``FileLogInputStream.nextBatch`` from ``start`` to ``end``: stops when fewer
        than 18 bytes remain or at a partial batch; a size below 14 is corrupt."""
        position = start
        while position < end - HEADER_SIZE_UP_TO_MAGIC:
            buf, i = self.view(position, HEADER_SIZE_UP_TO_MAGIC)
            offset, size = _LOG_HEADER.unpack_from(buf, i)
            if size < RECORD_OVERHEAD_V0:
                raise DumpFailure(
                    "CorruptRecordException",
                    f"Found record size {size} smaller than minimum record overhead "
                    f"({RECORD_OVERHEAD_V0}) in file {self.path}.",
                )
            if position > end - LOG_OVERHEAD - size:
                return
            magic = buf[i + MAGIC_OFFSET]
            yield _BatchRef(
                position, offset, size + LOG_OVERHEAD, magic - 256 if magic > 127 else magic
            )
            position += size + LOG_OVERHEAD

    def __str__(self) -> str:
        return f"FileRecords(size={self.size}, file={self.path}, start=0, end={INT_MAX})"


def _read_index(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        # Kafka's read-only index open creates the file, then refuses max index size -1.
        raise DumpFailure("IllegalArgumentException", "Invalid max index size: -1") from None
    except OSError as exc:
        raise DumpFailure("IOException", f"{path}: {exc.strerror}") from None


class _OffsetIndex:
    """An ``.index`` as Kafka's read-only ``OffsetIndex`` sees it: ``length // 8``
    entries, relative offsets and positions read as signed ints."""

    def __init__(self, path: str, base_offset: int) -> None:
        self.base_offset = base_offset
        self.data = _read_index(path)
        self.length = len(self.data)
        self.entries = self.length // OFFSET_INDEX_ENTRY

    def entry(self, n: int) -> tuple[int, int]:
        relative, position = _OFFSET_ENTRY.unpack_from(self.data, n * OFFSET_INDEX_ENTRY)
        return self.base_offset + relative, position

    def lookup(self, target: int) -> tuple[int, int]:
        """``OffsetIndex.lookup``: the largest entry with offset <= target, searched as
        ``AbstractIndex`` does (warm tail first); ``(base_offset, 0)`` if none."""
        slot = largest_lower_bound_slot(
            self.entries,
            WARM_SECTION_BYTES // OFFSET_INDEX_ENTRY,
            lambda n: self.entry(n)[0],
            target,
        )
        return (self.base_offset, 0) if slot == -1 else self.entry(slot)


# --- records ---------------------------------------------------------------------------


class _Record(NamedTuple):
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    key_size: int
    value_size: int
    sequence: int  # v2 only
    header_keys: list[str]  # v2 only
    legacy_crc: int | None  # v0/v1 only: the message's own CRC …
    legacy_valid: bool  # … and whether it matches


class _Progress:
    """``file: 41% (420/1024 MiB)`` on a terminal's stderr, rewritten in place."""

    def __init__(self, err: TextIO, label: str, total: int, enabled: bool) -> None:
        self._err = err
        self._label = label
        self._total = total
        self._enabled = enabled and total > PROGRESS_MIN_BYTES
        self._next = 0.0

    def update(self, done: int) -> None:
        if not self._enabled:
            return
        now = time.monotonic()
        if now < self._next:
            return
        self._next = now + 0.25
        mib = 1024 * 1024
        self._err.write(
            f"\r{self._label}: {done * 100 // self._total}% "
            f"({done // mib}/{self._total // mib} MiB)\x1b[K"
        )
        self._err.flush()

    def done(self) -> None:
        if self._enabled and self._next:
            self._err.write("\r\x1b[K")
            self._err.flush()


class _Dumper:
    def __init__(self, options: DumpOptions, out: TextIO, err: TextIO, be: Backend) -> None:
        self.opts = options
        self.out = out
        self.err = err
        self.be = be
        progress = options.progress
        self.progress = progress if progress is not None else _isatty(err)
        # The reports printed at the end, keyed by absolute path, in insertion order;
        # printed in java.util.HashMap order.
        self.index_mismatches: dict[str, dict[int, int]] = {}  # TreeMap, descending
        self.non_consecutive: dict[str, dict[int, int]] = {}  # TreeMap, ascending
        self.time_mismatches: dict[str, list[tuple[int, int]]] = {}
        self.time_out_of_order: dict[str, list[tuple[int, int]]] = {}
        self.time_not_found: dict[str, list[tuple[int, int]]] = {}

    def warn(self, line: str) -> None:
        self.out.flush()
        self.err.write(line + "\n")

    # -- main loop --

    def run(self, files: Sequence[str]) -> None:
        for arg in files:
            path = java_path(arg)
            self.out.write(f"Dumping {path}\n")
            name = file_name(path)
            dot = name.rfind(".")
            suffix = name[dot:] if dot >= 0 else ""
            if name in CHECKPOINT_FILE_NAMES:
                self.dump_checkpoint(path, name)
            elif suffix in (".log", ".checkpoint"):
                self.dump_log(path)
            elif suffix == ".index":
                self.dump_index(path)
            elif suffix == ".timeindex":
                self.dump_time_index(path)
            elif suffix == ".txnindex":
                self.dump_txn_index(path)
            elif suffix == ".snapshot":
                self.dump_producer_snapshot(path)
            else:
                self.warn(f"Ignoring unknown file {path}")
        self.print_reports()

    def print_reports(self) -> None:
        self.out.flush()
        lines: list[str] = []
        for path in _report_order(self.index_mismatches):
            lines.append(f"Mismatches in :{path}")
            for index_offset, log_offset in sorted(
                self.index_mismatches[path].items(), reverse=True
            ):
                lines.append(f"  Index offset: {index_offset}, log offset: {log_offset}")
        for path in _report_order(self.time_mismatches):
            lines.append(f"Found timestamp mismatch in :{path}")
            for index_ts, log_ts in self.time_mismatches[path]:
                lines.append(f"  Index timestamp: {index_ts}, log timestamp: {log_ts}")
        for path in _report_order(self.time_out_of_order):
            lines.append(f"Found out of order timestamp in :{path}")
            for index_ts, previous_ts in self.time_out_of_order[path]:
                lines.append(
                    f"  Index timestamp: {index_ts}, Previously indexed timestamp: {previous_ts}"
                )
        for path in _report_order(self.time_not_found):
            lines.append(f"The following indexed offsets are not found in :{path}")
            for index_offset, log_offset in self.time_not_found[path]:
                lines.append(f"Indexed offset: {index_offset}, found log offset: {log_offset}")
        for path in _report_order(self.non_consecutive):
            lines.append(f"Non-consecutive offsets in {path}")
            for previous, offset in sorted(self.non_consecutive[path].items()):
                lines.append(f"  {previous} is followed by {offset}")
        if lines:
            self.err.write("\n".join(lines) + "\n")

    # -- checkpoint files (kafkacore's addition; Kafka's tool ignores them) --

    def dump_checkpoint(self, path: str, name: str) -> None:
        try:
            dump_checkpoint_file(path, name, self.out)
        except (CorruptCheckpointError, StorageIOError) as exc:
            self.warn(str(exc))

    # -- .log and .checkpoint --

    def dump_log(self, path: str) -> None:
        name = file_name(path)
        if name.endswith(".log"):
            self.out.write(f"Log starting offset: {base_offset_of(name)}\n")
        elif name == _BOOTSTRAP_SNAPSHOT:
            self.out.write("KRaft bootstrap snapshot\n")
        else:
            offset, epoch = _snapshot_id(name)
            self.out.write(f"Snapshot end offset: {offset}, epoch: {epoch}\n")
        max_bytes = self.opts.max_bytes
        abs_path = absolute_path(path)
        with _LogFile(path) as log:
            end = log.check_slice(0, max_bytes)
            progress = _Progress(self.err, name, end, self.progress)
            valid_bytes = 0
            last_offset = -1
            for ref in log.batches(0, end):
                self.print_batch(log, ref, valid_bytes)
                if self.opts.is_deep_iteration:
                    last_offset = self.print_records(log, ref, abs_path, last_offset)
                valid_bytes += ref.size
                progress.update(valid_bytes)
            progress.done()
            trailing = end - valid_bytes
            if trailing > 0 and max_bytes == INT_MAX:
                self.out.write(f"Found {trailing} invalid bytes at the end of {name}\n")

    def print_batch(self, log: _LogFile, ref: _BatchRef, position: int) -> None:
        if ref.magic >= 2:
            h = self.v2_header(log, ref)
            attributes = h.attributes & 0xFF
            base_sequence = h.base_sequence
            last_sequence = (
                -1
                if base_sequence == -1
                else increment_sequence(base_sequence, h.last_offset_delta)
            )
            delete_horizon = (
                f"OptionalLong[{h.base_timestamp}]"
                if attributes & DELETE_HORIZON_FLAG_MASK
                else "OptionalLong.empty"
            )
            self.out.write(
                f"baseOffset: {ref.offset} lastOffset: {h.last_offset} count: {h.records_count}"
                f" baseSequence: {base_sequence} lastSequence: {last_sequence}"
                f" producerId: {h.producer_id} producerEpoch: {h.producer_epoch}"
                f" partitionLeaderEpoch: {h.partition_leader_epoch}"
                f" isTransactional: {java_bool(bool(attributes & TRANSACTIONAL_FLAG_MASK))}"
                f" isControl: {java_bool(bool(attributes & CONTROL_FLAG_MASK))}"
                f" deleteHorizonMs: {delete_horizon}"
            )
            timestamp_type = "LogAppendTime" if attributes & TIMESTAMP_TYPE_MASK else "CreateTime"
            max_timestamp, codec, crc = h.max_timestamp, attributes & COMPRESSION_CODEC_MASK, h.crc
        else:
            lh = self.legacy_header(log, ref)
            self.out.write(f"offset: {ref.offset}")
            timestamp_type = _legacy_timestamp_type(ref.magic, lh[4])
            max_timestamp = -1 if ref.magic == 0 else lh[5]
            codec, crc = lh[4] & COMPRESSION_CODEC_MASK, lh[2]
        line = (
            f" position: {position} {timestamp_type}: {max_timestamp} size: {ref.size}"
            f" magic: {ref.magic} compresscodec: {_codec_name(codec)} crc: {crc}"
            f" isvalid: {java_bool(self.is_valid(log, ref, crc))}\n"
        )
        self.out.write(line)

    def v2_header(self, log: _LogFile, ref: _BatchRef) -> BatchHeader:
        buf, i = log.view(ref.position, max(ref.size, RECORD_BATCH_OVERHEAD))
        if ref.magic != 2:
            raise DumpFailure(
                "CorruptRecordException",
                f"unsupported magic {ref.magic} at position {ref.position} in {log.path}",
            )
        if len(buf) - i < RECORD_BATCH_OVERHEAD:
            raise DumpFailure(
                "KafkaException",
                f"Failed to load record batch at position {ref.position} from {log}",
            )
        try:
            return BatchHeader._make(self.be.batch_header(buf, i))
        except CorruptRecordError as exc:
            raise DumpFailure("CorruptRecordException", f"{log.path}: {exc}") from None

    def legacy_header(self, log: _LogFile, ref: _BatchRef) -> LegacyHeaderTuple:
        buf, i = log.view(ref.position, ref.size)
        try:
            return self.be.legacy_header(buf, i)
        except CorruptRecordError as exc:
            raise DumpFailure("CorruptRecordException", f"{log.path}: {exc}") from None

    def is_valid(self, log: _LogFile, ref: _BatchRef, stored_crc: int) -> bool:
        """``RecordBatch.isValid``: large enough and the stored CRC matches."""
        buf, i = log.view(ref.position, ref.size)
        end = i + ref.size
        if ref.magic >= 2:
            if ref.size < RECORD_BATCH_OVERHEAD:
                return False
            return self.be.crc32c(buf[i + ATTRIBUTES_OFFSET : end]) == stored_crc
        return self.be.crc32(buf[i + LOG_OVERHEAD + LEGACY_MAGIC_OFFSET : end]) == stored_crc

    def print_records(self, log: _LogFile, ref: _BatchRef, abs_path: str, last_offset: int) -> int:
        opts = self.opts
        if ref.magic >= 2:
            h = self.v2_header(log, ref)
            attributes = h.attributes & 0xFF
            is_control = bool(attributes & CONTROL_FLAG_MASK)
            timestamp_type = "LogAppendTime" if attributes & TIMESTAMP_TYPE_MASK else "CreateTime"
            records: Iterator[_Record] = iter(self.v2_records(log, ref, h))
        else:
            lh = self.legacy_header(log, ref)
            is_control = False
            timestamp_type = _legacy_timestamp_type(ref.magic, lh[4])
            records = self.legacy_records(log, ref)
        out = self.out
        for rec in records:
            if rec.offset != last_offset + 1:
                self.non_consecutive.setdefault(abs_path, {})[last_offset] = rec.offset
            last_offset = rec.offset
            parts: list[str] = []
            if not opts.skip_record_metadata:
                parts.append(
                    f"| offset: {rec.offset} {timestamp_type}: {rec.timestamp}"
                    f" keySize: {rec.key_size} valueSize: {rec.value_size}"
                )
                if ref.magic >= 2:
                    parts.append(
                        f" sequence: {rec.sequence} headerKeys: [{','.join(rec.header_keys)}]"
                    )
                if rec.legacy_crc is not None:
                    parts.append(f" isValid: {java_bool(rec.legacy_valid)} crc: {rec.legacy_crc}")
                if is_control:  # Kafka prints the metadata before parsing the control record
                    out.write("".join(parts))
                    parts = [control_record_text(rec.key, rec.value)]
            if opts.prints_data and not is_control:
                prefix = "| " if opts.skip_record_metadata else " "
                key_text: str | None
                value_text: str | None
                if opts.offsets_decoder or opts.transaction_log_decoder:
                    out.write("".join(parts))  # Kafka has printed the metadata if decoding fails
                    parts = []
                    decode = (
                        offsets_message_text
                        if opts.offsets_decoder
                        else transaction_log_message_text
                    )
                    key_text, value_text = decode(rec.key, rec.value, rec.offset)
                else:
                    key_text = None if rec.key is None else decode_utf8(rec.key)
                    value_text = None if rec.value is None else decode_utf8(rec.value)
                if key_text is not None:
                    parts.append(f"{prefix}key: {key_text}")
                    prefix = " "
                if value_text is not None:
                    parts.append(f"{prefix}payload: {value_text}")
            parts.append("\n")
            out.write("".join(parts))
        return last_offset

    def v2_records(self, log: _LogFile, ref: _BatchRef, h: BatchHeader) -> list[_Record]:
        """The records of a v2 batch, as Kafka's iterator yields them (no CRC check)."""
        count = h.records_count
        if count == 0:
            return []
        if count < 0:
            raise DumpFailure(
                "InvalidRecordException", f"Found invalid record count {count} in magic v2 batch"
            )
        buf, i = log.view(ref.position, ref.size)
        try:
            tuples = self.be.batch_records(buf, i)
        except CorruptRecordError as exc:
            tuples = self._records_despite_crc(buf, i, ref, h, exc)
        base_offset, base_sequence = h.base_offset, h.base_sequence
        records = []
        for offset, timestamp, key, value, headers in tuples:
            records.append(
                _Record(
                    offset,
                    timestamp,
                    key,
                    value,
                    -1 if key is None else len(key),
                    -1 if value is None else len(value),
                    -1
                    if base_sequence < 0
                    else increment_sequence(base_sequence, i32(offset - base_offset)),
                    [k for k, _ in headers],
                    None,
                    False,
                )
            )
        return records

    def _records_despite_crc(
        self, buf: bytes, i: int, ref: _BatchRef, h: BatchHeader, exc: CorruptRecordError
    ) -> list[RecordTuple]:
        """Kafka iterates records without checking the CRC: decode a copy with the right one."""
        batch = bytearray(buf[i : i + ref.size])
        computed = self.be.crc32c(bytes(batch[ATTRIBUTES_OFFSET:]))
        if computed == h.crc:  # the CRC is right: the records themselves are malformed
            raise DumpFailure("InvalidRecordException", str(exc)) from None
        _U32.pack_into(batch, CRC_OFFSET, computed)
        try:
            return self.be.batch_records(bytes(batch), 0)
        except CorruptRecordError as again:
            raise DumpFailure(
                "InvalidRecordException", f"{again} (batch at position {ref.position})"
            ) from None

    def legacy_records(self, log: _LogFile, ref: _BatchRef) -> Iterator[_Record]:
        """``AbstractLegacyRecordBatch.iterator()``: the message itself, or the inner
        messages of a compressed wrapper with absolute offsets."""
        wrapper_bytes = log.read(ref.position + LOG_OVERHEAD, ref.size - LOG_OVERHEAD)
        wrapper = _LegacyMessage(ref.offset, wrapper_bytes, self.be)
        if wrapper.codec == 0:
            yield wrapper.record(ref.offset, None)
            return
        if wrapper.magic not in (0, 1):
            raise DumpFailure(
                "InvalidRecordException",
                f"Invalid wrapper magic found in legacy deep record iterator {wrapper.magic}",
            )
        if wrapper.codec == 4:
            raise DumpFailure(
                "InvalidRecordException",
                "Invalid wrapper compressionType found in legacy deep record iterator "
                f"{wrapper.magic}",
            )
        value = wrapper.value()
        if value is None:
            raise DumpFailure(
                "InvalidRecordException",
                f"Found invalid compressed record set with null value (magic = {wrapper.magic})",
            )
        if wrapper.codec == LZ4 and wrapper.magic == 0:
            value = fix_lz4_header_checksum(value)
        try:
            inner_set = self.be.decompress(wrapper.codec, value)
        except (CorruptRecordError, UnsupportedCompressionError) as exc:
            raise DumpFailure("KafkaException", str(exc)) from None
        inner = list(_legacy_inner_messages(inner_set, self.be))
        if not inner:
            raise DumpFailure(
                "InvalidRecordException",
                "Found invalid compressed record set with no inner records",
            )
        wrapper_timestamp = wrapper.timestamp() if wrapper.log_append_time else None
        base = -1
        if wrapper.magic == 1 and ref.offset != 0:
            last_inner = inner[-1].offset
            if ref.offset < last_inner:
                raise DumpFailure(
                    "InvalidRecordException",
                    "Found invalid wrapper offset in compressed v1 message set, wrapper offset "
                    f"'{ref.offset}' is less than the last inner message offset '{last_inner}' "
                    "and it is not zero.",
                )
            base = ref.offset - last_inner
        elif wrapper.magic == 1:
            base = 0  # some librdkafka versions leave the wrapper offset at 0
        for message in inner:
            offset = base + message.offset if wrapper.magic == 1 else message.offset
            if _codec_name(message.codec) != "none":
                raise DumpFailure("InvalidRecordException", "Inner messages must not be compressed")
            yield message.record(offset, wrapper_timestamp if message.magic == 1 else None)

    # -- .index --

    def dump_index(self, path: str) -> None:
        name = file_name(path)
        base_offset = base_offset_of(name)
        abs_path = absolute_path(path)
        log_path = f"{parent(abs_path).rstrip('/')}/{java_split(name, '.')[0]}.log"
        with _LogFile(log_path) as log:
            index = _OffsetIndex(path, base_offset)
            if index.entries == 0:
                self.out.write(f"{path} is empty.\n")
                return
            if self.opts.index_sanity_check:
                _offset_index_sanity_check(index, abs_path)
                self.out.write(f"{path} passed sanity check.\n")
                return
            for n in range(index.entries):
                offset, position = index.entry(n)
                # A crash can leave the preallocated tail zeroed: stop at the first such entry.
                if offset == base_offset and n > 0:
                    return
                end = log.check_slice(position, self.opts.max_message_size)
                first = next(log.batches(position, end), None)
                if first is None:
                    raise DumpFailure("NoSuchElementException", f"no batch at position {position}")
                batch_last_offset = self.last_offset(log, first)
                if batch_last_offset != offset:
                    self.index_mismatches.setdefault(abs_path, {})[offset] = batch_last_offset
                if not self.opts.verify_index_only:
                    self.out.write(f"offset: {offset} position: {position}\n")

    def last_offset(self, log: _LogFile, ref: _BatchRef) -> int:
        if ref.magic >= 2:
            h = self.v2_header(log, ref)
            return h.last_offset
        return ref.offset

    # -- .timeindex --

    def dump_time_index(self, path: str) -> None:
        name = file_name(path)
        base_offset = base_offset_of(name)
        abs_path = absolute_path(path)
        stem = f"{parent(abs_path).rstrip('/')}/{java_split(name, '.')[0]}"
        with _LogFile(f"{stem}.log") as log:
            index = _OffsetIndex(f"{stem}.index", base_offset)
            data = _read_index(path)
            entries = len(data) // TIME_INDEX_ENTRY
            if self.opts.index_sanity_check:
                _time_index_sanity_check(data, base_offset, abs_path)
                self.out.write(f"{path} passed sanity check.\n")
                return
            chains = _BatchChains(log, self)
            previous_timestamp = -1
            for n in range(entries):
                timestamp, relative = _TIME_ENTRY.unpack_from(data, n * TIME_INDEX_ENTRY)
                offset = base_offset + relative
                if offset == base_offset and n > 0:
                    return
                position = index.lookup(offset)[1]
                found = chains.first_with_last_offset_at_least(position, offset)
                if found is None:
                    self.time_not_found.setdefault(abs_path, []).append((offset, -1))
                elif found[1] != offset:
                    self.time_not_found.setdefault(abs_path, []).append((offset, found[1]))
                else:
                    max_timestamp = max(
                        (r.timestamp for r in self.deep_records(log, found[0])), default=-1
                    )
                    max_timestamp = max(max_timestamp, -1)
                    if max_timestamp != timestamp:
                        self.time_mismatches.setdefault(abs_path, []).append(
                            (timestamp, max_timestamp)
                        )
                    if previous_timestamp >= timestamp:
                        self.time_out_of_order.setdefault(abs_path, []).append(
                            (timestamp, previous_timestamp)
                        )
                if not self.opts.verify_index_only:
                    self.out.write(f"timestamp: {timestamp} offset: {offset}\n")
                previous_timestamp = timestamp

    def deep_records(self, log: _LogFile, ref: _BatchRef) -> Iterator[_Record]:
        if ref.magic >= 2:
            return iter(self.v2_records(log, ref, self.v2_header(log, ref)))
        return self.legacy_records(log, ref)

    # -- .txnindex --

    def dump_txn_index(self, path: str) -> None:
        name = file_name(path)
        dot = name.find(".")
        parse_java_integer(name[:dot], 64)  # UnifiedLog.offsetFromFile
        data = _read_file(path)
        for n in range(len(data) // TXN_INDEX_ENTRY):
            version, producer_id, first, last, last_stable = _TXN_ENTRY.unpack_from(
                data, n * TXN_INDEX_ENTRY
            )
            if version > 0:
                raise DumpFailure(
                    "KafkaException",
                    f"Unexpected aborted transaction version {version} in transaction index "
                    f"{absolute_path(path)}, current version is 0",
                )
            self.out.write(
                f"version: {version} producerId: {producer_id} firstOffset: {first} "
                f"lastOffset: {last} lastStableOffset: {last_stable}\n"
            )

    # -- .snapshot (producer state) --

    def dump_producer_snapshot(self, path: str) -> None:
        try:
            entries = parse_snapshot(_read_file(path), self.be.crc32c, path)
        except CorruptSnapshotError as exc:
            self.warn(str(exc.strerror))
            return
        for (
            pid,
            epoch,
            last_seq,
            last_offset,
            delta,
            timestamp,
            coordinator_epoch,
            txn_first,
        ) in entries:
            txn = f"OptionalLong[{txn_first}]" if txn_first >= 0 else "OptionalLong.empty"
            line = (
                f"producerId: {pid} producerEpoch: {epoch} coordinatorEpoch: {coordinator_epoch}"
                f" currentTxnFirstOffset: {txn} lastTimestamp: {timestamp}"
            )
            if last_offset >= 0:
                line += (
                    f" firstSequence: {decrement_sequence(last_seq, delta)}"
                    f" lastSequence: {last_seq}"
                    f" lastOffset: {last_offset} offsetDelta: {delta} timestamp: {timestamp}"
                )
            self.out.write(line + "\n")


def _read_file(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise DumpFailure("IOException", f"{path}: {exc.strerror}") from None


class _BatchChains:
    """The batch walks of Kafka's time-index check, shared.

    For each time-index entry Kafka collects every batch from the looked-up position to
    the end of the log (failing if a corrupt size lies anywhere ahead), then takes the
    first whose last offset reaches the entry's. Walks from positions on the chain from 0
    are suffixes of that one chain: it is walked once (kept in compact arrays) and each
    batch's last offset is read once. Other positions (a corrupt index) get their own walk.
    """

    _UNREAD = -(2**63)

    def __init__(self, log: _LogFile, dumper: _Dumper) -> None:
        self._log = log
        self._dumper = dumper
        self._walked = False
        self._failure: DumpFailure | None = None
        self._positions = array("q")
        self._offsets = array("q")
        self._sizes = array("q")
        self._magics = array("b")
        self._last_offsets = array("q")

    def _walk_chain(self) -> None:
        self._walked = True
        try:
            for ref in self._log.batches(0, self._log.size):
                self._positions.append(ref.position)
                self._offsets.append(ref.offset)
                self._sizes.append(ref.size)
                self._magics.append(ref.magic)
        except DumpFailure as failure:
            self._failure = failure
        self._last_offsets = array("q", [self._UNREAD]) * len(self._positions)

    def first_with_last_offset_at_least(
        self, position: int, target: int
    ) -> tuple[_BatchRef, int] | None:
        self._log.check_slice(position, INT_MAX)
        if not self._walked:
            self._walk_chain()
        start = bisect.bisect_left(self._positions, position)
        if start == len(self._positions) or self._positions[start] != position:
            refs = list(self._log.batches(position, self._log.size))  # may raise, as Kafka
            for ref in refs:
                last = self._dumper.last_offset(self._log, ref)
                if last >= target:
                    return ref, last
            return None
        if self._failure is not None:
            raise self._failure
        for n in range(start, len(self._positions)):
            ref = _BatchRef(self._positions[n], self._offsets[n], self._sizes[n], self._magics[n])
            last = self._last_offsets[n]
            if last == self._UNREAD:
                last = self._last_offsets[n] = self._dumper.last_offset(self._log, ref)
            if last >= target:
                return ref, last
        return None


# --- legacy messages -------------------------------------------------------------------


class _LegacyMessage:
    """One v0/v1 message (``LegacyRecord``) after its log header."""

    def __init__(self, offset: int, data: bytes, be: Backend) -> None:
        self.offset = offset
        self.data = data
        self.be = be
        self.magic = _signed_byte(data[LEGACY_MAGIC_OFFSET]) if len(data) > 4 else -1
        self.attributes = data[LEGACY_MAGIC_OFFSET + 1] if len(data) > 5 else 0
        self.codec = self.attributes & COMPRESSION_CODEC_MASK
        self.log_append_time = self.magic == 1 and bool(self.attributes & TIMESTAMP_TYPE_MASK)

    @property
    def _key_size_offset(self) -> int:
        return 6 if self.magic == 0 else 14

    def _sized(self, at: int) -> tuple[int, bytes | None]:
        try:
            (size,) = _I32.unpack_from(self.data, at)
        except struct.error:
            raise DumpFailure(
                "IndexOutOfBoundsException", f"legacy message field at {at}"
            ) from None
        if size < 0:
            return size, None
        if at + 4 + size > len(self.data):
            raise DumpFailure("IndexOutOfBoundsException", f"legacy message field at {at}")
        return size, self.data[at + 4 : at + 4 + size]

    def key(self) -> tuple[int, bytes | None]:
        return self._sized(self._key_size_offset)

    def value(self) -> bytes | None:
        return self._value()[1]

    def _value(self) -> tuple[int, bytes | None]:
        key_size = self.key()[0]
        return self._sized(self._key_size_offset + 4 + max(0, key_size))

    def timestamp(self) -> int:
        if self.magic == 0:
            return -1
        (ts,) = _I64.unpack_from(self.data, 6)
        return int(ts)

    def record(self, offset: int, wrapper_log_append_time: int | None) -> _Record:
        key_size, key = self.key()
        value_size, value = self._value()
        timestamp = (
            wrapper_log_append_time if wrapper_log_append_time is not None else self.timestamp()
        )
        (crc,) = _U32.unpack_from(self.data, 0)
        valid = (
            len(self.data) >= RECORD_OVERHEAD_V0
            and self.be.crc32(self.data[LEGACY_MAGIC_OFFSET:]) == crc
        )
        return _Record(offset, timestamp, key, value, key_size, value_size, -1, [], crc, valid)


def _legacy_inner_messages(data: bytes, be: Backend) -> Iterator[_LegacyMessage]:
    """``DataLogInputStream``: ``[offset][size][message]`` until the data runs out."""
    position = 0
    while position + LOG_OVERHEAD <= len(data):
        offset, size = _LOG_HEADER.unpack_from(data, position)
        if size < RECORD_OVERHEAD_V0:
            raise DumpFailure(
                "CorruptRecordException",
                f"Record size is less than the minimum record overhead ({RECORD_OVERHEAD_V0})",
            )
        start = position + LOG_OVERHEAD
        if start + size > len(data):
            return
        yield _LegacyMessage(offset, data[start : start + size], be)
        position = start + size


def _legacy_timestamp_type(magic: int, attributes: int) -> str:
    if magic == 0:
        return "NoTimestampType"
    return "LogAppendTime" if attributes & TIMESTAMP_TYPE_MASK else "CreateTime"


def _signed_byte(value: int) -> int:
    return value - 256 if value > 127 else value


def _codec_name(codec: int) -> str:
    if 0 <= codec < len(_CODEC_NAMES):
        return _CODEC_NAMES[codec]
    raise DumpFailure("IllegalArgumentException", f"Unknown compression type id: {codec}")


# --- index checks --------------------------------------------------------------------------


def _offset_index_sanity_check(index: _OffsetIndex, abs_path: str) -> None:
    """``OffsetIndex.sanityCheck``."""
    if index.entries:
        last_offset = index.entry(index.entries - 1)[0]
        if last_offset < index.base_offset:
            raise DumpFailure(
                "CorruptIndexException",
                f"Corrupt index found, index file {abs_path} has non-zero size but the last "
                f"offset is {last_offset} which is less than the base offset {index.base_offset}",
            )
    if index.length % OFFSET_INDEX_ENTRY:
        raise DumpFailure(
            "CorruptIndexException",
            f"Index file {abs_path} is corrupt, found {index.length} bytes which is neither "
            f"positive nor a multiple of {OFFSET_INDEX_ENTRY}",
        )


def _time_index_sanity_check(data: bytes, base_offset: int, abs_path: str) -> None:
    """``TimeIndex.sanityCheck``."""
    entries = len(data) // TIME_INDEX_ENTRY
    if entries:
        last_timestamp, last_relative = _TIME_ENTRY.unpack_from(
            data, (entries - 1) * TIME_INDEX_ENTRY
        )
        (first_timestamp,) = _I64.unpack_from(data, 0)
        if last_timestamp < first_timestamp:
            raise DumpFailure(
                "CorruptIndexException",
                f"Corrupt time index found, time index file ({abs_path}) has non-zero size but "
                f"the last timestamp is {last_timestamp} which is less than the first timestamp "
                f"{first_timestamp}",
            )
        if base_offset + last_relative < base_offset:
            raise DumpFailure(
                "CorruptIndexException",
                f"Corrupt time index found, time index file ({abs_path}) has non-zero size but "
                f"the last offset is {base_offset + last_relative} which is less than the first "
                f"offset {base_offset}",
            )
    if len(data) % TIME_INDEX_ENTRY:
        raise DumpFailure(
            "CorruptIndexException",
            f"Time index file {abs_path} is corrupt, found {len(data)} bytes which is neither "
            f"positive nor a multiple of {TIME_INDEX_ENTRY}",
        )


def _snapshot_id(name: str) -> tuple[int, int]:
    """``Snapshots.parse``: ``<20-digit end offset>-<10-digit epoch>.checkpoint``."""
    width = _SNAPSHOT_OFFSET_WIDTH
    if len(name) < width + _SNAPSHOT_EPOCH_WIDTH + 1:
        raise DumpFailure("StringIndexOutOfBoundsException", f"snapshot file name {name!r}")
    offset = parse_java_integer(name[:width], 64)
    epoch = parse_java_integer(name[width + 1 : width + 1 + _SNAPSHOT_EPOCH_WIDTH], 32)
    return offset, epoch


# --- entry point ---------------------------------------------------------------------


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


_KNOWN_SUFFIXES = (".log", ".checkpoint", ".index", ".timeindex", ".txnindex", ".snapshot")


def files_option(value: str) -> list[str]:
    """The file names of ``--files``: Java's ``value.split(",")`` (trailing empty names
    dropped)."""
    return java_split(value, ",")


def dump_files(
    files: Sequence[str],
    options: DumpOptions | None = None,
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
    backend: Backend | None = None,
) -> None:
    """Dump ``files`` (paths as given to ``--files``) as Kafka's ``DumpLogSegments`` does:
    the dump on ``out`` (stdout), warnings and the final reports on ``err`` (stderr).

    :raises DumpUsageError: before any output, when a file to dump does not exist or
        ``max_message_size`` is not positive.
    :raises DumpFailure: where Kafka's tool would throw, after the same partial output.
    """
    opts = options or DumpOptions()
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    for arg in files:
        path = java_path(arg)
        known = path.endswith(_KNOWN_SUFFIXES) or file_name(path) in CHECKPOINT_FILE_NAMES
        if known and not os.path.exists(path):
            raise DumpUsageError(f"{path}: no such file")
        if os.path.isdir(path):
            raise DumpUsageError(f"{path}: is a directory")
    if opts.max_message_size < 0:
        raise DumpUsageError(f"--max-message-size must not be negative: {opts.max_message_size}")
    if opts.max_bytes < 0:
        raise DumpUsageError(f"--max-bytes must not be negative: {opts.max_bytes}")
    dumper = _Dumper(opts, out, err, backend if backend is not None else _default_backend)
    try:
        dumper.run(files)
    except DumpFailure:
        raise
    except JavaException as exc:  # thrown by a helper: the same failure
        raise DumpFailure(exc.kind, exc.message) from None
    finally:
        out.flush()
