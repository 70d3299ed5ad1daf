"""ElectLeaders (API key 43), versions 0-2.

Declared from the facts of Kafka's message definitions
``ElectLeadersRequest.json`` and ``ElectLeadersResponse.json``
(apache/kafka trunk 1eb7644), limited to the versions kafkacore implements.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "ElectLeadersRequest", "ElectLeadersResponse"]

REQUEST = message(
    "ElectLeadersRequest",
    43,
    "request",
    valid="0-2",
    flexible="2+",
    fields=[
        field("ElectionType", "int8", "1+"),
        field(
            "TopicPartitions",
            "[]TopicPartitions",
            "0+",
            nullable="0+",
            fields=[
                field("Topic", "string", "0+"),
                field("Partitions", "[]int32", "0+"),
            ],
        ),
        field("TimeoutMs", "int32", "0+", default=60000),
    ],
)

RESPONSE = message(
    "ElectLeadersResponse",
    43,
    "response",
    valid="0-2",
    flexible="2+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "1+"),
        field(
            "ReplicaElectionResults",
            "[]ReplicaElectionResult",
            "0+",
            fields=[
                field("Topic", "string", "0+"),
                field(
                    "PartitionResult",
                    "[]PartitionResult",
                    "0+",
                    fields=[
                        field("PartitionId", "int32", "0+"),
                        field("ErrorCode", "int16", "0+"),
                        field("ErrorMessage", "string", "0+", nullable="0+"),
                    ],
                ),
            ],
        ),
    ],
)

ElectLeadersRequest = REQUEST.cls
ElectLeadersResponse = RESPONSE.cls
