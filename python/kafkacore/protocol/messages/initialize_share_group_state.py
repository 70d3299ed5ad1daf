"""InitializeShareGroupState (API key 83), version 0.

KIP-932's share-state RPC: the group coordinator asks the share
coordinator to initialize a share partition's state (inter-broker).

Declared from the facts of Kafka 4.3.1's message definitions
``InitializeShareGroupStateRequest.json`` and ``InitializeShareGroupStateResponse.json``.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = [
    "REQUEST",
    "RESPONSE",
    "InitializeShareGroupStateRequest",
    "InitializeShareGroupStateResponse",
]

REQUEST = message(
    "InitializeShareGroupStateRequest",
    83,
    "request",
    valid="0",
    flexible="0+",
    fields=[
        field("GroupId", "string", "0+"),
        field(
            "Topics",
            "[]InitializeStateData",
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
                        field("StartOffset", "int64", "0+"),
                    ],
                ),
            ],
        ),
    ],
)

RESPONSE = message(
    "InitializeShareGroupStateResponse",
    83,
    "response",
    valid="0",
    flexible="0+",
    fields=[
        field(
            "Results",
            "[]InitializeStateResult",
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

InitializeShareGroupStateRequest = REQUEST.cls
InitializeShareGroupStateResponse = RESPONSE.cls
