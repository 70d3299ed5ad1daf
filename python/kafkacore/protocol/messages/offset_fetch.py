"""OffsetFetch (API key 9), versions 1-10.

Declared from the facts of Kafka 4.3.1's message definitions ``OffsetFetchRequest.json``
and ``OffsetFetchResponse.json`` (v10 names topics by id). kafkacore serves v1-9
(:mod:`kafkacore.protocol.api`).
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "OffsetFetchRequest", "OffsetFetchResponse"]

REQUEST = message(
    "OffsetFetchRequest",
    9,
    "request",
    valid="1-10",
    flexible="6+",
    fields=[
        field("GroupId", "string", "1-7"),
        field(
            "Topics",
            "[]OffsetFetchRequestTopic",
            "1-7",
            nullable="2-7",
            fields=[
                field("Name", "string", "1-7"),
                field("PartitionIndexes", "[]int32", "1-7"),
            ],
        ),
        field(
            "Groups",
            "[]OffsetFetchRequestGroup",
            "8+",
            fields=[
                field("GroupId", "string", "8+"),
                field("MemberId", "string", "9+", nullable="9+", default=NULL),
                field("MemberEpoch", "int32", "9+", default=-1),
                field(
                    "Topics",
                    "[]OffsetFetchRequestTopics",
                    "8+",
                    nullable="8+",
                    fields=[
                        field("Name", "string", "8-9"),
                        field("TopicId", "uuid", "10+"),
                        field("PartitionIndexes", "[]int32", "8+"),
                    ],
                ),
            ],
        ),
        field("RequireStable", "bool", "7+", default=False),
    ],
)

RESPONSE = message(
    "OffsetFetchResponse",
    9,
    "response",
    valid="1-10",
    flexible="6+",
    fields=[
        field("ThrottleTimeMs", "int32", "3+"),
        field(
            "Topics",
            "[]OffsetFetchResponseTopic",
            "1-7",
            fields=[
                field("Name", "string", "1-7"),
                field(
                    "Partitions",
                    "[]OffsetFetchResponsePartition",
                    "1-7",
                    fields=[
                        field("PartitionIndex", "int32", "1-7"),
                        field("CommittedOffset", "int64", "1-7"),
                        field("CommittedLeaderEpoch", "int32", "5-7", default=-1),
                        field("Metadata", "string", "1-7", nullable="1-7"),
                        field("ErrorCode", "int16", "1-7"),
                    ],
                ),
            ],
        ),
        field("ErrorCode", "int16", "2-7", default=0),
        field(
            "Groups",
            "[]OffsetFetchResponseGroup",
            "8+",
            fields=[
                field("GroupId", "string", "8+"),
                field(
                    "Topics",
                    "[]OffsetFetchResponseTopics",
                    "8+",
                    fields=[
                        field("Name", "string", "8-9"),
                        field("TopicId", "uuid", "10+"),
                        field(
                            "Partitions",
                            "[]OffsetFetchResponsePartitions",
                            "8+",
                            fields=[
                                field("PartitionIndex", "int32", "8+"),
                                field("CommittedOffset", "int64", "8+"),
                                field("CommittedLeaderEpoch", "int32", "8+", default=-1),
                                field("Metadata", "string", "8+", nullable="8+"),
                                field("ErrorCode", "int16", "8+"),
                            ],
                        ),
                    ],
                ),
                field("ErrorCode", "int16", "8+", default=0),
            ],
        ),
    ],
)

OffsetFetchRequest = REQUEST.cls
OffsetFetchResponse = RESPONSE.cls
