"""ListTransactions (API key 66), versions 0-1.

Declared from the facts of Kafka's message definitions ``ListTransactionsRequest.json``
and ``ListTransactionsResponse.json`` (v1 adds the request's DurationFilter).
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE"]

REQUEST = message(
    "ListTransactionsRequest",
    66,
    "request",
    valid="0-1",
    flexible="0+",
    fields=[
        field("StateFilters", "[]string", "0+"),
        field("ProducerIdFilters", "[]int64", "0+"),
        field("DurationFilter", "int64", "1+", default=-1),
    ],
)

RESPONSE = message(
    "ListTransactionsResponse",
    66,
    "response",
    valid="0-1",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field("UnknownStateFilters", "[]string", "0+"),
        field(
            "TransactionStates",
            "[]TransactionState",
            "0+",
            fields=[
                field("TransactionalId", "string", "0+"),
                field("ProducerId", "int64", "0+"),
                field("TransactionState", "string", "0+"),
            ],
        ),
    ],
)
