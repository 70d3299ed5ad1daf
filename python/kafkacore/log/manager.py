"""The logs of one broker over its ``log.dirs`` (Kafka's ``LogManager``).

A :class:`LogManager` owns every partition log in one or more log directories:

* **Start-up** (:meth:`LogManager.startup`): each log directory is created if missing and
  locked (``.lock``, as Kafka: one broker per directory); ``meta.properties`` is read and
  checked - or written, on first start, with the cluster id, the node id and a fresh
  ``directory.id``; then every ``<topic>-<partition>`` directory is loaded, in parallel:
  ``num.recovery.threads.per.data.dir`` threads per log directory.
* **Clean shutdown marker** ``.kafka_cleanshutdown`` (JSON ``{"version":0,"brokerEpoch":N}``,
  Kafka 3.7+): written by :meth:`LogManager.shutdown` after every log was flushed, closed
  and checkpointed; deleted (and the deletion fsynced) as loading starts, so that a crash
  during loading counts as unclean (KAFKA-10471). Without it, every segment past the
  partition's ``recovery-point-offset-checkpoint`` is recovered: batches CRC-validated, the
  invalid tail truncated, indexes rebuilt, later segments deleted
  (:mod:`kafkacore.log.loader`, which also finishes or discards interrupted compaction
  swaps: ``.deleted``, ``.cleaned`` and ``.swap`` leftovers).
* **Partition directories**: :meth:`LogManager.get_or_create_log` creates one in the log
  directory holding the fewest logs; :meth:`LogManager.delete_log` closes the log, renames
  its directory to ``<topic>-<partition>.<uuid hex>-delete`` and removes it
  ``file.delete.delay.ms`` later (a ``-delete`` directory found at start-up is removed the
  same way).
* **Checkpoints** per log directory (Kafka's text format, written atomically):
  ``recovery-point-offset-checkpoint`` (:meth:`~LogManager.checkpoint_recovery_offsets`),
  ``log-start-offset-checkpoint`` (:meth:`~LogManager.checkpoint_log_start_offsets`; only
  logs whose start is above their first segment, as Kafka),
  ``replication-offset-checkpoint`` (high watermarks, owned by the replication layer, which
  passes them to :meth:`~LogManager.checkpoint_high_watermarks` and reads them back with
  :meth:`~LogManager.read_high_watermarks`) and ``cleaner-offset-checkpoint`` (the
  compaction cleaner's progress: :meth:`~LogManager.update_cleaner_checkpoint`; entries of
  deleted partitions are dropped and entries above a truncation point lowered, as Kafka's
  ``LogCleanerManager`` does).
* **Background work** on the scheduler, first after ``log.initial.task.delay.ms``:
  retention (:meth:`~LogManager.cleanup_logs`) every ``log.retention.check.interval.ms``;
  flushing logs whose ``flush.ms`` elapsed (:meth:`~LogManager.flush_dirty_logs`) every
  ``log.flush.scheduler.interval.ms``; the recovery-point and log-start-offset checkpoints
  every ``log.flush.offset.checkpoint.interval.ms`` and
  ``log.flush.start.offset.checkpoint.interval.ms``. (``flush.messages`` is applied by
  :class:`~kafkacore.log.log.Log` on append.)
* **Progress**: recovering after an unclean shutdown reports each segment - a progress bar
  on stderr when it is a terminal (:class:`RecoveryProgress`), else log lines
  ``Recovering segment N/M of <topic>-<partition> (P%)`` (logger ``kafkacore.log``).

Example::

    from kafkacore.config import BrokerConfig
    from kafkacore.log import LogManager

    broker = BrokerConfig({"log.dirs": "/data/a,/data/b", "node.id": 1})
    with LogManager(broker_config=broker) as manager:      # startup() ... shutdown()
        log = manager.get_or_create_log("orders", 0)
        log.append_as_leader(batch, leader_epoch=0)
        manager.checkpoint_high_watermarks({log.topic_partition: log.log_end_offset})

* **Offline log directories** (Kafka's ``LogDirFailureChannel``): an I/O error while
  loading, writing, flushing, truncating or checkpointing the logs of a directory makes it
  offline (:attr:`LogManager.failure_channel`, :mod:`kafkacore.log.dir_failure`): its
  logs refuse writes at once; :meth:`~LogManager.handle_log_dir_failure` (called by the
  broker's handler) closes them and drops them from the manager; no new log goes there,
  no checkpoint and no clean shutdown marker is written there, so the next start
  recovers it. Start-up fails only when every directory is offline.

Not done here (yet): ``-future`` replicas moved between log directories and
``-stray`` KRaft replicas (both left on disk and logged), tiered storage.

Thread-safety: every public method may be called from any thread. Creating and deleting
logs is serialized by one lock (Kafka's ``logCreationOrDeletionLock``); checkpoint writes
by another; each :class:`~kafkacore.log.log.Log` locks itself.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import shutil
import sys
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from types import TracebackType
from typing import IO, Final, Literal, Protocol

from kafkacore._backend import Backend
from kafkacore.config import BrokerConfig, LogConfig
from kafkacore.errors import CorruptCheckpointError, KafkaCoreError, StorageIOError
from kafkacore.log.checkpoints import (
    MetaProperties,
    OffsetCheckpointFile,
    fsync_dir,
    random_uuid,
    uuid_to_base64,
)
from kafkacore.log.cleaner import CleanerOffsetCheckpoints, read_checkpoint_or_empty
from kafkacore.log.clock import SYSTEM_TIME, Time
from kafkacore.log.dir_failure import LogDirFailureChannel
from kafkacore.log.files import (
    CLEAN_SHUTDOWN_FILE,
    DELETE_DIR_SUFFIX,
    FUTURE_DIR_SUFFIX,
    LOG_START_OFFSET_CHECKPOINT_FILE,
    RECOVERY_POINT_CHECKPOINT_FILE,
    REPLICATION_OFFSET_CHECKPOINT_FILE,
    STRAY_DIR_SUFFIX,
    TopicPartition,
    log_delete_dir_name,
    log_dir_name,
    parse_topic_partition_name,
)
from kafkacore.log.loader import ProgressCallback, recovery_progress
from kafkacore.log.log import Log
from kafkacore.log.producer_state import CorruptSnapshotError, ProducerStateManager
from kafkacore.log.scheduler import Scheduler, ThreadScheduler

__all__ = [
    "DEFAULT_NODE_ID",
    "LOCK_FILE",
    "CleanShutdownFile",
    "CleanerHooks",
    "LogDirError",
    "LogManager",
    "LogManagerHealth",
    "RecoveryProgress",
]

logger = logging.getLogger("kafkacore.log")

#: The node id written to a new ``meta.properties`` when neither the broker config
#: (``node.id``) nor an existing ``meta.properties`` gives one (Kafka 4's sample config).
DEFAULT_NODE_ID: Final = 1
#: Kafka's lock file at the root of each log directory.
LOCK_FILE: Final = ".lock"
#: Directories in a log dir that are not partitions (Kafka's ``RemoteIndexCache.DIR_NAME``).
_NOT_PARTITION_DIRS: Final = frozenset({"remote-log-index-cache"})
_METADATA_TOPIC: Final = "__cluster_metadata"
# A delay the scheduler can wait for (threading's timeout limit is far below Long.MAX_VALUE
# ms, Kafka's "never"); a periodic task this far off is harmless anyway.
_MAX_DELAY_MS: Final = 2**31 - 1


class LogDirError(KafkaCoreError, RuntimeError):
    """A log directory the manager refuses to use: locked by another manager, a
    ``meta.properties`` that belongs to another node or cluster, duplicate directories.
    The message is Kafka's."""


