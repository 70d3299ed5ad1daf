"""ReadShareGroupStateSummary (API key 87), versions 0-1.

KIP-932's share-state RPC: the start offset and lag of a share
partition, for DescribeShareGroupOffsets (v1: ``DeliveryCompleteCount``, KIP-1226).

Declared from the facts of Kafka 4.3.1's message definitions
``ReadShareGroupStateSummaryRequest.json`` and ``ReadShareGroupStateSummaryResponse.json``.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = [
    "REQUEST",
    "RESPONSE",
    "ReadShareGroupStateSummaryRequest",
    "ReadShareGroupStateSummaryResponse",
]

REQUEST = message(
    "ReadShareGroupStateSummaryRequest",
    87,
    "request",
    valid="0-1",
    flexible="0+",
    fields=[
        field("GroupId", "string", "0+"),
        field(
            "Topics",
            "[]ReadStateSummaryData",
            "0+",
            fields=[
                field("TopicId", "uuid", "0+"),
                field(
                    "Partitions",
                    "[]PartitionData",
                    "0+",
                    fields=[
                        field("Partition", "int32", "0+"),
                        field("LeaderEpoch", "int32", "0+"),
                    ],
                ),
            ],
        ),
    ],
)

RESPONSE = message(
    "ReadShareGroupStateSummaryResponse",
    87,
    "response",
    valid="0-1",
    flexible="0+",
    fields=[
        field(
            "Results",
            "[]ReadStateSummaryResult",
            "0+",
            fields=[
                field("TopicId", "uuid", "0+"),
                field(
                    "Partitions",
                    "[]PartitionResult",
                    "0+",
                    fields=[
                        field("Partition", "int32", "0+"),
                        field("ErrorCode", "int16", "0+"),
                        field("ErrorMessage", "string", "0+", nullable="0+", default=NULL),
                        field("StateEpoch", "int32", "0+"),
                        field("LeaderEpoch", "int32", "0+"),
                        field("StartOffset", "int64", "0+"),
                        field("DeliveryCompleteCount", "int32", "1+", default=-1),
                    ],
                ),
            ],
        ),
    ],
)

ReadShareGroupStateSummaryRequest = REQUEST.cls
ReadShareGroupStateSummaryResponse = RESPONSE.cls
