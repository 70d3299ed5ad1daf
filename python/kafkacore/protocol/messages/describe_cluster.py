"""DescribeCluster (API key 60), versions 0-2.

Declared from the facts of Kafka 4.3.1's message definitions
``DescribeClusterRequest.json`` and ``DescribeClusterResponse.json`` (v2:
``IncludeFencedBrokers`` and ``IsFenced``). kafkacore serves v0-1
(:mod:`kafkacore.protocol.api`).
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "DescribeClusterRequest", "DescribeClusterResponse"]

REQUEST = message(
    "DescribeClusterRequest",
    60,
    "request",
    valid="0-2",
    flexible="0+",
    fields=[
        field("IncludeClusterAuthorizedOperations", "bool", "0+"),
        field("EndpointType", "int8", "1+", default=1),
        field("IncludeFencedBrokers", "bool", "2+"),
    ],
)

RESPONSE = message(
    "DescribeClusterResponse",
    60,
    "response",
    valid="0-2",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field("ErrorMessage", "string", "0+", nullable="0+", default=NULL),
        field("EndpointType", "int8", "1+", default=1),
        field("ClusterId", "string", "0+"),
        field("ControllerId", "int32", "0+", default=-1),
        field(
            "Brokers",
            "[]DescribeClusterBroker",
            "0+",
            fields=[
                field("BrokerId", "int32", "0+"),
                field("Host", "string", "0+"),
                field("Port", "int32", "0+"),
                field("Rack", "string", "0+", nullable="0+", default=NULL),
                field("IsFenced", "bool", "2+"),
            ],
        ),
        field("ClusterAuthorizedOperations", "int32", "0+", default=-2147483648),
    ],
)

DescribeClusterRequest = REQUEST.cls
DescribeClusterResponse = RESPONSE.cls
