"""Typed stub of ``kafkacore._native`` (Rust, PyO3) — and the contract of its twin.

``kafkacore.pure`` implements every name below with the same signature and the same
results, byte for byte. Both raise the exceptions of ``kafkacore.errors``.

Conventions shared by both backends
-----------------------------------
* A *record* is the tuple ``(offset, timestamp, key, value, headers)`` with ``offset``
  absolute, ``timestamp`` absolute ms (-1 = none), ``key``/``value`` ``bytes`` or ``None``
  and ``headers`` a list of ``(str, bytes | None)``.
* A *batch header* is the 13-tuple of the stored v2 header fields::

      (base_offset, batch_length, partition_leader_epoch, magic, crc, attributes,
       last_offset_delta, base_timestamp, max_timestamp, producer_id, producer_epoch,
       base_sequence, records_count)

  ``crc`` is unsigned (0..2**32-1).
* Codec ids are Kafka's: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd.
* Error messages name the context (file path, or ``buffer``) and ``position N``, the
  byte position of the offending batch.
"""

from collections.abc import Sequence
from typing import final

Headers = list[tuple[str, bytes | None]]
RecordTuple = tuple[int, int, bytes | None, bytes | None, Headers]
BatchHeaderTuple = tuple[int, int, int, int, int, int, int, int, int, int, int, int, int]
LegacyHeaderTuple = tuple[int, int, int, int, int, int]
AppendResult = tuple[int, int, int, int, int]

def crc32c(data: bytes, /) -> int:
    """CRC-32C (Castagnoli) of ``data``, as stored in RecordBatch v2."""

def crc32(data: bytes, /) -> int:
    """CRC-32 (IEEE) of ``data``, as stored in legacy v0/v1 messages."""

def compress(codec: int, data: bytes, /) -> bytes:
    """Compress as Kafka's Java producer does.

    gzip: a gzip member, deflate level 6. snappy: xerial framing (magic
    ``\\x82SNAPPY\\x00``, i32 version 1, i32 compatible 1, then ``[i32 length][raw snappy
    block]`` per 32 KiB of input). lz4: the LZ4 frame format, 64 KiB independent blocks,
    no block or content checksum. zstd: one frame, level 3. Codec 0 returns the input.
    Output bytes may differ between backends; both backends decode each other's output.
    Unknown codec -> ``UnsupportedCompressionError``.
    """

def decompress(codec: int, data: bytes, /) -> bytes:
    """Inverse of :func:`compress`; snappy accepts raw blocks and xerial framing.

    Undecodable input -> ``CorruptRecordError``; unknown codec -> ``UnsupportedCompressionError``.
    """

def build_batch(
    records: Sequence[RecordTuple],
    *,
    base_offset: int | None = None,
    last_offset_delta: int | None = None,
    compression: int = 0,
    timestamp_type: int = 0,
    partition_leader_epoch: int = -1,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    transactional: bool = False,
    control: bool = False,
    delete_horizon_ms: int = -1,
) -> bytes:
    """Build one RecordBatch v2 exactly as Kafka's ``MemoryRecordsBuilder`` lays it out.

    * ``base_offset`` defaults to the first record's offset; each record's offset delta
      is ``offset - base_offset``; ``last_offset_delta`` defaults to the last record's delta.
    * baseTimestamp = the first record's timestamp, or ``delete_horizon_ms`` when >= 0
      (then attribute bit 6 is set); maxTimestamp = the largest record timestamp;
      timestampDelta = timestamp - baseTimestamp.
    * attributes = codec | timestamp_type << 3 | transactional << 4 | control << 5 |
      (delete_horizon_ms >= 0) << 6.
    * With a codec, the records section (everything after byte 61) is the compressed
      encoding of the records (:func:`compress`).
    * The CRC-32C covers bytes 21..end.

    ``ValueError`` for: no records, offsets not strictly increasing or below
    ``base_offset``, deltas beyond i32, ``last_offset_delta`` below the last record's
    delta, ``timestamp_type`` not 0/1. ``UnsupportedCompressionError`` for a bad codec.
    """

def batch_header(buf: bytes, pos: int = 0, /) -> BatchHeaderTuple:
    """The stored header of the v2 batch at ``pos``. No CRC check.

    ``CorruptRecordError`` when fewer than 61 bytes remain or magic is not 2.
    """

