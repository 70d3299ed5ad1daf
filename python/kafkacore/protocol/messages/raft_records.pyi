# Generated from raft_records.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in raft_records.py."""

import uuid
from enum import IntEnum
from typing import Any

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = [
    "CONTROL_RECORD_KEY",
    "CONTROL_VALUES",
    "KRAFT_VERSION",
    "KRAFT_VOTERS",
    "LEADER_CHANGE",
    "SNAPSHOT_FOOTER",
    "SNAPSHOT_HEADER",
    "ControlRecordType",
    "ControlRecordTypeSchema",
    "KRaftVersionRecord",
    "LeaderChangeMessage",
    "SnapshotFooterRecord",
    "SnapshotHeaderRecord",
    "VotersRecord",
]

class ControlRecordType(IntEnum):
    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6

class ControlRecordTypeSchema(KafkaStruct):
    """Kafka's ``ControlRecordTypeSchema``: versions 0-0."""

    version: int
    type: int
    def __init__(
        self,
        *,
        version: int = ...,
        type: int = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class KRaftVersionRecord(KafkaStruct):
    """Kafka's ``KRaftVersionRecord``: versions 0-0, flexible 0+."""

    version: int
    k_raft_version: int
    def __init__(
        self,
        *,
        version: int = ...,
        k_raft_version: int = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class VotersRecord(KafkaStruct):
    """Kafka's ``VotersRecord``: versions 0-0, flexible 0+."""

    class Voter(KafkaStruct):
        voter_id: int
        voter_directory_id: uuid.UUID
        endpoints: list[VotersRecord.Endpoint]
        k_raft_version_feature: VotersRecord.KRaftVersionFeature
        def __init__(
            self,
            *,
            voter_id: int = ...,
            voter_directory_id: uuid.UUID = ...,
            endpoints: list[VotersRecord.Endpoint] = ...,
            k_raft_version_feature: VotersRecord.KRaftVersionFeature = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class Endpoint(KafkaStruct):
        name: str
        host: str
        port: int
        def __init__(
            self,
            *,
            name: str = ...,
            host: str = ...,
            port: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class KRaftVersionFeature(KafkaStruct):
        min_supported_version: int
        max_supported_version: int
        def __init__(
            self,
            *,
            min_supported_version: int = ...,
            max_supported_version: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    version: int
    voters: list[VotersRecord.Voter]
    def __init__(
        self,
        *,
        version: int = ...,
        voters: list[VotersRecord.Voter] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class LeaderChangeMessage(KafkaStruct):
    """Kafka's ``LeaderChangeMessage``: versions 0-1, flexible 0+."""

    class Voter(KafkaStruct):
        voter_id: int
        voter_directory_id: uuid.UUID  # versions 1+
        def __init__(
            self,
            *,
            voter_id: int = ...,
            voter_directory_id: uuid.UUID = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    version: int
    leader_id: int
    voters: list[LeaderChangeMessage.Voter]
    granting_voters: list[LeaderChangeMessage.Voter]
    def __init__(
        self,
        *,
        version: int = ...,
        leader_id: int = ...,
        voters: list[LeaderChangeMessage.Voter] = ...,
        granting_voters: list[LeaderChangeMessage.Voter] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class SnapshotFooterRecord(KafkaStruct):
    """Kafka's ``SnapshotFooterRecord``: versions 0-0, flexible 0+."""

    version: int
    def __init__(
        self,
        *,
        version: int = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class SnapshotHeaderRecord(KafkaStruct):
    """Kafka's ``SnapshotHeaderRecord``: versions 0-0, flexible 0+."""

    version: int
    last_contained_log_timestamp: int
    def __init__(
        self,
        *,
        version: int = ...,
        last_contained_log_timestamp: int = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

CONTROL_RECORD_KEY: MessageSchema[ControlRecordTypeSchema]
KRAFT_VERSION: MessageSchema[KRaftVersionRecord]
KRAFT_VOTERS: MessageSchema[VotersRecord]
LEADER_CHANGE: MessageSchema[LeaderChangeMessage]
SNAPSHOT_FOOTER: MessageSchema[SnapshotFooterRecord]
SNAPSHOT_HEADER: MessageSchema[SnapshotHeaderRecord]
CONTROL_VALUES: dict[ControlRecordType, MessageSchema[Any]]
