"""ShareAcknowledge (API key 79), versions 1-2.

KIP-932's acknowledgements (v2: ``IsRenewAck``, KIP-1222).

Declared from the facts of Kafka 4.3.1's message definitions
``ShareAcknowledgeRequest.json`` and ``ShareAcknowledgeResponse.json``.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "ShareAcknowledgeRequest", "ShareAcknowledgeResponse"]

REQUEST = message(
    "ShareAcknowledgeRequest",
    79,
    "request",
    valid="1-2",
    flexible="0+",
    fields=[
        field("GroupId", "string", "0+", nullable="0+", default=NULL),
        field("MemberId", "string", "0+", nullable="0+"),
        field("ShareSessionEpoch", "int32", "0+"),
        field("IsRenewAck", "bool", "2+", default=False),
        field(
            "Topics",
            "[]AcknowledgeTopic",
            "0+",
            fields=[
                field("TopicId", "uuid", "0+"),
                field(
                    "Partitions",
                    "[]AcknowledgePartition",
                    "0+",
                    fields=[
                        field("PartitionIndex", "int32", "0+"),
                        field(
                            "AcknowledgementBatches",
                            "[]AcknowledgementBatch",
                            "0+",
                            fields=[
                                field("FirstOffset", "int64", "0+"),
                                field("LastOffset", "int64", "0+"),
                                field("AcknowledgeTypes", "[]int8", "0+"),
                            ],
                        ),
                    ],
                ),
            ],
        ),
    ],
)

RESPONSE = message(
    "ShareAcknowledgeResponse",
    79,
    "response",
    valid="1-2",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field("ErrorMessage", "string", "0+", nullable="0+", default=NULL),
        field("AcquisitionLockTimeoutMs", "int32", "2+"),
        field(
            "Responses",
            "[]ShareAcknowledgeTopicResponse",
            "0+",
            fields=[
                field("TopicId", "uuid", "0+"),
                field(
                    "Partitions",
                    "[]PartitionData",
                    "0+",
                    fields=[
                        field("PartitionIndex", "int32", "0+"),
                        field("ErrorCode", "int16", "0+"),
                        field("ErrorMessage", "string", "0+", nullable="0+", default=NULL),
                        field(
                            "CurrentLeader",
                            "LeaderIdAndEpoch",
                            "0+",
                            fields=[
                                field("LeaderId", "int32", "0+"),
                                field("LeaderEpoch", "int32", "0+"),
                            ],
                        ),
                    ],
                ),
            ],
        ),
        field(
            "NodeEndpoints",
            "[]NodeEndpoint",
            "0+",
            fields=[
                field("NodeId", "int32", "0+"),
                field("Host", "string", "0+"),
                field("Port", "int32", "0+"),
                field("Rack", "string", "0+", nullable="0+", default=NULL),
            ],
        ),
    ],
)

ShareAcknowledgeRequest = REQUEST.cls
ShareAcknowledgeResponse = RESPONSE.cls
