"""ShareGroupHeartbeat (API key 76), version 1.

KIP-932's share-group heartbeat (v0 of 4.0's early access is gone).

Declared from the facts of Kafka 4.3.1's message definitions
``ShareGroupHeartbeatRequest.json`` and ``ShareGroupHeartbeatResponse.json``.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "ShareGroupHeartbeatRequest", "ShareGroupHeartbeatResponse"]

REQUEST = message(
    "ShareGroupHeartbeatRequest",
    76,
    "request",
    valid="1",
    flexible="0+",
    fields=[
        field("GroupId", "string", "0+"),
        field("MemberId", "string", "0+"),
        field("MemberEpoch", "int32", "0+"),
        field("RackId", "string", "0+", nullable="0+", default=NULL),
        field("SubscribedTopicNames", "[]string", "0+", nullable="0+", default=NULL),
    ],
)

RESPONSE = message(
    "ShareGroupHeartbeatResponse",
    76,
    "response",
    valid="1",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field("ErrorMessage", "string", "0+", nullable="0+", default=NULL),
        field("MemberId", "string", "0+", nullable="0+", default=NULL),
        field("MemberEpoch", "int32", "0+"),
        field("HeartbeatIntervalMs", "int32", "0+"),
        field(
            "Assignment",
            "Assignment",
            "0+",
            nullable="0+",
            default=NULL,
            fields=[
                field("TopicPartitions", "[]TopicPartitions", "0+"),
            ],
        ),
    ],
    common={
        "TopicPartitions": [
            field("TopicId", "uuid", "0+"),
            field("Partitions", "[]int32", "0+"),
        ],
    },
)

ShareGroupHeartbeatRequest = REQUEST.cls
ShareGroupHeartbeatResponse = RESPONSE.cls
