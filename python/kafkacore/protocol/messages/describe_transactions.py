"""DescribeTransactions (API key 65), version 0.

Declared from the facts of Kafka's message definitions
``DescribeTransactionsRequest.json`` and ``DescribeTransactionsResponse.json`` (as Kafka
3.9 ships them).
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "DescribeTransactionsRequest", "DescribeTransactionsResponse"]

REQUEST = message(
    "DescribeTransactionsRequest",
    65,
    "request",
    valid="0",
    flexible="0+",
    fields=[
        field("TransactionalIds", "[]string", "0+"),
    ],
)

RESPONSE = message(
    "DescribeTransactionsResponse",
    65,
    "response",
    valid="0",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field(
            "TransactionStates",
            "[]TransactionState",
            "0+",
            fields=[
                field("ErrorCode", "int16", "0+"),
                field("TransactionalId", "string", "0+"),
                field("TransactionState", "string", "0+"),
                field("TransactionTimeoutMs", "int32", "0+"),
                field("TransactionStartTimeMs", "int64", "0+"),
                field("ProducerId", "int64", "0+"),
                field("ProducerEpoch", "int16", "0+"),
                field(
                    "Topics",
                    "[]TopicData",
                    "0+",
                    fields=[
                        field("Topic", "string", "0+"),
                        field("Partitions", "[]int32", "0+"),
                    ],
                ),
            ],
        ),
    ],
)

DescribeTransactionsRequest = REQUEST.cls
DescribeTransactionsResponse = RESPONSE.cls
