"""kafkacore exceptions as Kafka error codes (errors as data)."""

from __future__ import annotations

from kafkacore.config import ConfigError
from kafkacore.errors import (
    CorruptRecordError,
    InconsistentTopicIdError,
    InvalidRecordError,
    InvalidTxnStateError,
    OffsetOutOfRangeError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
    StorageIOError,
    TransactionCoordinatorFencedError,
    UnsupportedCompressionError,
)
from kafkacore.log.producer_state import (
    InvalidProducerEpochError,
    OutOfOrderSequenceError,
    UnknownProducerIdError,
)
from kafkacore.protocol import ErrorCode
from kafkacore.server.partition import NotEnoughReplicasError, NotLeaderOrFollowerError

__all__ = ["error_code_for"]

_CODES: list[tuple[type[BaseException], ErrorCode]] = [
    (CorruptRecordError, ErrorCode.CORRUPT_MESSAGE),
    (InvalidRecordError, ErrorCode.INVALID_RECORD),
    (RecordTooLargeError, ErrorCode.MESSAGE_TOO_LARGE),
    (RecordBatchTooLargeError, ErrorCode.RECORD_LIST_TOO_LARGE),
    (OffsetOutOfRangeError, ErrorCode.OFFSET_OUT_OF_RANGE),
    (UnsupportedCompressionError, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE),
    (InconsistentTopicIdError, ErrorCode.INCONSISTENT_TOPIC_ID),
    (ConfigError, ErrorCode.INVALID_CONFIG),
    (StorageIOError, ErrorCode.KAFKA_STORAGE_ERROR),
    (OutOfOrderSequenceError, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER),
    (InvalidProducerEpochError, ErrorCode.INVALID_PRODUCER_EPOCH),
    (InvalidTxnStateError, ErrorCode.INVALID_TXN_STATE),
    (TransactionCoordinatorFencedError, ErrorCode.TRANSACTION_COORDINATOR_FENCED),
    (UnknownProducerIdError, ErrorCode.UNKNOWN_PRODUCER_ID),
    (NotEnoughReplicasError, ErrorCode.NOT_ENOUGH_REPLICAS),
    (NotLeaderOrFollowerError, ErrorCode.NOT_LEADER_OR_FOLLOWER),
]


def error_code_for(exc: BaseException) -> ErrorCode:
    """The code Kafka answers for ``exc`` (UNKNOWN_SERVER_ERROR when it has none)."""
    for cls, code in _CODES:
        if isinstance(exc, cls):
            return code
    return ErrorCode.UNKNOWN_SERVER_ERROR
