"""The errors of the remote tier (Kafka's ``RemoteStorageException`` family)."""

from __future__ import annotations

from kafkacore.errors import KafkaCoreError, OffsetOutOfRangeError

__all__ = [
    "CorruptRemoteDataError",
    "OffsetMovedToTieredStorageError",
    "RemoteResourceNotFoundError",
    "RemoteStorageError",
    "RemoteStorageNotReadyError",
    "RetriableRemoteStorageError",
]


class RemoteStorageError(KafkaCoreError):
    """The object store failed a request (Kafka's ``RemoteStorageException``, not one of
    its ``ApiException``s: a Fetch answers UNKNOWN_SERVER_ERROR for it)."""


class RetriableRemoteStorageError(RemoteStorageError):
    """A failure worth retrying: a time-out, a refused connection, a 5xx (Kafka's
    ``RetriableRemoteStorageException``)."""


class RemoteResourceNotFoundError(RemoteStorageError):
    """The object is not in the bucket (Kafka's ``RemoteResourceNotFoundException``)."""


class RemoteStorageNotReadyError(RetriableRemoteStorageError):
    """The remote log metadata of the partition is not loaded yet (Kafka's
    ``RemoteStorageNotReadyException``)."""


class CorruptRemoteDataError(RemoteStorageError):
    """An object read back fails its check (a batch CRC, a size): reported, never served
    (CORRUPT_MESSAGE, as Kafka's ``CorruptRecordException``)."""

    error_code = 2  # CORRUPT_MESSAGE


class OffsetMovedToTieredStorageError(OffsetOutOfRangeError):
    """A read below the local log start offset of a tiered log (Kafka's
    ``OffsetMovedToTieredStorageException``, OFFSET_MOVED_TO_TIERED_STORAGE): the remote
    log manager serves it. A subclass of :class:`OffsetOutOfRangeError`, so a reader that
    knows nothing of tiering still sees an offset it cannot read locally."""

    error_code = 109  # OFFSET_MOVED_TO_TIERED_STORAGE
