"""What a leader checks before it writes a batch (Kafka's ``LogValidator`` and the
``analyzeAndValidateRecords`` size check of ``UnifiedLog``), and the shape Produce v3+
requires of its records (Kafka's ``ProduceRequest.validateRecords``).

* :func:`validate_produce_records`: exactly one magic-2 batch, whole (INVALID_RECORD;
  too short or truncated: CORRUPT_MESSAGE) - asked by the replica manager before the
  partition is, as Kafka's ``KafkaApis`` asks before ``appendRecords``;
* :func:`validate_as_leader`: called by :meth:`Log.append <kafkacore.log.log.Log.append>`
  for every append as leader; for a client's batch first the CreateTime timestamps
  (:func:`validate_timestamp`, INVALID_TIMESTAMP), then each batch: base offset 0
  (INVALID_RECORD), within ``max.message.bytes`` (MESSAGE_TOO_LARGE), a record count
  matching its offset range, no control batch, a sequence with a producer id
  (:func:`validate_batch`, INVALID_RECORD), and on a compacted topic a key on every record
  (:func:`validate_keys`, INVALID_RECORD with the records' errors).

The messages are Kafka's. Pure functions over bytes and headers: thread-safe; the log
calls them outside its lock (they decode nothing but the keys of a compacted topic's
records).
"""

from __future__ import annotations

import struct

from kafkacore._backend import Backend
from kafkacore.config import LogConfig
from kafkacore.errors import (
    CorruptRecordError,
    InvalidRecordError,
    InvalidTimestampError,
    RecordTooLargeError,
    RecordValidationError,
)
from kafkacore.log.files import TopicPartition
from kafkacore.record import (
    CONTROL_FLAG_MASK,
    LOG_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    BatchHeader,
)
from kafkacore.record.layout import LENGTH_OFFSET, MAGIC_OFFSET, MAGIC_V2, RECORD_BATCH_OVERHEAD

__all__ = [
    "validate_as_leader",
    "validate_batch",
    "validate_keys",
    "validate_produce_records",
    "validate_timestamp",
]

_LENGTH = struct.Struct(">i")
_NO_KEY_COMPACTED = "Compacted topic cannot accept message without key in topic partition"


def validate_produce_records(records: bytes | bytearray | memoryview | None) -> bytes:
    """The records of one partition of a Produce v3+ as ``bytes``, once they are exactly
    one whole magic-2 batch (Kafka's ``ProduceRequest.validateRecords``)."""
    if records is None or len(records) == 0:
        raise InvalidRecordError(
            "Produce requests with version 3 or later must have at least one record batch"
        )
    data = records if type(records) is bytes else bytes(records)
    if len(data) < RECORD_BATCH_OVERHEAD:
        raise CorruptRecordError("Record batch is shorter than its header")
    if data[MAGIC_OFFSET] != MAGIC_V2:
        raise InvalidRecordError(
            "Produce requests with version 3 or later must use record batch magic v2"
        )
    (length,) = _LENGTH.unpack_from(data, LENGTH_OFFSET)
    if LOG_OVERHEAD + length != len(data):
        if LOG_OVERHEAD + length < len(data):
            raise InvalidRecordError(
                "Produce requests with version 3 or later must have exactly one record batch"
            )
        raise CorruptRecordError("Record batch is truncated")
    return data


def validate_timestamp(header: BatchHeader, config: LogConfig, now_ms: int) -> None:
    """A CreateTime batch's base and max timestamps within
    ``[now - message.timestamp.before.max.ms, now + message.timestamp.after.max.ms]``
    (Kafka's ``validateTimestamp``); nothing to check on a LogAppendTime topic or batch,
    whose timestamps the broker sets."""
    if config.message_timestamp_type != "CreateTime" or header.attributes & TIMESTAMP_TYPE_MASK:
        return
    earliest = now_ms - config.message_timestamp_before_max_ms
    latest = now_ms + config.message_timestamp_after_max_ms
    for timestamp in (header.base_timestamp, header.max_timestamp):
        if timestamp < earliest or timestamp > latest:
            raise InvalidTimestampError(
                f"Timestamp {timestamp} of message with offset 0 is out of range. The "
                f"timestamp should be within [{earliest}, {latest}]"
            )


def validate_batch(header: BatchHeader, tp: TopicPartition) -> None:
    """A client's batch (Kafka's ``validateBatch``): an offset range that matches its
    record count, no control batch, a sequence when it has a producer id."""
    base, count = header.base_offset, header.records_count
    last = base + header.last_offset_delta
    if last - base + 1 <= 0:
        raise InvalidRecordError(
            f"Batch has an invalid offset range: [{base}, {last}] in topic partition {tp}"
        )
    if count <= 0:
        raise InvalidRecordError(
            f"Invalid reported count for record batch: {count} in topic partition {tp}"
        )
    if last - base + 1 != count:
        raise InvalidRecordError(
            f"Inconsistent batch offset range [{base}, {last}] and count of records "
            f"{count} in topic partition {tp}"
        )
    if header.attributes & CONTROL_FLAG_MASK:
        raise InvalidRecordError(
            f"Clients are not allowed to write control records in topic partition {tp}"
        )
    if header.producer_id >= 0 and header.base_sequence < 0:
        raise InvalidRecordError(
            f"Invalid sequence number {header.base_sequence} in record batch with "
            f"producerId {header.producer_id} in topic partition {tp}"
        )


def validate_keys(backend: Backend, data: bytes, position: int, tp: TopicPartition) -> None:
    """A compacted topic's rule (Kafka's ``validateKey``): every record of the batch at
    ``position`` has a key; the keyless ones are reported one by one."""
    records = backend.batch_records(data, position)
    errors = [
        (index, f"{_NO_KEY_COMPACTED} {tp}")
        for index, record in enumerate(records)
        if record[2] is None
    ]
    if errors:
        shown = ", ".join(
            f"RecordError(batchIndex={index}, message='{message}')" for index, message in errors[:3]
        )
        raise RecordValidationError(
            f"One or more records have been rejected due to {len(errors)} record "
            f"errors in total, and only showing the first three errors at most: "
            f"[{shown}]",
            errors,
        )


def validate_as_leader(
    backend: Backend,
    data: bytes,
    headers: list[BatchHeader],
    config: LogConfig,
    tp: TopicPartition,
    *,
    client: bool,
    now_ms: int,
) -> None:
    """Everything a leader checks of ``data`` (whose batch headers are ``headers``) before
    writing it; ``client``: a producer's append (Kafka's ``AppendOrigin.CLIENT``), which
    is one batch with client-side rules and checked timestamps."""
    if client:
        if len(headers) > 1:
            raise InvalidRecordError("Compressed outer record has more than one batch")
        validate_timestamp(headers[0], config, now_ms)
    max_message_bytes = config.max_message_bytes
    position = 0
    for h in headers:
        size = h.batch_length + LOG_OVERHEAD
        if client and h.base_offset != 0:
            raise InvalidRecordError(
                f"The baseOffset of the record batch in the append to {tp} should be 0, "
                f"but it is {h.base_offset}"
            )
        if size > max_message_bytes:
            raise RecordTooLargeError(
                f"The record batch size in the append to {tp} is {size} bytes which "
                f"exceeds the maximum configured value of {max_message_bytes}."
            )
        if client:
            validate_batch(h, tp)
        if config.compact and not h.attributes & CONTROL_FLAG_MASK:
            validate_keys(backend, data, position, tp)
        position += size
