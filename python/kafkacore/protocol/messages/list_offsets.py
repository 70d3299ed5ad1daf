"""ListOffsets (API key 2), versions 1-11.

Declared from the facts of Kafka 4.3.1's message definitions ``ListOffsetsRequest.json``
and ``ListOffsetsResponse.json`` (v8 local log start, KIP-405; v9 last tiered offset,
KIP-1005; v10 ``TimeoutMs``, KIP-1075; v11 earliest pending upload, KIP-1023). kafkacore
serves v1-11 (:mod:`kafkacore.protocol.api`; v8-11 with tiered storage).
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "ListOffsetsRequest", "ListOffsetsResponse"]

REQUEST = message(
    "ListOffsetsRequest",
    2,
    "request",
    valid="1-11",
    flexible="6+",
    fields=[
        field("ReplicaId", "int32", "1+"),
        field("IsolationLevel", "int8", "2+"),
        field(
            "Topics",
            "[]ListOffsetsTopic",
            "1+",
            fields=[
                field("Name", "string", "1+"),
                field(
                    "Partitions",
                    "[]ListOffsetsPartition",
                    "1+",
                    fields=[
                        field("PartitionIndex", "int32", "1+"),
                        field("CurrentLeaderEpoch", "int32", "4+", default=-1),
                        field("Timestamp", "int64", "1+"),
                    ],
                ),
            ],
        ),
        field("TimeoutMs", "int32", "10+"),
    ],
)

RESPONSE = message(
    "ListOffsetsResponse",
    2,
    "response",
    valid="1-11",
    flexible="6+",
    fields=[
        field("ThrottleTimeMs", "int32", "2+"),
        field(
            "Topics",
            "[]ListOffsetsTopicResponse",
            "1+",
            fields=[
                field("Name", "string", "1+"),
                field(
                    "Partitions",
                    "[]ListOffsetsPartitionResponse",
                    "1+",
                    fields=[
                        field("PartitionIndex", "int32", "1+"),
                        field("ErrorCode", "int16", "1+"),
                        field("Timestamp", "int64", "1+", default=-1),
                        field("Offset", "int64", "1+", default=-1),
                        field("LeaderEpoch", "int32", "4+", default=-1),
                    ],
                ),
            ],
        ),
    ],
)

ListOffsetsRequest = REQUEST.cls
ListOffsetsResponse = RESPONSE.cls