def validate_batch(buf: bytes, pos: int = 0, /) -> BatchHeaderTuple:
    """Validate the v2 batch at ``pos`` completely and return its header.

    Checks, in order: 61 header bytes present; batchLength >= 49 and the batch fits in
    ``buf``; magic == 2; CRC-32C; then, after decompressing, exactly ``records_count``
    records, each with its length prefix matching its body, varints no longer than
    5 (varint) / 10 (varlong) bytes, key/value/header lengths >= -1 and inside the body,
    header count >= 0, header keys non-null UTF-8, offset deltas strictly increasing and
    <= lastOffsetDelta; no bytes left after the last record. An empty batch
    (records_count 0) is valid here. Any failure -> ``CorruptRecordError``.
    """

def batch_records(buf: bytes, pos: int = 0, /) -> list[RecordTuple]:
    """Validate (as :func:`validate_batch`) and decode every record of the v2 batch at
    ``pos``. offset = baseOffset + offsetDelta; timestamp = maxTimestamp when the batch
    uses LogAppendTime, else baseTimestamp + timestampDelta."""

def legacy_header(buf: bytes, pos: int = 0, /) -> LegacyHeaderTuple:
    """Shallow header ``(offset, size, crc, magic, attributes, timestamp)`` of the legacy
    (magic 0/1) message at ``pos``; timestamp is -1 for magic 0. No CRC check.
    ``CorruptRecordError`` if the message does not fit, magic is not 0/1 or the size is
    below the magic's minimum overhead (v0: 14, v1: 22)."""

def legacy_records(buf: bytes, pos: int = 0, /) -> list[RecordTuple]:
    """Deep records of the legacy message at ``pos`` (CRC-32 checked, wrapper and inner).

    Uncompressed: the message itself. Compressed wrapper: its inner messages, with
    absolute offsets (v1 inner offsets are relative to the wrapper, whose offset is the
    last inner one: absolute = wrapper_offset - last_inner_relative + inner_relative;
    v0 inner offsets are absolute) and, when the wrapper's timestamp type is
    LogAppendTime, the wrapper's timestamp. Headers are always ``[]``."""

def build_legacy(
    records: Sequence[RecordTuple], magic: int, compression: int = 0, timestamp_type: int = 0
) -> bytes:
    """Build a legacy message set (tests). Codec 0: one message per record. Otherwise one
    wrapper whose value is the compressed inner set (v1: inner offsets relative 0..n-1,
    wrapper offset = last record's offset, wrapper timestamp = max inner timestamp)."""

