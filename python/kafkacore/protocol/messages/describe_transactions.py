"""DescribeTransactions (API key 65), version 0.

Declared from the facts of Kafka's message definitions
``DescribeTransactionsRequest.json`` and ``DescribeTransactionsResponse.json``.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE"]

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
                field("ProducerEpoch", "int32", "0+"),
                field(
                    "TopicPartitions",
                    "[]TopicData",
                    "0+",
                    fields=[
                        field("Name", "string", "0+"),
                        field("PartitionIndexes", "[]int32", "0+"),
                    ],
                ),
            ],
        ),
    ],
)
