"""LeaderAndIsr (API key 4), versions 0-7: the controller's partition leadership and ISR
for a broker (ZooKeeper mode).

Declared from the facts of Kafka 3.9's message definitions ``LeaderAndIsrRequest.json``
and ``LeaderAndIsrResponse.json``. Kafka's ``isKRaftController`` is the attribute
``is_k_raft_controller``.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "LeaderAndIsrRequest", "LeaderAndIsrResponse"]

_PARTITION_STATE = [
    field("TopicName", "string", "0-1"),
    field("PartitionIndex", "int32", "0+"),
    field("ControllerEpoch", "int32", "0+"),
    field("Leader", "int32", "0+"),
    field("LeaderEpoch", "int32", "0+"),
    field("Isr", "[]int32", "0+"),
    field("PartitionEpoch", "int32", "0+"),
    field("Replicas", "[]int32", "0+"),
    field("AddingReplicas", "[]int32", "3+"),
    field("RemovingReplicas", "[]int32", "3+"),
    field("IsNew", "bool", "1+", default=False),
    field("LeaderRecoveryState", "int8", "6+", default=0),
]

REQUEST = message(
    "LeaderAndIsrRequest",
    4,
    "request",
    valid="0-7",
    flexible="4+",
    fields=[
        field("ControllerId", "int32", "0+"),
        field("isKRaftController", "bool", "7+", default=False),
        field("ControllerEpoch", "int32", "0+"),
        field("BrokerEpoch", "int64", "2+", default=-1),
        field("Type", "int8", "5+"),
        field("UngroupedPartitionStates", "[]LeaderAndIsrPartitionState", "0-1"),
        field(
            "TopicStates",
            "[]LeaderAndIsrTopicState",
            "2+",
            fields=[
                field("TopicName", "string", "2+"),
                field("TopicId", "uuid", "5+"),
                field("PartitionStates", "[]LeaderAndIsrPartitionState", "2+"),
            ],
        ),
        field(
            "LiveLeaders",
            "[]LeaderAndIsrLiveLeader",
            "0+",
            fields=[
                field("BrokerId", "int32", "0+"),
                field("HostName", "string", "0+"),
                field("Port", "int32", "0+"),
            ],
        ),
    ],
    common={"LeaderAndIsrPartitionState": _PARTITION_STATE},
)

RESPONSE = message(
    "LeaderAndIsrResponse",
    4,
    "response",
    valid="0-7",
    flexible="4+",
    fields=[
        field("ErrorCode", "int16", "0+"),
        field("PartitionErrors", "[]LeaderAndIsrPartitionError", "0-4"),
        field(
            "Topics",
            "[]LeaderAndIsrTopicError",
            "5+",
            fields=[
                field("TopicId", "uuid", "5+"),
                field("PartitionErrors", "[]LeaderAndIsrPartitionError", "5+"),
            ],
        ),
    ],
    common={
        "LeaderAndIsrPartitionError": [
            field("TopicName", "string", "0-4"),
            field("PartitionIndex", "int32", "0+"),
            field("ErrorCode", "int16", "0+"),
        ]
    },
)

LeaderAndIsrRequest = REQUEST.cls
LeaderAndIsrResponse = RESPONSE.cls
