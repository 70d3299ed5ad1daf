"""DescribeLogDirs (API key 35), versions 0-5.

Declared from the facts of Kafka 4.3.1's message definitions
``DescribeLogDirsRequest.json`` and ``DescribeLogDirsResponse.json`` (v0 from Kafka
3.9.1's, which 4.x dropped; v5: ``IsCordoned``, KIP-1066). kafkacore serves v0-4
(:mod:`kafkacore.protocol.api`).
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "DescribeLogDirsRequest", "DescribeLogDirsResponse"]

REQUEST = message(
    "DescribeLogDirsRequest",
    35,
    "request",
    valid="0-5",
    flexible="2+",
    fields=[
        field(
            "Topics",
            "[]DescribableLogDirTopic",
            "0+",
            nullable="0+",
            fields=[
                field("Topic", "string", "0+"),
                field("Partitions", "[]int32", "0+"),
            ],
        ),
    ],
)

RESPONSE = message(
    "DescribeLogDirsResponse",
    35,
    "response",
    valid="0-5",
    flexible="2+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "3+"),
        field(
            "Results",
            "[]DescribeLogDirsResult",
            "0+",
            fields=[
                field("ErrorCode", "int16", "0+"),
                field("LogDir", "string", "0+"),
                field(
                    "Topics",
                    "[]DescribeLogDirsTopic",
                    "0+",
                    fields=[
                        field("Name", "string", "0+"),
                        field(
                            "Partitions",
                            "[]DescribeLogDirsPartition",
                            "0+",
                            fields=[
                                field("PartitionIndex", "int32", "0+"),
                                field("PartitionSize", "int64", "0+"),
                                field("OffsetLag", "int64", "0+"),
                                field("IsFutureKey", "bool", "0+"),
                            ],
                        ),
                    ],
                ),
                field("TotalBytes", "int64", "4+", default=-1),
                field("UsableBytes", "int64", "4+", default=-1),
                field("IsCordoned", "bool", "5+", default=False),
            ],
        ),
    ],
)

DescribeLogDirsRequest = REQUEST.cls
DescribeLogDirsResponse = RESPONSE.cls