@final
class Segment:
    """One log segment: ``<dir>/<20-digit base offset>.log`` with its ``.index`` (8-byte
    entries: relative offset u32, position u32) and ``.timeindex`` (12-byte entries:
    timestamp i64, relative offset u32), all big-endian, as Apache Kafka writes them.

    Not thread-safe: one writer, and no reader concurrent with a writer.

    Opening creates missing files. Index sizes follow Kafka's ``AbstractIndex`` and
    ``LogSegment``; both indexes are memory-mapped while open:

    * A new index file is created with length ``max_index_size`` rounded down to its
      entry size (preallocated, zero-filled).
    * An existing index file is mapped at its length as found, unchanged (never grown):
      its entries are ``file length // entry size``. A segment opened on trimmed indexes
      (every inactive segment after a roll or a clean close) therefore has no room left:
      ``index_is_full`` is true until :meth:`resize_indexes`, which the log calls on the
      segment that becomes active after loading (Kafka's ``LogLoader``). A crash leaves
      the indexes of inactive segments exactly as they were written.
    * :meth:`resize_indexes` sets both files to a size rounded down to the entry size,
      never below their entries; ``truncate_to()`` does the same with ``max_index_size``
      (the truncated segment becomes the active one). ``seal()``, ``close()`` and
      ``recover()`` trim both to their entries (``entries x entry size``, which also
      drops the stray tail of a misaligned file).

    On open, ``next_offset`` is found by scanning the log from the position
    of the last offset-index entry (stopping silently at a partial or corrupt tail),
    ``rolling_based_timestamp`` is the first batch's max timestamp, and
    ``max_timestamp``/``offset_of_max_timestamp`` come from the last time-index entry.

    Index rules (Kafka's ``LogSegment.recover``, applied per batch both on append and on
    recovery, so both build identical files): keep ``bytes_since_last_entry``
    (0 at open); for each batch, *before* counting it, if ``bytes_since_last_entry >
    index_interval_bytes`` then append ``(batch.last_offset, batch.position)`` to the
    offset index and ``(max_timestamp, offset_of_max_timestamp)`` to the time index
    (only if that timestamp is greater than the last entry's), and reset the counter to 0;
    then add the batch size to it. ``max_timestamp``/``offset_of_max_timestamp`` are
    updated from the batch (its max timestamp and last offset) before the index check,
    whenever the batch's max timestamp is strictly greater.

    Max entries = an index's current length // its entry size. The offset index is full
    when entries >= max entries; the time index when entries >= max entries - 1 (its last
    slot is kept for ``seal``/``close``; a trimmed time index grows by one entry to take
    that final entry).
    Lookups search the warm tail (the last 8192 bytes of entries) first, as Kafka does.
    Legacy (magic 0/1) batches are read, recovered and searched too (shallowly, as Kafka).
    """

    def __init__(
        self,
        directory: str,
        base_offset: int,
        *,
        index_interval_bytes: int = 4096,
        max_index_size: int = 10485760,
    ) -> None: ...
    @property
    def base_offset(self) -> int: ...
    @property
    def log_path(self) -> str: ...
    @property
    def index_path(self) -> str: ...
    @property
    def time_index_path(self) -> str: ...
    @property
    def size(self) -> int:
        """Bytes in the ``.log`` file."""
    @property
    def next_offset(self) -> int:
        """The offset after the last batch (``base_offset`` when empty)."""
    @property
    def max_timestamp(self) -> int:
        """Largest batch max timestamp so far (-1 if none)."""
    @property
    def offset_of_max_timestamp(self) -> int:
        """Last offset of the batch holding ``max_timestamp`` (-1 if none)."""
    @property
    def rolling_based_timestamp(self) -> int:
        """Max timestamp of the first batch (-1 when empty): what ``segment.ms`` uses."""
    @property
    def index_is_full(self) -> bool:
        """True when the offset or the time index is full at its current size (the log
        must roll): a trimmed index is full until :meth:`resize_indexes`."""
    @property
    def closed(self) -> bool: ...
    def append(
        self,
        data: bytes,
        *,
        partition_leader_epoch: int = -1,
        log_append_time_ms: int = -1,
        assign_offsets: bool = True,
    ) -> AppendResult:
        """Validate, stamp and append one or more concatenated v2 batches.

        Every batch is validated completely (:func:`validate_batch`) before anything is
        written: one bad batch -> ``CorruptRecordError`` and nothing appended.

        ``assign_offsets=True`` (leader/producer path): each batch must have at least one
        record (else ``InvalidRecordError``); its baseOffset is set to the next offset,
        its partitionLeaderEpoch to ``partition_leader_epoch``, and, when
        ``log_append_time_ms >= 0``, the timestamp-type bit is set and maxTimestamp
        becomes ``log_append_time_ms``; the CRC is recomputed. Records are not touched.
        ``assign_offsets=False`` (replica path): batches are written unchanged; their base
        offsets must be >= ``next_offset`` and strictly increasing (else
        ``InvalidOffsetError``).

        Every last offset must satisfy ``0 <= last_offset - base_offset <= 2**31 - 1``
        (else ``InvalidOffsetError``). If the index entries the batches need do not fit,
        ``IndexFullError`` and nothing is written. ``ValueError`` if the segment is closed.

        Returns ``(first_offset, last_offset, max_timestamp, offset_of_max_timestamp,
        bytes_written)`` where the max is over the appended batches (strictly greater
        wins; ``(-1, -1)`` when no batch has a timestamp > -1).
        """
    def read(
        self,
        start_offset: int,
        max_bytes: int,
        max_position: int = -1,
        min_one_batch: bool = True,
    ) -> tuple[int, int] | None:
        """Locate whole batches to serve a fetch from ``start_offset``.

        ``None`` if no batch has ``last_offset >= start_offset``. Otherwise
        ``(position, length)``: from the first such batch, as many consecutive whole
        batches as fit in ``max_bytes`` and end at or before ``max_position`` (-1: the end
        of the file). If the first batch alone exceeds ``max_bytes``, it is returned whole
        when ``min_one_batch`` (still subject to ``max_position``), else ``length`` is 0.
        """
    def read_bytes(self, position: int, length: int) -> bytes:
        """``length`` bytes of the ``.log`` from ``position`` (short at the end of file)."""
    def translate_offset(
        self, offset: int, starting_position: int = 0
    ) -> tuple[int, int, int] | None:
        """``(batch_last_offset, position, size)`` of the first batch, at or after
        max(index lookup, ``starting_position``), whose last offset >= ``offset``."""
    def lookup_index(self, offset: int) -> tuple[int, int]:
        """Largest offset-index entry with offset <= ``offset``, as ``(offset, position)``;
        ``(base_offset, 0)`` if none."""
    def lookup_time_index(self, timestamp: int) -> tuple[int, int]:
        """Largest time-index entry with timestamp <= ``timestamp``, as
        ``(timestamp, offset)``; ``(-1, base_offset)`` if none."""
    def find_offset_by_timestamp(
        self, timestamp: int, starting_offset: int = -1
    ) -> tuple[int, int, int] | None:
        """Kafka's ``findOffsetByTimestamp``: ``(timestamp, offset, leader_epoch)`` of the
        first record with timestamp >= ``timestamp`` and offset >= ``starting_offset``,
        searching from the position of ``lookup_index(max(lookup_time_index(ts).offset,
        starting_offset))``, batch by batch, records only of batches whose max timestamp
        >= ``timestamp``. leader_epoch is the batch's partition leader epoch (-1 if none
        or legacy). ``None`` if there is none."""
    def offset_index(self) -> list[tuple[int, int]]:
        """All offset-index entries as ``(absolute offset, position)``."""
    def time_index(self) -> list[tuple[int, int]]:
        """All time-index entries as ``(timestamp, absolute offset)``."""
    def recover(self) -> int:
        """Rebuild both indexes from the log and truncate at the first invalid byte.

        Walks batches from position 0 (see ``next_batch`` semantics: a partial tail batch
        ends the walk; a size below 14 or an unknown magic is invalid); each must pass the
        shallow check (size >= the magic's overhead, CRC) and have
        ``base_offset >= previous last_offset + 1``, ``base_offset >= base_offset of the
        segment``, ``0 <= last_offset - base_offset <= 2**31 - 1``. Indexes are rebuilt by
        the index rules above; at the end, the final ``(max_timestamp,
        offset_of_max_timestamp)`` is added to the time index if greater than its last
        entry. The file is truncated at the end of the last valid batch. Returns the number
        of bytes truncated. ``rolling_based_timestamp``, ``next_offset`` and the max
        timestamp are reset from what was kept.

        Index sizes (Kafka's ``LogSegment.recover``): both indexes are emptied and
        preallocated to ``max_index_size`` for the rebuild, then trimmed to their entries,
        whatever their size before: a recovered segment is sized as a sealed one. The log
        then calls :meth:`resize_indexes` on its active segment (Kafka's loader: recover,
        then ``resizeIndexes`` on the last segment)."""
    def sanity_check(self) -> None:
        """``CorruptIndexError`` (naming the file) if an index file length is not a
        multiple of its entry size, offset-index offsets are not strictly increasing
        and >= ``base_offset`` or positions not increasing or beyond the log size, or
        time-index timestamps are not strictly increasing or offsets not non-decreasing
        and >= ``base_offset``."""
    def truncate_to(self, offset: int) -> int:
        """Remove every batch from the one containing ``offset`` (``translate_offset``)
        onward and the index entries with offset >= ``offset``; returns bytes removed.
        Resets ``bytes_since_last_entry``; max timestamp comes back from the time index's
        last entry; ``rolling_based_timestamp`` is reset to -1 if the log is empty. Both
        indexes are resized to ``max_index_size`` rounded down, never below their entries
        (the segment is the active one again)."""
    def resize_indexes(self, max_index_size: int | None = None) -> None:
        """Kafka's ``resizeIndexes``: resize both index files (and their mappings) to
        ``max_index_size`` (``None``: the segment's ``max_index_size``) rounded down to
        each index's entry size, never below the bytes their entries use. Entries are
        kept; added bytes are zeros. ``ValueError`` if ``max_index_size`` is outside
        0..2**31-1 or the segment is closed."""
    def seal(self) -> None:
        """The segment stops being active (log roll): add the final time-index entry
        (``max_timestamp``, ``offset_of_max_timestamp``) if greater than the last, and trim
        both index files to their entries. Reads keep working; appends may fail with
        ``IndexFullError``."""
    def flush(self) -> None:
        """fsync the ``.log`` and both indexes."""
    def close(self) -> None:
        """``seal()``, flush and close every file. Idempotent."""
    def delete(self) -> None:
        """Close and remove the three files."""

