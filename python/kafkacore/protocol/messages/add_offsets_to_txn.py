"""AddOffsetsToTxn (API key 25), versions 0-4.

Declared from the facts of Kafka's message definitions
``AddOffsetsToTxnRequest.json`` and ``AddOffsetsToTxnResponse.json`` (v2 adds
PRODUCER_FENCED, v3 is flexible, v4 adds TRANSACTION_ABORTABLE; the fields never change).
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "AddOffsetsToTxnRequest", "AddOffsetsToTxnResponse"]

REQUEST = message(
    "AddOffsetsToTxnRequest",
    25,
    "request",
    valid="0-4",
    flexible="3+",
    fields=[
        field("TransactionalId", "string", "0+"),
        field("ProducerId", "int64", "0+"),
        field("ProducerEpoch", "int16", "0+"),
        field("GroupId", "string", "0+"),
    ],
)

RESPONSE = message(
    "AddOffsetsToTxnResponse",
    25,
    "response",
    valid="0-4",
    flexible="3+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
    ],
)

AddOffsetsToTxnRequest = REQUEST.cls
AddOffsetsToTxnResponse = RESPONSE.cls
