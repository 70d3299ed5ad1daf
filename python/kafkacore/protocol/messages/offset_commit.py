"""OffsetCommit (API key 8), versions 2-10.

Declared from the facts of Kafka 4.3.1's message definitions
``OffsetCommitRequest.json`` and ``OffsetCommitResponse.json`` (v10 names topics by id,
KIP-848/KIP-1251). kafkacore serves v2-9 (:mod:`kafkacore.protocol.api`).
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "OffsetCommitRequest", "OffsetCommitResponse"]

REQUEST = message(
    "OffsetCommitRequest",
    8,
    "request",
    valid="2-10",
    flexible="8+",
    fields=[
        field("GroupId", "string", "2+"),
        field("GenerationIdOrMemberEpoch", "int32", "2+", default=-1),
        field("MemberId", "string", "2+"),
        field("GroupInstanceId", "string", "7+", nullable="7+", default=NULL),
        field("RetentionTimeMs", "int64", "2-4", default=-1),
        field(
            "Topics",
            "[]OffsetCommitRequestTopic",
            "2+",
            fields=[
                field("Name", "string", "2-9"),
                field("TopicId", "uuid", "10+"),
                field(
                    "Partitions",
                    "[]OffsetCommitRequestPartition",
                    "2+",
                    fields=[
                        field("PartitionIndex", "int32", "2+"),
                        field("CommittedOffset", "int64", "2+"),
                        field("CommittedLeaderEpoch", "int32", "6+", default=-1),
                        field("CommittedMetadata", "string", "2+", nullable="2+"),
                    ],
                ),
            ],
        ),
    ],
)

RESPONSE = message(
    "OffsetCommitResponse",
    8,
    "response",
    valid="2-10",
    flexible="8+",
    fields=[
        field("ThrottleTimeMs", "int32", "3+"),
        field(
            "Topics",
            "[]OffsetCommitResponseTopic",
            "2+",
            fields=[
                field("Name", "string", "2-9"),
                field("TopicId", "uuid", "10+"),
                field(
                    "Partitions",
                    "[]OffsetCommitResponsePartition",
                    "2+",
                    fields=[
                        field("PartitionIndex", "int32", "2+"),
                        field("ErrorCode", "int16", "2+"),
                    ],
                ),
            ],
        ),
    ],
)

OffsetCommitRequest = REQUEST.cls
OffsetCommitResponse = RESPONSE.cls
