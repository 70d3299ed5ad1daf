"""DescribeProducers (API key 61), version 0 (KIP-664): the active producers of each
partition's leader - what ``kafka-transactions describe-producers`` and
``find-hanging``/``abort`` read.

Declared from the facts of Kafka's message definitions ``DescribeProducersRequest.json``
and ``DescribeProducersResponse.json``.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "DescribeProducersRequest", "DescribeProducersResponse"]

REQUEST = message(
    "DescribeProducersRequest",
    61,
    "request",
    valid="0",
    flexible="0+",
    fields=[
        field(
            "Topics",
            "[]TopicRequest",
            "0+",
            fields=[
                field("Name", "string", "0+"),
                field("PartitionIndexes", "[]int32", "0+"),
            ],
        ),
    ],
)

RESPONSE = message(
    "DescribeProducersResponse",
    61,
    "response",
    valid="0",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field(
            "Topics",
            "[]TopicResponse",
            "0+",
            fields=[
                field("Name", "string", "0+"),
                field(
                    "Partitions",
                    "[]PartitionResponse",
                    "0+",
                    fields=[
                        field("PartitionIndex", "int32", "0+"),
                        field("ErrorCode", "int16", "0+"),
                        field("ErrorMessage", "string", "0+", nullable="0+", default=NULL),
                        field(
                            "ActiveProducers",
                            "[]ProducerState",
                            "0+",
                            fields=[
                                field("ProducerId", "int64", "0+"),
                                field("ProducerEpoch", "int32", "0+"),
                                field("LastSequence", "int32", "0+", default=-1),
                                field("LastTimestamp", "int64", "0+", default=-1),
                                field("CoordinatorEpoch", "int32", "0+"),
                                field("CurrentTxnStartOffset", "int64", "0+", default=-1),
                            ],
                        ),
                    ],
                ),
            ],
        ),
    ],
)

DescribeProducersRequest = REQUEST.cls
DescribeProducersResponse = RESPONSE.cls
