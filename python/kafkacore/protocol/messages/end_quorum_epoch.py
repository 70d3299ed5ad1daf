"""EndQuorumEpoch (API key 54), versions 0-1: a KRaft quorum API (KIP-595, KIP-853).

Declared from the facts of Kafka 4.3.1's message definitions ``EndQuorumEpochRequest.json`` and
``EndQuorumEpochResponse.json`` (in ``kafka-clients-4.3.1.jar``).

Version 1 is flexible, lists preferred candidates (with directory ids) instead of preferred
successors and adds the leader's endpoints (KIP-853).
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "EndQuorumEpochRequest", "EndQuorumEpochResponse"]

REQUEST = message(
    "EndQuorumEpochRequest",
    54,
    "request",
    valid="0-1",
    flexible="1+",
    fields=[
        field("ClusterId", "string", "0+", nullable="0+", default=NULL),
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
                        field("LeaderId", "int32", "0+"),
                        field("LeaderEpoch", "int32", "0+"),
                        field("PreferredSuccessors", "[]int32", "0"),
                        field(
                            "PreferredCandidates",
                            "[]ReplicaInfo",
                            "1+",
                            fields=[
                                field("CandidateId", "int32", "1+"),
                                field("CandidateDirectoryId", "uuid", "1+"),
                            ],
                        ),
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
    "EndQuorumEpochResponse",
    54,
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

EndQuorumEpochRequest = REQUEST.cls
EndQuorumEpochResponse = RESPONSE.cls
