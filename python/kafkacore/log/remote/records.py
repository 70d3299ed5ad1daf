"""The records of ``__remote_log_metadata``: Kafka 4.3.1's remote log metadata records,
declared with :mod:`kafkacore.protocol.schema` from the facts of the JSON definitions in
Kafka's ``kafka-storage`` jar (``message/RemoteLogSegmentMetadataRecord.json`` and its
siblings), and framed byte for byte as Kafka's ``RemoteLogMetadataSerde`` frames them, so
Kafka's ``TopicBasedRemoteLogMetadataManager`` replays what kafkacore writes and
``kafka-dump-log --remote-log-metadata-decoder`` prints it.

A record is a batch record's value (its key is null)::

    frame version uvarint (1) | api key uvarint | version uvarint | record at that version

(Kafka's ``AbstractApiMessageSerde``, the framing of ``__cluster_metadata`` too, see
:mod:`kafkacore.metadata.records`). Api keys: 0 ``RemoteLogSegmentMetadataRecord``,
1 ``RemoteLogSegmentMetadataUpdateRecord``, 2 ``RemotePartitionDeleteMetadataRecord``,
3 ``RemoteLogSegmentMetadataSnapshotRecord`` (Kafka's local snapshot files; read, never
written to the topic). Every record is version 0, flexible.

:func:`serialize` and :func:`deserialize` go between the frames and the
:mod:`~kafkacore.log.remote.model` values (Kafka's ``RemoteLogMetadataSerde`` with its
``*Transform`` classes); :func:`metadata_partition` is Kafka's
``RemoteLogMetadataTopicPartitioner``: the partition of ``__remote_log_metadata`` that
carries a user partition's events.

Immutable declarations, pure functions: thread-safe.
"""

from __future__ import annotations

import struct
from typing import Any, Final

from kafkacore._java import read_unsigned_varint
from kafkacore.errors import KafkaCoreError
from kafkacore.log.remote.model import (
    RemoteLogSegmentId,
    RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState,
    RemotePartitionDeleteMetadata,
    RemotePartitionDeleteState,
    TopicIdPartition,
)
from kafkacore.protocol.schema import NULL, MessageSchema, field, message
from kafkacore.protocol.types import write_uvarint

__all__ = [
    "FRAME_VERSION",
    "RECORDS",
    "REMOTE_LOG_METADATA_TOPIC",
    "RemoteLogMetadata",
    "RemoteLogMetadataParseError",
    "deserialize",
    "metadata_partition",
    "serialize",
]

REMOTE_LOG_METADATA_TOPIC: Final = "__remote_log_metadata"
"""Kafka's ``TopicBasedRemoteLogMetadataManagerConfig.REMOTE_LOG_METADATA_TOPIC_NAME``."""

FRAME_VERSION: Final = 1
"""``AbstractApiMessageSerde.DEFAULT_FRAME_VERSION``."""

SEGMENT_METADATA, SEGMENT_UPDATE, PARTITION_DELETE, SEGMENT_SNAPSHOT = 0, 1, 2, 3

RemoteLogMetadata = (
    RemoteLogSegmentMetadata | RemoteLogSegmentMetadataUpdate | RemotePartitionDeleteMetadata
)


def _topic_id_partition() -> Any:
    return field(
        "TopicIdPartition",
        "TopicIdPartitionEntry",
        "0+",
        fields=[
            field("Name", "string", "0+"),
            field("Id", "uuid", "0+"),
            field("Partition", "int32", "0+"),
        ],
    )


def _segment_id() -> Any:
    return field(
        "RemoteLogSegmentId",
        "RemoteLogSegmentIdEntry",
        "0+",
        fields=[_topic_id_partition(), field("Id", "uuid", "0+")],
    )


def _leader_epochs() -> Any:
    return field(
        "SegmentLeaderEpochs",
        "[]SegmentLeaderEpochEntry",
        "0+",
        fields=[field("LeaderEpoch", "int32", "0+"), field("Offset", "int64", "0+")],
    )