# ---------------------------------------------------------------------------------------
# Compaction (the log cleaner's hot path; kafkacore.log.cleaner drives it).
#
# Walking a buffer (KeyMap.add_batches and filter_batches): batches are taken in order from
# position 0. The walk stops, without error, when 17 bytes or fewer remain or when the
# next batch's declared size (``batchLength + 12``) runs past the end: the caller reads
# more and calls again with the rest. A batchLength below 14 or a magic other than 0/1/2
# is ``CorruptRecordError``; a legacy (magic 0/1) batch is ``InvalidRecordError`` (the
# cleaner does not compact legacy messages). A v2 batch is then validated completely
# (:func:`validate_batch`; ``CorruptRecordError``) before it is used.

FilterResult = tuple[bytes, int, int, int, int]

@final
class KeyMap:
    """Kafka's ``SkimpyOffsetMap``: for each key, the latest offset seen, over the dirty
    section of a log; plus ``latest_offset``, the last offset the map covers.

    Keys are stored as their MD5 digest (16 bytes; Kafka's default
    ``log.cleaner.hash.algorithm``). Collision policy, as Kafka's: two distinct keys with
    the same digest are one key (the older record of the two may be removed); at most
    ``capacity`` digests are held (the caller derives it from
    ``log.cleaner.dedupe.buffer.size`` / 24 bytes per entry x the load factor).

    Not thread-safe: one user at a time (a concurrent call raises ``RuntimeError`` on the
    native backend).
    """

    def __init__(self, capacity: int) -> None:
        """An empty map (``latest_offset`` -1). ``ValueError`` if ``capacity`` < 1."""
    @property
    def capacity(self) -> int: ...
    @property
    def latest_offset(self) -> int:
        """The last offset the map covers; -1 when nothing was added."""
    def __len__(self) -> int:
        """The number of distinct digests held."""
    def put(self, key: bytes, offset: int) -> None:
        """Map ``key`` to ``offset`` (replacing its previous offset) and set
        ``latest_offset`` to ``offset``. ``ValueError`` if ``key`` is new and the map
        already holds ``capacity`` keys (an existing key is always updated)."""
    def get(self, key: bytes) -> int:
        """The offset mapped to ``key``; -1 if none."""
    def update_latest_offset(self, offset: int) -> None:
        """Set ``latest_offset`` (Kafka's ``updateLatestOffset``)."""
    def clear(self) -> None:
        """Forget every key; ``latest_offset`` back to -1."""
    def add_batches(self, buf: bytes, start_offset: int, end_offset: int) -> tuple[int, bool]:
        """Kafka's ``buildOffsetMapForSegment`` over the batches of ``buf`` (walked as
        described above). Returns ``(consumed, full)``.

        For each whole batch, in order: a batch whose base offset is >= ``end_offset`` is
        skipped (consumed, not validated). Otherwise it is validated; unless it is a control
        batch, each record with a key and ``start_offset <= offset < end_offset`` is put
        (``latest_offset`` = its offset) - but first, if the map holds ``capacity`` keys,
        the scan stops and ``(position of this batch, True)`` is returned (the keys put from
        this batch stay). After the batch, if its last offset is >= ``start_offset``,
        ``latest_offset`` becomes that last offset. At the end of the walk, ``(bytes of the
        whole batches walked, False)``. After an exception the map's content is unspecified.
        """

