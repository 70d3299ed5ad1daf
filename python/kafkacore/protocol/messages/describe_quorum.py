"""DescribeQuorum (API key 55), versions 0-2: a KRaft quorum API (KIP-595, KIP-853).

Declared from the facts of Kafka 4.3.1's message definitions ``DescribeQuorumRequest.json`` and
``DescribeQuorumResponse.json`` (in ``kafka-clients-4.3.1.jar``).

Version 1 adds the fetch and caught-up timestamps (KIP-836); version 2 adds error messages, the
nodes' listeners and replica directory ids (KIP-853).
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "DescribeQuorumRequest", "DescribeQuorumResponse"]

REQUEST = message(
    "DescribeQuorumRequest",
    55,
    "request",
    valid="0-2",
    flexible="0+",
    fields=[
        field(
            "Topics",
            "[]TopicData",
            "0+",
            fields=[
                field("TopicName", "string", "0+"),
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
)

RESPONSE = message(
    "DescribeQuorumResponse",
    55,
    "response",
    valid="0-2",
    flexible="0+",
    fields=[
        field("ErrorCode", "int16", "0+"),
        field("ErrorMessage", "string", "2+", nullable="2+"),
        field(
            "Topics",
            "[]TopicData",
            "0+",
            fields=[
                field("TopicName", "string", "0+"),
                field(
                    "Partitions",
                    "[]PartitionData",
                    "0+",
                    fields=[
                        field("PartitionIndex", "int32", "0+"),
                        field("ErrorCode", "int16", "0+"),
                        field("ErrorMessage", "string", "2+", nullable="2+"),
                        field("LeaderId", "int32", "0+"),
                        field("LeaderEpoch", "int32", "0+"),
                        field("HighWatermark", "int64", "0+"),
                        field("CurrentVoters", "[]ReplicaState", "0+"),
                        field("Observers", "[]ReplicaState", "0+"),
                    ],
                ),
            ],
        ),
        field(
            "Nodes",
            "[]Node",
            "2+",
            fields=[
                field("NodeId", "int32", "2+"),
                field(
                    "Listeners",
                    "[]Listener",
                    "2+",
                    fields=[
                        field("Name", "string", "2+"),
                        field("Host", "string", "2+"),
                        field("Port", "uint16", "2+"),
                    ],
                ),
            ],
        ),
    ],
    common={
        "ReplicaState": [
            field("ReplicaId", "int32", "0+"),
            field("ReplicaDirectoryId", "uuid", "2+"),
            field("LogEndOffset", "int64", "0+"),
            field("LastFetchTimestamp", "int64", "1+", default=-1),
            field("LastCaughtUpTimestamp", "int64", "1+", default=-1),
        ],
    },
)

DescribeQuorumRequest = REQUEST.cls
DescribeQuorumResponse = RESPONSE.cls
