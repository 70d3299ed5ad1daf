"""ConsumerGroupHeartbeat (API key 68), versions 0-1.

KIP-848's consumer-group heartbeat (v1: SubscribedTopicRegex; the
client generates its member id, KIP-1082).

Declared from the facts of Kafka 4.3.1's message definitions
``ConsumerGroupHeartbeatRequest.json`` and ``ConsumerGroupHeartbeatResponse.json``.
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "ConsumerGroupHeartbeatRequest", "ConsumerGroupHeartbeatResponse"]

REQUEST = message(
    "ConsumerGroupHeartbeatRequest",
    68,
    "request",
    valid="0-1",
    flexible="0+",
    fields=[
        field("GroupId", "string", "0+"),
        field("MemberId", "string", "0+"),
        field("MemberEpoch", "int32", "0+"),
        field("InstanceId", "string", "0+", nullable="0+", default=NULL),
        field("RackId", "string", "0+", nullable="0+", default=NULL),
        field("RebalanceTimeoutMs", "int32", "0+", default=-1),
        field("SubscribedTopicNames", "[]string", "0+", nullable="0+", default=NULL),
        field("SubscribedTopicRegex", "string", "1+", nullable="1+", default=NULL),
        field("ServerAssignor", "string", "0+", nullable="0+", default=NULL),
        field(
            "TopicPartitions",
            "[]TopicPartitions",
            "0+",
            nullable="0+",
            default=NULL,
            fields=[
                field("TopicId", "uuid", "0+"),
                field("Partitions", "[]int32", "0+"),
            ],
        ),
    ],
)

RESPONSE = message(
    "ConsumerGroupHeartbeatResponse",
    68,
    "response",
    valid="0-1",
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

ConsumerGroupHeartbeatRequest = REQUEST.cls
ConsumerGroupHeartbeatResponse = RESPONSE.cls
