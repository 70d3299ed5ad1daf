"""The records of ``__cluster_metadata``: Kafka's metadata records, declared with
:mod:`kafkacore.protocol.schema` and framed byte for byte as Kafka 4.3.1's
``MetadataRecordSerde`` frames them, so a Kafka node replays what kafkacore writes (and
``kafka-dump-log --cluster-metadata-decoder`` reads it).

Declared from the facts of Kafka 4.3.1's ``metadata/src/main/resources/common/metadata``
definitions, at their full version ranges; which version to write is the controller's
choice, made from the finalized ``metadata.version`` (4.3-IV0 writes RegisterBrokerRecord
v4, PartitionRecord and PartitionChangeRecord v2). Every record is flexible from v0.

A record is a batch record's value (its key is null)::

    frame version uvarint (1) | api key uvarint | version uvarint | record at that version

(Kafka's ``AbstractApiMessageSerde``: frame version 0, the 2.8 preview's, is refused, as
are other frame versions and bytes after the record.) :func:`encode_record` and
:func:`decode_record` write and read a :class:`MetadataRecord`; a frame Kafka would refuse
raises :class:`MetadataParseError` with Kafka's message. Record values are the codec's
generated classes (``RECORDS[t].cls``); the KRaft control records (leader change, snapshot
header and footer, KRaft version, voters) are not metadata records and are not here.

This module sits in ``metadata/``, beside the image and deltas that replay the records
(Kafka keeps them in its ``kafka-metadata`` jar, ``org.apache.kafka.common.metadata``,
with ``MetadataRecordSerde``), as ``coordinator/records.py`` holds the coordinators'.

Immutable declarations, pure functions: thread-safe.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from kafkacore.coordinator.codec import Reader, read_message
from kafkacore.errors import KafkaCoreError
from kafkacore.protocol.schema import NULL, MessageSchema, field, message
from kafkacore.protocol.types import MalformedMessage, write_uvarint

__all__ = [
    "FRAME_VERSION",
    "RECORDS",
    "MetadataParseError",
    "MetadataRecord",
    "MetadataRecordType",
    "decode_record",
    "encode_record",
]

FRAME_VERSION = 1
"""``AbstractApiMessageSerde.DEFAULT_FRAME_VERSION``: the only frame version read."""


class MetadataRecordType(IntEnum):
    """Kafka's ``MetadataRecordType``: a metadata record's api key (6, 13 and 16 are
    unused)."""

    REGISTER_BROKER_RECORD = 0
    UNREGISTER_BROKER_RECORD = 1
    TOPIC_RECORD = 2
    PARTITION_RECORD = 3
    CONFIG_RECORD = 4
    PARTITION_CHANGE_RECORD = 5
    FENCE_BROKER_RECORD = 7
    UNFENCE_BROKER_RECORD = 8
    REMOVE_TOPIC_RECORD = 9
    DELEGATION_TOKEN_RECORD = 10
    USER_SCRAM_CREDENTIAL_RECORD = 11
    FEATURE_LEVEL_RECORD = 12
    CLIENT_QUOTA_RECORD = 14
    PRODUCER_IDS_RECORD = 15
    BROKER_REGISTRATION_CHANGE_RECORD = 17
    ACCESS_CONTROL_ENTRY_RECORD = 18
    REMOVE_ACCESS_CONTROL_ENTRY_RECORD = 19
    NO_OP_RECORD = 20
    ZK_MIGRATION_STATE_RECORD = 21
    REMOVE_USER_SCRAM_CREDENTIAL_RECORD = 22
    BEGIN_TRANSACTION_RECORD = 23
    END_TRANSACTION_RECORD = 24
    ABORT_TRANSACTION_RECORD = 25
    REMOVE_DELEGATION_TOKEN_RECORD = 26
    REGISTER_CONTROLLER_RECORD = 27
    CLEAR_ELR_RECORD = 28


RECORDS: dict[int, MessageSchema[Any]] = {
    MetadataRecordType.REGISTER_BROKER_RECORD: message(
        "RegisterBrokerRecord",
        0,
        "metadata",
        valid="0-4",
        flexible="0+",
        fields=[
            field("BrokerId", "int32", "0+"),
            field("IsMigratingZkBroker", "bool", "2+", default=False),
            field("IncarnationId", "uuid", "0+"),
            field("BrokerEpoch", "int64", "0+"),
            field(
                "EndPoints",
                "[]BrokerEndpoint",
                "0+",
                fields=[
                    field("Name", "string", "0+"),
                    field("Host", "string", "0+"),
                    field("Port", "uint16", "0+"),
                    field("SecurityProtocol", "int16", "0+"),
                ],
            ),
            field(
                "Features",
                "[]BrokerFeature",
                "0+",
                fields=[
                    field("Name", "string", "0+"),
                    field("MinSupportedVersion", "int16", "0+"),
                    field("MaxSupportedVersion", "int16", "0+"),
                ],
            ),
            field("Rack", "string", "0+", nullable="0+"),
            field("Fenced", "bool", "0+", default=True),
            field("InControlledShutdown", "bool", "1+", default=False),
            field("LogDirs", "[]uuid", "3+", tagged="3+", tag=0),
            field(
                "CordonedLogDirs", "[]uuid", "4+", nullable="4+", tagged="4+", tag=1, default=NULL
            ),
        ],
    ),
    MetadataRecordType.UNREGISTER_BROKER_RECORD: message(
        "UnregisterBrokerRecord",
        1,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[
            field("BrokerId", "int32", "0+"),
            field("BrokerEpoch", "int64", "0+"),
        ],
    ),
    MetadataRecordType.TOPIC_RECORD: message(
        "TopicRecord",
        2,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[
            field("Name", "string", "0+"),
            field("TopicId", "uuid", "0+"),
        ],
    ),
    MetadataRecordType.PARTITION_RECORD: message(
        "PartitionRecord",
        3,
        "metadata",
        valid="0-2",
        flexible="0+",
        fields=[
            field("PartitionId", "int32", "0+", default=-1),
            field("TopicId", "uuid", "0+"),
            field("Replicas", "[]int32", "0+"),
            field("Isr", "[]int32", "0+"),
            field("RemovingReplicas", "[]int32", "0+"),
            field("AddingReplicas", "[]int32", "0+"),
            field("Leader", "int32", "0+", default=-1),
            field("LeaderRecoveryState", "int8", "0+", tagged="0+", tag=0, default=0),
            field("LeaderEpoch", "int32", "0+", default=-1),
            field("PartitionEpoch", "int32", "0+", default=-1),
            field("Directories", "[]uuid", "1+"),
            field(
                "EligibleLeaderReplicas",
                "[]int32",
                "2+",
                nullable="2+",
                tagged="2+",
                tag=1,
                default=NULL,
            ),
            field("LastKnownElr", "[]int32", "2+", nullable="2+", tagged="2+", tag=2, default=NULL),
        ],
    ),
    MetadataRecordType.CONFIG_RECORD: message(
        "ConfigRecord",
        4,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[
            field("ResourceType", "int8", "0+"),
            field("ResourceName", "string", "0+"),
            field("Name", "string", "0+"),
            field("Value", "string", "0+", nullable="0+"),
        ],
    ),
    MetadataRecordType.PARTITION_CHANGE_RECORD: message(
        "PartitionChangeRecord",
        5,
        "metadata",
        valid="0-2",
        flexible="0+",
        fields=[
            field("PartitionId", "int32", "0+", default=-1),
            field("TopicId", "uuid", "0+"),
            field("Isr", "[]int32", "0+", nullable="0+", tagged="0+", tag=0, default=NULL),
            field("Leader", "int32", "0+", tagged="0+", tag=1, default=-2),
            field("Replicas", "[]int32", "0+", nullable="0+", tagged="0+", tag=2, default=NULL),
            field(
                "RemovingReplicas",
                "[]int32",
                "0+",
                nullable="0+",
                tagged="0+",
                tag=3,
                default=NULL,
            ),
            field(
                "AddingReplicas", "[]int32", "0+", nullable="0+", tagged="0+", tag=4, default=NULL
            ),
            field("LeaderRecoveryState", "int8", "0+", tagged="0+", tag=5, default=-1),
            field("Directories", "[]uuid", "1+", nullable="1+", tagged="1+", tag=8, default=NULL),
            field(
                "EligibleLeaderReplicas",
                "[]int32",
                "2+",
                nullable="2+",
                tagged="2+",
                tag=6,
                default=NULL,
            ),
            field("LastKnownElr", "[]int32", "2+", nullable="2+", tagged="2+", tag=7, default=NULL),
        ],
    ),
    MetadataRecordType.FENCE_BROKER_RECORD: message(
        "FenceBrokerRecord",
        7,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[
            field("Id", "int32", "0+"),
            field("Epoch", "int64", "0+"),
        ],
    ),
    MetadataRecordType.UNFENCE_BROKER_RECORD: message(
        "UnfenceBrokerRecord",
        8,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[
            field("Id", "int32", "0+"),
            field("Epoch", "int64", "0+"),
        ],
    ),
    MetadataRecordType.REMOVE_TOPIC_RECORD: message(
        "RemoveTopicRecord",
        9,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[
            field("TopicId", "uuid", "0+"),
        ],
    ),
    MetadataRecordType.DELEGATION_TOKEN_RECORD: message(
        "DelegationTokenRecord",
        10,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[
            field("Owner", "string", "0+"),
            field("Requester", "string", "0+"),
            field("Renewers", "[]string", "0+"),
            field("IssueTimestamp", "int64", "0+"),
            field("MaxTimestamp", "int64", "0+"),
            field("ExpirationTimestamp", "int64", "0+"),
            field("TokenId", "string", "0+"),
        ],
    ),
    MetadataRecordType.USER_SCRAM_CREDENTIAL_RECORD: message(
        "UserScramCredentialRecord",
        11,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[
            field("Name", "string", "0+"),
            field("Mechanism", "int8", "0+"),
            field("Salt", "bytes", "0+"),
            field("StoredKey", "bytes", "0+"),
            field("ServerKey", "bytes", "0+"),
            field("Iterations", "int32", "0+"),
        ],
    ),
    MetadataRecordType.FEATURE_LEVEL_RECORD: message(
        "FeatureLevelRecord",
        12,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[
            field("Name", "string", "0+"),
            field("FeatureLevel", "int16", "0+"),
        ],
    ),
    MetadataRecordType.CLIENT_QUOTA_RECORD: message(
        "ClientQuotaRecord",
        14,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[
            field(
                "Entity",
                "[]EntityData",
                "0+",
                fields=[
                    field("EntityType", "string", "0+"),
                    field("EntityName", "string", "0+", nullable="0+"),
                ],
            ),
            field("Key", "string", "0+"),
            field("Value", "float64", "0+"),
            field("Remove", "bool", "0+"),
        ],
    ),
    MetadataRecordType.PRODUCER_IDS_RECORD: message(
        "ProducerIdsRecord",
        15,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[
            field("BrokerId", "int32", "0+"),
            field("BrokerEpoch", "int64", "0+", default=-1),
            field("NextProducerId", "int64", "0+"),
        ],
    ),
    MetadataRecordType.BROKER_REGISTRATION_CHANGE_RECORD: message(
        "BrokerRegistrationChangeRecord",
        17,
        "metadata",
        valid="0-3",
        flexible="0+",
        fields=[
            field("BrokerId", "int32", "0+"),
            field("BrokerEpoch", "int64", "0+"),
            field("Fenced", "int8", "0+", tagged="0+", tag=0),
            field("InControlledShutdown", "int8", "1+", tagged="1+", tag=1),
            field("LogDirs", "[]uuid", "2+", tagged="2+", tag=2),
            field(
                "CordonedLogDirs", "[]uuid", "3+", nullable="3+", tagged="3+", tag=3, default=NULL
            ),
        ],
    ),
    MetadataRecordType.ACCESS_CONTROL_ENTRY_RECORD: message(
        "AccessControlEntryRecord",
        18,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[
            field("Id", "uuid", "0+"),
            field("ResourceType", "int8", "0+"),
            field("ResourceName", "string", "0+"),
            field("PatternType", "int8", "0+"),
            field("Principal", "string", "0+"),
            field("Host", "string", "0+"),
            field("Operation", "int8", "0+"),
            field("PermissionType", "int8", "0+"),
        ],
    ),
    MetadataRecordType.REMOVE_ACCESS_CONTROL_ENTRY_RECORD: message(
        "RemoveAccessControlEntryRecord",
        19,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[
            field("Id", "uuid", "0+"),
        ],
    ),
    MetadataRecordType.NO_OP_RECORD: message(
        "NoOpRecord",
        20,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[],
    ),
    MetadataRecordType.ZK_MIGRATION_STATE_RECORD: message(
        "ZkMigrationStateRecord",
        21,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[
            field("ZkMigrationState", "int8", "0+"),
        ],
    ),
    MetadataRecordType.REMOVE_USER_SCRAM_CREDENTIAL_RECORD: message(
        "RemoveUserScramCredentialRecord",
        22,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[
            field("Name", "string", "0+"),
            field("Mechanism", "int8", "0+"),
        ],
    ),
    MetadataRecordType.BEGIN_TRANSACTION_RECORD: message(
        "BeginTransactionRecord",
        23,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[
            field("Name", "string", "0+", nullable="0+", tagged="0+", tag=0, default=NULL),
        ],
    ),
    MetadataRecordType.END_TRANSACTION_RECORD: message(
        "EndTransactionRecord",
        24,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[],
    ),
    MetadataRecordType.ABORT_TRANSACTION_RECORD: message(
        "AbortTransactionRecord",
        25,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[
            field("Reason", "string", "0+", nullable="0+", tagged="0+", tag=0, default=NULL),
        ],
    ),
    MetadataRecordType.REMOVE_DELEGATION_TOKEN_RECORD: message(
        "RemoveDelegationTokenRecord",
        26,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[
            field("TokenId", "string", "0+"),
        ],
    ),
    MetadataRecordType.REGISTER_CONTROLLER_RECORD: message(
        "RegisterControllerRecord",
        27,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[
            field("ControllerId", "int32", "0+"),
            field("IncarnationId", "uuid", "0+"),
            field("ZkMigrationReady", "bool", "0+"),
            field(
                "EndPoints",
                "[]ControllerEndpoint",
                "0+",
                fields=[
                    field("Name", "string", "0+"),
                    field("Host", "string", "0+"),
                    field("Port", "uint16", "0+"),
                    field("SecurityProtocol", "int16", "0+"),
                ],
            ),
            field(
                "Features",
                "[]ControllerFeature",
                "0+",
                fields=[
                    field("Name", "string", "0+"),
                    field("MinSupportedVersion", "int16", "0+"),
                    field("MaxSupportedVersion", "int16", "0+"),
                ],
            ),
        ],
    ),
    MetadataRecordType.CLEAR_ELR_RECORD: message(
        "ClearElrRecord",
        28,
        "metadata",
        valid="0",
        flexible="0+",
        fields=[
            field("TopicName", "string", "0+"),
        ],
    ),
}
"""Every metadata record's declaration, by api key."""


