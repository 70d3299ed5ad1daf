"""WriteShareGroupState (API key 85), versions 0-1.

KIP-932's share-state RPC: a share-partition leader persists its
state (v1: ``DeliveryCompleteCount``, KIP-1226; inter-broker).

Declared from the facts of Kafka 4.3.1's message definitions
``WriteShareGroupStateRequest.json`` and ``WriteShareGroupStateResponse.json``.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "WriteShareGroupStateRequest", "WriteShareGroupStateResponse"]

REQUEST = message(
    "WriteShareGroupStateRequest",
    85,
    "request",
    valid="0-1",
    flexible="0+",
    fields=[
        field("GroupId", "string", "0+"),
        field(
            "Topics",
            "[]WriteStateData",
            "0+",
            fields=[
                field("TopicId", "uuid", "0+"),
                field(
                    "Partitions",
                    "[]PartitionData",
                    "0+",
                    fields=[
                        field("Partition", "int32", "0+"),
                        field("StateEpoch", "int32", "0+"),
                        field("LeaderEpoch", "int32", "0+"),
                        field("StartOffset", "int64", "0+"),
                        field("DeliveryCompleteCount", "int32", "1+", default=-1),
                        field(
                            "StateBatches",
                            "[]StateBatch",
                            "0+",
                            fields=[
                                field("FirstOffset", "int64", "0+"),
                                field("LastOffset", "int64", "0+"),
                                field("DeliveryState", "int8", "0+"),
                                field("DeliveryCount", "int16", "0+"),
                            ],
                        ),
                    ],
                ),
            ],
        ),
    ],
)

RESPONSE = message(
    "WriteShareGroupStateResponse",
    85,
    "response",
    valid="0-1",
    flexible="0+",
    fields=[
        field(
            "Results",
            "[]WriteStateResult",
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
                    ],
                ),
            ],
        ),
    ],
)

WriteShareGroupStateRequest = REQUEST.cls
WriteShareGroupStateResponse = RESPONSE.cls
