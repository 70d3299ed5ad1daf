"""The records of ``__consumer_offsets``: Kafka's group coordinator key/value formats,
declared with :mod:`kafkacore.protocol.schema` (as Kafka's
``group-coordinator/src/main/resources/common/message/*.json``), encoded, decoded and
printed byte for byte as Kafka 4.3.1 does through :mod:`kafkacore.coordinator.codec`.

Layout (Kafka's ``CoordinatorRecordSerde``)::

    key   = record_type int16 | key struct (written at version 0)
    value = version int16     | value struct (written at that version); null = tombstone

Strings are an int16 length + UTF-8 (flexible versions: an unsigned varint length + 1);
see :mod:`kafkacore.coordinator.codec` for the encoding rules. The record types:

====  ==========================================  ===============================
type  key                                         value versions (flexible)
====  ==========================================  ===============================
0     LegacyOffsetCommitKey ``{group, topic,      LegacyOffsetCommitValue 0
      partition}``
1     OffsetCommitKey (the same fields)           OffsetCommitValue 0-4 (4+)
2     GroupMetadataKey ``{group}``                GroupMetadataValue 0-4 (4+)
3-8   ConsumerGroup* (KIP-848)                    0 (0+)
10-15 ShareGroup* (KIP-932)                       0 (0+)
16    ConsumerGroupRegularExpression              0 (0+)
17-23 StreamsGroup* (KIP-1071)                    0 (0+)
====  ==========================================  ===============================

OffsetCommitValue: v0 ``{offset int64, metadata string, commitTimestamp int64}``; v1 adds
``expireTimestamp int64`` last; v2 = v0; v3 ``{offset, leaderEpoch int32, metadata,
commitTimestamp}``; v4 = v3, flexible, with ``topicId`` uuid as tagged field 0.
GroupMetadataValue: ``{protocolType, generation int32, protocol nullable, leader
nullable, currentStateTimestamp int64 (v2+), members [memberId, groupInstanceId nullable
(v3+), clientId, clientHost, rebalanceTimeout int32 (v1+), sessionTimeout int32,
subscription bytes, assignment bytes]}``; v4 is flexible.

The classic group's records have typed helpers: :func:`offset_commit_key`,
:func:`offset_commit_value` (v3, or v1 with an expire timestamp), :func:`group_metadata_key`,
:func:`group_metadata_value` (v3) and their decoders (:func:`decode_key`,
:func:`decode_offset_commit_value`, :func:`decode_group_metadata_value`). Every type is
available generically: :func:`encode_record` / :func:`decode_record` over the decoded
form of :mod:`~kafkacore.coordinator.codec` (dicts by JSON field name).
:func:`record_to_json` prints a record as Kafka's generated JSON converters do (the dump
tool's ``--offsets-decoder`` is built on it, in :mod:`kafkacore.tools.offsets_records`).

Pure functions: thread-safe.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kafkacore._java import JavaException, java_string_hash, utils_abs
from kafkacore.coordinator.codec import (
    NULL,
    MessageSchema,
    Reader,
    field,
    message,
    read_message,
    to_json,
    write_message,
)
from kafkacore.errors import InvalidRecordError

__all__ = [
    "CONSUMER_PROTOCOL_ASSIGNMENT",
    "CONSUMER_PROTOCOL_SUBSCRIPTION",
    "CONSUMER_PROTOCOL_TYPE",
    "GROUP_METADATA",
    "LEGACY_OFFSET_COMMIT",
    "OFFSETS_TOPIC_PARTITIONS",
    "OFFSET_COMMIT",
    "CoordinatorRecord",
    "GroupMetadataKey",
    "GroupMetadataValue",
    "MemberMetadata",
    "OffsetCommitKey",
    "OffsetCommitValue",
    "UnknownRecordType",
    "decode_group_metadata_value",
    "decode_key",
    "decode_offset_commit_value",
    "decode_record",
    "deserialize_record",
    "encode_record",
    "group_metadata_key",
    "group_metadata_value",
    "offset_commit_key",
    "offset_commit_value",
    "partition_for_group",
    "record_schemas",
    "record_to_json",
]

LEGACY_OFFSET_COMMIT = 0
OFFSET_COMMIT = 1
GROUP_METADATA = 2
OFFSETS_TOPIC_PARTITIONS = 50  # offsets.topic.num.partitions default
CONSUMER_PROTOCOL_TYPE = "consumer"
GROUP_METADATA_VALUE_VERSION = 3
OFFSET_COMMIT_VALUE_VERSION = 3
OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY = 1
NO_EXPIRE_TIMESTAMP = -1

_f = field

# --- the schemas (Kafka's group-coordinator/src/main/resources/common/message/*.json) ---

_GROUP_ID = (_f("groupId", "string", "0"),)
_GROUP_MEMBER = (_f("groupId", "string", "0"), _f("memberId", "string", "0"))
_OFFSET_COMMIT_KEY = (
    _f("group", "string", "0"),
    _f("topic", "string", "0"),
    _f("partition", "int32", "0"),
)
_TOPIC_PARTITIONS = (
    _f("topicId", "uuid"),
    _f("partitions", "[]int32"),
)
_ASSIGNMENT_METADATA = (
    _f("assignmentEpoch", "int32"),
    _f("assignmentTimestamp", "int64", tagged="0+", tag=0, default=0),
)
_TASK_IDS = (
    _f("subtopologyId", "string"),
    _f("partitions", "[]int32"),
)
_TASK_IDS_WITH_EPOCHS = (
    *_TASK_IDS,
    _f("assignmentEpochs", "[]int32", nullable="0+", tagged="0+", tag=0),
)


def _pair(
    name: str,
    api_key: int,
    key: Sequence[Any],
    value: Sequence[Any],
    *,
    valid: str = "0",
    flexible: str = "0+",
    common: dict[str, Sequence[Any]] | None = None,
) -> tuple[MessageSchema[Any], MessageSchema[Any]]:
    return (
        message(f"{name}Key", api_key, "key", "0", "none", key),
        message(f"{name}Value", api_key, "value", valid, flexible, value, common),
    )


_RECORDS: dict[int, tuple[MessageSchema[Any], MessageSchema[Any]]] = {
    LEGACY_OFFSET_COMMIT: _pair(
        "LegacyOffsetCommit",
        0,
        _OFFSET_COMMIT_KEY,
        (
            _f("offset", "int64", "0"),
            _f("metadata", "string", "0"),
            _f("commitTimestamp", "int64", "0"),
        ),
        flexible="none",
    ),
    OFFSET_COMMIT: _pair(
        "OffsetCommit",
        1,
        _OFFSET_COMMIT_KEY,
        (
            _f("offset", "int64"),
            _f("leaderEpoch", "int32", "3+", default=-1),
            _f("metadata", "string"),
            _f("commitTimestamp", "int64"),
            _f("expireTimestamp", "int64", "1", default=-1),
            _f("topicId", "uuid", "4+", tagged="4+", tag=0),
        ),
        valid="0-4",
        flexible="4+",
    ),
    GROUP_METADATA: _pair(
        "GroupMetadata",
        2,
        (_f("group", "string", "0"),),
        (
            _f("protocolType", "string"),
            _f("generation", "int32"),
            _f("protocol", "string", nullable="0+"),
            _f("leader", "string", nullable="0+"),
            _f("currentStateTimestamp", "int64", "2+", default=-1),
            _f("members", "[]MemberMetadata"),
        ),
        valid="0-4",
        flexible="4+",
        common={
            "MemberMetadata": (
                _f("memberId", "string"),
                _f("groupInstanceId", "string", "3+", nullable="3+", default=NULL),
                _f("clientId", "string"),
                _f("clientHost", "string"),
                _f("rebalanceTimeout", "int32", "1+", default=-1),
                _f("sessionTimeout", "int32"),
                _f("subscription", "bytes"),
                _f("assignment", "bytes"),
            )
        },
    ),
    3: _pair(
        "ConsumerGroupMetadata",
        3,
        _GROUP_ID,
        (
            _f("epoch", "int32"),
            _f("metadataHash", "int64", tagged="0+", tag=0, default=0),
        ),
    ),
    4: _pair(
        "ConsumerGroupPartitionMetadata",
        4,
        _GROUP_ID,
        (
            _f(
                "topics",
                "[]TopicMetadata",
                fields=(
                    _f("topicId", "uuid"),
                    _f("topicName", "string"),
                    _f("numPartitions", "int32"),
                    _f(
                        "partitionMetadata",
                        "[]PartitionMetadata",
                        fields=(_f("partition", "int32"), _f("racks", "[]string")),
                    ),
                ),
            ),
        ),
    ),
    5: _pair(
        "ConsumerGroupMemberMetadata",
        5,
        _GROUP_MEMBER,
        (
            _f("instanceId", "string", nullable="0+"),
            _f("rackId", "string", nullable="0+"),
            _f("clientId", "string"),
            _f("clientHost", "string"),
            _f("subscribedTopicNames", "[]string"),
            _f("subscribedTopicRegex", "string", nullable="0+"),
            _f("rebalanceTimeoutMs", "int32", default=-1),
            _f("serverAssignor", "string", nullable="0+"),
            _f(
                "classicMemberMetadata",
                "ClassicMemberMetadata",
                nullable="0+",
                tagged="0+",
                tag=0,
                fields=(
                    _f("sessionTimeoutMs", "int32"),
                    _f(
                        "supportedProtocols",
                        "[]ClassicProtocol",
                        fields=(_f("name", "string"), _f("metadata", "bytes")),
                    ),
                ),
            ),
        ),
    ),
    6: _pair("ConsumerGroupTargetAssignmentMetadata", 6, _GROUP_ID, _ASSIGNMENT_METADATA),
    7: _pair(
        "ConsumerGroupTargetAssignmentMember",
        7,
        _GROUP_MEMBER,
        (_f("topicPartitions", "[]TopicPartition", fields=_TOPIC_PARTITIONS),),
    ),
    8: _pair(
        "ConsumerGroupCurrentMemberAssignment",
        8,
        _GROUP_MEMBER,
        (
            _f("memberEpoch", "int32"),
            _f("previousMemberEpoch", "int32"),
            _f("state", "int8"),
            _f("assignedPartitions", "[]TopicPartitions"),
            _f("partitionsPendingRevocation", "[]TopicPartitions"),
        ),
        common={
            "TopicPartitions": (
                *_TOPIC_PARTITIONS,
                _f("assignmentEpochs", "[]int32", nullable="0+", tagged="0+", tag=0),
            )
        },
    ),
    10: _pair(
        "ShareGroupMemberMetadata",
        10,
        _GROUP_MEMBER,
        (
            _f("rackId", "string", nullable="0+"),
            _f("clientId", "string"),
            _f("clientHost", "string"),
            _f("subscribedTopicNames", "[]string"),
        ),
    ),
    11: _pair(
        "ShareGroupMetadata",
        11,
        _GROUP_ID,
        (_f("epoch", "int32"), _f("metadataHash", "int64")),
    ),
    12: _pair("ShareGroupTargetAssignmentMetadata", 12, _GROUP_ID, _ASSIGNMENT_METADATA),
    13: _pair(
        "ShareGroupTargetAssignmentMember",
        13,
        _GROUP_MEMBER,
        (_f("topicPartitions", "[]TopicPartition", fields=_TOPIC_PARTITIONS),),
    ),
    14: _pair(
        "ShareGroupCurrentMemberAssignment",
        14,
        _GROUP_MEMBER,
        (
            _f("memberEpoch", "int32"),
            _f("previousMemberEpoch", "int32"),
            _f("state", "int8"),
            _f("assignedPartitions", "[]TopicPartitions"),
        ),
        common={"TopicPartitions": _TOPIC_PARTITIONS},
    ),
    15: _pair(
        "ShareGroupStatePartitionMetadata",
        15,
        _GROUP_ID,
        (
            _f("initializingTopics", "[]TopicPartitionsInfo"),
            _f("initializedTopics", "[]TopicPartitionsInfo"),
            _f("deletingTopics", "[]TopicInfo"),
        ),
        common={
            "TopicPartitionsInfo": (
                _f("topicId", "uuid"),
                _f("topicName", "string"),
                _f("partitions", "[]int32"),
            ),
            "TopicInfo": (_f("topicId", "uuid"), _f("topicName", "string")),
        },
    ),
    16: _pair(
        "ConsumerGroupRegularExpression",
        16,
        (_f("groupId", "string", "0"), _f("regularExpression", "string", "0")),
        (
            _f("topics", "[]string"),
            _f("version", "int64"),
            _f("timestamp", "int64"),
        ),
    ),
    17: _pair(
        "StreamsGroupMetadata",
        17,
        _GROUP_ID,
        (
            _f("epoch", "int32"),
            _f("metadataHash", "int64"),
            _f("validatedTopologyEpoch", "int32", tagged="0+", tag=0, default=-1),
            _f(
                "lastAssignmentConfigs",
                "[]LastAssignmentConfig",
                None,
                tagged="0+",
                nullable="0+",
                tag=1,
            ),
        ),
        common={"LastAssignmentConfig": (_f("key", "string"), _f("value", "string"))},
    ),
    19: _pair(
        "StreamsGroupMemberMetadata",
        19,
        _GROUP_MEMBER,
        (
            _f("instanceId", "string", nullable="0+"),
            _f("rackId", "string", nullable="0+"),
            _f("clientId", "string"),
            _f("clientHost", "string"),
            _f("rebalanceTimeoutMs", "int32", default=-1),
            _f("topologyEpoch", "int32"),
            _f("processId", "string"),
            _f("userEndpoint", "Endpoint", nullable="0+", default=NULL),
            _f("clientTags", "[]KeyValue"),
        ),
        common={
            "Endpoint": (_f("host", "string"), _f("port", "uint16")),
            "KeyValue": (_f("key", "string"), _f("value", "string")),
        },
    ),
    20: _pair("StreamsGroupTargetAssignmentMetadata", 20, _GROUP_ID, _ASSIGNMENT_METADATA),
    21: _pair(
        "StreamsGroupTargetAssignmentMember",
        21,
        _GROUP_MEMBER,
        (
            _f("activeTasks", "[]TaskIds"),
            _f("standbyTasks", "[]TaskIds"),
            _f("warmupTasks", "[]TaskIds"),
        ),
        common={"TaskIds": _TASK_IDS},
    ),
    22: _pair(
        "StreamsGroupCurrentMemberAssignment",
        22,
        _GROUP_MEMBER,
        (
            _f("memberEpoch", "int32"),
            _f("previousMemberEpoch", "int32"),
            _f("state", "int8"),
            _f("activeTasks", "[]TaskIds"),
            _f("standbyTasks", "[]TaskIds"),
            _f("warmupTasks", "[]TaskIds"),
            _f("activeTasksPendingRevocation", "[]TaskIds"),
            _f("standbyTasksPendingRevocation", "[]TaskIds"),
            _f("warmupTasksPendingRevocation", "[]TaskIds"),
        ),
        common={"TaskIds": _TASK_IDS_WITH_EPOCHS},
    ),
    23: _pair(
        "StreamsGroupTopology",
        23,
        _GROUP_ID,
        (
            _f("epoch", "int32"),
            _f(
                "subtopologies",
                "[]Subtopology",
                fields=(
                    _f("subtopologyId", "string"),
                    _f("sourceTopics", "[]string"),
                    _f("sourceTopicRegex", "[]string"),
                    _f("stateChangelogTopics", "[]TopicInfo"),
                    _f("repartitionSinkTopics", "[]string"),
                    _f("repartitionSourceTopics", "[]TopicInfo"),
                    _f(
                        "copartitionGroups",
                        "[]CopartitionGroup",
                        fields=(
                            _f("sourceTopics", "[]int16"),
                            _f("sourceTopicRegex", "[]int16"),
                            _f("repartitionSourceTopics", "[]int16"),
                        ),
                    ),
                ),
            ),
        ),
        common={
            "TopicConfig": (_f("key", "string"), _f("value", "string")),
            "TopicInfo": (
                _f("name", "string"),
                _f("partitions", "int32"),
                _f("replicationFactor", "int16"),
                _f("topicConfigs", "[]TopicConfig"),
            ),
        },
    ),
}

# The consumer protocol (clients/src/main/resources/common/message/ConsumerProtocol*.json):
# what a classic consumer group's members carry as subscription and assignment bytes.
_CONSUMER_TOPIC_PARTITION = (_f("topic", "string"), _f("partitions", "[]int32"))
CONSUMER_PROTOCOL_SUBSCRIPTION = message(
    "ConsumerProtocolSubscription",
    -1,
    "value",
    "0-3",
    "none",
    (
        _f("topics", "[]string"),
        _f("userData", "bytes", nullable="0+", default=NULL, zero_copy=True),
        _f("ownedPartitions", "[]TopicPartition", "1+", fields=_CONSUMER_TOPIC_PARTITION),
        _f("generationId", "int32", "2+", default=-1),
        _f("rackId", "string", "3+", nullable="3+", default=NULL),
    ),
)
CONSUMER_PROTOCOL_ASSIGNMENT = message(
    "ConsumerProtocolAssignment",
    -1,
    "value",
    "0-3",
    "none",
    (
        _f("assignedPartitions", "[]TopicPartition", fields=_CONSUMER_TOPIC_PARTITION),
        _f("userData", "bytes", nullable="0+", default=NULL, zero_copy=True),
    ),
)


# --- generic records ---------------------------------------------------------------------


@dataclass(frozen=True)
class CoordinatorRecord:
    """One ``__consumer_offsets`` record, decoded: ``key`` and ``value`` in the decoded
    form of :mod:`~kafkacore.coordinator.codec`; ``value`` ``None`` is a tombstone
    (``version`` is then -1)."""

    type: int
    key: dict[str, Any]
    version: int
    value: dict[str, Any] | None

    @property
    def is_tombstone(self) -> bool:
        return self.value is None


class UnknownRecordType(JavaException):
    """Kafka's ``UnknownRecordTypeException``: no schema for ``record_type``."""

    def __init__(self, record_type: int) -> None:
        super().__init__(
            "UnknownRecordTypeException", f"Found an unknown record type {record_type}"
        )
        self.record_type = record_type


