"""ListPartitionReassignments (API key 46), version 0.

Declared from the facts of Kafka's message definitions
``ListPartitionReassignmentsRequest.json`` and ``ListPartitionReassignmentsResponse.json``
(apache/kafka trunk 1eb7644), limited to the versions kafkacore implements.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = [
    "REQUEST",
    "RESPONSE",
    "ListPartitionReassignmentsRequest",
    "ListPartitionReassignmentsResponse",
]

REQUEST = message(
    "ListPartitionReassignmentsRequest",
    46,
    "request",
    valid="0",
    flexible="0+",
    fields=[
        field("TimeoutMs", "int32", "0+", default=60000),
        field(
            "Topics",
            "[]ListPartitionReassignmentsTopics",
            "0+",
            nullable="0+",
            default=NULL,
            fields=[
                field("Name", "string", "0+"),
                field("PartitionIndexes", "[]int32", "0+"),
            ],
        ),
    ],
)

RESPONSE = message(
    "ListPartitionReassignmentsResponse",
    46,
    "response",
    valid="0",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field("ErrorMessage", "string", "0+", nullable="0+"),
        field(
            "Topics",
            "[]OngoingTopicReassignment",
            "0+",
            fields=[
                field("Name", "string", "0+"),
                field(
                    "Partitions",
                    "[]OngoingPartitionReassignment",
                    "0+",
                    fields=[
                        field("PartitionIndex", "int32", "0+"),
                        field("Replicas", "[]int32", "0+"),
                        field("AddingReplicas", "[]int32", "0+"),
                        field("RemovingReplicas", "[]int32", "0+"),
                    ],
                ),
            ],
        ),
    ],
)

ListPartitionReassignmentsRequest = REQUEST.cls
ListPartitionReassignmentsResponse = RESPONSE.cls
