"""TxnOffsetCommit (API key 28), versions 0-5.

Declared from the facts of Kafka's message definitions ``TxnOffsetCommitRequest.json``
and ``TxnOffsetCommitResponse.json`` (Kafka 4.3.1's): version 2 adds the committed
leader epoch, version 3 (flexible) the group member's GenerationId, MemberId and
GroupInstanceId (KIP-447), version 4 the error TRANSACTION_ABORTABLE (KIP-890). Kafka
4.0's version 5 has version 4's frame but enrols the group's ``__consumer_offsets``
partition in the transaction (transaction version 2, KIP-890 part 2), which kafkacore
does not do yet: it serves v0-4 (:mod:`kafkacore.protocol.api`).
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "TxnOffsetCommitRequest", "TxnOffsetCommitResponse"]

REQUEST = message(
    "TxnOffsetCommitRequest",
    28,
    "request",
    valid="0-5",
    flexible="3+",
    fields=[
        field("TransactionalId", "string", "0+"),
        field("GroupId", "string", "0+"),
        field("ProducerId", "int64", "0+"),
        field("ProducerEpoch", "int16", "0+"),
        field("GenerationId", "int32", "3+", default=-1),
        field("MemberId", "string", "3+", default=""),
        field("GroupInstanceId", "string", "3+", nullable="3+", default=NULL),
        field(
            "Topics",
            "[]TxnOffsetCommitRequestTopic",
            "0+",
            fields=[
                field("Name", "string", "0+"),
                field(
                    "Partitions",
                    "[]TxnOffsetCommitRequestPartition",
                    "0+",
                    fields=[
                        field("PartitionIndex", "int32", "0+"),
                        field("CommittedOffset", "int64", "0+"),
                        field("CommittedLeaderEpoch", "int32", "2+", default=-1),
                        field("CommittedMetadata", "string", "0+", nullable="0+"),
                    ],
                ),
            ],
        ),
    ],
)

RESPONSE = message(
    "TxnOffsetCommitResponse",
    28,
    "response",
    valid="0-5",
    flexible="3+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field(
            "Topics",
            "[]TxnOffsetCommitResponseTopic",
            "0+",
            fields=[
                field("Name", "string", "0+"),
                field(
                    "Partitions",
                    "[]TxnOffsetCommitResponsePartition",
                    "0+",
                    fields=[
                        field("PartitionIndex", "int32", "0+"),
                        field("ErrorCode", "int16", "0+"),
                    ],
                ),
            ],
        ),
    ],
)

TxnOffsetCommitRequest = REQUEST.cls
TxnOffsetCommitResponse = RESPONSE.cls
