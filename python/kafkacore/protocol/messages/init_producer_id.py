"""InitProducerId (API key 22), versions 0-6.

Declared from the facts of Kafka 4.3.1's message definitions
``InitProducerIdRequest.json`` and ``InitProducerIdResponse.json`` (v6, the 2PC fields
of KIP-939, is ``latestVersionUnstable``). kafkacore serves v0-5
(:mod:`kafkacore.protocol.api`).
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "InitProducerIdRequest", "InitProducerIdResponse"]

REQUEST = message(
    "InitProducerIdRequest",
    22,
    "request",
    valid="0-6",
    flexible="2+",
    fields=[
        field("TransactionalId", "string", "0+", nullable="0+"),
        field("TransactionTimeoutMs", "int32", "0+"),
        field("ProducerId", "int64", "3+", default=-1),
        field("ProducerEpoch", "int16", "3+", default=-1),
        field("Enable2Pc", "bool", "6+", default=False),
        field("KeepPreparedTxn", "bool", "6+", default=False),
    ],
)

RESPONSE = message(
    "InitProducerIdResponse",
    22,
    "response",
    valid="0-6",
    flexible="2+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field("ProducerId", "int64", "0+", default=-1),
        field("ProducerEpoch", "int16", "0+"),
        field("OngoingTxnProducerId", "int64", "6+", default=-1),
        field("OngoingTxnProducerEpoch", "int16", "6+", default=-1),
    ],
)

InitProducerIdRequest = REQUEST.cls
InitProducerIdResponse = RESPONSE.cls
