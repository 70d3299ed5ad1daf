"""The KRaft control records of ``__cluster_metadata`` and the control-record key.

A control record's key is Kafka's ``ControlRecordTypeSchema``: ``int16 version`` (0) and
``int16 type`` (:class:`ControlRecordType`); its value is one of the messages below, each
starting with its own ``int16 Version`` field. Kafka writes every one of them at version 0
(``ControlRecordUtils.*_CURRENT_VERSION`` in 4.3.1); LeaderChangeMessage v1 (KIP-853) adds
the voters' directory ids and is read.

Declared from the facts of Kafka 4.3.1's ``LeaderChangeMessage.json``,
``SnapshotHeaderRecord.json``, ``SnapshotFooterRecord.json``, ``KRaftVersionRecord.json`` and
``VotersRecord.json`` (in ``kafka-clients-4.3.1.jar``; ``"type": "data"``). Each schema's
``api_key`` is its control record type.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from kafkacore.protocol.schema import MessageSchema, field, message

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
    """Kafka's ``ControlRecordType`` (``org.apache.kafka.common.record.internal``)."""

    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6


CONTROL_RECORD_KEY = message(
    "ControlRecordTypeSchema",
    -1,
    "key",
    valid="0",
    flexible="none",
    fields=[
        field("Version", "int16", "0+"),
        field("Type", "int16", "0+"),
    ],
)
"""The key of every control record: ``version`` 0, then the type."""

LEADER_CHANGE = message(
    "LeaderChangeMessage",
    ControlRecordType.LEADER_CHANGE,
    "value",
    valid="0-1",
    flexible="0+",
    fields=[
        field("Version", "int16", "0+"),
        field("LeaderId", "int32", "0+"),
        field("Voters", "[]Voter", "0+"),
        field("GrantingVoters", "[]Voter", "0+"),
    ],
    common={
        "Voter": [
            field("VoterId", "int32", "0+"),
            field("VoterDirectoryId", "uuid", "1+"),
        ],
    },
)

SNAPSHOT_HEADER = message(
    "SnapshotHeaderRecord",
    ControlRecordType.SNAPSHOT_HEADER,
    "value",
    valid="0",
    flexible="0+",
    fields=[
        field("Version", "int16", "0+"),
        field("LastContainedLogTimestamp", "int64", "0+"),
    ],
)

SNAPSHOT_FOOTER = message(
    "SnapshotFooterRecord",
    ControlRecordType.SNAPSHOT_FOOTER,
    "value",
    valid="0",
    flexible="0+",
    fields=[
        field("Version", "int16", "0+"),
    ],
)

KRAFT_VERSION = message(
    "KRaftVersionRecord",
    ControlRecordType.KRAFT_VERSION,
    "value",
    valid="0",
    flexible="0+",
    fields=[
        field("Version", "int16", "0+"),
        field("KRaftVersion", "int16", "0+"),
    ],
)

KRAFT_VOTERS = message(
    "VotersRecord",
    ControlRecordType.KRAFT_VOTERS,
    "value",
    valid="0",
    flexible="0+",
    fields=[
        field("Version", "int16", "0+"),
        field(
            "Voters",
            "[]Voter",
            "0+",
            fields=[
                field("VoterId", "int32", "0+"),
                field("VoterDirectoryId", "uuid", "0+"),
                field(
                    "Endpoints",
                    "[]Endpoint",
                    "0+",
                    fields=[
                        field("Name", "string", "0+"),
                        field("Host", "string", "0+"),
                        field("Port", "uint16", "0+"),
                    ],
                ),
                field(
                    "KRaftVersionFeature",
                    "KRaftVersionFeature",
                    "0+",
                    fields=[
                        field("MinSupportedVersion", "int16", "0+"),
                        field("MaxSupportedVersion", "int16", "0+"),
                    ],
                ),
            ],
        ),
    ],
)

CONTROL_VALUES: dict[ControlRecordType, MessageSchema[Any]] = {
    ControlRecordType.LEADER_CHANGE: LEADER_CHANGE,
    ControlRecordType.SNAPSHOT_HEADER: SNAPSHOT_HEADER,
    ControlRecordType.SNAPSHOT_FOOTER: SNAPSHOT_FOOTER,
    ControlRecordType.KRAFT_VERSION: KRAFT_VERSION,
    ControlRecordType.KRAFT_VOTERS: KRAFT_VOTERS,
}
"""The value schema of each KRaft control record type."""

ControlRecordTypeSchema = CONTROL_RECORD_KEY.cls
LeaderChangeMessage = LEADER_CHANGE.cls
SnapshotHeaderRecord = SNAPSHOT_HEADER.cls
SnapshotFooterRecord = SNAPSHOT_FOOTER.cls
KRaftVersionRecord = KRAFT_VERSION.cls
VotersRecord = KRAFT_VOTERS.cls
