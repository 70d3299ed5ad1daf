"""DeleteTopics (API key 20), versions 1-6.

Declared from the facts of Kafka's message definitions
``DeleteTopicsRequest.json`` and ``DeleteTopicsResponse.json``
(apache/kafka trunk 1eb7644), limited to the versions kafkacore implements.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "DeleteTopicsRequest", "DeleteTopicsResponse"]

REQUEST = message(
    "DeleteTopicsRequest",
    20,
    "request",
    valid="1-6",
    flexible="4+",
    fields=[
        field(
            "Topics",
            "[]DeleteTopicState",
            "6+",
            fields=[
                field("Name", "string", "6+", nullable="6+", default=NULL),
                field("TopicId", "uuid", "6+"),
            ],
        ),
        field("TopicNames", "[]string", "1-5"),
        field("TimeoutMs", "int32", "1+"),
    ],
)

RESPONSE = message(
    "DeleteTopicsResponse",
    20,
    "response",
    valid="1-6",
    flexible="4+",
    fields=[
        field("ThrottleTimeMs", "int32", "1+"),
        field(
            "Responses",
            "[]DeletableTopicResult",
            "1+",
            fields=[
                field("Name", "string", "1+", nullable="6+"),
                field("TopicId", "uuid", "6+"),
                field("ErrorCode", "int16", "1+"),
                field("ErrorMessage", "string", "5+", nullable="5+", default=NULL),
            ],
        ),
    ],
)

DeleteTopicsRequest = REQUEST.cls
DeleteTopicsResponse = RESPONSE.cls