def record_schemas(record_type: int) -> tuple[MessageSchema[Any], MessageSchema[Any]]:
    try:
        return _RECORDS[record_type]
    except KeyError:
        raise UnknownRecordType(record_type) from None


def encode_record(
    record_type: int, key: dict[str, Any], version: int, value: dict[str, Any] | None
) -> tuple[bytes, bytes | None]:
    """Kafka's ``CoordinatorRecordSerde.serializeKey/serializeValue``: ``(key bytes,
    value bytes or None for a tombstone)``; fields missing from ``key``/``value`` take
    their defaults. ``ValueError`` for an unknown type or a version out of range."""
    try:
        key_schema, value_schema = record_schemas(record_type)
    except UnknownRecordType as exc:
        raise ValueError(exc.message) from None
    key_bytes = record_type.to_bytes(2, "big", signed=True) + write_message(key_schema, key, 0)
    if value is None:
        return key_bytes, None
    if version not in value_schema.valid:
        raise ValueError(f"{value_schema.name} has no version {version}")
    return key_bytes, version.to_bytes(2, "big", signed=True) + write_message(
        value_schema, value, version
    )


def deserialize_record(key: bytes, value: bytes | None) -> CoordinatorRecord:
    """``CoordinatorRecordSerde.deserialize`` with ``GroupCoordinatorRecordSerde``:
    raises ``JavaException`` with Kafka's messages."""
    reader = Reader(key)
    try:
        record_type = reader.int16()
    except JavaException:
        raise JavaException(
            "RuntimeException", "Could not read version from key's buffer."
        ) from None
    key_schema, value_schema = record_schemas(record_type)
    key_value = _read(key_schema, reader, record_type, "key")  # Kafka reads keys at the type
    if value is None:
        return CoordinatorRecord(record_type, key_value, -1, None)
    reader = Reader(value)
    try:
        version = reader.int16()
    except JavaException:
        raise JavaException(
            "RuntimeException", "Could not read version from value's buffer."
        ) from None
    if version not in value_schema.valid:
        raise JavaException(
            "UnknownRecordVersionException",
            f"Found an unknown record version {version} for {record_type} type",
        )
    return CoordinatorRecord(
        record_type, key_value, version, _read(value_schema, reader, version, "value")
    )


