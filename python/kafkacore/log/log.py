"""One partition's log (Kafka's ``UnifiedLog`` + ``LocalLog``, without the high watermark
and tiered storage, which belong to the layers above).

A :class:`Log` owns a partition directory ``<log.dir>/<topic>-<partition>``: its segments
(:class:`~kafkacore.log.segments.LogSegments`), its leader epoch cache
(``leader-epoch-checkpoint``) and its ``partition.metadata``. It appends record batches to
the active segment, rolling a new one when Kafka would; serves reads as file regions;
finds offsets by timestamp; truncates for replication; and applies retention.

Offsets kept here:

* ``log_start_offset`` - the first offset a reader may fetch; advanced by retention and
  :meth:`Log.delete_records_before`.
* ``log_end_offset`` (LEO) - the offset the next appended record gets.
* ``recovery_point`` - every offset below it has been fsynced; loading after a crash
  recovers from there.

The high watermark is the replication layer's: it passes ``upper_bound`` (HW, or LEO
for replicas) to :meth:`Log.read` and ``high_watermark`` to :meth:`Log.delete_old_segments`.

Transactions (with a producer state): :meth:`Log.append_txn_marker` writes COMMIT/ABORT
markers (``AppendOrigin.COORDINATOR``); a replica's markers arrive in its appends. Each
ABORT that ends a transaction adds an :class:`~kafkacore.log.txn_index.AbortedTxn` to the
``.txnindex`` of the segment holding the marker (Kafka's ``updateTxnIndex``); truncation
cuts the index with the segment, deletion and compaction swaps rename it with the
segment's other files, and recovery rebuilds it from the batches with the producer state
(:meth:`Log._rebuild_txn_index`). The last stable offset is ``min(first unstable offset,
HW)`` (:meth:`Log.last_stable_offset`); read_committed readers get the aborted
transactions of what they read (:meth:`Log.aborted_transactions_for`,
:meth:`Log.collect_aborted_transactions`).

Thread-safety: every public method takes the log's lock (one ``RLock``), so a log may be
used from many threads: appends, rolls, truncations, retention and reads are serialized.
A read holds the lock only to locate its file region (index lookups); the bytes are
copied afterwards, by :meth:`FetchDataInfo.read_bytes` or ``sendfile``, without it. A
region stays readable: appends never rewrite earlier bytes, and a deleted segment's
files are renamed to ``.deleted`` and removed only ``file.delete.delay.ms`` later
(``read_bytes`` follows the rename). Truncation, as in Kafka, may shorten a region that
was handed out. The offset properties read single attributes without the lock.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import os
import random
import shutil
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import wraps
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict, TypeVar

from kafkacore._backend import Backend
from kafkacore.config import LogConfig
from kafkacore.errors import (
    CorruptRecordError,
    InconsistentTopicIdError,
    IndexFullError,
    InvalidOffsetError,
    OffsetOutOfRangeError,
    RecordBatchTooLargeError,
    StorageIOError,
    UnexpectedAppendOffsetError,
)
from kafkacore.log.checkpoints import (
    EpochEntry,
    LeaderEpochCheckpointFile,
    PartitionMetadataFile,
    fsync_dir,
)
from kafkacore.log.clock import SYSTEM_TIME, Time
from kafkacore.log.epoch import UNDEFINED_EPOCH_OFFSET, LeaderEpochFileCache
from kafkacore.log.files import (
    TopicPartition,
    parse_topic_partition_name,
)
from kafkacore.log.loader import LogLoader
from kafkacore.log.producer_state import (
    ORIGIN_CLIENT,
    ORIGIN_COORDINATOR,
    ORIGIN_REPLICATION,
    CompletedTxn,
    EndTxnMarker,
    ProducerStateEntry,
    ProducerStateManager,
    end_txn_marker,
    iter_segment_batches,
    rebuild_producer_state,
)
from kafkacore.log.remote.errors import OffsetMovedToTieredStorageError
from kafkacore.log.retention import (
    SegmentPredicate,
    deletable_segments,
    log_start_offset_breached,
    retention_ms_breached,
    retention_size_breached,
    tiered_only,
)
from kafkacore.log.scheduler import Scheduler, default_scheduler
from kafkacore.log.segments import (
    LogSegment,
    LogSegments,
    delete_segment_files,
    fsync_segment_files,
    read_region,
    segment_file_paths,
)
from kafkacore.log.txn_index import AbortedTxn, TransactionIndex
from kafkacore.log.validator import validate_as_leader
from kafkacore.record import (
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    LOG_OVERHEAD,
    MIN_BATCH_LENGTH,
    BatchHeader,
    ControlType,
    batch_header,
    build_control_batch,
    iter_batches,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "EARLIEST_LOCAL_TIMESTAMP",
    "EARLIEST_PENDING_UPLOAD_TIMESTAMP",
    "EARLIEST_TIMESTAMP",
    "LATEST_TIERED_TIMESTAMP",
    "LATEST_TIMESTAMP",
    "MAX_TIMESTAMP",
    "AppendOrigin",
    "FetchDataInfo",
    "Log",
    "LogAppendInfo",
    "LogOptions",
    "TimestampAndOffset",
]

logger = logging.getLogger("kafkacore.log")

#: ListOffsets special timestamps (Kafka's ``ListOffsetsRequest``).
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4
LATEST_TIERED_TIMESTAMP = -5
EARLIEST_PENDING_UPLOAD_TIMESTAMP = -6

_NO_TIMESTAMP = -1
_MAX_OFFSET = 2**63 - 1


class LogOptions(TypedDict, total=False):
    """The keyword options of :class:`Log` and :meth:`Log.load`, declared once (the class
    docstring says what each does; defaults in brackets)."""

    log_start_offset: int  # [0]
    recover_from: int | None  # [None: a clean shutdown]
    topic_partition: TopicPartition | None  # [parsed from the directory name]
    topic_id: uuid.UUID | None
    backend: Backend | None  # [kafkacore.native.backend]
    time: Time | None  # [the system clock]
    scheduler: Scheduler | None  # [default_scheduler()]
    rng: random.Random | None
    producer_state: ProducerStateManager | None
    remote_storage_system_enable: bool  # [False: the broker's remote.log.storage.system.enable]


class AppendOrigin(enum.Enum):
    """Who appends (Kafka's ``AppendOrigin``): decides which checks apply."""

    CLIENT = "client"  # a producer: Kafka's client-batch checks apply
    COORDINATOR = "coordinator"  # group/transaction coordinator writing its own records
    REPLICATION = "replication"  # a follower copying the leader: offsets kept


_PRODUCER_ORIGIN = {
    AppendOrigin.CLIENT: ORIGIN_CLIENT,
    AppendOrigin.COORDINATOR: ORIGIN_COORDINATOR,
    AppendOrigin.REPLICATION: ORIGIN_REPLICATION,
}


class LogAppendInfo(NamedTuple):
    """What an append did (Kafka's ``LogAppendInfo``). Immutable; a NamedTuple rather
    than a frozen dataclass because one is built per append (a frozen dataclass's
    ``__init__`` costs a microsecond more on the produce path).

    ``max_timestamp``/``offset_of_max_timestamp``: the largest batch max timestamp and the
    last offset of the first batch that has it (-1, -1 when none); ``log_append_time``: the
    broker time stamped on LogAppendTime topics, else -1; ``log_start_offset``: the log's
    at the time of the append; ``last_leader_epoch``: the last batch's partition leader
    epoch as written (``None`` if -1); ``source_compression``: the codec id of the last
    compressed batch (0 if none); ``num_batches``/``num_records``: what was appended. An
    empty append has offsets -1 and ``valid_bytes`` 0."""

    first_offset: int
    last_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int
    log_append_time: int
    log_start_offset: int
    valid_bytes: int
    last_leader_epoch: int | None
    source_compression: int
    num_batches: int
    num_records: int

    @classmethod
    def unknown(cls, log_start_offset: int) -> LogAppendInfo:
        """What an append of nothing did (Kafka's
        ``unknownLogAppendInfoWithLogStartOffset``): offsets and times -1, no bytes."""
        return cls(-1, -1, -1, -1, -1, log_start_offset, 0, None, 0, 0, 0)


@dataclass(frozen=True, slots=True)
class FetchDataInfo:
    """A read result as a file region: ``length`` bytes of the segment file ``file`` from
    ``position``, holding whole batches; a server may send it without copying.

    ``offset`` is the offset asked for (Kafka's fetch offset); the first batch of the
    region contains it or starts after it (a batch is never split, so it may also start
    before it). ``segment_base_offset`` names the segment. ``length == 0``: nothing to
    return; ``file``/``position`` then say where the data would start."""

    file: str
    position: int
    length: int
    offset: int
    segment_base_offset: int

    @property
    def is_empty(self) -> bool:
        return self.length == 0

    def read_bytes(self) -> bytes:
        """The region's bytes (fewer if the log was truncated since the read). If the
        segment was deleted since, its renamed ``.deleted`` file is read
        (:func:`~kafkacore.log.segments.read_region`)."""
        return read_region(self.file, self.position, self.length)


class TimestampAndOffset(NamedTuple):
    """A ListOffsets answer: ``timestamp`` (-1 for the special queries), ``offset`` and the
    leader epoch of that offset (``None`` when unknown)."""

    timestamp: int
    offset: int
    leader_epoch: int | None


_F = TypeVar("_F", bound=Callable[..., Any])


def _storage_guard(method: _F) -> _F:
    """An ``OSError`` out of ``method`` (a write, roll, flush or truncation) is a failure of
    the log's directory (Kafka's ``maybeHandleIOException``): the log refuses every later
    write, :attr:`Log.on_storage_error` is told (the log manager marks the directory
    offline) and the error is raised as ``StorageIOError`` (KAFKA_STORAGE_ERROR)."""

    @wraps(method)
    def guarded(self: Log, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except OSError as exc:
            raise self._storage_failed(method.__name__, exc) from exc

    return guarded  # type: ignore[return-value]


class Log:
    """The log of one partition (see the module docstring).

    ``Log(directory, config=None, **options)``, the keyword options being those of
    :class:`LogOptions`. ``directory`` is ``<log.dir>/<topic>-<partition>`` (created if
    missing);
    ``topic_partition`` defaults to the one its name spells. Opening loads what is on disk
    (:class:`~kafkacore.log.loader.LogLoader`): ``log_start_offset`` is the value from
    ``log-start-offset-checkpoint``; ``recover_from`` is ``None`` after a clean shutdown,
    else the recovery point from ``recovery-point-offset-checkpoint`` (segments above it
    are validated and cut at the first bad byte).

    ``backend``: the storage backend, a :class:`~kafkacore.native.Backend` (default
    ``kafkacore.native.backend``);
    ``time``/``scheduler``: the clock and the executor of delayed file deletion and
    post-roll flushes (default: the system clock and
    :func:`~kafkacore.log.scheduler.default_scheduler`); ``rng`` draws the
    ``segment.jitter.ms`` of each segment; ``topic_id`` is checked against, or written to,
    ``partition.metadata``. ``producer_state``: a
    :class:`~kafkacore.log.producer_state.ProducerStateManager` for this directory, rebuilt
    on open (latest snapshot + replay); appends then check idempotent batches (raising
    ``DuplicateSequenceError`` with the original offsets for a retry, which writes nothing)
    and snapshots are taken at each roll and on close.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        config: LogConfig | None = None,
        **options: Unpack[LogOptions],
    ) -> None:
        backend = options.get("backend")
        if backend is None:
            from kafkacore.native import backend as selected

            backend = selected
        log_start_offset = options.get("log_start_offset", 0)
        topic_partition = options.get("topic_partition")
        time, scheduler, rng = options.get("time"), options.get("scheduler"), options.get("rng")
        self._dir = os.path.abspath(os.fspath(directory))
        self._tp = topic_partition or parse_topic_partition_name(os.path.basename(self._dir))
        self._config: LogConfig = config if config is not None else LogConfig()
        self._max_segment_ms = self._config.max_segment_ms()  # asked on every append
        self._backend = backend
        self._time = time or SYSTEM_TIME
        self._scheduler: Scheduler = scheduler if scheduler is not None else default_scheduler()
        self._rng = rng or random.Random()
        self._lock = threading.RLock()
        self._closed = False
        # set once an I/O error met this log: its directory is offline, nothing is written
        self._storage_error: StorageIOError | None = None
        #: told ``(log directory, error)`` on the first I/O error (set by the log manager)
        self.on_storage_error: Callable[[str, BaseException], None] | None = None
        # counts truncations: a flush running outside the lock does not move the recovery
        # point over offsets a truncation rewrote meanwhile
        self._truncations = 0

        # idempotent-producer state: latest snapshot + replay of the batches after it
        self._producer_state = options.get("producer_state")
        loaded = LogLoader(
            self._dir,
            open_segment=self._open_segment,
            log_start_offset=log_start_offset,
            recover_from=options.get("recover_from"),
            scheduler=self._scheduler,
            delete_delay_ms=self._config.file_delete_delay_ms,
            segment_recovered=self._rebuild_txn_index,
        ).load()
        self._segments: LogSegments = loaded.segments
        self._log_start_offset = loaded.log_start_offset
        # tiered storage (KIP-405): the log start offset may lie below the first local
        # segment, the rest being in the remote tier (Kafka keeps the checkpointed value)
        self._remote_storage_system_enable = options.get("remote_storage_system_enable", False)
        self._highest_offset_in_remote_storage = -1
        if self.remote_log_enabled:
            self._log_start_offset = min(log_start_offset, loaded.log_start_offset)
        self._log_end_offset = loaded.next_offset
        self._recovery_point = loaded.recovery_point
        self._last_flush_ms = self._time.milliseconds()

        self._epoch_cache = LeaderEpochFileCache(
            LeaderEpochCheckpointFile.in_dir(self._dir), topic_partition=str(self._tp)
        )
        self._epoch_cache.truncate_from_end(self._log_end_offset)
        self._epoch_cache.truncate_from_start(log_start_offset)

        self._partition_metadata = PartitionMetadataFile.in_dir(self._dir)
        self._topic_id: uuid.UUID | None = None
        if self._partition_metadata.exists():
            self._topic_id = self._partition_metadata.read().topic_id
        topic_id = options.get("topic_id")
        if topic_id is not None:
            self.assign_topic_id(topic_id)

        if self._producer_state is not None:
            self._rebuild_producer_state()

    @classmethod
    def load(
        cls,
        directory: str | os.PathLike[str],
        config: LogConfig | None = None,
        **options: Unpack[LogOptions],
    ) -> Log:
        """Open the log in ``directory`` (the same as the constructor; the name says it)."""
        return cls(directory, config, **options)

    # -- properties ----------------------------------------------------------------------

    @property
    def dir(self) -> str:
        return self._dir

    @property
    def topic_partition(self) -> TopicPartition:
        return self._tp

    @property
    def config(self) -> LogConfig:
        return self._config

    @property
    def backend(self) -> Backend:
        return self._backend

    @property
    def topic_id(self) -> uuid.UUID | None:
        return self._topic_id

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self._log_end_offset

    # -- tiered storage (the remote log manager keeps the remote tier; see log/remote) -----

    @property
    def remote_log_enabled(self) -> bool:
        """Tiered storage applies (Kafka's ``remoteLogEnabled``): the broker's
        ``remote.log.storage.system.enable`` and the topic's ``remote.storage.enable``,
        never for an internal topic."""
        return (
            self._remote_storage_system_enable
            and self._config.remote_storage_enable
            and not self._tp.topic.startswith("__")
        )

    @property
    def local_log_start_offset(self) -> int:
        """The first offset held locally (Kafka's ``localLogStartOffset``): the log start
        offset, or the first local segment's base when the offsets below are tiered."""
        first = self._segments.first_segment()
        base = first.base_offset if first is not None else self._log_end_offset
        return max(self._log_start_offset, base)

    @property
    def highest_offset_in_remote_storage(self) -> int:
        """The largest offset copied to the remote tier (-1: none); local segments at or
        below it may go by local retention."""
        return self._highest_offset_in_remote_storage

    def update_highest_offset_in_remote_storage(self, offset: int) -> None:
        """The remote log manager committed a copy up to ``offset`` (never moves back)."""
        with self._lock:
            if offset > self._highest_offset_in_remote_storage:
                self._highest_offset_in_remote_storage = offset

    def update_log_start_offset_from_remote_tier(self, offset: int) -> None:
        """Remote retention deleted every offset below ``offset`` (Kafka's
        ``updateLogStartOffsetFromRemoteTier``)."""
        with self._lock:
            self._check_open()
            if offset > self._log_start_offset:
                self._update_log_start_offset(min(offset, self._log_end_offset))

    @_storage_guard
    def rebuild_from_remote_state(
        self,
        next_offset: int,
        log_start_offset: int,
        epochs: list[EpochEntry],
        producer_snapshot: bytes,
    ) -> None:
        """A follower's catch-up from the remote tier (Kafka's ``buildRemoteLogAuxState``):
        start empty at ``next_offset`` with the global ``log_start_offset``, the leader
        epochs of the tiered segment before it and its producer snapshot."""
        with self._lock:
            self._check_open()
            self.truncate_fully_and_start_at(next_offset, log_start_offset)
            self._epoch_cache.assign_all([e for e in epochs if e.start_offset < next_offset])
            if self._producer_state is not None and producer_snapshot:
                from kafkacore.log.files import producer_snapshot_file

                with open(producer_snapshot_file(self._dir, next_offset), "wb") as f:
                    f.write(producer_snapshot)
                self._rebuild_producer_state()

    @property
    def recovery_point(self) -> int:
        return self._recovery_point

    @property
    def last_flush_time(self) -> int:
        """When the log was last flushed (ms)."""
        return self._last_flush_ms

    @property
    def unflushed_messages(self) -> int:
        return self._log_end_offset - self._recovery_point

    @property
    def leader_epoch_cache(self) -> LeaderEpochFileCache:
        return self._epoch_cache

    @property
    def latest_epoch(self) -> int | None:
        return self._epoch_cache.latest_epoch()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def size(self) -> int:
        """Bytes in all segments."""
        with self._lock:
            return self._segments.size_in_bytes()

    @property
    def number_of_segments(self) -> int:
        with self._lock:
            return len(self._segments)

    @property
    def segments(self) -> list[LogSegment]:
        """The segments, oldest first (a copy of the list)."""
        with self._lock:
            return self._segments.values()

    @property
    def active_segment(self) -> LogSegment:
        with self._lock:
            return self._segments.active_segment

    def update_config(self, config: LogConfig) -> None:
        """Use ``config`` from now on (sizes of segments already open do not change)."""
        with self._lock:
            self._config = config
            self._max_segment_ms = config.max_segment_ms()

    def __repr__(self) -> str:
        return (
            f"Log({self._dir!r}, log_start_offset={self._log_start_offset}, "
            f"log_end_offset={self._log_end_offset}, segments={len(self._segments)})"
        )

    # -- segments ------------------------------------------------------------------------

    def _open_segment(self, base_offset: int) -> LogSegment:
        return LogSegment.open(
            self._backend,
            self._dir,
            base_offset,
            index_interval_bytes=self._config.index_interval_bytes,
            max_index_size=self._config.segment_index_bytes,
            created_ms=self._time.milliseconds(),
            roll_jitter_ms=self._config.random_segment_jitter(self._rng),
        )

    @property
    def producer_state(self) -> ProducerStateManager | None:
        return self._producer_state

    def remove_expired_producers(self, now_ms: int) -> list[int]:
        """Forget the producers idle for ``producer.id.expiration.ms`` (Kafka's
        ``removeExpiredProducers``, run every ``producer.id.expiration.check.interval.ms``
        by the log manager); returns their ids."""
        with self._lock:
            if self._producer_state is None:
                return []
            return self._producer_state.remove_expired(now_ms)

    def _rebuild_producer_state(self) -> None:
        if self._producer_state is not None:
            rebuild_producer_state(
                self._producer_state,
                self._segments.values(),
                self._log_start_offset,
                self._log_end_offset,
                self._backend.batch_header,
                now_ms=self._time.milliseconds(),
                batch_records=self._backend.batch_records,
            )

    def _rebuild_txn_index(
        self, previous: list[LogSegment], segment: LogSegment, log_start_offset: int
    ) -> None:
        """The loader recovered ``segment`` (``previous``: the segments before it): its
        ``.txnindex`` is rebuilt from its batches while the producer state is brought
        through it (Kafka's ``LogLoader.recoverSegment`` + ``LogSegment.recover``'s
        ``updateProducerState``): the state is rebuilt up to the segment's base offset
        (latest snapshot + replay), each batch applied, each ABORT of a transaction that
        had data indexed with the last stable offset of that moment; then a snapshot at
        the segment's end spares the next segment's recovery the replay."""
        manager = self._producer_state
        index = segment.txn_index
        if manager is None:
            index.truncate_to(segment.next_offset)
            return
        index.reset()
        backend = self._backend
        rebuild_producer_state(
            manager,
            previous,
            log_start_offset,
            segment.base_offset,
            backend.batch_header,
            batch_records=backend.batch_records,
        )
        for header, chunk, position in iter_segment_batches(
            segment, segment.base_offset, segment.next_offset, backend.batch_header
        ):
            if header.producer_id >= 0:
                marker = None
                if header.attributes & CONTROL_FLAG_MASK:
                    marker = end_txn_marker(backend.batch_records(chunk, position))
                self._index_aborted(index, manager.update_from_batch(header, marker))
            manager.update_map_end_offset(header.last_offset + 1)
        manager.update_map_end_offset(segment.next_offset)
        manager.take_snapshot()

    @staticmethod
    def _index_aborted(index: TransactionIndex, completed: list[tuple[CompletedTxn, int]]) -> None:
        for txn, last_stable_offset in completed:
            if txn.is_aborted:
                index.append(
                    AbortedTxn(
                        txn.producer_id, txn.first_offset, txn.last_offset, last_stable_offset
                    )
                )

    def _check_open(self) -> None:
        if self._storage_error is not None:
            raise self._storage_error
        if self._closed:
            raise ValueError(f"log {self._dir} is closed")

    def _storage_failed(self, action: str, exc: OSError) -> StorageIOError:
        """Record an I/O error of ``action`` (see :func:`_storage_guard`); the error to
        raise."""
        if self._storage_error is not None and exc is self._storage_error:
            return self._storage_error
        error = StorageIOError(
            exc.errno or 0,
            f"Error while {action} for {self._tp} in dir {os.path.dirname(self._dir)}: "
            f"{exc.strerror or exc}",
            getattr(exc, "filename", None) or self._dir,
        )
        first = self._storage_error is None
        if first:
            self._storage_error = error
        handler = self.on_storage_error
        if first and handler is not None:
            handler(os.path.dirname(self._dir), exc)
        return error

    @property
    def storage_error(self) -> StorageIOError | None:
        """The I/O error that took this log's directory offline, if one did."""
        return self._storage_error

    def close_handlers(self) -> None:
        """Close the files without flushing, snapshotting or moving the recovery point
        (Kafka's ``closeHandlers``, for a log whose directory failed). Idempotent; errors
        are ignored: recovery at the next start deals with the files."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            with contextlib.suppress(Exception):
                self._segments.close()

    def _remove_and_delete_segments(
        self, segments: list[LogSegment], *, async_delete: bool
    ) -> None:
        for segment in segments:
            self._segments.remove(segment.base_offset)
        delete_segment_files(
            segments,
            async_delete=async_delete,
            scheduler=self._scheduler,
            delay_ms=self._config.file_delete_delay_ms,
        )

    def _create_and_delete_segment(self, new_offset: int, old: LogSegment) -> LogSegment:
        """Replace ``old`` (the active segment) by a new empty one at ``new_offset``."""
        self._remove_and_delete_segments([old], async_delete=True)
        segment = self._open_segment(new_offset)
        self._segments.add(segment)
        return segment

    @_storage_guard
    def roll(self, expected_next_offset: int | None = None) -> LogSegment:
        """Start a new active segment at max(``expected_next_offset``, log end offset)
        (Kafka's ``roll``): the old one is sealed (indexes trimmed) and flushed soon after
        on the scheduler. An empty active segment already at that offset is recreated
        (KAFKA-6388)."""
        with self._lock:
            self._check_open()
            new_offset = max(expected_next_offset or 0, self._log_end_offset)
            active = self._segments.active_segment
            if new_offset in self._segments:
                if active.base_offset == new_offset and active.size == 0:
                    logger.warning(
                        "Trying to roll a new log segment with start offset %d while it "
                        "already exists and is active with size 0; recreating it",
                        new_offset,
                    )
                    segment = self._create_and_delete_segment(new_offset, active)
                else:
                    raise InvalidOffsetError(
                        f"Trying to roll a new log segment for topic partition {self._tp} with "
                        f"start offset {new_offset} while it already exists"
                    )
            elif new_offset < active.base_offset:
                raise InvalidOffsetError(
                    f"Trying to roll a new log segment for topic partition {self._tp} with start "
                    f"offset {new_offset} lower than start offset of the active segment "
                    f"{active.base_offset}"
                )
            else:
                for path in segment_file_paths(self._dir, new_offset):
                    if os.path.exists(path):
                        logger.warning(
                            "Newly rolled segment file %s already exists; deleting it", path
                        )
                        os.remove(path)
                active.files.seal()
                segment = self._open_segment(new_offset)
                self._segments.add(segment)
            base = segment.base_offset
            if self._producer_state is not None:
                # Kafka's roll: a snapshot at the new segment's base offset
                self._producer_state.take_snapshot(base)
            self._scheduler.schedule_once("flush-log", lambda: self._flush_if_open(base))
            return segment

    def _flush_if_open(self, offset: int) -> None:
        self._flush(offset, if_open=True)

    def _maybe_roll(
        self,
        segment: LogSegment,
        messages_size: int,
        max_timestamp: int,
        first_offset: int,
        last_offset: int,
        now: int,
    ) -> LogSegment:
        """``segment`` (the active one), or the new one if Kafka's ``shouldRoll`` says so."""
        config = self._config
        if segment.should_roll(
            max_segment_ms=self._max_segment_ms,
            max_segment_bytes=config.segment_bytes,
            max_timestamp_in_messages=max_timestamp,
            max_offset_in_messages=last_offset,
            messages_size=messages_size,
            now_ms=now,
        ):
            logger.debug(
                "Rolling new log segment (log_size = %d/%d, index full = %s, "
                "inactive_time_ms = %d/%d).",
                segment.size,
                config.segment_bytes,
                segment.files.index_is_full,
                segment.time_waited_for_roll(now, max_timestamp),
                self._max_segment_ms - segment.roll_jitter_ms,
            )
            return self.roll(first_offset)
        return segment

    # -- append --------------------------------------------------------------------------

    def _scan(self, data: bytes) -> list[BatchHeader]:
        """The headers of the batches of ``data`` (no CRC check: the segment does it)."""
        headers: list[BatchHeader] = []
        batch_header = self._backend.batch_header
        position = 0
        total = len(data)
        while position < total:
            header = BatchHeader._make(batch_header(data, position))
            length = header.batch_length
            size = LOG_OVERHEAD + length
            if length < MIN_BATCH_LENGTH or position + size > total:
                raise CorruptRecordError(
                    f"buffer, position {position}: batch length {length} does not fit in "
                    f"{total - position} remaining bytes"
                )
            headers.append(header)
            position += size
        return headers

    def append_as_leader(
        self, records: bytes, leader_epoch: int, *, origin: AppendOrigin = AppendOrigin.CLIENT
    ) -> LogAppendInfo:
        """Append as the partition leader: offsets from the log end offset, the batches
        stamped with ``leader_epoch`` (and the broker time on LogAppendTime topics)."""
        return self.append(records, leader_epoch, assign_offsets=True, origin=origin)

    def append_is_quick(self, size: int, leader_epoch: int) -> bool:
        """Whether an append of ``size`` bytes as leader at ``leader_epoch`` would, as far
        as can be told now, only write into the active segment's page cache: nobody holds
        the log's lock, no roll (:meth:`LogSegment.should_roll` with the append's largest
        possible offset), no ``flush.messages`` fsync, no new epoch for the checkpoint
        file, no I/O error seen. A hint for the broker, which runs such appends on its
        event loop instead of handing them to an I/O thread (see ``handlers/produce.py``);
        read without waiting for anything, so an append may still find otherwise."""
        if not self._lock.acquire(blocking=False):
            return False
        try:
            if self._closed or self._storage_error is not None:
                return False
            config = self._config
            if self._log_end_offset - self._recovery_point + size >= config.flush_messages:
                return False
            if leader_epoch >= 0 and self._epoch_cache.latest_epoch() != leader_epoch:
                return False
            active = self._segments.active_segment
            now = self._time.milliseconds()
            return not active.should_roll(
                max_segment_ms=self._max_segment_ms,
                max_segment_bytes=config.segment_bytes,
                max_timestamp_in_messages=now,
                # at most one record per byte: the largest last offset the append can have
                max_offset_in_messages=active.files.next_offset + size,
                messages_size=size,
                now_ms=now,
            )
        finally:
            self._lock.release()

    def append_as_follower(self, records: bytes) -> LogAppendInfo:
        """Append a leader's batches unchanged (offsets, epochs and timestamps kept)."""
        return self.append(records, assign_offsets=False, origin=AppendOrigin.REPLICATION)

    @_storage_guard
    def append(
        self,
        records: bytes,
        leader_epoch: int = -1,
        *,
        assign_offsets: bool = True,
        origin: AppendOrigin = AppendOrigin.CLIENT,
    ) -> LogAppendInfo:
        """Append one or more concatenated v2 record batches (Kafka's ``UnifiedLog.append``).

        ``assign_offsets=True`` (leader): checks as Kafka's leader does - with ``origin``
        CLIENT exactly one batch with base offset 0, a record count matching its offset
        range, no control batch, a sequence when it has a producer id; every batch within
        ``max.message.bytes`` (``RecordTooLargeError``); on compacted topics a key on
        every record (``RecordValidationError``). Offsets are assigned from the log end
        offset and ``leader_epoch`` (>= 0) is stamped and recorded in the epoch cache.
        ``assign_offsets=False`` (replica): the batches keep their offsets, which must
        start at or after the log end offset (``UnexpectedAppendOffsetError``) and
        increase (``InvalidOffsetError``); their epochs go to the epoch cache.

        Always: every batch is validated completely by the segment before anything is
        written (``CorruptRecordError``); an append larger than ``segment.bytes`` raises
        ``RecordBatchTooLargeError``; the active segment is rolled first when Kafka's
        ``shouldRoll`` says so; after the write the log is flushed if
        ``flush.messages`` offsets are unflushed.
        """
        data = records if type(records) is bytes else bytes(records)
        headers = self._scan(data)
        if assign_offsets and headers:
            # stateless checks (and record decoding on compacted topics) outside the lock
            validate_as_leader(
                self._backend,
                data,
                headers,
                self._config,
                self._tp,
                client=origin is AppendOrigin.CLIENT,
                now_ms=self._time.milliseconds(),
            )
        with self._lock:
            self._check_open()
            if not headers:
                return LogAppendInfo.unknown(self._log_start_offset)
            config = self._config
            now = self._time.milliseconds()
            log_append_time = -1
            active = self._segments.active_segment
            if assign_offsets:
                if config.message_timestamp_type == "LogAppendTime":
                    log_append_time = now
                # the active segment assigns from its next offset: the log end offset, or
                # above it after roll(expected_next_offset)
                first_offset = active.files.next_offset
                last_offset = first_offset - 1
                for h in headers:
                    last_offset += h.last_offset_delta + 1
            else:
                first_offset, last_offset = self._check_replica_offsets(headers)
            # One pass over the headers for what the roll check and LogAppendInfo need.
            batch_max_timestamp = -1
            num_records = 0
            codec = 0
            for h in headers:
                if h.max_timestamp > batch_max_timestamp:
                    batch_max_timestamp = h.max_timestamp
                num_records += h.records_count
                if h.attributes & COMPRESSION_CODEC_MASK:
                    codec = h.attributes & COMPRESSION_CODEC_MASK
            max_timestamp = log_append_time if log_append_time >= 0 else batch_max_timestamp

            size = len(data)
            if size > config.segment_bytes:
                raise RecordBatchTooLargeError(
                    f"Message batch size is {size} bytes in append to partition {self._tp}, "
                    f"which exceeds the maximum configured segment size of {config.segment_bytes}."
                )

            # producer state (raises DuplicateSequenceError etc. before anything is written)
            pending = None
            if self._producer_state is not None:
                pending = self._producer_state.prepare_append(
                    headers,
                    first_offset if assign_offsets else None,
                    client=assign_offsets and origin is AppendOrigin.CLIENT,
                    origin=_PRODUCER_ORIGIN[origin] if assign_offsets else ORIGIN_REPLICATION,
                    markers=self._markers(data, headers),
                )

            segment = self._maybe_roll(active, size, max_timestamp, first_offset, last_offset, now)
            # As Kafka's UnifiedLog.append: the epoch cache learns the epochs before the
            # batches are written, so a crash never leaves a batch whose epoch it lacks (an
            # entry past the log end is dropped on load, or here if the write fails).
            if assign_offsets:
                if leader_epoch >= 0:
                    self._epoch_cache.assign(leader_epoch, first_offset)
                last_epoch = leader_epoch
            else:
                for h in headers:
                    if h.partition_leader_epoch >= 0:
                        self._epoch_cache.assign(h.partition_leader_epoch, h.base_offset)
                last_epoch = headers[-1].partition_leader_epoch
            try:
                # A multi-batch append can need more index entries than the active segment
                # has left although shouldRoll said no (Kafka adds at most one entry per
                # append): then roll and retry once.
                retried = False
                while True:
                    try:
                        result = segment.files.append(
                            data,
                            partition_leader_epoch=leader_epoch,
                            log_append_time_ms=log_append_time,
                            assign_offsets=assign_offsets,
                        )
                        break
                    except IndexFullError:
                        if retried or segment.size == 0:
                            raise
                        retried = True
                        segment = self.roll(first_offset)
            except BaseException:
                self._epoch_cache.truncate_from_end(self._log_end_offset)
                raise
            first, last, append_max_ts, append_max_offset, written = result
            self._log_end_offset = last + 1
            if pending is not None and self._producer_state is not None:
                completed = self._producer_state.complete_append(pending, self._log_end_offset)
                if completed:
                    # Kafka's append: each ABORT's entry, with the LSO after it, goes to
                    # the .txnindex of the segment holding the marker
                    self._index_aborted(segment.txn_index, completed)

            flush_due = self._log_end_offset - self._recovery_point >= config.flush_messages
            info = LogAppendInfo(
                first,
                last,
                append_max_ts,
                append_max_offset,
                log_append_time,
                self._log_start_offset,
                written,
                last_epoch if last_epoch >= 0 else None,
                codec,
                len(headers),
                num_records,
            )
        if flush_due:
            # outside the lock, as Kafka's append: other appends go on during the fsync
            self._flush(None, if_open=True)
        return info

    def _markers(self, data: bytes, headers: list[BatchHeader]) -> list[EndTxnMarker | None] | None:
        """The decoded record of each control batch of ``data`` (``None`` for the other
        batches), or ``None`` when there is no control batch."""
        for h in headers:
            if h.attributes & CONTROL_FLAG_MASK:
                break
        else:
            return None
        markers: list[EndTxnMarker | None] = []
        position = 0
        for h in headers:
            marker = None
            if h.attributes & CONTROL_FLAG_MASK:
                marker = end_txn_marker(self._backend.batch_records(data, position))
            markers.append(marker)
            position += LOG_OVERHEAD + h.batch_length
        return markers

    # -- transactions --------------------------------------------------------------------

    def append_txn_marker(
        self,
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        commit: bool,
        leader_epoch: int,
        timestamp_ms: int | None = None,
    ) -> LogAppendInfo:
        """Append a COMMIT or ABORT marker as leader (Kafka's ``appendAsLeader`` with
        ``AppendOrigin.COORDINATOR`` of ``MemoryRecords.withEndTransactionMarker``): one
        78-byte control batch - transactional and control attributes, the producer's id
        and epoch, base sequence -1, one record with key ``(version 0, type)`` and value
        ``(version 0, coordinator_epoch)`` - timestamped ``timestamp_ms`` (default now).

        Raises ``InvalidProducerEpochError`` (INVALID_PRODUCER_EPOCH) when
        ``producer_epoch`` is below the producer's, ``TransactionCoordinatorFencedError``
        (TRANSACTION_COORDINATOR_FENCED) when ``coordinator_epoch`` is below the one
        stored for it; nothing is written then. A marker for a producer without an open
        transaction is written but changes neither the last stable offset nor the
        ``.txnindex``; an ABORT that ends one adds an :class:`AbortedTxn` to the
        ``.txnindex`` of the segment it lands in. Needs a producer state
        (``ValueError`` without)."""
        if self._producer_state is None:
            raise ValueError(f"log {self._dir} keeps no producer state: no transactions")
        timestamp = self._time.milliseconds() if timestamp_ms is None else timestamp_ms
        batch = build_control_batch(
            ControlType.COMMIT if commit else ControlType.ABORT,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            timestamp=timestamp,
            coordinator_epoch=coordinator_epoch,
        )
        return self.append(batch, leader_epoch, origin=AppendOrigin.COORDINATOR)

    def has_ongoing_transaction(self, producer_id: int, producer_epoch: int) -> bool:
        """Whether ``producer_id`` has a transaction open here at ``producer_epoch``
        (Kafka's ``hasOngoingTransaction``: what spares a transactional write the
        coordinator's verification)."""
        manager = self._producer_state
        if manager is None:
            return False
        with self._lock:
            entry = manager.last_entry(producer_id)
            return (
                entry is not None
                and entry.current_txn_first_offset is not None
                and entry.producer_epoch == producer_epoch
            )

    def verification_guard(self, producer_id: int) -> int:
        """:meth:`ProducerStateManager.verification_guard` (0 without a producer state)."""
        manager = self._producer_state
        if manager is None:
            return 0
        with self._lock:
            return manager.verification_guard(producer_id)

    def active_producers(self) -> list[ProducerStateEntry]:
        """A copy of each producer's state (DescribeProducers; Kafka's
        ``activeProducers``); none without a producer state."""
        with self._lock:
            manager = self._producer_state
            if manager is None:
                return []
            return [entry.copy() for entry in manager.active_producers.values()]

    @property
    def first_unstable_offset(self) -> int | None:
        """The first offset of the earliest transaction still open, or completed by a
        marker the high watermark has not passed (:meth:`update_high_watermark`);
        ``None`` when there is none or the log keeps no producer state."""
        manager = self._producer_state
        if manager is None:
            return None
        with self._lock:
            return manager.first_unstable_offset

    def update_high_watermark(self, high_watermark: int) -> None:
        """The replication layer's high watermark moved to ``high_watermark``: completed
        transactions whose marker it passed stop holding the first unstable offset
        (Kafka's ``onHighWatermarkUpdated``)."""
        manager = self._producer_state
        if manager is None or not manager.has_unstable_transactions:
            return
        with self._lock:
            manager.on_high_watermark_updated(high_watermark)

    def last_stable_offset(self, high_watermark: int | None = None) -> int:
        """``min(first unstable offset, high_watermark)`` (Kafka's ``lastStableOffset``);
        ``high_watermark`` defaults to the log end offset (a log without replication).
        Without any transaction in flight it is read without the log's lock."""
        manager = self._producer_state
        if manager is None or not manager.has_unstable_transactions:
            return self._log_end_offset if high_watermark is None else high_watermark
        with self._lock:
            hw = self._log_end_offset if high_watermark is None else high_watermark
            manager.on_high_watermark_updated(hw)
            first = manager.first_unstable_offset
            return hw if first is None else min(first, hw)

    def collect_aborted_transactions(
        self, start_offset: int, upper_bound_offset: int
    ) -> list[AbortedTxn]:
        """The aborted transactions overlapping ``[start_offset, upper_bound_offset)``
        (Kafka's ``collectAbortedTransactions``): the ``.txnindex`` of the segment holding
        ``start_offset`` first, then of each later segment until one says no later
        segment can hold more (an entry whose last stable offset reaches the bound)."""
        with self._lock:
            segment = self._segments.floor_segment(start_offset)
            if segment is None:
                segment = self._segments.first_segment()
            segments = [] if segment is None else [segment]
            if segment is not None:
                segments += self._segments.higher_segments(segment.base_offset)
        found: list[AbortedTxn] = []
        for current in segments:
            result = current.txn_index.collect(start_offset, upper_bound_offset)
            found.extend(result.aborted)
            if result.complete:
                break
        return found

    def aborted_transactions_for(self, info: FetchDataInfo) -> list[AbortedTxn]:
        """The aborted transactions a read_committed consumer needs for the region
        ``info`` (Kafka's ``addAbortedTransactions``): those overlapping [the fetch
        offset, the first offset after the region's last batch)."""
        if info.length <= 0:
            return []
        with self._lock:
            segment = self._segments.floor_segment(info.offset)
            if segment is None:
                segment = self._segments.first_segment()
            segments = [] if segment is None else [segment]
            if segment is not None:
                segments += self._segments.higher_segments(segment.base_offset)
        if all(s.txn_index.known_absent for s in segments):
            # no transaction was ever aborted in these segments (known from an earlier
            # look, without touching the disk): no bound to find
            return []
        return self.collect_aborted_transactions(info.offset, self._offset_after(info))

    def _offset_after(self, info: FetchDataInfo) -> int:
        """The first offset after the region: the base offset of the batch that follows
        it in its segment, else the next segment's base offset (or the log end)."""
        end = info.position + info.length
        with self._lock:
            segment = self._segments.get(info.segment_base_offset)
            if segment is not None and end + LOG_OVERHEAD <= segment.size:
                head = read_region(info.file, end, 8)
                if len(head) == 8:
                    return int.from_bytes(head, "big", signed=True)
            following = self._segments.higher_segment(info.segment_base_offset)
            return following.base_offset if following is not None else self._log_end_offset

    def _check_replica_offsets(self, headers: list[BatchHeader]) -> tuple[int, int]:
        """A replica's batches keep their offsets: increasing, from the log end offset on;
        returns the first and last offset."""
        first_offset = headers[0].base_offset
        previous_last = -1
        for h in headers:
            if h.base_offset <= previous_last:
                raise InvalidOffsetError(
                    f"Out of order offsets found in append to {self._tp}: batch at "
                    f"offset {h.base_offset} after offset {previous_last}"
                )
            previous_last = h.base_offset + h.last_offset_delta
        if first_offset < self._log_end_offset:
            raise UnexpectedAppendOffsetError(
                f"Unexpected offset in append to {self._tp}. First offset {first_offset} "
                f"is less than the next offset {self._log_end_offset}. Last offset in "
                f"append: {previous_last}. Log start offset = {self._log_start_offset}",
                first_offset,
                previous_last,
            )
        return first_offset, previous_last

    # -- read ----------------------------------------------------------------------------

    def batches(self, chunk_bytes: int = 1 << 20) -> Iterator[tuple[bytes, int, BatchHeader]]:
        """Every batch from the log start to the log end, in order, as ``(buffer,
        position, header)``, read ``chunk_bytes`` at a time (a coordinator's load of its
        partition). Blocking."""
        offset = self.log_start_offset
        while offset < self.log_end_offset:
            data = self.read(offset, chunk_bytes).read_bytes()
            if not data:
                return
            for pos, _magic, _size in iter_batches(data):
                header = batch_header(data, pos)
                offset = header.last_offset + 1
                yield data, pos, header

    def read(
        self,
        start_offset: int,
        max_bytes: int,
        upper_bound: int | None = None,
        *,
        min_one_batch: bool = True,
    ) -> FetchDataInfo:
        """Whole batches from the one holding ``start_offset``: at most ``max_bytes`` (but
        the first batch whole when ``min_one_batch``), and none holding offsets at or
        above ``upper_bound`` (the high watermark; default and cap: the log end offset).

        Crosses segment boundaries when a segment has nothing at or after
        ``start_offset``. ``OffsetOutOfRangeError`` if ``start_offset`` is below the log
        start offset or above the log end offset; an offset at or past ``upper_bound``
        reads nothing."""
        if max_bytes < 0:
            raise ValueError(f"Invalid max size {max_bytes} for log read")
        with self._lock:
            self._check_open()
            end_offset = self._log_end_offset
            if start_offset < self._log_start_offset:
                raise OffsetOutOfRangeError(
                    f"Received request for offset {start_offset} for partition {self._tp}, but we "
                    f"only have log segments starting from offset: {self._log_start_offset}."
                )
            if start_offset < self.local_log_start_offset and self.remote_log_enabled:
                raise OffsetMovedToTieredStorageError(
                    f"Received request for offset {start_offset} for partition {self._tp}, "
                    f"which is below the local log start offset {self.local_log_start_offset}"
                )
            segment = self._segments.floor_segment(start_offset)
            if start_offset > end_offset or segment is None:
                raise OffsetOutOfRangeError(
                    f"Received request for offset {start_offset} for partition {self._tp}, but we "
                    f"only have log segments upto {end_offset}."
                )
            bound = end_offset if upper_bound is None else min(upper_bound, end_offset)
            if start_offset >= bound:
                return self._empty_read(start_offset, segment)
            bound_segment = self._segments.floor_segment(bound)
            bound_base = bound_segment.base_offset if bound_segment is not None else -1
            current: LogSegment | None = segment
            while current is not None:
                if current.base_offset < bound_base:
                    max_position = -1
                elif current.base_offset == bound_base:
                    if bound >= current.next_offset:
                        # the bound (a caught-up high watermark) is past every batch of
                        # the segment: no walk to find its position
                        max_position = -1
                    else:
                        located = current.files.translate_offset(bound)
                        max_position = current.size if located is None else located[1]
                else:
                    return self._empty_read(start_offset, current)
                found = current.files.read(start_offset, max_bytes, max_position, min_one_batch)
                if found is not None:
                    position, length = found
                    return FetchDataInfo(
                        current.log_path, position, length, start_offset, current.base_offset
                    )
                current = self._segments.higher_segment(current.base_offset)
            return self._empty_read(start_offset, self._segments.active_segment)

    @staticmethod
    def _empty_read(offset: int, segment: LogSegment) -> FetchDataInfo:
        return FetchDataInfo(segment.log_path, segment.size, 0, offset, segment.base_offset)

    # -- offsets by time and epoch -------------------------------------------------------

    def offset_for_timestamp(self, timestamp: int) -> TimestampAndOffset | None:
        """ListOffsets (Kafka's ``fetchOffsetByTimestamp``, no tiered storage):

        * ``-2`` earliest (and ``-4`` earliest local): ``(-1, log start offset, epoch of the
          first cached epoch if it starts at or before it)``;
        * ``-1`` latest: ``(-1, log end offset, latest epoch)``;
        * ``-5`` latest tiered: the highest tiered offset (``(-1, -1, -1)``: nothing is
          tiered);
        * ``-6`` earliest pending upload (KIP-1023): the first offset not tiered yet, the
          log start while nothing was ever tiered, ``(-1, -1, -1)`` without tiered storage
          or when this replica does not know what was tiered (its local log starts above
          the log start);
        * ``-3`` max timestamp: the first record with the largest timestamp of the log,
          with its batch's epoch;
        * otherwise the first record at or after the log start offset with timestamp >=
          ``timestamp``, searched in the first segment whose largest timestamp (else its
          file time) is >= ``timestamp``; ``None`` if there is none."""
        with self._lock:
            self._check_open()
            if timestamp == EARLIEST_LOCAL_TIMESTAMP and self.remote_log_enabled:
                local_start = self.local_log_start_offset
                return TimestampAndOffset(
                    _NO_TIMESTAMP, local_start, self._epoch_cache.epoch_for_offset(local_start)
                )
            if timestamp == EARLIEST_PENDING_UPLOAD_TIMESTAMP:
                return self._earliest_pending_upload()
            if timestamp == LATEST_TIERED_TIMESTAMP and self.remote_log_enabled:
                highest = self._highest_offset_in_remote_storage
                epoch = self._epoch_cache.epoch_for_offset(highest) if highest >= 0 else None
                return TimestampAndOffset(_NO_TIMESTAMP, highest, epoch)
            if timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
                return self._earliest()
            if timestamp == LATEST_TIMESTAMP:
                return TimestampAndOffset(
                    _NO_TIMESTAMP, self._log_end_offset, self._epoch_cache.latest_epoch()
                )
            if timestamp == LATEST_TIERED_TIMESTAMP:
                return TimestampAndOffset(_NO_TIMESTAMP, -1, -1)
            segments = self._segments.values()
            if timestamp == MAX_TIMESTAMP:
                best = segments[0]
                for segment in segments[1:]:
                    if segment.max_timestamp > best.max_timestamp:
                        best = segment
                return self._found(best.files.find_offset_by_timestamp(best.max_timestamp))
            start = self.local_log_start_offset  # the tiered part is the remote manager's
            for segment in segments:
                if segment.largest_timestamp() >= timestamp:
                    return self._found(segment.files.find_offset_by_timestamp(timestamp, start))
            return None

    def _earliest(self) -> TimestampAndOffset:
        """The log start offset with the first cached epoch if it starts at or before it
        (not so after a message format upgrade), under the lock."""
        earliest = self._epoch_cache.earliest_entry()
        epoch = (
            earliest.epoch
            if earliest is not None and earliest.start_offset <= self._log_start_offset
            else None
        )
        return TimestampAndOffset(_NO_TIMESTAMP, self._log_start_offset, epoch)

    def _earliest_pending_upload(self) -> TimestampAndOffset:
        """Kafka's ``fetchEarliestPendingUploadOffset``, under the lock."""
        highest = self._highest_offset_in_remote_storage
        if not self.remote_log_enabled or (
            highest < 0 and self.local_log_start_offset != self._log_start_offset
        ):
            return TimestampAndOffset(_NO_TIMESTAMP, -1, -1)
        if highest < 0:  # nothing uploaded yet: the earliest offset
            return self._earliest()
        pending = max(highest + 1, self._log_start_offset)
        return TimestampAndOffset(
            _NO_TIMESTAMP, pending, self._epoch_cache.epoch_for_offset(pending)
        )

    @staticmethod
    def _found(found: tuple[int, int, int] | None) -> TimestampAndOffset | None:
        if found is None:
            return None
        ts, offset, epoch = found
        return TimestampAndOffset(ts, offset, epoch if epoch >= 0 else None)

    def end_offset_for_epoch(self, leader_epoch: int) -> tuple[int, int] | None:
        """``(epoch, end offset)`` for OffsetForLeaderEpoch (Kafka's ``endOffsetForEpoch``:
        :meth:`LeaderEpochFileCache.end_offset_for` with the log end offset), ``None``
        when the offset is undefined."""
        with self._lock:
            epoch, offset = self._epoch_cache.end_offset_for(leader_epoch, self._log_end_offset)
            return None if offset == UNDEFINED_EPOCH_OFFSET else (epoch, offset)

    def maybe_assign_epoch_start_offset(self, leader_epoch: int, start_offset: int) -> None:
        """Record a new leader epoch starting at ``start_offset`` (a new leader does so
        with its log end offset before it appends, KAFKA-7415)."""
        with self._lock:
            self._epoch_cache.assign(leader_epoch, start_offset)

    # -- log start offset, truncation ----------------------------------------------------

    def delete_records_before(self, offset: int) -> bool:
        """Advance the log start offset to ``offset`` (DeleteRecords; Kafka's
        ``maybeIncrementLogStartOffset``); returns whether it moved. The epoch cache is
        truncated from the start and the recovery point raised to it; segments wholly
        below it go at the next :meth:`delete_old_segments`. ``OffsetOutOfRangeError`` if
        ``offset`` is past the log end offset (the caller checks the high watermark)."""
        with self._lock:
            self._check_open()
            if offset > self._log_end_offset:
                raise OffsetOutOfRangeError(
                    f"Cannot increment the log start offset to {offset} of partition {self._tp} "
                    f"since it is larger than the log end offset {self._log_end_offset}"
                )
            if offset <= self._log_start_offset:
                return False
            self._update_log_start_offset(offset)
            logger.info("Incremented log start offset of %s to %d", self._tp, offset)
            return True

    def _update_log_start_offset(self, offset: int) -> None:
        self._log_start_offset = offset
        if self._recovery_point < offset:
            self._recovery_point = offset
        self._epoch_cache.truncate_from_start(offset)
        if self._producer_state is not None:
            self._producer_state.on_log_start_offset_incremented(offset)

    @_storage_guard
    def truncate_to(self, target_offset: int) -> bool:
        """Remove every offset >= ``target_offset`` (Kafka's ``truncateTo``); returns
        ``True`` if anything was removed. Later segments are deleted, the one holding
        ``target_offset`` is cut before the batch containing it, the epoch cache is
        truncated from the end. A target in the middle of a batch removes that whole
        batch, and the log end offset becomes the batch's base offset (Kafka leaves it at
        the target). A target below the first segment empties the log
        (:meth:`truncate_fully_and_start_at`). At or past the end: only the epoch cache is
        truncated (a stale entry from an epoch with no data)."""
        if target_offset < 0:
            raise ValueError(
                f"Cannot truncate partition {self._tp} to a negative offset ({target_offset})."
            )
        with self._lock:
            self._check_open()
            if target_offset >= self._log_end_offset:
                self._epoch_cache.truncate_from_end(self._log_end_offset)
                return False
            first = self._segments.first_segment()
            assert first is not None
            if first.base_offset > target_offset:
                self.truncate_fully_and_start_at(target_offset)
                return True
            later = self._segments.higher_segments(target_offset)
            self._remove_and_delete_segments(later, async_delete=True)
            active = self._segments.active_segment
            self._truncations += 1
            active.truncate_to(target_offset, self._time.milliseconds())
            self._log_end_offset = active.next_offset
            self._recovery_point = min(self._recovery_point, self._log_end_offset)
            self._epoch_cache.truncate_from_end(self._log_end_offset)
            self._log_start_offset = min(self._log_end_offset, self._log_start_offset)
            self._rebuild_producer_state()
            return True

    @_storage_guard
    def truncate_fully_and_start_at(
        self, new_offset: int, log_start_offset: int | None = None
    ) -> None:
        """Delete everything and start empty at ``new_offset`` (Kafka's
        ``truncateFullyAndStartAt``): a replica too far behind the leader's log start. The
        epoch cache is cleared; the log start offset becomes ``log_start_offset`` (default
        ``new_offset``)."""
        if new_offset < 0:
            raise ValueError(
                f"Cannot start partition {self._tp} at a negative offset ({new_offset})."
            )
        with self._lock:
            self._check_open()
            self._truncations += 1
            segments = self._segments.values()
            self._remove_and_delete_segments(segments[:-1], async_delete=True)
            self._create_and_delete_segment(new_offset, segments[-1])
            self._log_end_offset = new_offset
            self._recovery_point = min(self._recovery_point, new_offset)
            self._epoch_cache.clear_and_flush()
            self._log_start_offset = new_offset if log_start_offset is None else log_start_offset
            if self._producer_state is not None:
                self._producer_state.truncate_fully_and_start_at(new_offset)

    # -- flush ---------------------------------------------------------------------------

    def flush(self, offset: int | None = None) -> None:
        """fsync every segment that may hold offsets below ``offset`` (default: the log end
        offset) and not yet flushed, then move the recovery point to ``offset`` (Kafka's
        ``flushUptoOffsetExclusive``). The directory is fsynced too when a new segment
        was flushed.

        As Kafka's ``UnifiedLog.flush``, the fsyncs run outside the log's lock: the lock is
        held only to pick the files (and the target) and, afterwards, to move the recovery
        point - forward only, and not at all if a truncation happened meanwhile (its
        offsets may have been rewritten by bytes that were not fsynced). So any thread may
        call it while others append, read or flush: the scheduler's flusher, the roll's
        delayed flush, an append reaching ``flush.messages``. The files are fsynced through
        descriptors of their own (:func:`~kafkacore.log.segments.fsync_segment_files`),
        never through the backend ``Segment``, which is not thread-safe. A segment deleted
        meanwhile (retention) is skipped: its offsets are below the log start offset."""
        self._flush(offset, if_open=False)

    @_storage_guard
    def _flush(self, offset: int | None, *, if_open: bool) -> None:
        """:meth:`flush`; with ``if_open`` a closed log (flushed by its close) is no error."""
        with self._lock:
            if if_open and self._closed:
                return
            self._check_open()
            target = self._log_end_offset if offset is None else min(offset, self._log_end_offset)
            recovery_point = self._recovery_point
            if target <= recovery_point:
                return
            to_flush = self._segments.values(recovery_point, target)
            paths = [segment.file_paths() for segment in to_flush]
            new_segment = any(s.base_offset >= recovery_point for s in to_flush)
            truncations = self._truncations
        for segment_paths in paths:
            fsync_segment_files(segment_paths)
        if new_segment:
            with contextlib.suppress(FileNotFoundError):
                fsync_dir(self._dir)
        with self._lock:
            if self._truncations != truncations or self._closed:
                return
            if target > self._recovery_point:
                self._recovery_point = target
            self._last_flush_ms = self._time.milliseconds()

    # -- retention -----------------------------------------------------------------------

    def delete_old_segments(self, high_watermark: int | None = None) -> int:
        """Apply retention (Kafka's ``deleteOldSegments``): segments wholly below the log
        start offset always; with the ``delete`` cleanup policy also by ``retention.bytes``
        then ``retention.ms``. Only segments wholly below ``high_watermark`` (default: the
        log end offset) go. Returns the number of segments deleted. See
        :mod:`kafkacore.log.retention`.

        With tiered storage (:attr:`remote_log_enabled`) the local tier keeps
        ``local.retention.bytes``/``local.retention.ms`` and gives up only segments already
        copied; the log start offset then stays (retention of the whole log is the remote
        log manager's)."""
        with self._lock:
            self._check_open()
            hw = self._log_end_offset if high_watermark is None else high_watermark
            deleted = self._delete_old_segments(
                log_start_offset_breached(self._log_start_offset), hw
            )
            if self._config.delete:
                tiered = self.remote_log_enabled
                retention_bytes = (
                    self._config.effective_local_retention_bytes()
                    if tiered
                    else self._config.retention_bytes
                )
                retention_ms = (
                    self._config.effective_local_retention_ms()
                    if tiered
                    else self._config.retention_ms
                )
                by_size = retention_size_breached(retention_bytes, self._segments.size_in_bytes())
                by_time = retention_ms_breached(retention_ms, self._time.milliseconds())
                for predicate in (by_size, by_time):
                    if predicate is None:
                        continue
                    if tiered:
                        predicate = tiered_only(predicate, self._highest_offset_in_remote_storage)
                    deleted += self._delete_old_segments(predicate, hw, advance_start=not tiered)
            return deleted

    def _delete_old_segments(
        self, predicate: SegmentPredicate, high_watermark: int, *, advance_start: bool = True
    ) -> int:
        deletable = deletable_segments(
            self._segments,
            predicate,
            high_watermark=high_watermark,
            log_end_offset=self._log_end_offset,
        )
        if not deletable:
            return 0
        to_delete = deletable
        if len(self._segments) == len(deletable):
            # a log always keeps an active segment: roll an empty one first
            new_segment = self.roll()
            if deletable[-1].base_offset == new_segment.base_offset:
                to_delete = deletable[:-1]
        if to_delete:
            following = self._segments.higher_segment(to_delete[-1].base_offset)
            assert following is not None
            if advance_start and following.base_offset > self._log_start_offset:
                self._update_log_start_offset(following.base_offset)
            self._remove_and_delete_segments(to_delete, async_delete=True)
        return len(deletable)

    # -- topic id, lifecycle -------------------------------------------------------------

    def assign_topic_id(self, topic_id: uuid.UUID) -> None:
        """Record the topic id in ``partition.metadata`` (``InconsistentTopicIdError`` if
        the directory already belongs to another id)."""
        with self._lock:
            if self._topic_id is not None:
                if self._topic_id != topic_id:
                    raise InconsistentTopicIdError(
                        f"Tried to assign topic ID {topic_id} to log for topic partition "
                        f"{self._tp}, but log already contained topic ID {self._topic_id}"
                    )
                return
            self._partition_metadata.write(topic_id)
            self._topic_id = topic_id

    def close(self) -> None:
        """Seal, fsync and close every segment; the recovery point becomes the log end
        offset. Idempotent."""
        with self._lock:
            if self._closed:
                return
            if self._producer_state is not None:
                # Kafka snapshots at shutdown so that loading replays nothing
                self._producer_state.take_snapshot()
            # the .txnindex files written since the last flush (the recovery point will
            # be the log end: they are not rebuilt at the next start)
            for segment in self._segments.values(self._recovery_point, _MAX_OFFSET):
                segment.txn_index.flush()
            self._segments.close()
            self._recovery_point = self._log_end_offset
            self._closed = True

    def delete(self) -> None:
        """Delete the whole partition directory now (the log is closed)."""
        with self._lock:
            self._epoch_cache.clear()
            segments = self._segments.values()
            self._segments.clear()
            if not self._closed:
                delete_segment_files(segments, async_delete=False, scheduler=None, delay_ms=0)
            self._closed = True
            shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> Log:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- compaction (kafkacore.log.cleaner) ----------------------------------------------

    def replace_segments(
        self, cleaned_base_offset: int, old_segments: list[LogSegment]
    ) -> LogSegment | None:
        """Swap a compacted segment in for ``old_segments`` (Kafka's ``replaceSegments``),
        crash-safe with the loader's rules (:mod:`kafkacore.log.loader`, steps 1 and 2).

        The cleaner has written and fsynced ``<base>.log.cleaned``, ``<base>.index.cleaned``
        and ``<base>.timeindex.cleaned`` (``base`` = ``cleaned_base_offset``, the base
        offset of the first old segment). Under the log's lock:

        1. each ``.cleaned`` file is renamed to ``.swap`` (the ``.log`` first) and the
           directory fsynced; a crash before this is complete leaves ``.cleaned`` files,
           which the next load deletes with every ``.swap`` at or above their offset: the
           old segments stay;
        2. the old segments leave the log and their files are renamed to ``.deleted``
           (removed ``file.delete.delay.ms`` later); a crash from here on is completed by
           the next load (the valid ``.swap`` replaces what is left of the old segments);
        3. each ``.swap`` file is renamed to its final name, the directory fsynced, and the
           new segment opened (sealed) in the old ones' place.

        The producer snapshots of the old segments after the first (deleted, not replaced)
        are deleted too.

        Returns the new segment, or ``None`` - the ``.cleaned`` files deleted, nothing
        changed - when the log is closed or an old segment is no longer the log's (a
        truncation or retention removed it meanwhile) or is the active one. An error in
        step 1 renames back what it renamed; an error after that leaves the files
        consistent for the next load, and this log object must be reloaded.
        """
        from kafkacore.log.files import CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX

        cleaned = segment_file_paths(self._dir, cleaned_base_offset, CLEANED_FILE_SUFFIX)
        with self._lock:
            stale = (
                self._closed
                or not old_segments
                or old_segments[0].base_offset != cleaned_base_offset
                or any(self._segments.get(s.base_offset) is not s for s in old_segments)
                or old_segments[-1] is self._segments.active_segment
            )
            if stale:
                for path in cleaned:
                    with contextlib.suppress(FileNotFoundError):
                        os.remove(path)
                return None
            swaps: list[tuple[str, str]] = []
            try:
                for path in cleaned:
                    if os.path.exists(path):
                        swap = path[: -len(CLEANED_FILE_SUFFIX)] + SWAP_FILE_SUFFIX
                        os.replace(path, swap)
                        swaps.append((path, swap))
                fsync_dir(self._dir)
            except Exception:
                for path, swap in reversed(swaps):
                    with contextlib.suppress(OSError):
                        os.replace(swap, path)
                raise
            self._remove_and_delete_segments(old_segments, async_delete=True)
            if self._producer_state is not None:
                # Kafka's deleteProducerSnapshots for the segments deleted, not replaced
                for old in old_segments[1:]:
                    self._producer_state.remove_snapshot(old.base_offset)
            for _, swap in swaps:
                os.replace(swap, swap[: -len(SWAP_FILE_SUFFIX)])
            fsync_dir(self._dir)
            segment = self._open_segment(cleaned_base_offset)
            segment.files.seal()
            self._segments.add(segment)
            logger.info(
                "Replaced segments %s of %s with the cleaned segment %d",
                [s.base_offset for s in old_segments],
                self._tp,
                cleaned_base_offset,
            )
            return segment
