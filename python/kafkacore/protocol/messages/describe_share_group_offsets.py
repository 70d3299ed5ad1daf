"""DescribeShareGroupOffsets (API key 90), versions 0-1.

KIP-932's admin API: a share group's start offsets (v1: ``Lag``,
KIP-1226).

Declared from the facts of Kafka 4.3.1's message definitions
``DescribeShareGroupOffsetsRequest.json`` and ``DescribeShareGroupOffsetsResponse.json``.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = [
    "REQUEST",
    "RESPONSE",
    "DescribeShareGroupOffsetsRequest",
    "DescribeShareGroupOffsetsResponse",
]

REQUEST = message(
    "DescribeShareGroupOffsetsRequest",
    90,
    "request",
    valid="0-1",
    flexible="0+",
    fields=[
        field(
            "Groups",
            "[]DescribeShareGroupOffsetsRequestGroup",
            "0+",
            fields=[
                field("GroupId", "string", "0+"),
                field(
                    "Topics",
                    "[]DescribeShareGroupOffsetsRequestTopic",
                    "0+",
                    nullable="0+",
                    fields=[
                        field("TopicName", "string", "0+"),
                        field("Partitions", "[]int32", "0+"),
                    ],
                ),
            ],
        ),
    ],
)

RESPONSE = message(
    "DescribeShareGroupOffsetsResponse",
    90,
    "response",
    valid="0-1",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field(
            "Groups",
            "[]DescribeShareGroupOffsetsResponseGroup",
            "0+",
            fields=[
                field("GroupId", "string", "0+"),
                field(
                    "Topics",
                    "[]DescribeShareGroupOffsetsResponseTopic",
                    "0+",
                    fields=[
                        field("TopicName", "string", "0+"),
                        field("TopicId", "uuid", "0+"),
                        field(
                            "Partitions",
                            "[]DescribeShareGroupOffsetsResponsePartition",
                            "0+",
                            fields=[
                                field("PartitionIndex", "int32", "0+"),
                                field("StartOffset", "int64", "0+"),
                                field("LeaderEpoch", "int32", "0+"),
                                field("Lag", "int64", "1+", default=-1),
                                field("ErrorCode", "int16", "0+"),
                                field("ErrorMessage", "string", "0+", nullable="0+", default=NULL),
                            ],
                        ),
                    ],
                ),
                field("ErrorCode", "int16", "0+"),
                field("ErrorMessage", "string", "0+", nullable="0+", default=NULL),
            ],
        ),
    ],
)

DescribeShareGroupOffsetsRequest = REQUEST.cls
DescribeShareGroupOffsetsResponse = RESPONSE.cls
