"""OffsetForLeaderEpoch (API key 23), versions 2-4.

Declared from the facts of Kafka's message definitions
``OffsetForLeaderEpochRequest.json`` and ``OffsetForLeaderEpochResponse.json``
(apache/kafka trunk 1eb7644), limited to the versions kafkacore implements.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "OffsetForLeaderEpochRequest", "OffsetForLeaderEpochResponse"]

REQUEST = message(
    "OffsetForLeaderEpochRequest",
    23,
    "request",
    valid="2-4",
    flexible="4+",
    fields=[
        field("ReplicaId", "int32", "3+", default=-2),
        field(
            "Topics",
            "[]OffsetForLeaderTopic",
            "2+",
            fields=[
                field("Topic", "string", "2+"),
                field(
                    "Partitions",
                    "[]OffsetForLeaderPartition",
                    "2+",
                    fields=[
                        field("Partition", "int32", "2+"),
                        field("CurrentLeaderEpoch", "int32", "2+", default=-1),
                        field("LeaderEpoch", "int32", "2+"),
                    ],
                ),
            ],
        ),
    ],
)

RESPONSE = message(
    "OffsetForLeaderEpochResponse",
    23,
    "response",
    valid="2-4",
    flexible="4+",
    fields=[
        field("ThrottleTimeMs", "int32", "2+"),
        field(
            "Topics",
            "[]OffsetForLeaderTopicResult",
            "2+",
            fields=[
                field("Topic", "string", "2+"),
                field(
                    "Partitions",
                    "[]EpochEndOffset",
                    "2+",
                    fields=[
                        field("ErrorCode", "int16", "2+"),
                        field("Partition", "int32", "2+"),
                        field("LeaderEpoch", "int32", "2+", default=-1),
                        field("EndOffset", "int64", "2+", default=-1),
                    ],
                ),
            ],
        ),
    ],
)

OffsetForLeaderEpochRequest = REQUEST.cls
OffsetForLeaderEpochResponse = RESPONSE.cls
