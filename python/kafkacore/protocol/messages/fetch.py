"""Fetch (API key 1), versions 4-18.

Declared from the facts of Kafka 4.3.1's message definitions ``FetchRequest.json`` and
``FetchResponse.json`` (v18: the fetcher's ``HighWatermark``, KIP-1166). kafkacore
serves v4-17 (:mod:`kafkacore.protocol.api`).
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "FetchRequest", "FetchResponse"]

REQUEST = message(
    "FetchRequest",
    1,
    "request",
    valid="4-18",
    flexible="12+",
    fields=[
        field("ClusterId", "string", "12+", nullable="12+", tagged="12+", tag=0, default=NULL),
        field("ReplicaId", "int32", "4-14", default=-1),
        field(
            "ReplicaState",
            "ReplicaState",
            "15+",
            tagged="15+",
            tag=1,
            fields=[
                field("ReplicaId", "int32", "15+", default=-1),
                field("ReplicaEpoch", "int64", "15+", default=-1),
            ],
        ),
        field("MaxWaitMs", "int32", "4+"),
        field("MinBytes", "int32", "4+"),
        field("MaxBytes", "int32", "4+", default=2147483647),
        field("IsolationLevel", "int8", "4+", default=0),
        field("SessionId", "int32", "7+", default=0),
        field("SessionEpoch", "int32", "7+", default=-1),
        field(
            "Topics",
            "[]FetchTopic",
            "4+",
            fields=[
                field("Topic", "string", "4-12"),
                field("TopicId", "uuid", "13+"),
                field(
                    "Partitions",
                    "[]FetchPartition",
                    "4+",
                    fields=[
                        field("Partition", "int32", "4+"),
                        field("CurrentLeaderEpoch", "int32", "9+", default=-1),
                        field("FetchOffset", "int64", "4+"),
                        field("LastFetchedEpoch", "int32", "12+", default=-1),
                        field("LogStartOffset", "int64", "5+", default=-1),
                        field("PartitionMaxBytes", "int32", "4+"),
                        field("ReplicaDirectoryId", "uuid", "17+", tagged="17+", tag=0),
                        field(
                            "HighWatermark",
                            "int64",
                            "18+",
                            tagged="18+",
                            tag=1,
                            default=9223372036854775807,
                        ),
                    ],
                ),
            ],
        ),
        field(
            "ForgottenTopicsData",
            "[]ForgottenTopic",
            "7+",
            fields=[
                field("Topic", "string", "7-12"),
                field("TopicId", "uuid", "13+"),
                field("Partitions", "[]int32", "7+"),
            ],
        ),
        field("RackId", "string", "11+", default=""),
    ],
)

RESPONSE = message(
    "FetchResponse",
    1,
    "response",
    valid="4-18",
    flexible="12+",
    fields=[
        field("ThrottleTimeMs", "int32", "4+"),
        field("ErrorCode", "int16", "7+"),
        field("SessionId", "int32", "7+", default=0),
        field(
            "Responses",
            "[]FetchableTopicResponse",
            "4+",
            fields=[
                field("Topic", "string", "4-12"),
                field("TopicId", "uuid", "13+"),
                field(
                    "Partitions",
                    "[]PartitionData",
                    "4+",
                    fields=[
                        field("PartitionIndex", "int32", "4+"),
                        field("ErrorCode", "int16", "4+"),
                        field("HighWatermark", "int64", "4+"),
                        field("LastStableOffset", "int64", "4+", default=-1),
                        field("LogStartOffset", "int64", "5+", default=-1),
                        field(
                            "DivergingEpoch",
                            "EpochEndOffset",
                            "12+",
                            tagged="12+",
                            tag=0,
                            fields=[
                                field("Epoch", "int32", "12+", default=-1),
                                field("EndOffset", "int64", "12+", default=-1),
                            ],
                        ),
                        field(
                            "CurrentLeader",
                            "LeaderIdAndEpoch",
                            "12+",
                            tagged="12+",
                            tag=1,
                            fields=[
                                field("LeaderId", "int32", "12+", default=-1),
                                field("LeaderEpoch", "int32", "12+", default=-1),
                            ],
                        ),
                        field(
                            "SnapshotId",
                            "SnapshotId",
                            "12+",
                            tagged="12+",
                            tag=2,
                            fields=[
                                field("EndOffset", "int64", "4+", default=-1),
                                field("Epoch", "int32", "4+", default=-1),
                            ],
                        ),
                        field(
                            "AbortedTransactions",
                            "[]AbortedTransaction",
                            "4+",
                            nullable="4+",
                            fields=[
                                field("ProducerId", "int64", "4+"),
                                field("FirstOffset", "int64", "4+"),
                            ],
                        ),
                        field("PreferredReadReplica", "int32", "11+", default=-1),
                        field("Records", "records", "4+", nullable="4+"),
                    ],
                ),
            ],
        ),
        field(
            "NodeEndpoints",
            "[]NodeEndpoint",
            "16+",
            tagged="16+",
            tag=0,
            fields=[
                field("NodeId", "int32", "16+"),
                field("Host", "string", "16+"),
                field("Port", "int32", "16+"),
                field("Rack", "string", "16+", nullable="16+", default=NULL),
            ],
        ),
    ],
)

FetchRequest = REQUEST.cls
FetchResponse = RESPONSE.cls
