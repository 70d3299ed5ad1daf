"""ShareFetch (API key 78), versions 1-2.

KIP-932's fetch with acquisition and piggy-backed acknowledgements (v2:
``IsRenewAck`` of KIP-1222 and ``ShareAcquireMode`` of KIP-1206).

Declared from the facts of Kafka 4.3.1's message definitions
``ShareFetchRequest.json`` and ``ShareFetchResponse.json``.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "ShareFetchRequest", "ShareFetchResponse"]

REQUEST = message(
    "ShareFetchRequest",
    78,
    "request",
    valid="1-2",
    flexible="0+",
    fields=[
        field("GroupId", "string", "0+", nullable="0+", default=NULL),
        field("MemberId", "string", "0+", nullable="0+"),
        field("ShareSessionEpoch", "int32", "0+"),
        field("MaxWaitMs", "int32", "0+"),
        field("MinBytes", "int32", "0+"),
        field("MaxBytes", "int32", "0+", default=2147483647),
        field("MaxRecords", "int32", "1+"),
        field("BatchSize", "int32", "1+"),
        field("ShareAcquireMode", "int8", "2+", default=0),
        field("IsRenewAck", "bool", "2+", default=False),
        field(
            "Topics",
            "[]FetchTopic",
            "0+",
            fields=[
                field("TopicId", "uuid", "0+"),
                field(
                    "Partitions",
                    "[]FetchPartition",
                    "0+",
                    fields=[
                        field("PartitionIndex", "int32", "0+"),
                        field("PartitionMaxBytes", "int32", "0"),
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
        field(
            "ForgottenTopicsData",
            "[]ForgottenTopic",
            "0+",
            fields=[
                field("TopicId", "uuid", "0+"),
                field("Partitions", "[]int32", "0+"),
            ],
        ),
    ],
)

RESPONSE = message(
    "ShareFetchResponse",
    78,
    "response",
    valid="1-2",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field("ErrorMessage", "string", "0+", nullable="0+", default=NULL),
        field("AcquisitionLockTimeoutMs", "int32", "1+"),
        field(
            "Responses",
            "[]ShareFetchableTopicResponse",
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
                        field("AcknowledgeErrorCode", "int16", "0+"),
                        field(
                            "AcknowledgeErrorMessage",
                            "string",
                            "0+",
                            nullable="0+",
                            default=NULL,
                        ),
                        field(
                            "CurrentLeader",
                            "LeaderIdAndEpoch",
                            "0+",
                            fields=[
                                field("LeaderId", "int32", "0+"),
                                field("LeaderEpoch", "int32", "0+"),
                            ],
                        ),
                        field("Records", "records", "0+", nullable="0"),
                        field(
                            "AcquiredRecords",
                            "[]AcquiredRecords",
                            "0+",
                            fields=[
                                field("FirstOffset", "int64", "0+"),
                                field("LastOffset", "int64", "0+"),
                                field("DeliveryCount", "int16", "0+"),
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

ShareFetchRequest = REQUEST.cls
ShareFetchResponse = RESPONSE.cls