def filter_batches(
    buf: bytes,
    key_map: KeyMap,
    *,
    now_ms: int,
    delete_retention_ms: int,
    round_end_offset: int = -1,
    producer_last_offsets: dict[int, int] | None = None,
) -> FilterResult:
    """Kafka's ``MemoryRecords.filterTo`` with the ``LogCleaner``'s filter: the batches of
    ``buf`` (walked as described above) rewritten so that each key keeps its latest record.
    Returns ``(retained bytes, bytes read, records read, records retained, keyless records
    removed)``; bytes read covers the whole batches walked.

    Per batch:

    1. A record is retained when the batch is a control batch; or its offset is above
       ``key_map.latest_offset``; or it has a key, ``offset >= key_map.get(key)`` and it has
       a value or the batch's delete horizon has not passed (attribute bit 6 clear, or
       ``now_ms < baseTimestamp``). A keyless record at or below ``latest_offset`` is
       removed (counted in the last field).
    2. Some record retained: the batch is copied byte for byte if every record is retained
       and no retained record is a tombstone (null value) of a batch without a delete
       horizon. Otherwise it is rebuilt by :func:`build_batch` from the retained records
       (as :func:`batch_records` decodes them) with the batch's base offset,
       lastOffsetDelta, partition leader epoch, codec, timestamp type, producer id, epoch,
       base sequence, transactional and control bits, and ``delete_horizon_ms`` =
       ``now_ms + delete_retention_ms`` (saturating at 2**63-1) when it retains a
       tombstone and had no horizon, else its own horizon (baseTimestamp) if it had one,
       else -1.
    3. No record retained: if the batch's last offset + 1 == ``round_end_offset`` (the
       last batch of a cleaning round keeps the log's end) or the batch has a producer id
       and ``producer_last_offsets[producer id] == its last offset`` (the last batch of an
       active producer keeps its sequence), an empty header is written (Kafka's
       ``writeEmptyHeader``: 61 bytes, base offset, lastOffsetDelta, partition leader epoch,
       attributes = its timestamp-type, transactional and control bits only (codec none, no
       delete horizon), baseTimestamp -1, its maxTimestamp, producer id/epoch, base
       sequence, recordsCount 0, CRC-32C). Otherwise the batch is dropped.

    Rebuilt uncompressed batches are byte-identical on both backends; compressed ones hold
    the same records (codec outputs may differ). ``ValueError`` if ``now_ms`` or
    ``delete_retention_ms`` is negative (or a rebuild is refused by :func:`build_batch`);
    ``TypeError`` if ``key_map`` is not this backend's ``KeyMap``.
    """

