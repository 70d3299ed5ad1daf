"""Offline log directories (Kafka's ``LogDirFailureChannel``).

An I/O error (``OSError``: ENOSPC, EIO, ...) while appending to, rolling, flushing,
truncating, checkpointing or loading a log makes its log directory *offline*: the code
that met the error calls :meth:`LogDirFailureChannel.maybe_add_offline_log_dir` and raises
``StorageIOError`` (answered KAFKA_STORAGE_ERROR). The first report of a directory is
handed to the channel's listeners - the broker's handler, which stops serving the
directory's partitions, closes and drops their logs, tells the controller
(``/log_dir_event_notification``) and shuts the broker down when no directory is left, as
Kafka's ``ReplicaManager.handleLogDirFailure`` does. A directory stays offline until the
broker restarts.

Thread-safety: every method may be called from any thread. Listeners run on the thread
that reported the failure, possibly under a log's lock: they must only hand the
directory over (to a queue or an event loop), never close logs themselves.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable

__all__ = ["LogDirFailureChannel"]

logger = logging.getLogger("kafkacore.log")


class LogDirFailureChannel:
    """The offline log directories of one broker (absolute paths) and who to tell."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._offline: dict[str, str] = {}
        self._listeners: list[Callable[[str], None]] = []

    def add_listener(self, listener: Callable[[str], None]) -> None:
        """``listener(log_dir)`` is called once per directory that goes offline (also
        for one that went offline before it was added)."""
        with self._lock:
            self._listeners.append(listener)
            already = list(self._offline)
        for log_dir in already:
            self._tell(listener, log_dir)

    def has_offline_log_dir(self, log_dir: str | os.PathLike[str]) -> bool:
        return os.path.abspath(os.fspath(log_dir)) in self._offline

    @property
    def offline_log_dirs(self) -> list[str]:
        with self._lock:
            return list(self._offline)

    def maybe_add_offline_log_dir(
        self, log_dir: str | os.PathLike[str], message: str, error: BaseException | None = None
    ) -> bool:
        """Mark ``log_dir`` offline (``message`` and ``error`` are logged); whether it was
        online until now (only then are the listeners told)."""
        key = os.path.abspath(os.fspath(log_dir))
        with self._lock:
            if key in self._offline:
                return False
            self._offline[key] = message
            listeners = list(self._listeners)
        logger.error("%s: %s (log directory %s is now offline)", message, error, key)
        for listener in listeners:
            self._tell(listener, key)
        return True

    @staticmethod
    def _tell(listener: Callable[[str], None], log_dir: str) -> None:
        try:
            listener(log_dir)
        except Exception:
            logger.exception("A log directory failure listener failed for %s", log_dir)
