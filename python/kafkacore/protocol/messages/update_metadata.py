"""UpdateMetadata (API key 6), versions 0-8: the controller's cluster metadata for a
broker's metadata cache (ZooKeeper mode).

Declared from the facts of Kafka 3.9's message definitions ``UpdateMetadataRequest.json``
and ``UpdateMetadataResponse.json``. Kafka's ``isKRaftController`` is the attribute
``is_k_raft_controller``.
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "UpdateMetadataRequest", "UpdateMetadataResponse"]

REQUEST = message(
    "UpdateMetadataRequest",
    6,
    "request",
    valid="0-8",
    flexible="6+",
    fields=[
        field("ControllerId", "int32", "0+"),
        field("isKRaftController", "bool", "8+", default=False),
        field("Type", "int8", "8+", tagged="8+", tag=0, default=0),
        field("ControllerEpoch", "int32", "0+"),
        field("BrokerEpoch", "int64", "5+", default=-1),
        field("UngroupedPartitionStates", "[]UpdateMetadataPartitionState", "0-4"),
        field(
            "TopicStates",
            "[]UpdateMetadataTopicState",
            "5+",
            fields=[
                field("TopicName", "string", "5+"),
                field("TopicId", "uuid", "7+"),
                field("PartitionStates", "[]UpdateMetadataPartitionState", "5+"),
            ],
        ),
        field(
            "LiveBrokers",
            "[]UpdateMetadataBroker",
            "0+",
            fields=[
                field("Id", "int32", "0+"),
                field("V0Host", "string", "0"),
                field("V0Port", "int32", "0"),
                field(
                    "Endpoints",
                    "[]UpdateMetadataEndpoint",
                    "1+",
                    fields=[
                        field("Port", "int32", "1+"),
                        field("Host", "string", "1+"),
                        field("Listener", "string", "3+"),
                        field("SecurityProtocol", "int16", "1+"),
                    ],
                ),
                field("Rack", "string", "2+", nullable="0+"),
            ],
        ),
    ],
    common={
        "UpdateMetadataPartitionState": [
            field("TopicName", "string", "0-4"),
            field("PartitionIndex", "int32", "0+"),
            field("ControllerEpoch", "int32", "0+"),
            field("Leader", "int32", "0+"),
            field("LeaderEpoch", "int32", "0+"),
            field("Isr", "[]int32", "0+"),
            field("ZkVersion", "int32", "0+"),
            field("Replicas", "[]int32", "0+"),
            field("OfflineReplicas", "[]int32", "4+"),
        ]
    },
)

RESPONSE = message(
    "UpdateMetadataResponse",
    6,
    "response",
    valid="0-8",
    flexible="6+",
    fields=[field("ErrorCode", "int16", "0+")],
)

UpdateMetadataRequest = REQUEST.cls
UpdateMetadataResponse = RESPONSE.cls
