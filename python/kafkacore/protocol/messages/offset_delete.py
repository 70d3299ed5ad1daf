"""OffsetDelete (API key 47), version 0.

Declared from the facts of Kafka's message definitions
``OffsetDeleteRequest.json`` and ``OffsetDeleteResponse.json``
(apache/kafka trunk 1eb7644), limited to the versions kafkacore implements.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "OffsetDeleteRequest", "OffsetDeleteResponse"]

REQUEST = message(
    "OffsetDeleteRequest",
    47,
    "request",
    valid="0",
    flexible="none",
    fields=[
        field("GroupId", "string", "0+"),
        field(
            "Topics",
            "[]OffsetDeleteRequestTopic",
            "0+",
            fields=[
                field("Name", "string", "0+"),
                field(
                    "Partitions",
                    "[]OffsetDeleteRequestPartition",
                    "0+",
                    fields=[
                        field("PartitionIndex", "int32", "0+"),
                    ],
                ),
            ],
        ),
    ],
)

RESPONSE = message(
    "OffsetDeleteResponse",
    47,
    "response",
    valid="0",
    flexible="none",
    fields=[
        field("ErrorCode", "int16", "0+"),
        field("ThrottleTimeMs", "int32", "0+"),
        field(
            "Topics",
            "[]OffsetDeleteResponseTopic",
            "0+",
            fields=[
                field("Name", "string", "0+"),
                field(
                    "Partitions",
                    "[]OffsetDeleteResponsePartition",
                    "0+",
                    fields=[
                        field("PartitionIndex", "int32", "0+"),
                        field("ErrorCode", "int16", "0+"),
                    ],
                ),
            ],
        ),
    ],
)

OffsetDeleteRequest = REQUEST.cls
OffsetDeleteResponse = RESPONSE.cls
