"""Error codes come from the exceptions (Kafka's ``Errors.forException``): every kafkacore
exception that Kafka answers with a code carries it, and the library asks
:func:`kafkacore.errors.error_code_for`, never a handler module."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import kafkacore
from kafkacore import errors
from kafkacore.config import ConfigError
from kafkacore.errors import KafkaCoreError, error_code_for
from kafkacore.log.producer_state import OutOfOrderSequenceError, UnknownProducerIdError
from kafkacore.log.remote.errors import CorruptRemoteDataError, OffsetMovedToTieredStorageError
from kafkacore.protocol import ErrorCode
from kafkacore.server.partition import (
    FencedLeaderEpochError,
    NotEnoughReplicasError,
    NotLeaderOrFollowerError,
    UnknownLeaderEpochError,
)

# Kafka's exception -> Errors pairs (clients/.../common/protocol/Errors.java), for the
# kafkacore exceptions that stand for them
KAFKA_PAIRS: list[tuple[type[BaseException], ErrorCode]] = [
    (errors.CorruptRecordError, ErrorCode.CORRUPT_MESSAGE),
    (errors.InvalidRecordError, ErrorCode.INVALID_RECORD),
    (errors.RecordValidationError, ErrorCode.INVALID_RECORD),
    (errors.RecordTooLargeError, ErrorCode.MESSAGE_TOO_LARGE),
    (errors.RecordBatchTooLargeError, ErrorCode.RECORD_LIST_TOO_LARGE),
    (errors.OffsetOutOfRangeError, ErrorCode.OFFSET_OUT_OF_RANGE),
    (errors.UnsupportedCompressionError, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE),
    (errors.InconsistentTopicIdError, ErrorCode.INCONSISTENT_TOPIC_ID),
    (errors.StorageIOError, ErrorCode.KAFKA_STORAGE_ERROR),
    (errors.CorruptCheckpointError, ErrorCode.KAFKA_STORAGE_ERROR),
    (errors.InvalidProducerEpochError, ErrorCode.INVALID_PRODUCER_EPOCH),
    (errors.InvalidTxnStateError, ErrorCode.INVALID_TXN_STATE),
    (errors.TransactionCoordinatorFencedError, ErrorCode.TRANSACTION_COORDINATOR_FENCED),
    (ConfigError, ErrorCode.INVALID_CONFIG),
    (OutOfOrderSequenceError, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER),
    (UnknownProducerIdError, ErrorCode.UNKNOWN_PRODUCER_ID),
    (NotEnoughReplicasError, ErrorCode.NOT_ENOUGH_REPLICAS),
    (NotLeaderOrFollowerError, ErrorCode.NOT_LEADER_OR_FOLLOWER),
    (FencedLeaderEpochError, ErrorCode.FENCED_LEADER_EPOCH),
    (UnknownLeaderEpochError, ErrorCode.UNKNOWN_LEADER_EPOCH),
    (OffsetMovedToTieredStorageError, ErrorCode.OFFSET_MOVED_TO_TIERED_STORAGE),
    (CorruptRemoteDataError, ErrorCode.CORRUPT_MESSAGE),
]


def _instance(cls: type[BaseException]) -> BaseException:
    if cls is errors.RecordValidationError:
        return errors.RecordValidationError("refused", [(0, "no key")])
    if cls is ConfigError:
        return ConfigError("x", "y")
    return cls("message")


@pytest.mark.parametrize(("cls", "code"), KAFKA_PAIRS, ids=lambda v: getattr(v, "__name__", v))
def test_each_exception_answers_kafkas_code(cls: type[BaseException], code: ErrorCode) -> None:
    assert error_code_for(_instance(cls)) == code


def test_anything_else_is_unknown_server_error() -> None:
    assert error_code_for(ValueError("no")) == ErrorCode.UNKNOWN_SERVER_ERROR
    assert error_code_for(errors.IndexFullError("full")) == ErrorCode.UNKNOWN_SERVER_ERROR
    assert error_code_for(OSError(5, "EIO")) == ErrorCode.UNKNOWN_SERVER_ERROR


_FACES = {"cli", "console", "spark", "tools", "pytest_plugin", "embedded", "demo"}


def _all_library_exceptions() -> set[type[KafkaCoreError]]:
    for module in pkgutil.walk_packages(kafkacore.__path__, "kafkacore."):
        parts = module.name.split(".")
        if parts[1] in _FACES or parts[-1] == "__main__":
            continue  # the faces answer no request with an exception's code
        try:
            importlib.import_module(module.name)
        except ImportError:
            continue
    found: set[type[KafkaCoreError]] = set()
    todo: list[type[KafkaCoreError]] = [KafkaCoreError]
    while todo:
        cls = todo.pop()
        found.add(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_every_code_an_exception_carries_is_one_of_kafkas() -> None:
    for cls in _all_library_exceptions():
        ErrorCode(cls.error_code)  # raises ValueError for a code Kafka does not have


LIBRARY = [
    "server/replica_manager.py",
    "server/partition.py",
    "server/delayed.py",
    "server/group/coordinator.py",
    "server/txn/markers.py",
    "log/validator.py",
]


@pytest.mark.parametrize("path", LIBRARY)
def test_the_library_imports_no_handler_module(path: str) -> None:
    """Deferred imports included: a function-level import is an upward edge too."""
    tree = ast.parse((Path(kafkacore.__file__).parent / path).read_text())
    imported = {
        node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
    } | {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    assert not [m for m in imported if m.startswith("kafkacore.server.handlers")]
