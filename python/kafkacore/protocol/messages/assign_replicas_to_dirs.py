"""AssignReplicasToDirs (API key 73), version 0.

KRaft JBOD: a broker tells the controller which directory holds each
replica (KIP-858).

Declared from the facts of Kafka 4.3.1's message definitions
``AssignReplicasToDirsRequest.json`` and ``AssignReplicasToDirsResponse.json``.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "AssignReplicasToDirsRequest", "AssignReplicasToDirsResponse"]

REQUEST = message(
    "AssignReplicasToDirsRequest",
    73,
    "request",
    valid="0",
    flexible="0+",
    fields=[
        field("BrokerId", "int32", "0+"),
        field("BrokerEpoch", "int64", "0+", default=-1),
        field(
            "Directories",
            "[]DirectoryData",
            "0+",
            fields=[
                field("Id", "uuid", "0+"),
                field(
                    "Topics",
                    "[]TopicData",
                    "0+",
                    fields=[
                        field("TopicId", "uuid", "0+"),
                        field(
                            "Partitions",
                            "[]PartitionData",
                            "0+",
                            fields=[
                                field("PartitionIndex", "int32", "0+"),
                            ],
                        ),
                    ],
                ),
            ],
        ),
    ],
)

RESPONSE = message(
    "AssignReplicasToDirsResponse",
    73,
    "response",
    valid="0",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field(
            "Directories",
            "[]DirectoryData",
            "0+",
            fields=[
                field("Id", "uuid", "0+"),
                field(
                    "Topics",
                    "[]TopicData",
                    "0+",
                    fields=[
                        field("TopicId", "uuid", "0+"),
                        field(
                            "Partitions",
                            "[]PartitionData",
                            "0+",
                            fields=[
                                field("PartitionIndex", "int32", "0+"),
                                field("ErrorCode", "int16", "0+"),
                            ],
                        ),
                    ],
                ),
            ],
        ),
    ],
)

AssignReplicasToDirsRequest = REQUEST.cls
AssignReplicasToDirsResponse = RESPONSE.cls