def _read(schema: MessageSchema[Any], reader: Reader, version: int, what: str) -> dict[str, Any]:
    try:
        return read_message(schema, reader, version)
    except JavaException as exc:
        raise JavaException(
            "RuntimeException",
            f"Could not read record with version {version} from {what}'s buffer due to: "
            f"{exc.message}.",
        ) from None


def record_to_json(record: CoordinatorRecord) -> tuple[str, str | None]:
    """The key and value (``None`` for a tombstone) as Kafka's generated
    ``CoordinatorRecordJsonConverters`` write them, bytes as base64: the JSON its
    ``readRecordKeyFromJson``/``readRecordValueFromJson`` read back."""
    key_schema, value_schema = record_schemas(record.type)
    key = to_json(key_schema, record.key, 0)
    if record.value is None:
        return key, None
    return key, to_json(value_schema, record.value, record.version)


def decode_record(key: bytes, value: bytes | None) -> CoordinatorRecord:
    """Decode a record's key and value (``None``: tombstone), as Kafka's group
    coordinator reads them. ``InvalidRecordError`` with Kafka's message if they are
    malformed or of an unknown type or version."""
    try:
        return deserialize_record(key, value)
    except JavaException as exc:
        raise InvalidRecordError(exc.message) from None


# --- the classic group's records, typed ----------------------------------------------------


