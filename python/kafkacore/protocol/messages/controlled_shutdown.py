"""ControlledShutdown (API key 7), versions 0-3 declared, 1-3 implemented: a broker asks
the controller to move its partition leaderships away before it stops (ZooKeeper mode).

Declared from the facts of Kafka 3.9's message definitions
``ControlledShutdownRequest.json`` and ``ControlledShutdownResponse.json``. v0 is sent
with a request header without client id (header v0), which kafkacore does not read: the
API table implements v1-3.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "ControlledShutdownRequest", "ControlledShutdownResponse"]

REQUEST = message(
    "ControlledShutdownRequest",
    7,
    "request",
    valid="0-3",
    flexible="3+",
    fields=[
        field("BrokerId", "int32", "0+"),
        field("BrokerEpoch", "int64", "2+", default=-1),
    ],
)

RESPONSE = message(
    "ControlledShutdownResponse",
    7,
    "response",
    valid="0-3",
    flexible="3+",
    fields=[
        field("ErrorCode", "int16", "0+"),
        field(
            "RemainingPartitions",
            "[]RemainingPartition",
            "0+",
            fields=[
                field("TopicName", "string", "0+"),
                field("PartitionIndex", "int32", "0+"),
            ],
        ),
    ],
)

ControlledShutdownRequest = REQUEST.cls
ControlledShutdownResponse = RESPONSE.cls
