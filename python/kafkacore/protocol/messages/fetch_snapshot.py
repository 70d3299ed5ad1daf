"""FetchSnapshot (API key 59), versions 0-1: a KRaft quorum API (KIP-595, KIP-853).

Declared from the facts of Kafka 4.3.1's message definitions ``FetchSnapshotRequest.json`` and
``FetchSnapshotResponse.json`` (in ``kafka-clients-4.3.1.jar``).

Version 1 adds the follower's directory id and the leader's endpoints (KIP-853).
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "FetchSnapshotRequest", "FetchSnapshotResponse"]

REQUEST = message(
    "FetchSnapshotRequest",
    59,
    "request",
    valid="0-1",
    flexible="0+",
    fields=[
        field("ClusterId", "string", "0+", nullable="0+", tagged="0+", tag=0, default=NULL),
        field("ReplicaId", "int32", "0+", default=-1),
        field("MaxBytes", "int32", "0+", default=2147483647),
        field(
            "Topics",
            "[]TopicSnapshot",
            "0+",
            fields=[
                field("Name", "string", "0+"),
                field(
                    "Partitions",
                    "[]PartitionSnapshot",
                    "0+",
                    fields=[
                        field("Partition", "int32", "0+"),
                        field("CurrentLeaderEpoch", "int32", "0+"),
                        field(
                            "SnapshotId",
                            "SnapshotId",
                            "0+",
                            fields=[
                                field("EndOffset", "int64", "0+"),
                                field("Epoch", "int32", "0+"),
                            ],
                        ),
                        field("Position", "int64", "0+"),
                        field("ReplicaDirectoryId", "uuid", "1+", tagged="1+", tag=0),
                    ],
                ),
            ],
        ),
    ],
)

RESPONSE = message(
    "FetchSnapshotResponse",
    59,
    "response",
    valid="0-1",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field(
            "Topics",
            "[]TopicSnapshot",
            "0+",
            fields=[
                field("Name", "string", "0+"),
                field(
                    "Partitions",
                    "[]PartitionSnapshot",
                    "0+",
                    fields=[
                        field("Index", "int32", "0+"),
                        field("ErrorCode", "int16", "0+"),
                        field(
                            "SnapshotId",
                            "SnapshotId",
                            "0+",
                            fields=[
                                field("EndOffset", "int64", "0+"),
                                field("Epoch", "int32", "0+"),
                            ],
                        ),
                        field(
                            "CurrentLeader",
                            "LeaderIdAndEpoch",
                            "0+",
                            tagged="0+",
                            tag=0,
                            fields=[
                                field("LeaderId", "int32", "0+"),
                                field("LeaderEpoch", "int32", "0+"),
                            ],
                        ),
                        field("Size", "int64", "0+"),
                        field("Position", "int64", "0+"),
                        field("UnalignedRecords", "records", "0+"),
                    ],
                ),
            ],
        ),
        field(
            "NodeEndpoints",
            "[]NodeEndpoint",
            "1+",
            tagged="1+",
            tag=0,
            fields=[
                field("NodeId", "int32", "1+"),
                field("Host", "string", "1+"),
                field("Port", "uint16", "1+"),
            ],
        ),
    ],
)

FetchSnapshotRequest = REQUEST.cls
FetchSnapshotResponse = RESPONSE.cls
