"""Produce v3-11 (v0-2 are answered UNSUPPORTED_VERSION by the request channel, as Kafka 4).

Per partition, in Kafka's order: the topic exists (else UNKNOWN_TOPIC_OR_PARTITION, or
auto-created when ``auto.create.topics.enable``); exactly one magic-2 batch (INVALID_RECORD;
too short to be a batch: CORRUPT_MESSAGE); ``acks=-1`` with ``min.insync.replicas`` above
the ISR size 1 -> NOT_ENOUGH_REPLICAS; CreateTime timestamps within
``message.timestamp.before/after.max.ms`` (INVALID_TIMESTAMP; checked on the batch's base
and max timestamps); then the log's own checks (``max.message.bytes`` -> MESSAGE_TOO_LARGE,
CRCs -> CORRUPT_MESSAGE, ...). Batches are stored compressed as sent.
"""

from __future__ import annotations

import logging
import struct
import time
from typing import Any

from kafkacore.errors import RecordValidationError
from kafkacore.protocol import APIS_BY_NAME, ErrorCode, RequestHeader
from kafkacore.protocol.errors import message as default_message
from kafkacore.server.handlers.cluster import _auto_create
from kafkacore.server.handlers.context import BrokerContext
from kafkacore.server.handlers.errors import error_code_for

__all__ = ["handle_produce"]

logger = logging.getLogger("kafkacore.server")

_RESPONSE: Any = APIS_BY_NAME["Produce"].response.cls
_BATCH_OVERHEAD = 61
_LOG_OVERHEAD = 12
_MAGIC_OFFSET = 16
_TIMESTAMPS = struct.Struct(">qq")  # base timestamp, max timestamp at byte 27
_ATTRIBUTES = struct.Struct(">h")
_LOG_APPEND_TIME_FLAG = 0x08


class _Refused(Exception):
    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _check_batch(records: Any) -> bytes:
    if records is None or len(records) == 0:
        raise _Refused(
            ErrorCode.INVALID_RECORD,
            "Produce requests with version 3 or later must have at least one record batch",
        )
    data = bytes(records)
    if len(data) < _BATCH_OVERHEAD:
        raise _Refused(ErrorCode.CORRUPT_MESSAGE, "Record batch is shorter than its header")
    if data[_MAGIC_OFFSET] != 2:
        raise _Refused(
            ErrorCode.INVALID_RECORD,
            "Produce requests with version 3 or later must use record batch magic v2",
        )
    (length,) = struct.unpack_from(">i", data, 8)
    if _LOG_OVERHEAD + length != len(data):
        if _LOG_OVERHEAD + length < len(data):
            raise _Refused(
                ErrorCode.INVALID_RECORD,
                "Produce requests with version 3 or later must have exactly one record batch",
            )
        raise _Refused(ErrorCode.CORRUPT_MESSAGE, "Record batch is truncated")
    return data


def _check_timestamps(data: bytes, config: Any, now: int) -> None:
    if config.message_timestamp_type != "CreateTime":
        return
    (attributes,) = _ATTRIBUTES.unpack_from(data, 21)
    if attributes & _LOG_APPEND_TIME_FLAG:
        return
    base_ts, max_ts = _TIMESTAMPS.unpack_from(data, 27)
    for ts in (base_ts, max_ts):
        if ts < now - config.message_timestamp_before_max_ms or (
            ts > now + config.message_timestamp_after_max_ms
        ):
            raise _Refused(
                ErrorCode.INVALID_TIMESTAMP,
                f"Timestamp {ts} of message with offset 0 is out of range. The timestamp "
                f"should be within [{now - config.message_timestamp_before_max_ms}, "
                f"{now + config.message_timestamp_after_max_ms}]",
            )


def _produce_partition(
    ctx: BrokerContext, topic: str, partition: int, records: Any, acks: int
) -> Any:
    replicas = ctx.replicas
    response = _RESPONSE.PartitionProduceResponse(
        index=partition, error_code=0, base_offset=-1, log_append_time_ms=-1, log_start_offset=-1
    )
    try:
        log = replicas.get_log(topic, partition)
        if log is None:
            raise _Refused(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        data = _check_batch(records)
        config = log.config
        if acks == -1 and config.min_insync_replicas > 1:
            raise _Refused(
                ErrorCode.NOT_ENOUGH_REPLICAS,
                f"The size of the current ISR Set(1) is insufficient to satisfy the min.isr "
                f"requirement of {config.min_insync_replicas} for partition {topic}-{partition}",
            )
        _check_timestamps(data, config, int(time.time() * 1000))
        info = replicas.append(log, data)
    except _Refused as exc:
        response.error_code = exc.code
        response.error_message = exc.message
        return response
    except RecordValidationError as exc:
        response.error_code = ErrorCode.INVALID_RECORD
        response.error_message = str(exc)
        response.record_errors = [
            _RESPONSE.BatchIndexAndErrorMessage(batch_index=i, batch_index_error_message=m)
            for i, m in exc.record_errors
        ]
        return response
    except Exception as exc:
        code = error_code_for(exc)
        if code == ErrorCode.UNKNOWN_SERVER_ERROR:
            logger.exception("Error appending to %s-%d", topic, partition)
        response.error_code = code
        response.error_message = str(exc) or default_message(code)
        return response
    response.base_offset = info.first_offset
    response.log_append_time_ms = info.log_append_time
    response.log_start_offset = info.log_start_offset
    return response


def handle_produce(ctx: BrokerContext, header: RequestHeader, request: Any) -> Any:
    """The Produce response (the request channel drops it for ``acks=0``)."""
    acks = request.acks
    store = ctx.replicas.store
    results = []
    for topic_data in request.topic_data:
        name = topic_data.name
        partitions = []
        if acks not in (0, 1, -1):
            code: ErrorCode | None = ErrorCode.INVALID_REQUIRED_ACKS
        elif store.topic(name) is None and ctx.config.auto_create_topics_enable:
            code = _auto_create(ctx, name)
        else:
            code = None
        for pdata in topic_data.partition_data:
            if code is not None:
                partitions.append(
                    _RESPONSE.PartitionProduceResponse(
                        index=pdata.index,
                        error_code=code,
                        base_offset=-1,
                        log_append_time_ms=-1,
                        log_start_offset=-1,
                    )
                )
            else:
                partitions.append(_produce_partition(ctx, name, pdata.index, pdata.records, acks))
        results.append(_RESPONSE.TopicProduceResponse(name=name, partition_responses=partitions))
    return _RESPONSE(responses=results, throttle_time_ms=0)
