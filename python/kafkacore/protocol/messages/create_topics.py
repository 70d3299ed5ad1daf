"""CreateTopics (API key 19), versions 2-7.

Declared from the facts of Kafka's message definitions
``CreateTopicsRequest.json`` and ``CreateTopicsResponse.json``
(apache/kafka trunk 1eb7644), limited to the versions kafkacore implements.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "CreateTopicsRequest", "CreateTopicsResponse"]

REQUEST = message(
    "CreateTopicsRequest",
    19,
    "request",
    valid="2-7",
    flexible="5+",
    fields=[
        field(
            "Topics",
            "[]CreatableTopic",
            "2+",
            fields=[
                field("Name", "string", "2+"),
                field("NumPartitions", "int32", "2+"),
                field("ReplicationFactor", "int16", "2+"),
                field(
                    "Assignments",
                    "[]CreatableReplicaAssignment",
                    "2+",
                    fields=[
                        field("PartitionIndex", "int32", "2+"),
                        field("BrokerIds", "[]int32", "2+"),
                    ],
                ),
                field(
                    "Configs",
                    "[]CreatableTopicConfig",
                    "2+",
                    fields=[
                        field("Name", "string", "2+"),
                        field("Value", "string", "2+", nullable="2+"),
                    ],
                ),
            ],
        ),
        field("timeoutMs", "int32", "2+", default=60000),
        field("validateOnly", "bool", "2+", default=False),
    ],
)

RESPONSE = message(
    "CreateTopicsResponse",
    19,
    "response",
    valid="2-7",
    flexible="5+",
    fields=[
        field("ThrottleTimeMs", "int32", "2+"),
        field(
            "Topics",
            "[]CreatableTopicResult",
            "2+",
            fields=[
                field("Name", "string", "2+"),
                field("TopicId", "uuid", "7+"),
                field("ErrorCode", "int16", "2+"),
                field("ErrorMessage", "string", "2+", nullable="2+"),
                field("TopicConfigErrorCode", "int16", "5+", tagged="5+", tag=0),
                field("NumPartitions", "int32", "5+", default=-1),
                field("ReplicationFactor", "int16", "5+", default=-1),
                field(
                    "Configs",
                    "[]CreatableTopicConfigs",
                    "5+",
                    nullable="5+",
                    fields=[
                        field("Name", "string", "5+"),
                        field("Value", "string", "5+", nullable="5+"),
                        field("ReadOnly", "bool", "5+"),
                        field("ConfigSource", "int8", "5+", default=-1),
                        field("IsSensitive", "bool", "5+"),
                    ],
                ),
            ],
        ),
    ],
)

CreateTopicsRequest = REQUEST.cls
CreateTopicsResponse = RESPONSE.cls