@dataclass(frozen=True)
class OffsetCommitKey:
    """Record types 0 and 1: a committed offset of ``group`` for ``topic``-``partition``."""

    group: str
    topic: str
    partition: int


@dataclass(frozen=True)
class GroupMetadataKey:
    """Record type 2: a classic group's metadata."""

    group: str


@dataclass(frozen=True)
class OffsetCommitValue:
    """An ``OffsetCommitValue`` (or type 0's ``LegacyOffsetCommitValue``, as version 0).
    ``leader_epoch`` is -1 below v3, ``expire_timestamp`` -1 except in v1, ``topic_id``
    ``None`` unless a v4 value carries one."""

    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int
    topic_id: uuid.UUID | None
    version: int


@dataclass(frozen=True)
class MemberMetadata:
    """One member of a classic group (``subscription``/``assignment``: the bytes of its
    protocol, for a consumer group the ``ConsumerProtocol`` subscription and assignment)."""

    member_id: str
    client_id: str
    client_host: str
    session_timeout: int
    subscription: bytes
    assignment: bytes
    rebalance_timeout: int = -1
    group_instance_id: str | None = None


@dataclass(frozen=True)
class GroupMetadataValue:
    """A classic group's state as its coordinator writes it (``protocol`` and ``leader``
    ``None`` for an empty group)."""

    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int
    members: tuple[MemberMetadata, ...]
    version: int


