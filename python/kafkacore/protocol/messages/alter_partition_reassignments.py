"""AlterPartitionReassignments (API key 45), versions 0-1.

Declared from the facts of Kafka 4.3.1's message definitions
``AlterPartitionReassignmentsRequest.json`` and
``AlterPartitionReassignmentsResponse.json`` (v1: ``AllowReplicationFactorChange``).
kafkacore serves v0 (:mod:`kafkacore.protocol.api`).
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = [
    "REQUEST",
    "RESPONSE",
    "AlterPartitionReassignmentsRequest",
    "AlterPartitionReassignmentsResponse",
]

REQUEST = message(
    "AlterPartitionReassignmentsRequest",
    45,
    "request",
    valid="0-1",
    flexible="0+",
    fields=[
        field("TimeoutMs", "int32", "0+", default=60000),
        field("AllowReplicationFactorChange", "bool", "1+", default=True),
        field(
            "Topics",
            "[]ReassignableTopic",
            "0+",
            fields=[
                field("Name", "string", "0+"),
                field(
                    "Partitions",
                    "[]ReassignablePartition",
                    "0+",
                    fields=[
                        field("PartitionIndex", "int32", "0+"),
                        field("Replicas", "[]int32", "0+", nullable="0+", default=NULL),
                    ],
                ),
            ],
        ),
    ],
)

RESPONSE = message(
    "AlterPartitionReassignmentsResponse",
    45,
    "response",
    valid="0-1",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("AllowReplicationFactorChange", "bool", "1+", default=True),
        field("ErrorCode", "int16", "0+"),
        field("ErrorMessage", "string", "0+", nullable="0+"),
        field(
            "Responses",
            "[]ReassignableTopicResponse",
            "0+",
            fields=[
                field("Name", "string", "0+"),
                field(
                    "Partitions",
                    "[]ReassignablePartitionResponse",
                    "0+",
                    fields=[
                        field("PartitionIndex", "int32", "0+"),
                        field("ErrorCode", "int16", "0+"),
                        field("ErrorMessage", "string", "0+", nullable="0+"),
                    ],
                ),
            ],
        ),
    ],
)

AlterPartitionReassignmentsRequest = REQUEST.cls
AlterPartitionReassignmentsResponse = RESPONSE.cls