class MetadataParseError(ValueError):
    """Kafka's ``MetadataParseException``: a frame ``MetadataRecordSerde`` refuses; the
    message is Kafka's."""


@dataclass(frozen=True)
class MetadataRecord:
    """One metadata record (Kafka's ``ApiMessageAndVersion``): ``value`` is an instance
    of ``RECORDS[type].cls``, written at ``version``."""

    type: MetadataRecordType
    version: int
    value: Any


def encode_record(record: MetadataRecord) -> bytes:
    """The framed record (``MetadataRecordSerde.write``). ``ValueError`` for a version
    the record does not have."""
    schema = RECORDS[record.type]
    return b"".join(
        (
            write_uvarint(FRAME_VERSION),
            write_uvarint(record.type),
            write_uvarint(record.version),
            schema.encode(record.value, record.version),
        )
    )


def _read_short(reader: Reader, what: str) -> int:
    """``AbstractApiMessageSerde.unsignedIntToShort``: Java's ``readUnsignedVarint`` (an
    int), refused above ``Short.MAX_VALUE``, then narrowed to a short."""
    try:
        value = reader.uvarint()
    except KafkaCoreError:  # codec's JavaException: Kafka's read failed
        raise MetadataParseError(f"Error while reading {what}") from None
    if value > 0x7FFF:
        raise MetadataParseError(f"Value for {what} was too large.")
    return (value + 0x8000) % 0x10000 - 0x8000