def _key_bytes(record_type: int, key: dict[str, Any]) -> bytes:
    return encode_record(record_type, key, 0, None)[0]


def offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    """The key of a committed offset (record type 1, as Kafka writes it)."""
    return _key_bytes(OFFSET_COMMIT, {"group": group, "topic": topic, "partition": partition})


def group_metadata_key(group: str) -> bytes:
    """The key of a classic group's metadata (record type 2)."""
    return _key_bytes(GROUP_METADATA, {"group": group})


def offset_commit_value(
    offset: int,
    leader_epoch: int,
    metadata: str,
    commit_timestamp: int,
    expire_timestamp: int | None = None,
    *,
    version: int | None = None,
    topic_id: uuid.UUID | None = None,
) -> bytes:
    """An ``OffsetCommitValue``: version 3, or version 1 when ``expire_timestamp`` is set
    (v1 is the only version with it; it has no leader epoch). ``version`` forces another
    (0-4; ``topic_id`` needs v4, which Kafka 4.3 itself writes when there is no expiry)."""
    if version is None:
        version = (
            OFFSET_COMMIT_VALUE_VERSION
            if expire_timestamp is None
            else OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY
        )
    value: dict[str, Any] = {
        "offset": offset,
        "leaderEpoch": leader_epoch,
        "metadata": metadata,
        "commitTimestamp": commit_timestamp,
        "expireTimestamp": NO_EXPIRE_TIMESTAMP if expire_timestamp is None else expire_timestamp,
        "topicId": topic_id if topic_id is not None else uuid.UUID(int=0),
    }
    encoded = encode_record(OFFSET_COMMIT, {}, version, value)[1]
    assert encoded is not None
    return encoded


