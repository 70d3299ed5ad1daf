"""StopReplica (API key 5), versions 0-4: the controller stops (and maybe deletes) a
broker's replicas (ZooKeeper mode).

Declared from the facts of Kafka 3.9's message definitions ``StopReplicaRequest.json``
and ``StopReplicaResponse.json``. Kafka's ``isKRaftController`` is the attribute
``is_k_raft_controller``.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "StopReplicaRequest", "StopReplicaResponse"]

REQUEST = message(
    "StopReplicaRequest",
    5,
    "request",
    valid="0-4",
    flexible="2+",
    fields=[
        field("ControllerId", "int32", "0+"),
        field("isKRaftController", "bool", "4+", default=False),
        field("ControllerEpoch", "int32", "0+"),
        field("BrokerEpoch", "int64", "1+", default=-1),
        field("DeletePartitions", "bool", "0-2"),
        field(
            "UngroupedPartitions",
            "[]StopReplicaPartitionV0",
            "0",
            fields=[
                field("TopicName", "string", "0"),
                field("PartitionIndex", "int32", "0"),
            ],
        ),
        field(
            "Topics",
            "[]StopReplicaTopicV1",
            "1-2",
            fields=[
                field("Name", "string", "1-2"),
                field("PartitionIndexes", "[]int32", "1-2"),
            ],
        ),
        field(
            "TopicStates",
            "[]StopReplicaTopicState",
            "3+",
            fields=[
                field("TopicName", "string", "3+"),
                field(
                    "PartitionStates",
                    "[]StopReplicaPartitionState",
                    "3+",
                    fields=[
                        field("PartitionIndex", "int32", "3+"),
                        field("LeaderEpoch", "int32", "3+", default=-1),
                        field("DeletePartition", "bool", "3+"),
                    ],
                ),
            ],
        ),
    ],
)

RESPONSE = message(
    "StopReplicaResponse",
    5,
    "response",
    valid="0-4",
    flexible="2+",
    fields=[
        field("ErrorCode", "int16", "0+"),
        field(
            "PartitionErrors",
            "[]StopReplicaPartitionError",
            "0+",
            fields=[
                field("TopicName", "string", "0+"),
                field("PartitionIndex", "int32", "0+"),
                field("ErrorCode", "int16", "0+"),
            ],
        ),
    ],
)

StopReplicaRequest = REQUEST.cls
StopReplicaResponse = RESPONSE.cls
