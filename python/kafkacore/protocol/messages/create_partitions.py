"""CreatePartitions (API key 37), versions 0-3.

Declared from the facts of Kafka's message definitions
``CreatePartitionsRequest.json`` and ``CreatePartitionsResponse.json``
(apache/kafka trunk 1eb7644), limited to the versions kafkacore implements.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "CreatePartitionsRequest", "CreatePartitionsResponse"]

REQUEST = message(
    "CreatePartitionsRequest",
    37,
    "request",
    valid="0-3",
    flexible="2+",
    fields=[
        field(
            "Topics",
            "[]CreatePartitionsTopic",
            "0+",
            fields=[
                field("Name", "string", "0+"),
                field("Count", "int32", "0+"),
                field(
                    "Assignments",
                    "[]CreatePartitionsAssignment",
                    "0+",
                    nullable="0+",
                    fields=[
                        field("BrokerIds", "[]int32", "0+"),
                    ],
                ),
            ],
        ),
        field("TimeoutMs", "int32", "0+"),
        field("ValidateOnly", "bool", "0+"),
    ],
)

RESPONSE = message(
    "CreatePartitionsResponse",
    37,
    "response",
    valid="0-3",
    flexible="2+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field(
            "Results",
            "[]CreatePartitionsTopicResult",
            "0+",
            fields=[
                field("Name", "string", "0+"),
                field("ErrorCode", "int16", "0+"),
                field("ErrorMessage", "string", "0+", nullable="0+", default=NULL),
            ],
        ),
    ],
)

CreatePartitionsRequest = REQUEST.cls
CreatePartitionsResponse = RESPONSE.cls
