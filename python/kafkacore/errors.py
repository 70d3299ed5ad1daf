"""Exceptions raised by kafkacore, by both backends (the Rust extension raises these
very classes through PyO3's ``import_exception!``).

Each exception that Kafka answers with an error code carries it as ``error_code``
(Kafka's ``ApiException`` subclasses and ``Errors.forException``), so the layer that
shapes an answer asks :func:`error_code_for` instead of keeping a table of its own. The
codes are plain ints (their ``ErrorCode`` names beside them): ``import kafkacore`` stays
light, without the protocol package.
"""

from __future__ import annotations

__all__ = [
    "AdminOperationError",
    "CorruptCheckpointError",
    "CorruptIndexError",
    "CorruptRecordError",
    "InconsistentTopicIdError",
    "IndexFullError",
    "InvalidOffsetError",
    "InvalidPartitionsError",
    "InvalidProducerEpochError",
    "InvalidRecordError",
    "InvalidReplicationFactorError",
    "InvalidTimestampError",
    "InvalidTxnStateError",
    "KafkaCoreError",
    "OffsetOutOfRangeError",
    "RecordBatchTooLargeError",
    "RecordTooLargeError",
    "RecordValidationError",
    "StorageIOError",
    "TransactionCoordinatorFencedError",
    "UnexpectedAppendOffsetError",
    "UnsupportedCompressionError",
    "error_code_for",
]

UNKNOWN_SERVER_ERROR = -1


class KafkaCoreError(Exception):
    """Base class of every kafkacore error. ``error_code``: what Kafka answers for it
    (UNKNOWN_SERVER_ERROR unless a subclass names its code, or an instance carries the
    code of its cause)."""

    error_code: int = UNKNOWN_SERVER_ERROR


def error_code_for(exc: BaseException) -> int:
    """The error code Kafka answers for ``exc`` (Kafka's ``Errors.forException``): the
    ``error_code`` of its class or nearest ancestor that names one; UNKNOWN_SERVER_ERROR
    for anything that is not a :class:`KafkaCoreError`."""
    if isinstance(exc, KafkaCoreError):
        return exc.error_code
    return UNKNOWN_SERVER_ERROR


class CorruptRecordError(KafkaCoreError):
    """Bytes that are not a valid record batch or message (Kafka's CORRUPT_MESSAGE).

    The message names the file (or ``buffer``) and ``position N``."""

    error_code = 2  # CORRUPT_MESSAGE


class InvalidRecordError(KafkaCoreError):
    """A well-formed batch that Kafka refuses (Kafka's INVALID_RECORD)."""

    error_code = 87  # INVALID_RECORD


class InvalidOffsetError(KafkaCoreError):
    """An offset a segment or index cannot hold, or one going backwards."""


class IndexFullError(KafkaCoreError):
    """The offset or time index has no room for the entries an append needs: roll."""


class CorruptIndexError(KafkaCoreError):
    """An index file failed its sanity check; rebuild it with ``Segment.recover()``."""


class UnsupportedCompressionError(KafkaCoreError):
    """A compression codec id other than 0-4 (Kafka's UNSUPPORTED_COMPRESSION_TYPE)."""

    error_code = 76  # UNSUPPORTED_COMPRESSION_TYPE


class StorageIOError(KafkaCoreError, OSError):
    """An I/O error on a named log, index or checkpoint file."""

    error_code = 56  # KAFKA_STORAGE_ERROR


class OffsetOutOfRangeError(KafkaCoreError):
    """A fetch, truncation or log-start-offset request outside the log's offsets (Kafka's
    OFFSET_OUT_OF_RANGE)."""

    error_code = 1  # OFFSET_OUT_OF_RANGE


class RecordTooLargeError(KafkaCoreError):
    """A record batch larger than ``max.message.bytes`` (Kafka's MESSAGE_TOO_LARGE)."""

    error_code = 10  # MESSAGE_TOO_LARGE


class RecordBatchTooLargeError(KafkaCoreError):
    """An append larger than ``segment.bytes``: no segment can hold it (Kafka's
    RECORD_LIST_TOO_LARGE)."""

    error_code = 18  # RECORD_LIST_TOO_LARGE


class InvalidTimestampError(KafkaCoreError):
    """A CreateTime batch whose timestamp is outside ``message.timestamp.before.max.ms`` /
    ``message.timestamp.after.max.ms`` of the broker's time (Kafka's INVALID_TIMESTAMP)."""

    error_code = 32  # INVALID_TIMESTAMP


class RecordValidationError(InvalidRecordError):
    """Records refused one by one (Kafka's ``RecordValidationException``, INVALID_RECORD
    with ``record_errors`` in the Produce response).

    ``record_errors`` holds ``(batch_index, message)`` pairs: the index of the record in
    its batch and Kafka's message for it."""

    def __init__(self, message: str, record_errors: list[tuple[int, str]]) -> None:
        super().__init__(message)
        self.record_errors = record_errors


class UnexpectedAppendOffsetError(InvalidOffsetError):
    """A replica append whose first offset is below the log end offset (Kafka's
    ``UnexpectedAppendOffsetException``). ``first_offset``/``last_offset`` are the
    append's."""

    def __init__(self, message: str, first_offset: int, last_offset: int) -> None:
        super().__init__(message)
        self.first_offset = first_offset
        self.last_offset = last_offset


class CorruptCheckpointError(StorageIOError):
    """A checkpoint or properties file (``recovery-point-offset-checkpoint``,
    ``leader-epoch-checkpoint``, ``partition.metadata``, ``meta.properties``, ...) that is
    not in Kafka's format; the message names the file and the offending line."""


class InconsistentTopicIdError(KafkaCoreError):
    """A partition directory whose ``partition.metadata`` names another topic id than the
    one given (Kafka's INCONSISTENT_TOPIC_ID)."""

    error_code = 103  # INCONSISTENT_TOPIC_ID


class InvalidPartitionsError(KafkaCoreError):
    """A partition count Kafka refuses (``InvalidPartitionsException``, error 37)."""


class InvalidReplicationFactorError(KafkaCoreError):
    """A replication factor Kafka refuses (``InvalidReplicationFactorException``, 38)."""


class AdminOperationError(KafkaCoreError):
    """Kafka's ``AdminOperationException`` (e.g. racks known for only some brokers)."""


class InvalidProducerEpochError(KafkaCoreError):
    """A producer epoch below the one the partition has seen, on a data batch or a
    transaction marker (Kafka's INVALID_PRODUCER_EPOCH, 47, ``InvalidProducerEpochException``)."""

    error_code = 47  # INVALID_PRODUCER_EPOCH


class TransactionCoordinatorFencedError(KafkaCoreError):
    """A transaction marker whose coordinator epoch is below the one the partition stored
    for the producer: a zombie coordinator (Kafka's TRANSACTION_COORDINATOR_FENCED, 52)."""

    error_code = 52  # TRANSACTION_COORDINATOR_FENCED


class InvalidTxnStateError(KafkaCoreError):
    """A write the producer's transaction state forbids, e.g. a non-transactional batch
    while the producer has an open transaction on the partition (Kafka's
    INVALID_TXN_STATE, 48)."""

    error_code = 48  # INVALID_TXN_STATE
