"""EndTxn (API key 26), versions 0-5.

Declared from the facts of Kafka 4.3.1's message definitions ``EndTxnRequest.json`` and
``EndTxnResponse.json``. v5 is transaction version 2: its response carries the bumped
ProducerId/ProducerEpoch. kafkacore serves v0-4 (:mod:`kafkacore.protocol.api`).
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "EndTxnRequest", "EndTxnResponse"]

REQUEST = message(
    "EndTxnRequest",
    26,
    "request",
    valid="0-5",
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
    valid="0-5",
    flexible="3+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field("ProducerId", "int64", "5+", default=-1),
        field("ProducerEpoch", "int16", "5+", default=-1),
    ],
)

EndTxnRequest = REQUEST.cls
EndTxnResponse = RESPONSE.cls