def group_metadata_value(
    protocol_type: str,
    generation: int,
    protocol: str | None,
    leader: str | None,
    current_state_timestamp: int,
    members: Sequence[MemberMetadata] = (),
    *,
    version: int = GROUP_METADATA_VALUE_VERSION,
) -> bytes:
    """A ``GroupMetadataValue``, version 3 as Kafka writes it (0-4 with ``version``)."""
    value = {
        "protocolType": protocol_type,
        "generation": generation,
        "protocol": protocol,
        "leader": leader,
        "currentStateTimestamp": current_state_timestamp,
        "members": [
            {
                "memberId": m.member_id,
                "groupInstanceId": m.group_instance_id,
                "clientId": m.client_id,
                "clientHost": m.client_host,
                "rebalanceTimeout": m.rebalance_timeout,
                "sessionTimeout": m.session_timeout,
                "subscription": m.subscription,
                "assignment": m.assignment,
            }
            for m in members
        ],
    }
    encoded = encode_record(GROUP_METADATA, {}, version, value)[1]
    assert encoded is not None
    return encoded


def decode_key(data: bytes) -> OffsetCommitKey | GroupMetadataKey | CoordinatorRecord:
    """A record key: :class:`OffsetCommitKey` (types 0 and 1), :class:`GroupMetadataKey`
    (type 2), or for the other types a :class:`CoordinatorRecord` without value.
    ``InvalidRecordError`` if malformed or of an unknown type."""
    record = decode_record(data, None)
    if record.type in (LEGACY_OFFSET_COMMIT, OFFSET_COMMIT):
        k = record.key
        return OffsetCommitKey(k["group"], k["topic"], k["partition"])
    if record.type == GROUP_METADATA:
        return GroupMetadataKey(record.key["group"])
    return record