RECORDS: dict[int, MessageSchema[Any]] = {
    SEGMENT_METADATA: message(
        "RemoteLogSegmentMetadataRecord",
        SEGMENT_METADATA,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[
            _segment_id(),
            field("StartOffset", "int64", "0+"),
            field("EndOffset", "int64", "0+"),
            field("BrokerId", "int32", "0+"),
            field("MaxTimestampMs", "int64", "0+"),
            field("EventTimestampMs", "int64", "0+"),
            _leader_epochs(),
            field("SegmentSizeInBytes", "int32", "0+"),
            field("CustomMetadata", "bytes", "0+", nullable="0+", default=NULL),
            field("RemoteLogSegmentState", "int8", "0+"),
            field("TxnIndexEmpty", "bool", "0+", tagged="0+", tag=0),
        ],
    ),
    SEGMENT_UPDATE: message(
        "RemoteLogSegmentMetadataUpdateRecord",
        SEGMENT_UPDATE,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[
            _segment_id(),
            field("BrokerId", "int32", "0+"),
            field("EventTimestampMs", "int64", "0+"),
            field("CustomMetadata", "bytes", "0+", nullable="0+", default=NULL),
            field("RemoteLogSegmentState", "int8", "0+"),
        ],
    ),
    PARTITION_DELETE: message(
        "RemotePartitionDeleteMetadataRecord",
        PARTITION_DELETE,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[
            _topic_id_partition(),
            field("BrokerId", "int32", "0+"),
            field("EventTimestampMs", "int64", "0+"),
            field("RemotePartitionDeleteState", "int8", "0+"),
        ],
    ),
    SEGMENT_SNAPSHOT: message(
        "RemoteLogSegmentMetadataSnapshotRecord",
        SEGMENT_SNAPSHOT,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[
            field("SegmentId", "uuid", "0+"),
            field("StartOffset", "int64", "0+"),
            field("EndOffset", "int64", "0+"),
            field("BrokerId", "int32", "0+"),
            field("MaxTimestampMs", "int64", "0+"),
            field("EventTimestampMs", "int64", "0+"),
            _leader_epochs(),
            field("SegmentSizeInBytes", "int32", "0+"),
            field("CustomMetadata", "bytes", "0+", nullable="0+", default=NULL),
            field("RemoteLogSegmentState", "int8", "0+"),
            field("TxnIndexEmpty", "bool", "0+", tagged="0+", tag=0),
        ],
    ),
}
"""Every remote log metadata record's declaration, by api key."""


class RemoteLogMetadataParseError(ValueError):
    """A frame Kafka's ``RemoteLogMetadataSerde`` refuses (Kafka's
    ``MetadataParseException``)."""


# -- model <-> generated values ----------------------------------------------------------------


def _struct_cls(schema: MessageSchema[Any], *path: str) -> Any:
    """The generated class of the nested struct at field names ``path``."""
    struct_schema = schema.struct
    for name in path:
        found = next(f for f in struct_schema.fields if f.name == name)
        assert found.struct is not None
        struct_schema = found.struct
    return struct_schema.cls


def _tip_value(schema: MessageSchema[Any], path: tuple[str, ...], tip: TopicIdPartition) -> Any:
    cls = _struct_cls(schema, *path)
    return cls(name=tip.topic, id=tip.topic_id, partition=tip.partition)


def _segment_id_value(schema: MessageSchema[Any], sid: RemoteLogSegmentId) -> Any:
    cls = _struct_cls(schema, "RemoteLogSegmentId")
    return cls(
        topic_id_partition=_tip_value(
            schema, ("RemoteLogSegmentId", "TopicIdPartition"), sid.topic_id_partition
        ),
        id=sid.id,
    )


def _epochs_value(schema: MessageSchema[Any], epochs: dict[int, int]) -> list[Any]:
    cls = _struct_cls(schema, "SegmentLeaderEpochs")
    return [cls(leader_epoch=e, offset=o) for e, o in sorted(epochs.items())]


def _to_value(metadata: RemoteLogMetadata) -> tuple[int, Any]:
    if isinstance(metadata, RemoteLogSegmentMetadata):
        schema = RECORDS[SEGMENT_METADATA]
        return SEGMENT_METADATA, schema.cls(
            remote_log_segment_id=_segment_id_value(schema, metadata.segment_id),
            start_offset=metadata.start_offset,
            end_offset=metadata.end_offset,
            broker_id=metadata.broker_id,
            max_timestamp_ms=metadata.max_timestamp_ms,
            event_timestamp_ms=metadata.event_timestamp_ms,
            segment_leader_epochs=_epochs_value(schema, metadata.segment_leader_epochs),
            segment_size_in_bytes=metadata.segment_size_in_bytes,
            custom_metadata=metadata.custom_metadata,
            remote_log_segment_state=int(metadata.state),
            txn_index_empty=metadata.txn_index_empty,
        )
    if isinstance(metadata, RemoteLogSegmentMetadataUpdate):
        schema = RECORDS[SEGMENT_UPDATE]
        return SEGMENT_UPDATE, schema.cls(
            remote_log_segment_id=_segment_id_value(schema, metadata.segment_id),
            broker_id=metadata.broker_id,
            event_timestamp_ms=metadata.event_timestamp_ms,
            custom_metadata=metadata.custom_metadata,
            remote_log_segment_state=int(metadata.state),
        )
    schema = RECORDS[PARTITION_DELETE]
    return PARTITION_DELETE, schema.cls(
        topic_id_partition=_tip_value(schema, ("TopicIdPartition",), metadata.topic_id_partition),
        broker_id=metadata.broker_id,
        event_timestamp_ms=metadata.event_timestamp_ms,
        remote_partition_delete_state=int(metadata.state),
    )


def _tip(v: Any) -> TopicIdPartition:
    return TopicIdPartition(v.id, v.name, v.partition)


def _sid(v: Any) -> RemoteLogSegmentId:
    return RemoteLogSegmentId(_tip(v.topic_id_partition), v.id)