# ---------------------------------------------------------------------------------------
# Columnar decoding (kafkacore.arrow wraps the buffers into pyarrow arrays) and Kafka's
# key partitioner.

BinaryColumn = tuple[bytes | None, bytes, bytes]
HeadersColumn = tuple[bytes, bytes, bytes, bytes | None, bytes, bytes]
ColumnsTuple = tuple[
    int, int, BinaryColumn, BinaryColumn, bytes, bytes, bytes, HeadersColumn | None
]

def decode_columns(
    data: bytes, start_offset: int, end_offset: int, include_headers: bool, /
) -> ColumnsTuple:
    """The records of the batches in ``data`` with ``start_offset <= offset < end_offset``,
    as Arrow column buffers: ``(count, next_offset, keys, values, offsets, timestamps,
    timestamp_types, headers)``.

    ``data`` holds stored batches one after the other, as a Fetch response or a segment
    file does: RecordBatch v2 (any codec) and legacy v0/v1 message sets. The walk:

    * Fewer than 12 bytes left, or a declared size (length field + 12) beyond what is left:
      the walk ends silently (a Fetch response may end in a partial batch). A length field
      below 14 or a magic other than 0/1/2 is ``CorruptRecordError``.
    * A v2 batch whose base offset is >= ``end_offset`` ends the walk (not validated).
    * Every other batch is validated completely (:func:`validate_batch`,
      :func:`legacy_records`): ``CorruptRecordError`` naming ``position N``, its byte
      position in ``data`` (``UnsupportedCompressionError`` for zstd in a legacy message).
    * Control batches give no rows; records with offset < ``start_offset`` are skipped; the
      first record with offset >= ``end_offset`` ends the walk.

    ``next_offset``: ``end_offset`` if the walk ended because of ``end_offset``; otherwise
    ``max(start_offset, last offset of the last complete batch + 1)`` (v2: baseOffset +
    lastOffsetDelta; legacy: the last inner offset), ``start_offset`` when there was none.

    Columns, in Arrow's layout (little-endian):

    * ``keys``, ``values``: ``(validity, offsets, data)``; validity is an LSB-first bitmap
      (1 = valid) padded to whole bytes, ``None`` when no row is null; offsets are i32,
      ``count + 1`` of them from 0.
    * ``offsets``: i64 per row. ``timestamps``: i64 microseconds per row (ms * 1000,
      wrapping as Java's long): the record's timestamp, the batch's maxTimestamp for a
      LogAppendTime batch, the wrapper's timestamp for the inner messages of a LogAppendTime
      v1 wrapper, -1 ms (-1000 us) for v0. ``timestamp_types``: i32 per row, 1 when the v2
      batch (or the v1 message or wrapper) uses LogAppendTime, else 0.
    * ``headers`` (``None`` unless ``include_headers``): ``(list_offsets, key_offsets,
      key_data, value_validity, value_offsets, value_data)``: row i has the headers
      ``list_offsets[i]..list_offsets[i+1]`` (i32, ``count + 1``); keys are UTF-8 (never
      null), values binary with their validity (``None`` when no value is null). Legacy
      rows have no headers.

    ``ValueError`` if a binary column would exceed 2**31 - 1 bytes.
    """

