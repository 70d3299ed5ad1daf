"""The records of ``__transaction_state``: Kafka's ``TransactionLogKey`` and
``TransactionLogValue`` (``transaction-coordinator/src/main/resources/common/message``),
declared with :mod:`kafkacore.protocol.schema` and encoded through
:mod:`kafkacore.coordinator.codec`, byte for byte as Kafka's ``TransactionLog`` writes
them, so Kafka's ``DumpLogSegments --transaction-log-decoder`` reads ours.

Layout (``TransactionLog.keyToBytes`` / ``valueToBytes``)::

    key   = version int16 (0) | TransactionalId string (int16 length + UTF-8)
    value = version int16     | TransactionLogValue at that version; null = tombstone

``TransactionLogValue`` v0 (not flexible)::

    ProducerId int64 | ProducerEpoch int16 | TransactionTimeoutMs int32 |
    TransactionStatus int8 | TransactionPartitions nullable [Topic string,
    PartitionIds []int32] | TransactionLastUpdateTimestampMs int64 |
    TransactionStartTimestampMs int64

v1 is flexible (compact strings and arrays) and adds the tagged fields
``PreviousProducerId`` (tag 0, default -1), ``NextProducerId`` (tag 1, default -1),
``ClientTransactionVersion`` (tag 2, default 0) and, since Kafka 4.1,
``NextProducerEpoch`` (tag 3, default -1). Kafka writes v1 once the
``transaction.version`` feature is at least 1, else v0; kafkacore writes v0 (transaction
version 0, as Kafka 3.9) and reads both. In state ``Empty`` the partition list is null
(Kafka refuses to write an ``Empty`` state with partitions).

The partition of a transactional id is ``Utils.abs(id.hashCode()) % partitions``
(:func:`partition_for_transactional_id`).

Pure functions: thread-safe.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

from kafkacore._java import JavaException, java_string_hash, utils_abs
from kafkacore.coordinator.codec import Reader, read_message, to_json, write_message
from kafkacore.coordinator.records import _read as read_record_part
from kafkacore.errors import InvalidRecordError
from kafkacore.protocol.schema import field as _f
from kafkacore.protocol.schema import message

__all__ = [
    "TRANSACTION_LOG_VALUE_VERSION",
    "TRANSACTION_STATE_TOPIC",
    "TRANSACTION_STATE_TOPIC_PARTITIONS",
    "TransactionLogValue",
    "TransactionState",
    "decode_txn_key",
    "decode_txn_value",
    "encode_txn_key",
    "encode_txn_value",
    "partition_for_transactional_id",
    "transaction_log_message_text",
    "txn_key_to_text",
    "txn_value_to_text",
]

TRANSACTION_STATE_TOPIC = "__transaction_state"
TRANSACTION_STATE_TOPIC_PARTITIONS = 50  # transaction.state.log.num.partitions default
TRANSACTION_LOG_VALUE_VERSION = 0


class TransactionState(IntEnum):
    """``TransactionState`` as Kafka stores it (the int8 ``TransactionStatus``); the
    names are the ones DescribeTransactions and ListTransactions carry
    (:attr:`wire_name`)."""

    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def wire_name(self) -> str:
        """``Empty``, ``Ongoing``, ``PrepareCommit``, … (Kafka's ``stateName``)."""
        return "".join(part.capitalize() for part in self.name.split("_"))

    @classmethod
    def from_wire_name(cls, name: str) -> TransactionState | None:
        for state in cls:
            if state.wire_name == name:
                return state
        return None


_KEY = message(
    "TransactionLogKey",
    0,
    "key",
    "0",
    "none",
    (_f("transactionalId", "string", "0"),),
)

_VALUE = message(
    "TransactionLogValue",
    0,
    "value",
    "0-1",
    "1+",
    (
        _f("producerId", "int64"),
        _f("previousProducerId", "int64", None, tagged="1+", tag=0, default=-1),
        _f("nextProducerId", "int64", None, tagged="1+", tag=1, default=-1),
        _f("producerEpoch", "int16"),
        _f("nextProducerEpoch", "int16", None, tagged="1+", tag=3, default=-1),
        _f("transactionTimeoutMs", "int32"),
        _f("transactionStatus", "int8"),
        _f(
            "transactionPartitions",
            "[]PartitionsSchema",
            nullable="0+",
            fields=(_f("topic", "string"), _f("partitionIds", "[]int32")),
        ),
        _f("transactionLastUpdateTimestampMs", "int64"),
        _f("transactionStartTimestampMs", "int64"),
        _f("clientTransactionVersion", "int16", None, tagged="1+", tag=2, default=0),
    ),
)


@dataclass(frozen=True)
class TransactionLogValue:
    """One transactional id's state as stored. ``partitions`` maps a topic to its
    partition ids in the order written (``None``: the null list of ``Empty``)."""

    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TransactionState
    partitions: dict[str, list[int]] | None
    last_update_timestamp_ms: int
    start_timestamp_ms: int
    previous_producer_id: int = -1
    next_producer_id: int = -1
    client_transaction_version: int = 0
    next_producer_epoch: int = -1
    version: int = field(default=TRANSACTION_LOG_VALUE_VERSION, compare=False)


def encode_txn_key(transactional_id: str) -> bytes:
    """``TransactionLog.keyToBytes``."""
    return b"\x00\x00" + write_message(_KEY, {"transactionalId": transactional_id}, 0)


def encode_txn_value(
    value: TransactionLogValue, version: int = TRANSACTION_LOG_VALUE_VERSION
) -> bytes:
    """``TransactionLog.valueToBytes``: ``ValueError`` for a partition list in ``Empty``
    (Kafka's ``IllegalStateException``) or an unknown version."""
    if version not in _VALUE.valid:
        raise ValueError(f"TransactionLogValue has no version {version}")
    if value.state is TransactionState.EMPTY and value.partitions:
        raise ValueError(
            "Transaction is not expected to have any partitions since its state is Empty"
        )
    body = _value_body(value)
    return version.to_bytes(2, "big", signed=True) + write_message(_VALUE, body, version)


def decode_txn_key(data: bytes) -> str:
    """The transactional id of a key (``TransactionLog.readTxnRecordKey``);
    ``InvalidRecordError`` for a malformed key or a version other than 0."""
    try:
        reader = Reader(data)
        version = reader.int16()
        if version != 0:
            raise InvalidRecordError(f"Unknown version {version} from the transaction log key")
        return str(read_message(_KEY, reader, 0)["transactionalId"])
    except JavaException as exc:
        raise InvalidRecordError(exc.message) from None


def decode_txn_value(data: bytes | None) -> TransactionLogValue | None:
    """``TransactionLog.readTxnRecordValue``: ``None`` for a tombstone;
    ``InvalidRecordError`` for a malformed value, an unknown version or state."""
    if data is None:
        return None
    try:
        reader = Reader(data)
        version = reader.int16()
        if version not in _VALUE.valid:
            raise InvalidRecordError(
                f"Unknown version {version} from the transaction log message value"
            )
        v = read_message(_VALUE, reader, version)
    except JavaException as exc:
        raise InvalidRecordError(exc.message) from None
    try:
        state = TransactionState(v["transactionStatus"])
    except ValueError:
        raise InvalidRecordError(f"Unknown transaction state {v['TransactionStatus']}") from None
    raw = v["transactionPartitions"]
    partitions: dict[str, list[int]] | None = None
    if raw is not None:
        partitions = {}
        for entry in raw:
            partitions.setdefault(entry["topic"], []).extend(entry["partitionIds"])
    return TransactionLogValue(
        producer_id=v["producerId"],
        producer_epoch=v["producerEpoch"],
        timeout_ms=v["transactionTimeoutMs"],
        state=state,
        partitions=partitions,
        last_update_timestamp_ms=v["transactionLastUpdateTimestampMs"],
        start_timestamp_ms=v["transactionStartTimestampMs"],
        previous_producer_id=v["previousProducerId"],
        next_producer_id=v["nextProducerId"],
        client_transaction_version=v["clientTransactionVersion"],
        next_producer_epoch=v["nextProducerEpoch"],
        version=version,
    )


def _value_body(value: TransactionLogValue) -> dict[str, object]:
    partitions = (
        None
        if value.partitions is None or value.state is TransactionState.EMPTY
        else [{"topic": t, "partitionIds": list(ps)} for t, ps in value.partitions.items()]
    )
    return {
        "producerId": value.producer_id,
        "previousProducerId": value.previous_producer_id,
        "nextProducerId": value.next_producer_id,
        "producerEpoch": value.producer_epoch,
        "nextProducerEpoch": value.next_producer_epoch,
        "transactionTimeoutMs": value.timeout_ms,
        "transactionStatus": int(value.state),
        "transactionPartitions": partitions,
        "transactionLastUpdateTimestampMs": value.last_update_timestamp_ms,
        "transactionStartTimestampMs": value.start_timestamp_ms,
        "clientTransactionVersion": value.client_transaction_version,
    }


def txn_key_to_text(transactional_id: str) -> str:
    """The key as Kafka 4.x's ``DumpLogSegments --transaction-log-decoder`` prints it
    (``TransactionLogMessageParser``, a ``CoordinatorRecordMessageParser``): the record
    type and the generated JSON converter's output,
    ``{"type":"0","data":{"transactionalId":"…"}}``."""
    data = to_json(_KEY, {"transactionalId": transactional_id}, 0)
    return f'{{"type":"0","data":{data}}}'


def txn_value_to_text(value: TransactionLogValue | None) -> str:
    """The value as Kafka 4.x's ``DumpLogSegments --transaction-log-decoder`` prints it:
    ``{"version":"V","data":{…}}`` with the ``TransactionLogValue`` JSON of its version
    (tagged fields only when not at their defaults; ``transactionStatus`` as its int8),
    or ``<DELETE>`` for a tombstone. (Kafka 3.9 printed
    ``producerId:…,producerEpoch:…,state=…``; 4.x prints this JSON.)"""
    if value is None:
        return "<DELETE>"
    data = to_json(_VALUE, _value_body(value), value.version)
    return f'{{"version":"{value.version}","data":{data}}}'


def transaction_log_message_text(
    key: bytes | None, value: bytes | None, offset: int
) -> tuple[str, str | None]:
    """Kafka 4.x's ``TransactionLogMessageParser``: what ``DumpLogSegments
    --transaction-log-decoder`` prints after ``key: `` and ``payload: `` (``None``: no
    payload part). A key of another record type than 0 prints ``Unknown record type N
    at offset O, skipping.``, a malformed record ``Error at offset O, skipping. <Kafka's
    message>``; a record without a key stops Kafka's tool (``JavaException``)."""
    if key is None:
        raise JavaException(
            "RuntimeException",
            f"Failed to decode message at offset {offset} using the specified decoder "
            "(message had a missing key)",
        )
    try:
        reader, record_type = _version_prefixed(key, "key")
        if record_type != 0:
            return f"Unknown record type {record_type} at offset {offset}, skipping.", None
        transactional_id = read_record_part(_KEY, reader, 0, "key")["transactionalId"]
        key_text = txn_key_to_text(transactional_id)
        if value is None:
            return key_text, "<DELETE>"
        reader, version = _version_prefixed(value, "value")
        if version not in _VALUE.valid:
            raise JavaException(
                "UnknownRecordVersionException",
                f"Found an unknown record version {version} for {record_type} type",
            )
        data = to_json(_VALUE, read_record_part(_VALUE, reader, version, "value"), version)
        return key_text, f'{{"version":"{version}","data":{data}}}'
    except JavaException as exc:
        return f"Error at offset {offset}, skipping. {exc.message}", None


def _version_prefixed(data: bytes, what: str) -> tuple[Reader, int]:
    """A reader past the int16 version (or record type) of ``data``, and that version."""
    reader = Reader(data)
    try:
        return reader, reader.int16()
    except JavaException:
        raise JavaException(
            "RuntimeException", f"Could not read version from {what}'s buffer."
        ) from None


def partition_for_transactional_id(
    transactional_id: str, partitions: int = TRANSACTION_STATE_TOPIC_PARTITIONS
) -> int:
    """``Utils.abs(transactionalId.hashCode) % partitions``: ``"txn-1"`` → 10,
    ``"my-transactional-id"`` → 46 (Java's ``String.hashCode``; ``Utils.abs(MIN_VALUE)``
    is 0)."""
    return utils_abs(java_string_hash(transactional_id)) % partitions
