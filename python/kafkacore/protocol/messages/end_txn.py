"""EndTxn (API key 26), versions 0-4.

Declared from the facts of Kafka's message definitions ``EndTxnRequest.json`` and
``EndTxnResponse.json``, limited to the versions Kafka 3.9 advertises: v5 (transaction
version 2, whose response carries the bumped ProducerId/ProducerEpoch) is not served.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE"]

REQUEST = message(
    "EndTxnRequest",
    26,
    "request",
    valid="0-4",
    flexible="3+",
    fields=[
        field("TransactionalId", "string", "0+"),
        field("ProducerId", "int64", "0+"),
        field("ProducerEpoch", "int16", "0+"),
        field("Committed", "bool", "0+"),
    ],
)

RESPONSE = message(
    "EndTxnResponse",
    26,
    "response",
    valid="0-4",
    flexible="3+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
    ],
)
