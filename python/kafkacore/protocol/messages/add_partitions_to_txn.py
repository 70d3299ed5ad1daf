"""AddPartitionsToTxn (API key 24), versions 0-5.

Declared from the facts of Kafka's message definitions
``AddPartitionsToTxnRequest.json`` and ``AddPartitionsToTxnResponse.json``: versions 0-3
are the client's form (one transaction, ``V3AndBelow*`` fields), versions 4+ the
broker's batched form of KIP-890 (``Transactions`` with ``VerifyOnly``, a top-level
``ErrorCode`` in the response).
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "AddPartitionsToTxnRequest", "AddPartitionsToTxnResponse"]

_TOPIC = [
    field("Name", "string", "0+"),
    field("Partitions", "[]int32", "0+"),
]

_TOPIC_RESULT = [
    field("Name", "string", "0+"),
    field("ResultsByPartition", "[]AddPartitionsToTxnPartitionResult", "0+"),
]

_PARTITION_RESULT = [
    field("PartitionIndex", "int32", "0+"),
    field("PartitionErrorCode", "int16", "0+"),
]

REQUEST = message(
    "AddPartitionsToTxnRequest",
    24,
    "request",
    valid="0-5",
    flexible="3+",
    fields=[
        field(
            "Transactions",
            "[]AddPartitionsToTxnTransaction",
            "4+",
            fields=[
                field("TransactionalId", "string", "4+"),
                field("ProducerId", "int64", "4+"),
                field("ProducerEpoch", "int16", "4+"),
                field("VerifyOnly", "bool", "4+", default=False),
                field("Topics", "[]AddPartitionsToTxnTopic", "4+"),
            ],
        ),
        field("V3AndBelowTransactionalId", "string", "0-3"),
        field("V3AndBelowProducerId", "int64", "0-3"),
        field("V3AndBelowProducerEpoch", "int16", "0-3"),
        field("V3AndBelowTopics", "[]AddPartitionsToTxnTopic", "0-3"),
    ],
    common={"AddPartitionsToTxnTopic": _TOPIC},
)

RESPONSE = message(
    "AddPartitionsToTxnResponse",
    24,
    "response",
    valid="0-5",
    flexible="3+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "4+"),
        field(
            "ResultsByTransaction",
            "[]AddPartitionsToTxnResult",
            "4+",
            fields=[
                field("TransactionalId", "string", "4+"),
                field("TopicResults", "[]AddPartitionsToTxnTopicResult", "4+"),
            ],
        ),
        field("ResultsByTopicV3AndBelow", "[]AddPartitionsToTxnTopicResult", "0-3"),
    ],
    common={
        "AddPartitionsToTxnPartitionResult": _PARTITION_RESULT,
        "AddPartitionsToTxnTopicResult": _TOPIC_RESULT,
    },
)

AddPartitionsToTxnRequest = REQUEST.cls
AddPartitionsToTxnResponse = RESPONSE.cls
