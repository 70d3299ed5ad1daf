"""ReadShareGroupState (API key 84), version 0.

KIP-932's share-state RPC: a share-partition leader reads its state
from the share coordinator (inter-broker).

Declared from the facts of Kafka 4.3.1's message definitions
``ReadShareGroupStateRequest.json`` and ``ReadShareGroupStateResponse.json``.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "ReadShareGroupStateRequest", "ReadShareGroupStateResponse"]

REQUEST = message(
    "ReadShareGroupStateRequest",
    84,
    "request",
    valid="0",
    flexible="0+",
    fields=[
        field("GroupId", "string", "0+"),
        field(
            "Topics",
            "[]ReadStateData",
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
    "ReadShareGroupStateResponse",
    84,
    "response",
    valid="0",
    flexible="0+",
    fields=[
        field(
            "Results",
            "[]ReadStateResult",
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
                        field("StartOffset", "int64", "0+"),
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

ReadShareGroupStateRequest = REQUEST.cls
ReadShareGroupStateResponse = RESPONSE.cls
