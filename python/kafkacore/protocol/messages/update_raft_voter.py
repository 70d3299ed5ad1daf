"""UpdateRaftVoter (API key 82), version 0: a KRaft quorum API (KIP-595, KIP-853).

Declared from the facts of Kafka 4.3.1's message definitions ``UpdateRaftVoterRequest.json`` and
``UpdateRaftVoterResponse.json`` (in ``kafka-clients-4.3.1.jar``).
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "UpdateRaftVoterRequest", "UpdateRaftVoterResponse"]

REQUEST = message(
    "UpdateRaftVoterRequest",
    82,
    "request",
    valid="0",
    flexible="0+",
    fields=[
        field("ClusterId", "string", "0+", nullable="0+"),
        field("CurrentLeaderEpoch", "int32", "0+"),
        field("VoterId", "int32", "0+"),
        field("VoterDirectoryId", "uuid", "0+"),
        field(
            "Listeners",
            "[]Listener",
            "0+",
            fields=[
                field("Name", "string", "0+"),
                field("Host", "string", "0+"),
                field("Port", "uint16", "0+"),
            ],
        ),
        field(
            "KRaftVersionFeature",
            "KRaftVersionFeature",
            "0+",
            fields=[
                field("MinSupportedVersion", "int16", "0+"),
                field("MaxSupportedVersion", "int16", "0+"),
            ],
        ),
    ],
)

RESPONSE = message(
    "UpdateRaftVoterResponse",
    82,
    "response",
    valid="0",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field(
            "CurrentLeader",
            "CurrentLeader",
            "0+",
            tagged="0+",
            tag=0,
            fields=[
                field("LeaderId", "int32", "0+", default=-1),
                field("LeaderEpoch", "int32", "0+", default=-1),
                field("Host", "string", "0+"),
                field("Port", "int32", "0+"),
            ],
        ),
    ],
)

UpdateRaftVoterRequest = REQUEST.cls
UpdateRaftVoterResponse = RESPONSE.cls