def _decode_value(record_type: int, data: bytes) -> tuple[int, dict[str, Any]]:
    key = record_type.to_bytes(2, "big", signed=True) + write_message(
        record_schemas(record_type)[0], {}, 0
    )
    record = decode_record(key, data)
    assert record.value is not None
    return record.version, record.value


def decode_offset_commit_value(data: bytes, *, legacy: bool = False) -> OffsetCommitValue:
    """An ``OffsetCommitValue`` (``legacy``: of record type 0). ``InvalidRecordError``
    with Kafka's message if malformed or of an unknown version."""
    version, v = _decode_value(LEGACY_OFFSET_COMMIT if legacy else OFFSET_COMMIT, data)
    topic_id = v.get("topicId")
    return OffsetCommitValue(
        offset=v["offset"],
        leader_epoch=v.get("leaderEpoch", -1),
        metadata=v["metadata"],
        commit_timestamp=v["commitTimestamp"],
        expire_timestamp=v.get("expireTimestamp", NO_EXPIRE_TIMESTAMP),
        topic_id=None if topic_id is None or topic_id.int == 0 else topic_id,
        version=version,
    )


def decode_group_metadata_value(data: bytes) -> GroupMetadataValue:
    """A ``GroupMetadataValue``. ``InvalidRecordError`` if malformed."""
    version, v = _decode_value(GROUP_METADATA, data)
    return GroupMetadataValue(
        protocol_type=v["protocolType"],
        generation=v["generation"],
        protocol=v["protocol"],
        leader=v["leader"],
        current_state_timestamp=v["currentStateTimestamp"],
        members=tuple(
            MemberMetadata(
                member_id=m["memberId"],
                client_id=m["clientId"],
                client_host=m["clientHost"],
                session_timeout=m["sessionTimeout"],
                subscription=m["subscription"],
                assignment=m["assignment"],
                rebalance_timeout=m["rebalanceTimeout"],
                group_instance_id=m["groupInstanceId"],
            )
            for m in v["members"]
        ),
        version=version,
    )


def partition_for_group(group: str, partitions: int = OFFSETS_TOPIC_PARTITIONS) -> int:
    """The ``__consumer_offsets`` partition of ``group``: ``Utils.abs(group.hashCode())
    % partitions`` (Java's ``String.hashCode``; ``Utils.abs(MIN_VALUE)`` is 0)."""
    return utils_abs(java_string_hash(group)) % partitions
