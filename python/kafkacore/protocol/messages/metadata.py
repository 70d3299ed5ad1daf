"""Metadata (API key 3), versions 0-13.

Declared from the facts of Kafka 4.3.1's message definitions ``MetadataRequest.json``
and ``MetadataResponse.json`` (v13: a top-level ``ErrorCode``). kafkacore serves v0-12
(:mod:`kafkacore.protocol.api`).
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "MetadataRequest", "MetadataResponse"]

REQUEST = message(
    "MetadataRequest",
    3,
    "request",
    valid="0-13",
    flexible="9+",
    fields=[
        field(
            "Topics",
            "[]MetadataRequestTopic",
            "0+",
            nullable="1+",
            fields=[
                field("TopicId", "uuid", "10+"),
                field("Name", "string", "0+", nullable="10+"),
            ],
        ),
        field("AllowAutoTopicCreation", "bool", "4+", default=True),
        field("IncludeClusterAuthorizedOperations", "bool", "8-10"),
        field("IncludeTopicAuthorizedOperations", "bool", "8+"),
    ],
)

RESPONSE = message(
    "MetadataResponse",
    3,
    "response",
    valid="0-13",
    flexible="9+",
    fields=[
        field("ThrottleTimeMs", "int32", "3+"),
        field(
            "Brokers",
            "[]MetadataResponseBroker",
            "0+",
            fields=[
                field("NodeId", "int32", "0+"),
                field("Host", "string", "0+"),
                field("Port", "int32", "0+"),
                field("Rack", "string", "1+", nullable="1+", default=NULL),
            ],
        ),
        field("ClusterId", "string", "2+", nullable="2+", default=NULL),
        field("ControllerId", "int32", "1+", default=-1),
        field(
            "Topics",
            "[]MetadataResponseTopic",
            "0+",
            fields=[
                field("ErrorCode", "int16", "0+"),
                field("Name", "string", "0+", nullable="12+"),
                field("TopicId", "uuid", "10+"),
                field("IsInternal", "bool", "1+", default=False),
                field(
                    "Partitions",
                    "[]MetadataResponsePartition",
                    "0+",
                    fields=[
                        field("ErrorCode", "int16", "0+"),
                        field("PartitionIndex", "int32", "0+"),
                        field("LeaderId", "int32", "0+"),
                        field("LeaderEpoch", "int32", "7+", default=-1),
                        field("ReplicaNodes", "[]int32", "0+"),
                        field("IsrNodes", "[]int32", "0+"),
                        field("OfflineReplicas", "[]int32", "5+"),
                    ],
                ),
                field("TopicAuthorizedOperations", "int32", "8+", default=-2147483648),
            ],
        ),
        field("ClusterAuthorizedOperations", "int32", "8-10", default=-2147483648),
        field("ErrorCode", "int16", "13+"),
    ],
)

MetadataRequest = REQUEST.cls
MetadataResponse = RESPONSE.cls
