"""AlterPartition (API key 56), versions 0-3: a partition leader asks the controller to
change the partition's ISR.

Declared from the facts of Kafka 3.9's message definitions ``AlterPartitionRequest.json``
and ``AlterPartitionResponse.json``.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "AlterPartitionRequest", "AlterPartitionResponse"]

REQUEST = message(
    "AlterPartitionRequest",
    56,
    "request",
    valid="0-3",
    flexible="0+",
    fields=[
        field("BrokerId", "int32", "0+"),
        field("BrokerEpoch", "int64", "0+", default=-1),
        field(
            "Topics",
            "[]TopicData",
            "0+",
            fields=[
                field("TopicName", "string", "0-1"),
                field("TopicId", "uuid", "2+"),
                field(
                    "Partitions",
                    "[]PartitionData",
                    "0+",
                    fields=[
                        field("PartitionIndex", "int32", "0+"),
                        field("LeaderEpoch", "int32", "0+"),
                        field("NewIsr", "[]int32", "0-2"),
                        field(
                            "NewIsrWithEpochs",
                            "[]BrokerState",
                            "3+",
                            fields=[
                                field("BrokerId", "int32", "3+"),
                                field("BrokerEpoch", "int64", "3+", default=-1),
                            ],
                        ),
                        field("LeaderRecoveryState", "int8", "1+", default=0),
                        field("PartitionEpoch", "int32", "0+"),
                    ],
                ),
            ],
        ),
    ],
)

RESPONSE = message(
    "AlterPartitionResponse",
    56,
    "response",
    valid="0-3",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field(
            "Topics",
            "[]TopicData",
            "0+",
            fields=[
                field("TopicName", "string", "0-1"),
                field("TopicId", "uuid", "2+"),
                field(
                    "Partitions",
                    "[]PartitionData",
                    "0+",
                    fields=[
                        field("PartitionIndex", "int32", "0+"),
                        field("ErrorCode", "int16", "0+"),
                        field("LeaderId", "int32", "0+"),
                        field("LeaderEpoch", "int32", "0+"),
                        field("Isr", "[]int32", "0+"),
                        field("LeaderRecoveryState", "int8", "1+", default=0),
                        field("PartitionEpoch", "int32", "0+"),
                    ],
                ),
            ],
        ),
    ],
)

AlterPartitionRequest = REQUEST.cls
AlterPartitionResponse = RESPONSE.cls
