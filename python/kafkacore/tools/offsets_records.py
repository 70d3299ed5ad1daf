"""Kafka's ``DumpLogSegments --offsets-decoder`` over the ``__consumer_offsets`` records.

The record formats live in :mod:`kafkacore.coordinator.records` (shared by the group
coordinator and this tool) and are re-exported here for the dump tool's callers;
:func:`offsets_message_text` prints a record as Kafka's ``OffsetsMessageParser`` does:
``key: {"type":"1","data":{...}}`` and ``payload: {"version":"3","data":{...}}`` (or
``<DELETE>``), the JSON of Kafka's generated converters, with a classic consumer group's
member subscriptions and assignments decoded as ``ConsumerProtocol`` messages.

Pure functions: thread-safe.
"""

from __future__ import annotations

from typing import Any

from kafkacore._java import JavaException
from kafkacore.coordinator.codec import Field, MessageSchema, Reader, read_message, to_json
from kafkacore.coordinator.records import *  # noqa: F403  (the formats, re-exported)
from kafkacore.coordinator.records import (
    CONSUMER_PROTOCOL_ASSIGNMENT,
    CONSUMER_PROTOCOL_SUBSCRIPTION,
    CONSUMER_PROTOCOL_TYPE,
    GROUP_METADATA,
    UnknownRecordType,
    deserialize_record,
    record_schemas,
)
from kafkacore.coordinator.records import __all__ as _records_all

__all__ = [*_records_all, "offsets_message_text"]


# --- DumpLogSegments --offsets-decoder -----------------------------------------------------


def offsets_message_text(
    key: bytes | None, value: bytes | None, offset: int
) -> tuple[str, str | None]:
    """Kafka's ``OffsetsMessageParser``: what ``DumpLogSegments --offsets-decoder`` prints
    after ``key: `` and ``payload: `` for a record (``None``: no payload part).

    A record of an unknown type prints ``Unknown record type N at offset O, skipping.``,
    a malformed one ``Error at offset O, skipping. <Kafka's message>``; a record without
    a key stops Kafka's tool (``JavaException``, a ``RuntimeException``)."""
    if key is None:
        raise JavaException(
            "RuntimeException",
            f"Failed to decode message at offset {offset} using the specified decoder "
            "(message had a missing key)",
        )
    try:
        record = deserialize_record(key, value)
        key_schema, value_schema = record_schemas(record.type)
        key_text = f'{{"type":"{record.type}","data":{to_json(key_schema, record.key, 0)}}}'
        if record.value is None:
            return key_text, "<DELETE>"
        if record.type == GROUP_METADATA:
            data = _group_metadata_json(value_schema, record.value, record.version)
        else:
            data = to_json(value_schema, record.value, record.version)
        return key_text, f'{{"version":"{record.version}","data":{data}}}'
    except UnknownRecordType as exc:
        return f"Unknown record type {exc.record_type} at offset {offset}, skipping.", None
    except JavaException as exc:
        return f"Error at offset {offset}, skipping. {exc.message}", None


def _group_metadata_json(schema: MessageSchema[Any], value: dict[str, Any], version: int) -> str:
    """``prepareGroupMetadataValue``: a consumer group's member subscriptions and
    assignments as ``ConsumerProtocol`` JSON, each left as base64 if it does not parse."""
    if value["protocolType"] != CONSUMER_PROTOCOL_TYPE:
        return to_json(schema, value, version)

    def member_bytes(f: Field, data: bytes) -> str | None:
        if f.name == "subscription":
            return _consumer_protocol_json(CONSUMER_PROTOCOL_SUBSCRIPTION, data)
        if f.name == "assignment":
            return _consumer_protocol_json(CONSUMER_PROTOCOL_ASSIGNMENT, data)
        return None

    return to_json(schema, value, version, member_bytes)


def _consumer_protocol_json(schema: MessageSchema[Any], data: bytes) -> str | None:
    reader = Reader(data)
    try:
        version = reader.int16()
        return to_json(schema, read_message(schema, reader, version), version)
    except JavaException:
        return None  # Kafka swallows the error and keeps the bytes
