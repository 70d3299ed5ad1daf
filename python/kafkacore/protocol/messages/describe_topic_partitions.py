"""DescribeTopicPartitions (API key 75), version 0.

Paged topic descriptions with ELR (KIP-966).

Declared from the facts of Kafka 4.3.1's message definitions
``DescribeTopicPartitionsRequest.json`` and ``DescribeTopicPartitionsResponse.json``.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = [
    "REQUEST",
    "RESPONSE",
    "DescribeTopicPartitionsRequest",
    "DescribeTopicPartitionsResponse",
]

REQUEST = message(
    "DescribeTopicPartitionsRequest",
    75,
    "request",
    valid="0",
    flexible="0+",
    fields=[
        field(
            "Topics",
            "[]TopicRequest",
            "0+",
            fields=[
                field("Name", "string", "0+"),
            ],
        ),
        field("ResponsePartitionLimit", "int32", "0+", default=2000),
        field(
            "Cursor",
            "Cursor",
            "0+",
            nullable="0+",
            default=NULL,
            fields=[
                field("TopicName", "string", "0+"),
                field("PartitionIndex", "int32", "0+"),
            ],
        ),
    ],
)

RESPONSE = message(
    "DescribeTopicPartitionsResponse",
    75,
    "response",
    valid="0",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field(
            "Topics",
            "[]DescribeTopicPartitionsResponseTopic",
            "0+",
            fields=[
                field("ErrorCode", "int16", "0+"),
                field("Name", "string", "0+", nullable="0+"),
                field("TopicId", "uuid", "0+"),
                field("IsInternal", "bool", "0+", default=False),
                field(
                    "Partitions",
                    "[]DescribeTopicPartitionsResponsePartition",
                    "0+",
                    fields=[
                        field("ErrorCode", "int16", "0+"),
                        field("PartitionIndex", "int32", "0+"),
                        field("LeaderId", "int32", "0+"),
                        field("LeaderEpoch", "int32", "0+", default=-1),
                        field("ReplicaNodes", "[]int32", "0+"),
                        field("IsrNodes", "[]int32", "0+"),
                        field(
                            "EligibleLeaderReplicas",
                            "[]int32",
                            "0+",
                            nullable="0+",
                            default=NULL,
                        ),
                        field("LastKnownElr", "[]int32", "0+", nullable="0+", default=NULL),
                        field("OfflineReplicas", "[]int32", "0+"),
                    ],
                ),
                field("TopicAuthorizedOperations", "int32", "0+", default=-2147483648),
            ],
        ),
        field(
            "NextCursor",
            "Cursor",
            "0+",
            nullable="0+",
            default=NULL,
            fields=[
                field("TopicName", "string", "0+"),
                field("PartitionIndex", "int32", "0+"),
            ],
        ),
    ],
)

DescribeTopicPartitionsRequest = REQUEST.cls
DescribeTopicPartitionsResponse = RESPONSE.cls
