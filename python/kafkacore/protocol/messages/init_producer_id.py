"""InitProducerId (API key 22), versions 0-5.

Declared from the facts of Kafka's message definitions
``InitProducerIdRequest.json`` and ``InitProducerIdResponse.json``
(apache/kafka trunk 1eb7644), limited to the versions kafkacore implements.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE"]

REQUEST = message(
    "InitProducerIdRequest",
    22,
    "request",
    valid="0-5",
    flexible="2+",
    fields=[
        field("TransactionalId", "string", "0+", nullable="0+"),
        field("TransactionTimeoutMs", "int32", "0+"),
        field("ProducerId", "int64", "3+", default=-1),
        field("ProducerEpoch", "int16", "3+", default=-1),
    ],
)

RESPONSE = message(
    "InitProducerIdResponse",
    22,
    "response",
    valid="0-5",
    flexible="2+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field("ProducerId", "int64", "0+", default=-1),
        field("ProducerEpoch", "int16", "0+"),
    ],
)