def murmur2(data: bytes, /) -> int:
    """Kafka's ``Utils.murmur2`` of ``data`` (MurmurHash2, seed ``0x9747b28c``), as the
    signed 32-bit Java int. The Java client's partition of a keyed record is
    ``(murmur2(key) & 0x7fffffff) % num_partitions``."""

# ---------------------------------------------------------------------------------------
# The native produce path (kafkacore.log.lease drives it): a client's batch appended to a
# partition's active segment under a lease, the snapshot of Python's decisions.

#: ``(first_offset, last_offset, max_timestamp, offset_of_max_timestamp, bytes_written,
#: log_append_time, batch_max_timestamp, producer_id, producer_epoch, last_sequence,
#: records_count, codec)``: the segment's :data:`AppendResult`, the LogAppendTime stamped
#: (-1 for CreateTime) and the batch's own header facts.
LeasedAppendResult = tuple[int, int, int, int, int, int, int, int, int, int, int, int]

@final
class ProduceLease:
    """One partition's lease: what Python decided for its produce path. ``producers``
    maps each producer id the partition knows (with an epoch) to ``(epoch, last
    sequence, transaction open)``; the last sequence is -1 before its first batch of the
    epoch. ``roll_after_ms`` is ``segment.ms`` minus the active segment's jitter,
    ``max_last_offset`` the last offset appendable before ``flush.messages`` is due.
    The lease advances a producer's last sequence with each append it makes.
    Not thread-safe (the log's lock guards it)."""

    def __init__(
        self,
        *,
        leader_epoch: int,
        max_message_bytes: int,
        segment_bytes: int,
        log_append_time: bool,
        timestamp_before_max_ms: int,
        timestamp_after_max_ms: int,
        roll_after_ms: int,
        segment_created_ms: int,
        max_last_offset: int,
        producers: dict[int, tuple[int, int, bool]],
    ) -> None: ...
    @property
    def leader_epoch(self) -> int: ...
    def producer(self, producer_id: int) -> tuple[int, int, bool] | None:
        """``(epoch, last sequence, transaction open)`` of a producer the lease knows."""

def produce_append(
    appends: Sequence[tuple[Segment, ProduceLease, bytes]], now_ms: int, /
) -> list[LeasedAppendResult | None]:
    """Append each ``records`` (one partition's records of a Produce) to its ``segment``
    (the active one) as its lease allows, the GIL released for the whole call.

    An entry is appended - offsets from the segment's next offset, ``leader_epoch``
    stamped, ``now_ms`` stamped when ``log_append_time`` - only when it is exactly one
    magic-2 batch with base offset 0, a record count matching its offset range, no
    control flag, a sequence when it has a producer id, within ``max_message_bytes`` and
    ``segment_bytes``, CreateTime timestamps within ``[now_ms - before, now_ms +
    after]``; when its producer (if any) is known at the same epoch and transaction state
    and its base sequence is the last + 1 (no wrap); when its last offset is at most
    ``max_last_offset``; when Kafka's ``shouldRoll`` says no (``segment_bytes``, a full
    index, the relative offset, ``roll_after_ms`` after the first batch's timestamp or
    ``segment_created_ms``); and when the segment's own append (CRC, records) succeeds.
    Otherwise its result is ``None`` and nothing was written for it: the caller's Python
    path appends it (and answers its error). The same segment twice in one call raises
    ``RuntimeError`` (native) or is refused by the caller."""