def decode_record(data: bytes | memoryview) -> MetadataRecord:
    """A framed record (``MetadataRecordSerde.read`` of a whole batch record value);
    :class:`MetadataParseError` with Kafka's message for a frame Kafka refuses.

    A version above the declared ones is read as Kafka's generated code reads it: with
    the newest layout (``value`` is then read at the newest declared version; the
    record's ``version`` stays the frame's), refused only where a nested struct is met."""
    raw = bytes(data)
    reader = Reader(raw)
    frame_version = _read_short(reader, "frame version")
    if frame_version == 0:
        raise MetadataParseError(
            "Could not deserialize metadata record with frame version 0. Note that upgrades "
            "from the preview release of KRaft in 2.8 to newer versions are not supported."
        )
    if frame_version != FRAME_VERSION:
        raise MetadataParseError(
            f"Could not deserialize metadata record due to unknown frame version "
            f"{frame_version}(only frame version {FRAME_VERSION} is supported)"
        )
    record_type = _read_short(reader, "type")
    version = _read_short(reader, "version")
    schema = RECORDS.get(record_type)
    if schema is None:
        raise MetadataParseError(
            "org.apache.kafka.common.errors.UnsupportedVersionException: "
            f"Unknown metadata id {record_type}"
        )
    failed = MetadataParseError(f"Failed to deserialize record with type {record_type}")
    read_version = version
    if version > schema.valid.hi:  # Kafka's generated code decides, as codec mirrors it
        try:
            read_message(schema, Reader(raw, reader.pos), version)
        except KafkaCoreError:
            raise failed from None
        read_version = schema.valid.hi
    elif version not in schema.valid:
        raise failed
    buf = memoryview(raw)
    try:
        value, end = schema.reader(read_version)(buf, reader.pos, len(buf))
    except (MalformedMessage, struct.error, IndexError):
        raise failed from None
    if end < len(buf):
        raise MetadataParseError(f"Found {len(buf) - end} byte(s) of garbage after {record_type}")
    return MetadataRecord(MetadataRecordType(record_type), version, value)
