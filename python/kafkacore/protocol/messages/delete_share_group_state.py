"""DeleteShareGroupState (API key 86), version 0.

KIP-932's share-state RPC: delete a share partition's state
(inter-broker).

Declared from the facts of Kafka 4.3.1's message definitions
``DeleteShareGroupStateRequest.json`` and ``DeleteShareGroupStateResponse.json``.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "DeleteShareGroupStateRequest", "DeleteShareGroupStateResponse"]

REQUEST = message(
    "DeleteShareGroupStateRequest",
    86,
    "request",
    valid="0",
    flexible="0+",
    fields=[
        field("GroupId", "string", "0+"),
        field(
            "Topics",
            "[]DeleteStateData",
            "0+",
            fields=[
                field("TopicId", "uuid", "0+"),
                field(
                    "Partitions",
                    "[]PartitionData",
                    "0+",
                    fields=[
                        field("Partition", "int32", "0+"),
                    ],
                ),
            ],
        ),
    ],
)

RESPONSE = message(
    "DeleteShareGroupStateResponse",
    86,
    "response",
    valid="0",
    flexible="0+",
    fields=[
        field(
            "Results",
            "[]DeleteStateResult",
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

DeleteShareGroupStateRequest = REQUEST.cls
DeleteShareGroupStateResponse = RESPONSE.cls