def _from_value(api_key: int, v: Any) -> RemoteLogMetadata:
    try:
        if api_key == SEGMENT_METADATA:
            return RemoteLogSegmentMetadata(
                segment_id=_sid(v.remote_log_segment_id),
                start_offset=v.start_offset,
                end_offset=v.end_offset,
                max_timestamp_ms=v.max_timestamp_ms,
                broker_id=v.broker_id,
                event_timestamp_ms=v.event_timestamp_ms,
                segment_size_in_bytes=v.segment_size_in_bytes,
                segment_leader_epochs={e.leader_epoch: e.offset for e in v.segment_leader_epochs},
                state=RemoteLogSegmentState(v.remote_log_segment_state),
                custom_metadata=None if v.custom_metadata is None else bytes(v.custom_metadata),
                txn_index_empty=v.txn_index_empty,
            )
        if api_key == SEGMENT_UPDATE:
            return RemoteLogSegmentMetadataUpdate(
                segment_id=_sid(v.remote_log_segment_id),
                event_timestamp_ms=v.event_timestamp_ms,
                custom_metadata=None if v.custom_metadata is None else bytes(v.custom_metadata),
                state=RemoteLogSegmentState(v.remote_log_segment_state),
                broker_id=v.broker_id,
            )
        return RemotePartitionDeleteMetadata(
            topic_id_partition=_tip(v.topic_id_partition),
            state=RemotePartitionDeleteState(v.remote_partition_delete_state),
            event_timestamp_ms=v.event_timestamp_ms,
            broker_id=v.broker_id,
        )
    except ValueError as exc:  # an unknown state id, offsets out of order
        raise RemoteLogMetadataParseError(str(exc)) from None


# -- frames --------------------------------------------------------------------------------------


def serialize(metadata: RemoteLogMetadata) -> bytes:
    """The framed record (``RemoteLogMetadataSerde.serialize``)."""
    api_key, value = _to_value(metadata)
    return b"".join(
        (
            write_uvarint(FRAME_VERSION),
            write_uvarint(api_key),
            write_uvarint(0),
            RECORDS[api_key].encode(value, 0),
        )
    )


def _read_short(raw: bytes, pos: int, what: str) -> tuple[int, int]:
    try:
        value, pos = read_unsigned_varint(raw, pos)
    except KafkaCoreError:
        raise RemoteLogMetadataParseError(f"Error while reading {what}") from None
    if value > 0x7FFF:
        raise RemoteLogMetadataParseError(f"Value for {what} was too large.")
    return value, pos


def deserialize(data: bytes | memoryview) -> RemoteLogMetadata:
    """A framed record (``RemoteLogMetadataSerde.deserialize``);
    :class:`RemoteLogMetadataParseError` for a frame Kafka refuses, or for the snapshot
    record (api key 3), which Kafka's serde has no transform for either."""
    raw = bytes(data)
    frame_version, pos = _read_short(raw, 0, "frame version")
    if frame_version != FRAME_VERSION:
        raise RemoteLogMetadataParseError(
            f"Could not deserialize metadata record due to unknown frame version "
            f"{frame_version}(only frame version {FRAME_VERSION} is supported)"
        )
    api_key, pos = _read_short(raw, pos, "type")
    version, pos = _read_short(raw, pos, "version")
    if api_key not in (SEGMENT_METADATA, SEGMENT_UPDATE, PARTITION_DELETE):
        raise RemoteLogMetadataParseError(
            f"org.apache.kafka.common.errors.UnsupportedVersionException: "
            f"Unknown metadata id {api_key}"
        )
    schema = RECORDS[api_key]
    if version not in schema.valid:
        raise RemoteLogMetadataParseError(f"Failed to deserialize record with type {api_key}")
    buf = memoryview(raw)
    try:
        value, end = schema.reader(version)(buf, pos, len(buf))
    except (ValueError, IndexError, struct.error):
        raise RemoteLogMetadataParseError(
            f"Failed to deserialize record with type {api_key}"
        ) from None
    if end != len(buf):
        raise RemoteLogMetadataParseError(
            f"Found {len(buf) - end} byte(s) of garbage after {schema.name}"
        )
    return _from_value(api_key, value)


# -- partitioning ----------------------------------------------------------------------------------


def _java_long_hash(value: int) -> int:
    """``Long.hashCode`` of a signed 64-bit value."""
    value &= (1 << 64) - 1
    return _int32((value ^ (value >> 32)) & 0xFFFFFFFF)


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _signed64(value: int) -> int:
    return value - (1 << 64) if value & (1 << 63) else value


def metadata_partition(tip: TopicIdPartition, num_partitions: int) -> int:
    """The ``__remote_log_metadata`` partition of ``tip`` (Kafka's
    ``RemoteLogMetadataTopicPartitioner.metadataPartition``): murmur2 of the 4 big-endian
    bytes of ``Objects.hash(topicId.leastSignificantBits, topicId.mostSignificantBits,
    partition)``, made positive, modulo ``num_partitions``."""
    from kafkacore.partitioner import murmur2, to_positive

    bits = tip.topic_id.int
    least, most = _signed64(bits & ((1 << 64) - 1)), _signed64(bits >> 64)
    h = 1
    for element in (_java_long_hash(least), _java_long_hash(most), tip.partition):
        h = _int32(31 * h + element)
    key = struct.pack(">i", h)
    return to_positive(murmur2(key)) % num_partitions
