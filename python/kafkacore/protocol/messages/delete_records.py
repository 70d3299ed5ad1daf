"""DeleteRecords (API key 21), versions 0-2.

Declared from the facts of Kafka's message definitions
``DeleteRecordsRequest.json`` and ``DeleteRecordsResponse.json``
(apache/kafka trunk 1eb7644), limited to the versions kafkacore implements.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "DeleteRecordsRequest", "DeleteRecordsResponse"]

REQUEST = message(
    "DeleteRecordsRequest",
    21,
    "request",
    valid="0-2",
    flexible="2+",
    fields=[
        field(
            "Topics",
            "[]DeleteRecordsTopic",
            "0+",
            fields=[
                field("Name", "string", "0+"),
                field(
                    "Partitions",
                    "[]DeleteRecordsPartition",
                    "0+",
                    fields=[
                        field("PartitionIndex", "int32", "0+"),
                        field("Offset", "int64", "0+"),
                    ],
                ),
            ],
        ),
        field("TimeoutMs", "int32", "0+"),
    ],
)

RESPONSE = message(
    "DeleteRecordsResponse",
    21,
    "response",
    valid="0-2",
    flexible="2+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field(
            "Topics",
            "[]DeleteRecordsTopicResult",
            "0+",
            fields=[
                field("Name", "string", "0+"),
                field(
                    "Partitions",
                    "[]DeleteRecordsPartitionResult",
                    "0+",
                    fields=[
                        field("PartitionIndex", "int32", "0+"),
                        field("LowWatermark", "int64", "0+"),
                        field("ErrorCode", "int16", "0+"),
                    ],
                ),
            ],
        ),
    ],
)

DeleteRecordsRequest = REQUEST.cls
DeleteRecordsResponse = RESPONSE.cls
