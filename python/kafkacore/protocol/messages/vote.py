"""Vote (API key 52), versions 0-2: a KRaft quorum API (KIP-595, KIP-853).

Declared from the facts of Kafka 4.3.1's message definitions ``VoteRequest.json`` and
``VoteResponse.json`` (in ``kafka-clients-4.3.1.jar``).

Version 1 adds the voter key and directory ids (KIP-853); version 2 adds ``PreVote`` and names the
sender the replica instead of the candidate (KIP-996).
"""

from kafkacore.protocol.schema import NULL, field, message

__all__ = ["REQUEST", "RESPONSE", "VoteRequest", "VoteResponse"]

REQUEST = message(
    "VoteRequest",
    52,
    "request",
    valid="0-2",
    flexible="0+",
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
                        field("ReplicaEpoch", "int32", "0+"),
                        field("ReplicaId", "int32", "0+"),
                        field("ReplicaDirectoryId", "uuid", "1+"),
                        field("VoterDirectoryId", "uuid", "1+"),
                        field("LastOffsetEpoch", "int32", "0+"),
                        field("LastOffset", "int64", "0+"),
                        field("PreVote", "bool", "2+"),
                    ],
                ),
            ],
        ),
    ],
)

RESPONSE = message(
    "VoteResponse",
    52,
    "response",
    valid="0-2",
    flexible="0+",
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
                        field("VoteGranted", "bool", "0+"),
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

VoteRequest = REQUEST.cls
VoteResponse = RESPONSE.cls
