"""ListTransactions (API key 66), versions 0-2.

Declared from the facts of Kafka 4.3.1's message definitions
``ListTransactionsRequest.json`` and ``ListTransactionsResponse.json`` (v1 adds the
request's DurationFilter, v2 its TransactionalIdPattern). kafkacore serves v0-1
(:mod:`kafkacore.protocol.api`).
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "ListTransactionsRequest", "ListTransactionsResponse"]

REQUEST = message(
    "ListTransactionsRequest",
    66,
    "request",
    valid="0-2",
    flexible="0+",
    fields=[
        field("StateFilters", "[]string", "0+"),
        field("ProducerIdFilters", "[]int64", "0+"),
        field("DurationFilter", "int64", "1+", default=-1),
        field("TransactionalIdPattern", "string", "2+", nullable="2+", default=NULL),
    ],
)

RESPONSE = message(
    "ListTransactionsResponse",
    66,
    "response",
    valid="0-2",
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

ListTransactionsRequest = REQUEST.cls
ListTransactionsResponse = RESPONSE.cls
