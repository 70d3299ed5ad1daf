"""Produce (API key 0), versions 0-13.

Declared from the facts of Kafka 4.3.1's message definitions ``ProduceRequest.json`` and
``ProduceResponse.json`` (v0-2 from Kafka 3.9.1's, which 4.x dropped; v13 names topics
by id). kafkacore serves v3-11 and advertises v0-11 (:mod:`kafkacore.protocol.api`).
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "ProduceRequest", "ProduceResponse"]

REQUEST = message(
    "ProduceRequest",
    0,
    "request",
    valid="0-13",
    flexible="9+",
    fields=[
        field("TransactionalId", "string", "3+", nullable="3+", default=NULL),
        field("Acks", "int16", "0+"),
        field("TimeoutMs", "int32", "0+"),
        field(
            "TopicData",
            "[]TopicProduceData",
            "0+",
            fields=[
                field("Name", "string", "0-12"),
                field("TopicId", "uuid", "13+"),
                field(
                    "PartitionData",
                    "[]PartitionProduceData",
                    "0+",
                    fields=[
                        field("Index", "int32", "0+"),
                        field("Records", "records", "0+", nullable="0+"),
                    ],
                ),
            ],
        ),
    ],
)

RESPONSE = message(
    "ProduceResponse",
    0,
    "response",
    valid="0-13",
    flexible="9+",
    fields=[
        field(
            "Responses",
            "[]TopicProduceResponse",
            "0+",
            fields=[
                field("Name", "string", "0-12"),
                field("TopicId", "uuid", "13+"),
                field(
                    "PartitionResponses",
                    "[]PartitionProduceResponse",
                    "0+",
                    fields=[
                        field("Index", "int32", "0+"),
                        field("ErrorCode", "int16", "0+"),
                        field("BaseOffset", "int64", "0+"),
                        field("LogAppendTimeMs", "int64", "2+", default=-1),
                        field("LogStartOffset", "int64", "5+", default=-1),
                        field(
                            "RecordErrors",
                            "[]BatchIndexAndErrorMessage",
                            "8+",
                            fields=[
                                field("BatchIndex", "int32", "8+"),
                                field(
                                    "BatchIndexErrorMessage",
                                    "string",
                                    "8+",
                                    nullable="8+",
                                    default=NULL,
                                ),
                            ],
                        ),
                        field("ErrorMessage", "string", "8+", nullable="8+", default=NULL),
                        field(
                            "CurrentLeader",
                            "LeaderIdAndEpoch",
                            "10+",
                            tagged="10+",
                            tag=0,
                            fields=[
                                field("LeaderId", "int32", "10+", default=-1),
                                field("LeaderEpoch", "int32", "10+", default=-1),
                            ],
                        ),
                    ],
                ),
            ],
        ),
        field("ThrottleTimeMs", "int32", "1+", default=0),
        field(
            "NodeEndpoints",
            "[]NodeEndpoint",
            "10+",
            tagged="10+",
            tag=0,
            fields=[
                field("NodeId", "int32", "10+"),
                field("Host", "string", "10+"),
                field("Port", "int32", "10+"),
                field("Rack", "string", "10+", nullable="10+", default=NULL),
            ],
        ),
    ],
)

ProduceRequest = REQUEST.cls
ProduceResponse = RESPONSE.cls
