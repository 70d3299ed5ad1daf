"""BeginQuorumEpoch (API key 53), versions 0-1: a KRaft quorum API (KIP-595, KIP-853).

Declared from the facts of Kafka 4.3.1's message definitions ``BeginQuorumEpochRequest.json`` and
``BeginQuorumEpochResponse.json`` (in ``kafka-clients-4.3.1.jar``).

Version 1 is flexible and adds the voter key and the leader's endpoints (KIP-853).
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "BeginQuorumEpochRequest", "BeginQuorumEpochResponse"]

REQUEST = message(
    "BeginQuorumEpochRequest",
    53,
    "request",
    valid="0-1",
    flexible="1+",
    fields=[
        field("ClusterId", "string", "0+", nullable="0+", default=NULL),
        field("VoterId", "int32", "1+", default=-1),
        field(
            "Topics",
            "[]TopicData",
            "0+",
            fields=[
                field("TopicName", "string", "0+"),
                field(
                    "Partitions",
                    "[]PartitionData",
                    "0+",
                    fields=[
                        field("PartitionIndex", "int32", "0+"),
                        field("VoterDirectoryId", "uuid", "1+"),
                        field("LeaderId", "int32", "0+"),
                        field("LeaderEpoch", "int32", "0+"),
                    ],
                ),
            ],
        ),
        field(
            "LeaderEndpoints",
            "[]LeaderEndpoint",
            "1+",
            fields=[
                field("Name", "string", "1+"),
                field("Host", "string", "1+"),
                field("Port", "uint16", "1+"),
            ],
        ),
    ],
)

RESPONSE = message(
    "BeginQuorumEpochResponse",
    53,
    "response",
    valid="0-1",
    flexible="1+",
    fields=[
        field("ErrorCode", "int16", "0+"),
        field(
            "Topics",
            "[]TopicData",
            "0+",
            fields=[
                field("TopicName", "string", "0+"),
                field(
                    "Partitions",
                    "[]PartitionData",
                    "0+",
                    fields=[
                        field("PartitionIndex", "int32", "0+"),
                        field("ErrorCode", "int16", "0+"),
                        field("LeaderId", "int32", "0+"),
                        field("LeaderEpoch", "int32", "0+"),
                    ],
                ),
            ],
        ),
        field(
            "NodeEndpoints",
            "[]NodeEndpoint",
            "1+",
            tagged="1+",
            tag=0,
            fields=[
                field("NodeId", "int32", "1+"),
                field("Host", "string", "1+"),
                field("Port", "uint16", "1+"),
            ],
        ),
    ],
)

BeginQuorumEpochRequest = REQUEST.cls
BeginQuorumEpochResponse = RESPONSE.cls
