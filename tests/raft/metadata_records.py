"""A few framed metadata records for the metadata-log tests (FeatureLevelRecord,
TopicRecord, NoOpRecord), written with :mod:`kafkacore.metadata.records`."""

from __future__ import annotations

import uuid

from kafkacore.metadata.records import (
    RECORDS,
    MetadataRecord,
    MetadataRecordType,
    encode_record,
)


def _record(kind: MetadataRecordType, **fields: object) -> bytes:
    return encode_record(MetadataRecord(kind, 0, RECORDS[kind].cls(**fields)))


def feature_level(name: str, level: int) -> bytes:
    return _record(MetadataRecordType.FEATURE_LEVEL_RECORD, name=name, feature_level=level)


def topic(name: str, topic_id: uuid.UUID) -> bytes:
    return _record(MetadataRecordType.TOPIC_RECORD, name=name, topic_id=topic_id)


def no_op() -> bytes:
    return _record(MetadataRecordType.NO_OP_RECORD)
