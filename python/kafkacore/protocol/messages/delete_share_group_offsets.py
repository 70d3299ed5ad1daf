"""DeleteShareGroupOffsets (API key 92), version 0.

KIP-932's admin API: delete a share group's offsets of some topics.

Declared from the facts of Kafka 4.3.1's message definitions
``DeleteShareGroupOffsetsRequest.json`` and ``DeleteShareGroupOffsetsResponse.json``.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = [
    "REQUEST",
    "RESPONSE",
    "DeleteShareGroupOffsetsRequest",
    "DeleteShareGroupOffsetsResponse",
]

REQUEST = message(
    "DeleteShareGroupOffsetsRequest",
    92,
    "request",
    valid="0",
    flexible="0+",
    fields=[
        field("GroupId", "string", "0+"),
        field(
            "Topics",
            "[]DeleteShareGroupOffsetsRequestTopic",
            "0+",
            fields=[
                field("TopicName", "string", "0+"),
            ],
        ),
    ],
)

RESPONSE = message(
    "DeleteShareGroupOffsetsResponse",
    92,
    "response",
    valid="0",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field("ErrorMessage", "string", "0+", nullable="0+", default=NULL),
        field(
            "Responses",
            "[]DeleteShareGroupOffsetsResponseTopic",
            "0+",
            fields=[
                field("TopicName", "string", "0+"),
                field("TopicId", "uuid", "0+"),
                field("ErrorCode", "int16", "0+"),
                field("ErrorMessage", "string", "0+", nullable="0+", default=NULL),
            ],
        ),
    ],
)

DeleteShareGroupOffsetsRequest = REQUEST.cls
DeleteShareGroupOffsetsResponse = RESPONSE.cls
