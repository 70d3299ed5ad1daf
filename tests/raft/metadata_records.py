"""A few metadata records declared by hand for the metadata-log tests (from Kafka 4.3.1's
``FeatureLevelRecord.json``, ``TopicRecord.json`` and ``NoOpRecord.json`` in
``kafka-metadata-4.3.1.jar``), framed as Kafka's ``MetadataRecordSerde`` frames a
record value: ``uvarint frameVersion (1), uvarint apiKey, uvarint version, message``."""

from __future__ import annotations

import uuid

from kafkacore.protocol.schema import field, message
from kafkacore.protocol.types import write_uvarint

FEATURE_LEVEL = message(
    "FeatureLevelRecord",
    12,
    "value",
    valid="0",
    flexible="0+",
    fields=[field("Name", "string", "0+"), field("FeatureLevel", "int16", "0+")],
)
TOPIC = message(
    "TopicRecord",
    2,
    "value",
    valid="0",
    flexible="0+",
    fields=[field("Name", "string", "0+"), field("TopicId", "uuid", "0+")],
)
NO_OP = message("NoOpRecord", 20, "value", valid="0", flexible="0+", fields=[])


def frame(api_key: int, body: bytes, version: int = 0) -> bytes:
    return write_uvarint(1) + write_uvarint(api_key) + write_uvarint(version) + body


def feature_level(name: str, level: int) -> bytes:
    return frame(12, FEATURE_LEVEL.encode(FEATURE_LEVEL.cls(name=name, feature_level=level), 0))


def topic(name: str, topic_id: uuid.UUID) -> bytes:
    return frame(2, TOPIC.encode(TOPIC.cls(name=name, topic_id=topic_id), 0))


def no_op() -> bytes:
    return frame(20, NO_OP.encode(NO_OP.cls(), 0))
