"""WriteTxnMarkers (API key 27), versions 0-2: the transaction coordinator asks the
leaders of a transaction's partitions to write its COMMIT or ABORT markers (an
inter-broker API; version 1 is flexible).

Declared from the facts of Kafka 4.3.1's message definitions
``WriteTxnMarkersRequest.json`` and ``WriteTxnMarkersResponse.json`` (v2: a
``TransactionVersion`` per marker, KIP-1228), and Kafka 3.9.1's for version 0 (which 4.0
dropped and 3.9 brokers still send). kafkacore serves v0-1
(:mod:`kafkacore.protocol.api`).
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "WriteTxnMarkersRequest", "WriteTxnMarkersResponse"]

REQUEST = message(
    "WriteTxnMarkersRequest",
    27,
    "request",
    valid="0-2",
    flexible="1+",
    fields=[
        field(
            "Markers",
            "[]WritableTxnMarker",
            "0+",
            fields=[
                field("ProducerId", "int64", "0+"),
                field("ProducerEpoch", "int16", "0+"),
                field("TransactionResult", "bool", "0+"),
                field(
                    "Topics",
                    "[]WritableTxnMarkerTopic",
                    "0+",
                    fields=[
                        field("Name", "string", "0+"),
                        field("PartitionIndexes", "[]int32", "0+"),
                    ],
                ),
                field("CoordinatorEpoch", "int32", "0+"),
                field("TransactionVersion", "int8", "2+", default=0),
            ],
        ),
    ],
)

RESPONSE = message(
    "WriteTxnMarkersResponse",
    27,
    "response",
    valid="0-2",
    flexible="1+",
    fields=[
        field(
            "Markers",
            "[]WritableTxnMarkerResult",
            "0+",
            fields=[
                field("ProducerId", "int64", "0+"),
                field(
                    "Topics",
                    "[]WritableTxnMarkerTopicResult",
                    "0+",
                    fields=[
                        field("Name", "string", "0+"),
                        field(
                            "Partitions",
                            "[]WritableTxnMarkerPartitionResult",
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

WriteTxnMarkersRequest = REQUEST.cls
WriteTxnMarkersResponse = RESPONSE.cls
