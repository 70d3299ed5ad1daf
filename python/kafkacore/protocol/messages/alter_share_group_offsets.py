"""AlterShareGroupOffsets (API key 91), version 0.

KIP-932's admin API: reset an empty share group's start offsets.

Declared from the facts of Kafka 4.3.1's message definitions
``AlterShareGroupOffsetsRequest.json`` and ``AlterShareGroupOffsetsResponse.json``.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "AlterShareGroupOffsetsRequest", "AlterShareGroupOffsetsResponse"]

REQUEST = message(
    "AlterShareGroupOffsetsRequest",
    91,
    "request",
    valid="0",
    flexible="0+",
    fields=[
        field("GroupId", "string", "0+"),
        field(
            "Topics",
            "[]AlterShareGroupOffsetsRequestTopic",
            "0+",
            fields=[
                field("TopicName", "string", "0+"),
                field(
                    "Partitions",
                    "[]AlterShareGroupOffsetsRequestPartition",
                    "0+",
                    fields=[
                        field("PartitionIndex", "int32", "0+"),
                        field("StartOffset", "int64", "0+"),
                    ],
                ),
            ],
        ),
    ],
)

RESPONSE = message(
    "AlterShareGroupOffsetsResponse",
    91,
    "response",
    valid="0",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field("ErrorMessage", "string", "0+", nullable="0+", default=NULL),
        field(
            "Responses",
            "[]AlterShareGroupOffsetsResponseTopic",
            "0+",
            fields=[
                field("TopicName", "string", "0+"),
                field("TopicId", "uuid", "0+"),
                field(
                    "Partitions",
                    "[]AlterShareGroupOffsetsResponsePartition",
                    "0+",
                    fields=[
                        field("PartitionIndex", "int32", "0+"),
                        field("ErrorCode", "int16", "0+"),
                        field("ErrorMessage", "string", "0+", nullable="0+", default=NULL),
                    ],
                ),
            ],
        ),
    ],
)

AlterShareGroupOffsetsRequest = REQUEST.cls
AlterShareGroupOffsetsResponse = RESPONSE.cls