class CleanerHooks(Protocol):
    """What the manager asks of an attached compaction cleaner (Kafka's ``LogCleaner``
    calls from ``LogManager``): stop cleaning a partition while it is truncated or deleted,
    and resume it."""

    def abort_and_pause_cleaning(self, tp: TopicPartition) -> None: ...

    def abort_cleaning(self, tp: TopicPartition) -> None: ...

    def resume_cleaning(self, tps: Iterable[TopicPartition]) -> None: ...


class CleanShutdownFile:
    """``<log dir>/.kafka_cleanshutdown`` (Kafka's ``CleanShutdownFileHandler``): present only
    after a clean shutdown; holds ``{"version":0,"brokerEpoch":<epoch>}`` (KIP-966)."""

    CURRENT_VERSION: Final = 0

    def __init__(self, log_dir: str) -> None:
        self.path = os.path.join(log_dir, CLEAN_SHUTDOWN_FILE)

    def exists(self) -> bool:
        return os.path.exists(self.path)

    def write(self, broker_epoch: int = -1) -> None:
        """Write and fsync the marker (then its directory)."""
        content = json.dumps(
            {"version": self.CURRENT_VERSION, "brokerEpoch": broker_epoch}, separators=(",", ":")
        ).encode("utf-8")
        with open(self.path, "wb") as f:
            f.write(content)
            f.flush()
            os.fsync(f.fileno())
        fsync_dir(os.path.dirname(self.path))

    def read(self) -> int | None:
        """The broker epoch in the marker, ``None`` if absent or unreadable."""
        try:
            with open(self.path, "rb") as f:
                epoch = json.loads(f.read().decode("utf-8"))["brokerEpoch"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return epoch if isinstance(epoch, int) else None

    def delete(self) -> None:
        """Remove the marker and fsync the directory, so that the removal is durable
        before any log is touched (KAFKA-10471)."""
        try:
            os.remove(self.path)
        except FileNotFoundError:
            return
        fsync_dir(os.path.dirname(self.path))


class RecoveryProgress:
    """A one-line progress bar of segment recovery, redrawn in place on ``stream``
    (default stderr): ``Recovering logs [#####-----]  50% segment 3/6 of orders-0``.

    :meth:`for_stderr` gives one only when stderr is a terminal; otherwise the loader
    writes log lines. Callbacks from parallel recovery threads are summed into one bar.
    Thread-safe."""

    WIDTH: Final = 30

    def __init__(self, stream: IO[str] | None = None, *, min_interval_s: float = 0.1) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._min_interval_ns = int(min_interval_s * 1e9)
        self._lock = threading.Lock()
        self._logs: dict[str, tuple[int, int]] = {}
        self._last_draw_ns: int | None = None
        self._drawn = False
        self._width = 0

    @classmethod
    def for_stderr(cls) -> RecoveryProgress | None:
        isatty = getattr(sys.stderr, "isatty", None)
        return cls() if isatty is not None and isatty() else None

    def callback_for(self, name: str) -> ProgressCallback:
        """The loader callback of the log called ``name``."""
        return lambda done, total: self.update(name, done, total)

    def update(self, name: str, done: int, total: int) -> None:
        with self._lock:
            self._logs[name] = (done, total)
            now = SYSTEM_TIME.nanoseconds()
            last = self._last_draw_ns
            if done < total and last is not None and now - last < self._min_interval_ns:
                return
            self._last_draw_ns = now
            all_done = sum(d for d, _ in self._logs.values())
            all_total = sum(t for _, t in self._logs.values())
            percent = all_done * 100 // all_total if all_total else 100
            filled = self.WIDTH * percent // 100
            bar = "#" * filled + "-" * (self.WIDTH - filled)
            where = f"segment {done + 1}/{total} of {name}" if done < total else f"{name} recovered"
            line = f"Recovering logs [{bar}] {percent:3d}% {where}"
            padding = " " * max(self._width - len(line), 0)
            self._width = len(line)
            self._stream.write("\r" + line + padding)
            self._stream.flush()
            self._drawn = True

    def close(self) -> None:
        """End the bar's line (if one was drawn)."""
        with self._lock:
            if self._drawn:
                self._stream.write("\n")
                self._stream.flush()
                self._drawn = False


def _as_tp(tp: TopicPartition | tuple[str, int]) -> TopicPartition:
    return tp if isinstance(tp, TopicPartition) else TopicPartition(*tp)


@dataclass(frozen=True)
class LogManagerHealth:
    """What a readiness probe wants to know about a :class:`~kafkacore.log.LogManager`."""

    log_dirs: tuple[str, ...]
    """The log directories."""
    unwritable_dirs: tuple[str, ...]
    """Log directories that are missing or not writable (a broker cannot append there)."""
    partitions: int
    """Partition logs open."""

    @property
    def ok(self) -> bool:
        return not self.unwritable_dirs


class LogManager:
    """The partition logs of a broker (see the module docstring).

    ``log_dirs``: the log directories (default: ``broker_config.log_dirs``);
    ``broker_config``: Kafka's broker settings (default: Kafka's defaults) - the log
    defaults every topic inherits and the manager's own intervals and thread counts;
    ``default_config``: the default :class:`LogConfig` (default: the broker's);
    ``topic_configs``: per-topic configs used when loading and creating logs;
    ``backend``/``time``/``scheduler``: as for :class:`Log` (default scheduler: a
    :class:`ThreadScheduler` owned, and shut down, by this manager);
    ``recovery_threads_per_dir``: default ``num.recovery.threads.per.data.dir``;
    ``cluster_id``/``node_id``: checked against (or written to) ``meta.properties``
    (defaults: the stored ones, else a new random cluster id and ``node.id`` or
    :data:`DEFAULT_NODE_ID`); ``progress``: where recovery progress goes (``"auto"``: a
    bar when stderr is a terminal, else log lines; ``None``: log lines);
    ``high_watermark``: the high watermark of a partition, bounding retention (default:
    none, retention may reach the log end offset); ``producer_state``: give every log a
    :class:`~kafkacore.log.producer_state.ProducerStateManager` (idempotent-producer
    validation and ``.snapshot`` files; the broker sets it)."""

    def __init__(
        self,
        log_dirs: Sequence[str | os.PathLike[str]] | None = None,
        broker_config: BrokerConfig | None = None,
        *,
        default_config: LogConfig | None = None,
        topic_configs: Mapping[str, LogConfig] | None = None,
        backend: Backend | None = None,
        time: Time | None = None,
        scheduler: Scheduler | None = None,
        recovery_threads_per_dir: int | None = None,
        cluster_id: str | None = None,
        node_id: int | None = None,
        progress: RecoveryProgress | Literal["auto"] | None = "auto",
        high_watermark: Callable[[TopicPartition], int | None] | None = None,
        producer_state: bool = False,
        failure_channel: LogDirFailureChannel | None = None,
    ) -> None:
        self._with_producer_state = producer_state
        self.failure_channel = failure_channel or LogDirFailureChannel()
        self._broker: BrokerConfig = broker_config if broker_config is not None else BrokerConfig()
        self._remote_storage_system_enable = self._broker.remote_log_storage_system_enable
        dirs = [os.fspath(d) for d in log_dirs] if log_dirs is not None else self._broker.log_dirs
        if not dirs:
            raise LogDirError("At least one log directory must be defined via log.dirs or log.dir.")
        self._log_dirs = [os.path.abspath(d) for d in dirs]
        if len({os.path.realpath(d) for d in self._log_dirs}) != len(self._log_dirs):
            raise LogDirError(f"Duplicate log directory found: {', '.join(self._log_dirs)}")
        self._default_config = (
            default_config if default_config is not None else LogConfig({}, self._broker)
        )
        self._topic_configs: dict[str, LogConfig] = dict(topic_configs or {})
        if backend is None:
            from kafkacore.native import backend as selected

            backend = selected
        self._backend = backend
        self._time = time or SYSTEM_TIME
        self._owns_scheduler = scheduler is None
        self._scheduler: Scheduler = (
            scheduler
            if scheduler is not None
            else ThreadScheduler("kafkacore-log-manager", time=self._time)
        )
        threads = recovery_threads_per_dir or self._broker.num_recovery_threads_per_data_dir
        if threads < 1:
            raise ValueError(f"recovery_threads_per_dir must be at least 1, not {threads}")
        self._recovery_threads = threads
        configured_node = self._broker.node_id if self._broker.node_id >= 0 else None
        self._node_id: int | None = node_id if node_id is not None else configured_node
        self._cluster_id = cluster_id
        self._progress_setting = progress
        self.high_watermark = high_watermark
        self.cleaner: CleanerHooks | None = None

        self._lock = threading.RLock()  # creation and deletion of logs
        self._checkpoint_lock = threading.RLock()
        self._logs: dict[TopicPartition, Log] = {}
        self._lock_files: dict[str, int] = {}
        self._directory_ids: dict[str, uuid.UUID] = {}
        self._had_clean_shutdown: dict[str, bool] = {}
        self._recovery_point_checkpoints: dict[str, OffsetCheckpointFile] = {}
        self._log_start_offset_checkpoints: dict[str, OffsetCheckpointFile] = {}
        self._replication_offset_checkpoints: dict[str, OffsetCheckpointFile] = {}
        self._cleaner_checkpoints = CleanerOffsetCheckpoints(
            lambda: self._log_dirs, lambda: self._logs, lock=self._checkpoint_lock
        )
        self._dirs_being_deleted: set[str] = set()
        self._started = False
        self._shutting_down = False
        self._shut_down = False

    # -- properties ----------------------------------------------------------------------

    def health(self) -> LogManagerHealth:
        """Its directories and open logs, for a readiness probe (cheap: no file is read)."""
        dirs = tuple(self._log_dirs)
        bad = tuple(
            d
            for d in dirs
            if self._is_offline(d) or not (os.path.isdir(d) and os.access(d, os.W_OK | os.X_OK))
        )
        return LogManagerHealth(dirs, bad, len(self._logs))

    @property
    def log_dirs(self) -> list[str]:
        """The log directories (absolute paths), in configuration order."""
        return list(self._log_dirs)

    @property
    def offline_log_dirs(self) -> list[str]:
        """The log directories taken offline by an I/O error, in configuration order."""
        return [d for d in self._log_dirs if self._is_offline(d)]

    @property
    def online_log_dirs(self) -> list[str]:
        return [d for d in self._log_dirs if not self._is_offline(d)]

    def _is_offline(self, log_dir: str) -> bool:
        return self.failure_channel.has_offline_log_dir(log_dir)

    def _on_storage_error(self, log_dir: str, error: BaseException) -> None:
        """A log met an I/O error: its directory goes offline."""
        self.failure_channel.maybe_add_offline_log_dir(
            log_dir, f"Error while writing to a log in dir {log_dir}", error
        )

    def _attach(self, log: Log) -> Log:
        log.on_storage_error = self._on_storage_error
        return log

    def handle_log_dir_failure(self, log_dir: str | os.PathLike[str]) -> list[TopicPartition]:
        """Stop using the offline ``log_dir`` (Kafka's ``LogManager.handleLogDirFailure``):
        its logs are closed without flushing and dropped; the partitions they held are
        returned. The directory stays locked and is never written again by this manager."""
        key = os.path.abspath(os.fspath(log_dir))
        if not self._is_offline(key):
            self.failure_channel.maybe_add_offline_log_dir(key, "Log directory failure", None)
        with self._lock:
            gone = {tp: log for tp, log in self._logs.items() if os.path.dirname(log.dir) == key}
            for tp in gone:
                del self._logs[tp]
            for table in (
                self._recovery_point_checkpoints,
                self._log_start_offset_checkpoints,
                self._replication_offset_checkpoints,
            ):
                table.pop(key, None)
        cleaner = self.cleaner
        for tp, log in gone.items():
            if cleaner is not None:
                with contextlib.suppress(Exception):
                    cleaner.abort_cleaning(tp)
            log.close_handlers()
        logger.warning(
            "Logs for partitions %s are offline and logs for future partitions are offline "
            "due to failure on log directory %s",
            ",".join(str(tp) for tp in sorted(gone)) or "(none)",
            key,
        )
        return sorted(gone)

    @property
    def broker_config(self) -> BrokerConfig:
        return self._broker

    @property
    def default_config(self) -> LogConfig:
        return self._default_config

    @property
    def scheduler(self) -> Scheduler:
        return self._scheduler

    @property
    def cluster_id(self) -> str | None:
        """From ``meta.properties`` once started."""
        return self._cluster_id

    @property
    def node_id(self) -> int | None:
        """From ``meta.properties`` once started."""
        return self._node_id

    def directory_id(self, log_dir: str | os.PathLike[str]) -> uuid.UUID | None:
        """The ``directory.id`` of a log directory (once started)."""
        return self._directory_ids.get(os.path.abspath(os.fspath(log_dir)))

    def had_clean_shutdown(self, log_dir: str | os.PathLike[str]) -> bool:
        """Whether ``log_dir`` had the clean shutdown marker at start-up."""
        return self._had_clean_shutdown.get(os.path.abspath(os.fspath(log_dir)), False)

    def config_for(self, topic: str) -> LogConfig:
        """The config of ``topic``: its entry in ``topic_configs``, else the default."""
        return self._topic_configs.get(topic, self._default_config)

    def update_topic_config(self, topic: str, config: LogConfig) -> None:
        """Use ``config`` for ``topic`` from now on, in its loaded logs too."""
        with self._lock:
            self._topic_configs[topic] = config
            logs = [log for tp, log in self._logs.items() if tp.topic == topic]
        for log in logs:
            log.update_config(config)

    def reconfigure_default_log_config(self, config: LogConfig) -> None:
        """New default config, applied to loaded logs of topics without their own."""
        with self._lock:
            self._default_config = config
            logs = [log for tp, log in self._logs.items() if tp.topic not in self._topic_configs]
        for log in logs:
            log.update_config(config)

    def attach_cleaner(self, cleaner: CleanerHooks | None) -> None:
        """The compaction cleaner to pause around truncations and deletions."""
        self.cleaner = cleaner

    # -- logs ----------------------------------------------------------------------------

    def get_log(self, tp: TopicPartition | tuple[str, int]) -> Log | None:
        """The log of ``tp``, ``None`` if this manager has none."""
        return self._logs.get(_as_tp(tp))

    def all_logs(self) -> list[Log]:
        with self._lock:
            return list(self._logs.values())

    def logs_by_topic(self, topic: str) -> list[Log]:
        with self._lock:
            return [log for tp, log in self._logs.items() if tp.topic == topic]

    def _logs_by_dir(self) -> dict[str, dict[TopicPartition, Log]]:
        """The logs of each online log directory."""
        by_dir: dict[str, dict[TopicPartition, Log]] = {
            d: {} for d in self._log_dirs if not self._is_offline(d)
        }
        with self._lock:
            items = list(self._logs.items())
        for tp, log in items:
            logs = by_dir.get(os.path.dirname(log.dir))
            if logs is not None:
                logs[tp] = log
        return by_dir

    def _check_started(self) -> None:
        if not self._started:
            raise RuntimeError("the log manager is not started: call startup()")
        if self._shut_down or self._shutting_down:
            raise RuntimeError("the log manager is shut down")

    def _next_log_dirs(self) -> list[str]:
        """Log directories by the number of logs they hold, fewest first (Kafka's
        ``nextLogDirs``; ties keep the configured order)."""
        online = [d for d in self._log_dirs if not self._is_offline(d)]
        if len(online) < 2:  # nothing to choose: no count of every log per new log
            return online
        counts = {d: 0 for d in online}
        for log in self._logs.values():
            parent = os.path.dirname(log.dir)
            if parent in counts:
                counts[parent] += 1
        return sorted(online, key=lambda d: counts[d])

    def get_or_create_log(
        self,
        topic: str,
        partition: int,
        config: LogConfig | None = None,
        topic_id: uuid.UUID | None = None,
        is_new: bool = False,
    ) -> Log:
        """The log of ``topic``-``partition``, created if this manager has none (Kafka's
        ``getOrCreateLog``): a new directory in the log dir with the fewest logs, with
        ``config`` (default: :meth:`config_for`), which is then remembered for the topic.
        ``topic_id`` is written to ``partition.metadata`` (``InconsistentTopicIdError``
        if the log already has another). ``is_new`` (the partition was just created by the
        controller) is Kafka's flag for creating a log while a log directory is offline:
        without it, a missing log is refused (``StorageIOError``, KAFKA_STORAGE_ERROR)
        while any directory is offline - it may have been there."""
        tp = TopicPartition(topic, partition)
        with self._lock:
            self._check_started()
            log = self._logs.get(tp)
            if log is None:
                offline = self.offline_log_dirs
                if offline and not is_new:
                    raise StorageIOError(
                        0,
                        f"Can not create log for {tp} because log directories "
                        f"{','.join(offline)} are offline",
                        None,
                    )
                if config is not None:
                    self._topic_configs[topic] = config
                log = self._create_log(tp, self.config_for(topic), topic_id)
            elif topic_id is not None:
                log.assign_topic_id(topic_id)
            return log

    def _producer_state_for(self, path: str, tp: TopicPartition) -> ProducerStateManager | None:
        """A producer state manager for a log's directory when this manager was asked to
        keep producer state (a broker validating idempotent producers), else ``None``."""
        if not self._with_producer_state:
            return None
        return ProducerStateManager(
            path,
            producer_id_expiration_ms=self._broker.producer_id_expiration_ms,
            topic_partition=str(tp),
        )

    def _create_log(self, tp: TopicPartition, config: LogConfig, topic_id: uuid.UUID | None) -> Log:
        name = log_dir_name(tp)
        for log_dir in self._next_log_dirs():
            path = os.path.join(log_dir, name)
            try:
                os.makedirs(path, exist_ok=True)
                fsync_dir(log_dir)
            except OSError as exc:
                logger.warning("Error while creating log for %s in dir %s: %s", name, log_dir, exc)
                continue
            log = Log(
                path,
                config,
                topic_partition=tp,
                topic_id=topic_id,
                backend=self._backend,
                time=self._time,
                scheduler=self._scheduler,
                producer_state=self._producer_state_for(path, tp),
                remote_storage_system_enable=self._remote_storage_system_enable,
            )
            self._logs[tp] = self._attach(log)
            logger.info(
                "Created log for partition %s in %s with properties %s",
                tp,
                path,
                {k: config.originals[k] for k in sorted(config.originals)},
            )
            return log
        raise StorageIOError(
            0, "No log directories available. Tried " + ", ".join(self._log_dirs), name
        )

    def delete_log(
        self, tp: TopicPartition | tuple[str, int], *, checkpoint: bool = True
    ) -> Log | None:
        """Delete the log of ``tp`` (Kafka's ``asyncDelete``): it is closed, its directory
        renamed to ``<topic>-<partition>.<uuid hex>-delete`` (so a restart will not load
        it) and removed ``file.delete.delay.ms`` later; the recovery-point, log-start and
        cleaner checkpoints of its log dir are rewritten without it. Returns the removed
        (closed) log, ``None`` if there was none."""
        tp = _as_tp(tp)
        with self._lock:  # held until renamed: a re-creation must not reuse the directory
            self._check_started()
            log = self._logs.pop(tp, None)
            if log is None:
                return None
            log_dir = os.path.dirname(log.dir)
            cleaner = self.cleaner
            if cleaner is not None:
                cleaner.abort_cleaning(tp)
            if checkpoint:
                self.update_cleaner_checkpoint(log_dir, remove=tp)
            log.close()
            target = os.path.join(log_dir, log_delete_dir_name(tp))
            try:
                os.rename(log.dir, target)
                fsync_dir(log_dir)
            except OSError as exc:
                raise StorageIOError(
                    exc.errno or 0,
                    f"Error while renaming dir for {tp} in log dir {log_dir}",
                    log.dir,
                ) from exc
        self._schedule_dir_removal(target, tp)
        logger.info(
            "Log for partition %s is renamed to %s and is scheduled for deletion", tp, target
        )
        if checkpoint:
            logs = self._logs_by_dir().get(log_dir, {})
            self._checkpoint_recovery_offsets_in_dir(log_dir, logs)
            self._checkpoint_log_start_offsets_in_dir(log_dir, logs)
        return log

    def _schedule_dir_removal(self, path: str, tp: TopicPartition) -> None:
        with self._lock:
            self._dirs_being_deleted.add(path)

        def remove() -> None:
            shutil.rmtree(path, ignore_errors=True)
            with contextlib.suppress(OSError):
                fsync_dir(os.path.dirname(path))
            with self._lock:
                self._dirs_being_deleted.discard(path)
            logger.info("Deleted log for partition %s in %s.", tp, path)

        self._schedule_once("kafka-delete-logs", remove, self._default_config.file_delete_delay_ms)

    @property
    def dirs_pending_deletion(self) -> list[str]:
        """``-delete`` directories not removed yet."""
        with self._lock:
            return sorted(self._dirs_being_deleted)

    # -- truncation ----------------------------------------------------------------------

    def truncate_to(self, partition_offsets: Mapping[TopicPartition, int]) -> None:
        """Truncate each log to its offset (Kafka's ``truncateTo``; logs this manager
        does not have are skipped); a cleaner checkpoint above the new active segment is
        lowered to it; then the recovery points of the affected log dirs are
        checkpointed."""
        affected: set[str] = set()
        for tp, offset in partition_offsets.items():
            log = self.get_log(tp)
            if log is None:
                continue
            cleaner = self.cleaner
            stop_cleaner = cleaner is not None and offset < log.active_segment.base_offset
            if stop_cleaner:
                assert cleaner is not None
                cleaner.abort_and_pause_cleaning(_as_tp(tp))
            try:
                if log.truncate_to(offset):
                    affected.add(os.path.dirname(log.dir))
                self._maybe_truncate_cleaner_checkpoint(log)
            finally:
                if stop_cleaner:
                    assert cleaner is not None
                    cleaner.resume_cleaning([_as_tp(tp)])
        by_dir = self._logs_by_dir()
        for log_dir in sorted(affected):
            self._checkpoint_recovery_offsets_in_dir(log_dir, by_dir.get(log_dir, {}))

    def truncate_fully_and_start_at(
        self,
        tp: TopicPartition | tuple[str, int],
        new_offset: int,
        log_start_offset: int | None = None,
    ) -> None:
        """Empty the log of ``tp`` and start it at ``new_offset`` (Kafka's
        ``truncateFullyAndStartAt``), then checkpoint its dir's recovery points."""
        log = self.get_log(tp)
        if log is None:
            return
        cleaner = self.cleaner
        if cleaner is not None:
            cleaner.abort_and_pause_cleaning(_as_tp(tp))
        try:
            log.truncate_fully_and_start_at(new_offset, log_start_offset)
            self._maybe_truncate_cleaner_checkpoint(log)
        finally:
            if cleaner is not None:
                cleaner.resume_cleaning([_as_tp(tp)])
        log_dir = os.path.dirname(log.dir)
        self._checkpoint_recovery_offsets_in_dir(log_dir, self._logs_by_dir().get(log_dir, {}))

    # -- checkpoints ---------------------------------------------------------------------

    def checkpoint_recovery_offsets(self) -> None:
        """Write every log's recovery point to its dir's ``recovery-point-offset-checkpoint``
        (a recovery point only moves after an fsync, KAFKA-10101)."""
        self._check_started()
        for log_dir, logs in self._logs_by_dir().items():
            self._checkpoint_recovery_offsets_in_dir(log_dir, logs)

    def remove_expired_producers(self) -> int:
        """Kafka's ``PeriodicProducerExpirationCheck`` over every log: producer ids idle
        for ``producer.id.expiration.ms`` are forgotten (their next batch is a new
        producer's); returns how many were removed."""
        self._check_started()
        now = self._time.milliseconds()
        return sum(len(log.remove_expired_producers(now)) for log in self.all_logs())

    def checkpoint_log_start_offsets(self) -> None:
        """Write ``log-start-offset-checkpoint`` in every log dir: the logs whose start
        offset is above their first segment's base offset."""
        self._check_started()
        for log_dir, logs in self._logs_by_dir().items():
            self._checkpoint_log_start_offsets_in_dir(log_dir, logs)

    def _checkpoint_recovery_offsets_in_dir(
        self, log_dir: str, logs: Mapping[TopicPartition, Log]
    ) -> None:
        checkpoint = self._recovery_point_checkpoints.get(log_dir)
        if checkpoint is None:
            return
        with self._checkpoint_lock:
            try:
                checkpoint.write({tp: log.recovery_point for tp, log in logs.items()})
            except OSError as exc:
                self.failure_channel.maybe_add_offline_log_dir(
                    log_dir,
                    f"Disk error while writing recovery offsets checkpoint in directory {log_dir}",
                    exc,
                )

    def _checkpoint_log_start_offsets_in_dir(
        self, log_dir: str, logs: Mapping[TopicPartition, Log]
    ) -> None:
        checkpoint = self._log_start_offset_checkpoints.get(log_dir)
        if checkpoint is None:
            return
        offsets: dict[TopicPartition, int] = {}
        for tp, log in logs.items():
            segments = log.segments
            # a tiered log's start may lie below its first local segment (Kafka writes
            # every remote-enabled log's)
            if segments and (
                log.remote_log_enabled or log.log_start_offset > segments[0].base_offset
            ):
                offsets[tp] = log.log_start_offset
        with self._checkpoint_lock:
            try:
                checkpoint.write(offsets)
            except OSError as exc:
                self.failure_channel.maybe_add_offline_log_dir(
                    log_dir,
                    f"Disk error while writing log start offsets checkpoint in directory {log_dir}",
                    exc,
                )

    def checkpoint_high_watermarks(self, high_watermarks: Mapping[TopicPartition, int]) -> None:
        """Write ``replication-offset-checkpoint`` in every log dir with the high
        watermarks (owned by the replication layer) of the partitions whose log is there
        (Kafka's ``ReplicaManager.checkpointHighWatermarks``). Partitions without a log
        here are left out."""
        self._check_started()
        by_dir = self._logs_by_dir()
        with self._checkpoint_lock:
            for log_dir, logs in by_dir.items():
                checkpoint = self._replication_offset_checkpoints.get(log_dir)
                if checkpoint is None:
                    continue
                try:
                    checkpoint.write(
                        {_as_tp(tp): hw for tp, hw in high_watermarks.items() if _as_tp(tp) in logs}
                    )
                except OSError as exc:
                    self.failure_channel.maybe_add_offline_log_dir(
                        log_dir,
                        f"Error while writing to high watermark file in directory {log_dir}",
                        exc,
                    )

    def read_high_watermarks(self) -> dict[TopicPartition, int]:
        """The high watermarks of every log dir's ``replication-offset-checkpoint``."""
        self._check_started()
        found: dict[TopicPartition, int] = {}
        for log_dir in self._log_dirs:
            checkpoint = self._replication_offset_checkpoints.get(log_dir)
            if checkpoint is not None:
                found.update(self._read_checkpoint(checkpoint))
        return found

    def cleaner_offset_checkpoint(self, log_dir: str | os.PathLike[str]) -> OffsetCheckpointFile:
        """The ``cleaner-offset-checkpoint`` of a log dir. Writers go through
        :meth:`update_cleaner_checkpoint`, which serializes them."""
        self._check_started()
        return self._cleaner_checkpoints.file(self._known_log_dir(log_dir))

    def read_cleaner_checkpoints(self) -> dict[TopicPartition, int]:
        """Every log dir's cleaner checkpoint entries."""
        self._check_started()
        return self._cleaner_checkpoints.read_cleaner_checkpoints()

    def update_cleaner_checkpoint(
        self,
        log_dir: str | os.PathLike[str],
        update: tuple[TopicPartition, int] | None = None,
        *,
        remove: TopicPartition | None = None,
    ) -> None:
        """Rewrite ``cleaner-offset-checkpoint`` of ``log_dir`` (Kafka's
        ``LogCleanerManager.updateCheckpoints``): entries of partitions this manager no
        longer has are dropped, ``remove`` too; ``update`` ``(tp, offset)`` is set."""
        self._check_started()
        self._cleaner_checkpoints.update_cleaner_checkpoint(
            self._known_log_dir(log_dir), update, remove=remove
        )

    def _known_log_dir(self, log_dir: str | os.PathLike[str]) -> str:
        key = os.path.abspath(os.fspath(log_dir))
        if key not in self._log_dirs:
            raise KeyError(key)
        return key

    def _maybe_truncate_cleaner_checkpoint(self, log: Log) -> None:
        """Lower the log's cleaner checkpoint to its active segment's base offset (Kafka's
        ``maybeTruncateCheckpoint``) when the log is compacted."""
        if not log.config.compact or os.path.dirname(log.dir) not in self._log_dirs:
            return
        self._cleaner_checkpoints.truncate(
            os.path.dirname(log.dir), log.topic_partition, log.active_segment.base_offset
        )

    _read_checkpoint = staticmethod(read_checkpoint_or_empty)

    # -- retention and flushing ----------------------------------------------------------

    def cleanup_logs(self) -> int:
        """Apply retention to every log whose policy is not ``compact`` (Kafka's
        ``cleanupLogs``: compacted logs are the cleaner's), bounded by the high watermark
        when one is known; returns the number of segments deleted."""
        self._check_started()
        total = 0
        for tp, log in self._snapshot():
            if log.config.compact:
                continue
            source = self.high_watermark
            hw = source(tp) if source is not None else None
            try:
                total += log.delete_old_segments(hw)
            except ValueError:
                continue  # closed: deleted meanwhile
        logger.debug("Log cleanup completed. %d files deleted", total)
        return total

    def flush_dirty_logs(self) -> None:
        """Flush every log whose last flush is ``flush.ms`` ago or more (Kafka's
        ``flushDirtyLogs``)."""
        self._check_started()
        now = self._time.milliseconds()
        for tp, log in self._snapshot():
            try:
                if now - log.last_flush_time >= log.config.flush_ms:
                    log.flush()
            except ValueError:
                continue  # closed: deleted meanwhile
            except Exception:
                logger.exception("Error flushing topic %s", tp.topic)

    def _snapshot(self) -> list[tuple[TopicPartition, Log]]:
        with self._lock:
            return list(self._logs.items())

    # -- scheduling ----------------------------------------------------------------------

    def _schedule_once(self, name: str, task: Callable[[], None], delay_ms: int) -> None:
        try:
            self._scheduler.schedule_once(name, task, min(max(delay_ms, 0), _MAX_DELAY_MS))
        except RuntimeError:
            logger.debug("Not scheduling %s: the scheduler is shut down", name)

    def _schedule_periodic(
        self, name: str, task: Callable[[], object], delay_ms: int, period_ms: int
    ) -> None:
        """Run ``task`` after ``delay_ms``, then every ``period_ms`` (once if not > 0, as
        Kafka's scheduler) until shutdown."""

        def run() -> None:
            if self._shutting_down:
                return
            try:
                task()
            except Exception:
                logger.exception("Uncaught exception in scheduled task '%s'", name)
            if period_ms > 0 and not self._shutting_down:
                self._schedule_once(name, run, period_ms)

        self._schedule_once(name, run, delay_ms)

    # -- start-up ------------------------------------------------------------------------

    def startup(self) -> None:
        """Create, lock and check the log directories, load every log (recovering after an
        unclean shutdown), then schedule retention, flushing and checkpoints."""
        with self._lock:
            if self._started:
                raise RuntimeError("the log manager is already started")
            self._started = True
        try:
            self._create_and_lock_dirs()
            self._ensure_meta_properties()
            for log_dir in self._log_dirs:
                self._recovery_point_checkpoints[log_dir] = OffsetCheckpointFile(
                    os.path.join(log_dir, RECOVERY_POINT_CHECKPOINT_FILE)
                )
                self._log_start_offset_checkpoints[log_dir] = OffsetCheckpointFile(
                    os.path.join(log_dir, LOG_START_OFFSET_CHECKPOINT_FILE)
                )
                self._replication_offset_checkpoints[log_dir] = OffsetCheckpointFile(
                    os.path.join(log_dir, REPLICATION_OFFSET_CHECKPOINT_FILE)
                )
                self._cleaner_checkpoints.file(log_dir)  # created empty if missing
            self._load_logs()
        except BaseException:
            for log in self._logs.values():
                with contextlib.suppress(Exception):
                    log.close()
            self._logs.clear()
            self._unlock_dirs()
            self._shut_down = True
            raise

        broker = self._broker
        delay = broker.log_initial_task_delay_ms
        logger.info(
            "Starting log cleanup with a period of %d ms.", broker.log_retention_check_interval_ms
        )
        self._schedule_periodic(
            "kafka-log-retention", self.cleanup_logs, delay, broker.log_retention_check_interval_ms
        )
        logger.info(
            "Starting log flusher with a default period of %d ms.",
            broker.log_flush_scheduler_interval_ms,
        )
        self._schedule_periodic(
            "kafka-log-flusher",
            self.flush_dirty_logs,
            delay,
            broker.log_flush_scheduler_interval_ms,
        )
        self._schedule_periodic(
            "kafka-recovery-point-checkpoint",
            self.checkpoint_recovery_offsets,
            delay,
            broker.log_flush_offset_checkpoint_interval_ms,
        )
        self._schedule_periodic(
            "kafka-log-start-offset-checkpoint",
            self.checkpoint_log_start_offsets,
            delay,
            broker.log_flush_start_offset_checkpoint_interval_ms,
        )
        interval = broker.producer_id_expiration_check_interval_ms
        self._schedule_periodic(
            "PeriodicProducerExpirationCheck", self.remove_expired_producers, interval, interval
        )

    def _create_and_lock_dirs(self) -> None:
        for log_dir in self._log_dirs:
            if not os.path.exists(log_dir):
                logger.info("Log directory %s not found, creating it.", log_dir)
                try:
                    os.makedirs(log_dir)
                    fsync_dir(os.path.dirname(log_dir))
                except OSError as exc:
                    raise StorageIOError(
                        exc.errno or 0, f"Failed to create data directory {log_dir}", log_dir
                    ) from exc
            if not os.path.isdir(log_dir) or not os.access(log_dir, os.R_OK):
                raise StorageIOError(0, f"{log_dir} is not a readable log directory.", log_dir)
            path = os.path.join(log_dir, LOCK_FILE)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise LogDirError(
                    f"Failed to acquire lock on file {LOCK_FILE} in {log_dir}. A Kafka instance "
                    "in another process or thread is using this directory."
                ) from None
            self._lock_files[log_dir] = fd

    def _unlock_dirs(self) -> None:
        for fd in self._lock_files.values():
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            with contextlib.suppress(OSError):
                os.close(fd)
        self._lock_files.clear()

    def _ensure_meta_properties(self) -> None:
        """Check every ``meta.properties`` against each other and the configured ids (Kafka's
        ``MetaPropertiesEnsemble.verify``), then write the missing ones."""
        cluster_id = self._cluster_id
        node_id = self._node_id
        seen: dict[uuid.UUID, str] = {}
        stored: dict[str, MetaProperties] = {}
        for log_dir in self._log_dirs:
            path = MetaProperties.path_in(log_dir)
            try:
                props = MetaProperties.read(path)
            except FileNotFoundError:
                continue
            stored[log_dir] = props
            if props.cluster_id is None:
                if props.version != 0:
                    raise LogDirError(f"cluster.id was not specified in the v1 file: {path}")
            elif cluster_id is None:
                cluster_id = props.cluster_id
            elif props.cluster_id != cluster_id:
                raise LogDirError(
                    f"Invalid cluster.id in: {path}. Expected {cluster_id}, but read "
                    f"{props.cluster_id}"
                )
            if props.node_id is None:
                if props.version != 0:
                    raise LogDirError(f"node.id was not specified in {path}")
            elif node_id is None:
                node_id = props.node_id
            elif props.node_id != node_id:
                raise LogDirError(
                    f"Stored node id {props.node_id} doesn't match previous node id {node_id} "
                    f"in {path}. If you moved your data, make sure your configured node id "
                    "matches. If you intend to create a new node, you should remove all data "
                    "in your data directories."
                )
            if props.directory_id is not None:
                previous = seen.get(props.directory_id)
                if previous is not None:
                    raise LogDirError(
                        f"Duplicate directory ID {props.directory_id} found. It was the ID of "
                        f"{previous}, but also of {log_dir}"
                    )
                seen[props.directory_id] = log_dir
        if cluster_id is None:
            cluster_id = uuid_to_base64(random_uuid())
        if node_id is None:
            node_id = DEFAULT_NODE_ID
        for log_dir in self._log_dirs:
            props = stored.get(log_dir) or MetaProperties(
                version=1, cluster_id=cluster_id, node_id=node_id
            )
            if props.directory_id is None or log_dir not in stored:
                directory_id = random_uuid()
                while directory_id in seen:
                    directory_id = random_uuid()
                seen[directory_id] = log_dir
                props = MetaProperties(
                    version=props.version,
                    cluster_id=props.cluster_id if props.cluster_id is not None else cluster_id,
                    node_id=props.node_id if props.node_id is not None else node_id,
                    directory_id=directory_id,
                )
                props.write(MetaProperties.path_in(log_dir))
            assert props.directory_id is not None
            self._directory_ids[log_dir] = props.directory_id
        self._cluster_id = cluster_id
        self._node_id = node_id

    def _load_logs(self) -> None:
        logger.info("Loading logs from log dirs %s", self._log_dirs)
        start_ns = self._time.nanoseconds()
        setting = self._progress_setting
        progress = RecoveryProgress.for_stderr() if setting == "auto" else setting
        pools: list[ThreadPoolExecutor] = []
        jobs: list[tuple[str, Future[Log]]] = []
        unclean_dirs: list[str] = []
        total_logs = 0
        try:
            for log_dir in self._log_dirs:
                try:
                    marker = CleanShutdownFile(log_dir)
                    had_clean_shutdown = marker.exists()
                    if had_clean_shutdown:
                        # a crash while loading must count as unclean (KAFKA-10471)
                        marker.delete()
                    self._had_clean_shutdown[log_dir] = had_clean_shutdown
                    recovery_points = self._read_checkpoint(
                        self._recovery_point_checkpoints[log_dir]
                    )
                    log_start_offsets = self._read_checkpoint(
                        self._log_start_offset_checkpoints[log_dir]
                    )
                    to_load = self._partition_dirs(log_dir)
                except OSError as exc:
                    self.failure_channel.maybe_add_offline_log_dir(
                        log_dir, f"Error while loading log dir {log_dir}", exc
                    )
                    continue
                total_logs += len(to_load)
                if not to_load:
                    logger.info("No logs found to be loaded in %s", log_dir)
                elif had_clean_shutdown:
                    logger.info(
                        "Skipping recovery of %d logs from %s since clean shutdown file was found",
                        len(to_load),
                        log_dir,
                    )
                else:
                    logger.info(
                        "Recovering %d logs from %s since no clean shutdown file was found",
                        len(to_load),
                        log_dir,
                    )
                    unclean_dirs.append(log_dir)
                pool = ThreadPoolExecutor(
                    self._recovery_threads, thread_name_prefix=f"log-recovery-{log_dir}"
                )
                pools.append(pool)
                for path, tp in to_load:
                    jobs.append(
                        (
                            log_dir,
                            pool.submit(
                                self._load_log,
                                path,
                                tp,
                                had_clean_shutdown,
                                recovery_points,
                                log_start_offsets,
                                progress,
                            ),
                        )
                    )
            first_error: BaseException | None = None
            for log_dir, job in jobs:
                error = job.exception()
                if isinstance(error, OSError) and not isinstance(
                    error, (CorruptCheckpointError, CorruptSnapshotError)
                ):
                    # Kafka's loadLogs: an I/O error takes the directory offline (corrupt
                    # files still fail the start, as before)
                    self.failure_channel.maybe_add_offline_log_dir(
                        log_dir, f"Error while loading log dir {log_dir}", error
                    )
                elif error is not None and first_error is None:
                    first_error = error
            if first_error is not None:
                logger.error(
                    "There was an error in one of the threads during logs loading: %s", first_error
                )
                raise first_error
        finally:
            for pool in pools:
                pool.shutdown(wait=True)
            if progress is not None:
                progress.close()
        for log_dir in self.offline_log_dirs:
            self.handle_log_dir_failure(log_dir)
        if not self.online_log_dirs:
            raise LogDirError(
                f"Shutdown broker because all log dirs in {', '.join(self._log_dirs)} have failed"
            )
        elapsed_ms = (self._time.nanoseconds() - start_ns) // 1_000_000
        unclean = f" (unclean log dirs = {unclean_dirs})" if unclean_dirs else ""
        logger.info("Loaded %d logs in %dms%s", total_logs, elapsed_ms, unclean)

    def _partition_dirs(self, log_dir: str) -> list[tuple[str, TopicPartition]]:
        """The partition directories to load; ``-delete`` ones are scheduled for removal.
        ``ValueError`` (Kafka's message) for a directory that is not a partition."""
        found: list[tuple[str, TopicPartition]] = []
        for name in sorted(os.listdir(log_dir)):
            path = os.path.join(log_dir, name)
            if not os.path.isdir(path) or name in _NOT_PARTITION_DIRS:
                continue
            tp = parse_topic_partition_name(path)
            if tp.topic == _METADATA_TOPIC:
                continue
            if name.endswith(DELETE_DIR_SUFFIX):
                logger.info("Found %s marked for deletion: removing it", path)
                self._schedule_dir_removal(path, tp)
            elif name.endswith((FUTURE_DIR_SUFFIX, STRAY_DIR_SUFFIX)):
                logger.warning("Not loading %s: future and stray replicas are not supported", path)
            else:
                found.append((path, tp))
        return found

    def _load_log(
        self,
        path: str,
        tp: TopicPartition,
        had_clean_shutdown: bool,
        recovery_points: Mapping[TopicPartition, int],
        log_start_offsets: Mapping[TopicPartition, int],
        progress: RecoveryProgress | None,
    ) -> Log:
        start_ns = self._time.nanoseconds()
        callback = progress.callback_for(str(tp)) if progress is not None else None
        with recovery_progress(callback):
            log = Log(
                path,
                self.config_for(tp.topic),
                log_start_offset=log_start_offsets.get(tp, 0),
                recover_from=None if had_clean_shutdown else recovery_points.get(tp, 0),
                topic_partition=tp,
                backend=self._backend,
                time=self._time,
                scheduler=self._scheduler,
                producer_state=self._producer_state_for(path, tp),
                remote_storage_system_enable=self._remote_storage_system_enable,
            )
        with self._lock:
            previous = self._logs.get(tp)
            if previous is not None:
                log.close()
                raise LogDirError(
                    f"Duplicate log directories for {tp} are found in both {path} and "
                    f"{previous.dir}. It is likely because log directory failure happened while "
                    "broker was replacing current replica with future replica. Recover broker "
                    "from this failure by manually deleting one of the two directories for this "
                    "partition. It is recommended to delete the partition in the log directory "
                    "that is known to have failed recently."
                )
            self._logs[tp] = self._attach(log)
        logger.info(
            "Completed load of %r with %d segments, log-start-offset %d and log-end-offset %d "
            "in %dms",
            log,
            log.number_of_segments,
            log.log_start_offset,
            log.log_end_offset,
            (self._time.nanoseconds() - start_ns) // 1_000_000,
        )
        return log

    # -- shutdown ------------------------------------------------------------------------

    def shutdown(self, broker_epoch: int = -1) -> None:
        """Stop background work (an owned scheduler runs its pending file deletions first),
        flush and close every log (in parallel per log dir), checkpoint recovery points and
        log start offsets, write the clean shutdown marker in each log dir whose logs all
        closed, and release the directory locks. Idempotent."""
        with self._lock:
            if not self._started or self._shut_down or self._shutting_down:
                return
            self._shutting_down = True
        logger.info("Shutting down.")
        try:
            if self._owns_scheduler and isinstance(self._scheduler, ThreadScheduler):
                self._scheduler.shutdown(run_pending=True)
            by_dir = self._logs_by_dir()
            with ThreadPoolExecutor(
                max(1, self._recovery_threads * len(by_dir)), thread_name_prefix="log-closing"
            ) as pool:
                closing = {
                    log_dir: [pool.submit(self._flush_and_close, log) for log in logs.values()]
                    for log_dir, logs in by_dir.items()
                }
                for log_dir, futures in closing.items():
                    errors = [f.exception() for f in futures if f.exception() is not None]
                    if errors:
                        logger.warning(
                            "There was an error in one of the threads during LogManager "
                            "shutdown: %s",
                            errors[0],
                        )
                        continue
                    logs = by_dir[log_dir]
                    self._checkpoint_recovery_offsets_in_dir(log_dir, logs)
                    self._checkpoint_log_start_offsets_in_dir(log_dir, logs)
                    try:
                        CleanShutdownFile(log_dir).write(broker_epoch)
                    except OSError as exc:
                        logger.warning(
                            "Could not write the clean shutdown marker in %s: %s", log_dir, exc
                        )
        finally:
            self._unlock_dirs()
            self._shut_down = True
        logger.info("Shutdown complete.")

    @staticmethod
    def _flush_and_close(log: Log) -> None:
        log.close()  # seals, fsyncs every segment; the recovery point becomes the log end

    def __enter__(self) -> LogManager:
        if not self._started:
            self.startup()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.shutdown()

    def __repr__(self) -> str:
        return f"LogManager({self._log_dirs!r}, logs={len(self._logs)})"
