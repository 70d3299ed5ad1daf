"""AddRaftVoter (API key 80), versions 0-1: a KRaft quorum API (KIP-595, KIP-853).

Declared from the facts of Kafka 4.3.1's message definitions ``AddRaftVoterRequest.json`` and
``AddRaftVoterResponse.json`` (in ``kafka-clients-4.3.1.jar``).

Version 1 adds ``AckWhenCommitted`` (default true).
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "AddRaftVoterRequest", "AddRaftVoterResponse"]

REQUEST = message(
    "AddRaftVoterRequest",
    80,
    "request",
    valid="0-1",
    flexible="0+",
    fields=[
        field("ClusterId", "string", "0+", nullable="0+"),
        field("TimeoutMs", "int32", "0+"),
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
        field("AckWhenCommitted", "bool", "1+", default=True),
    ],
)

RESPONSE = message(
    "AddRaftVoterResponse",
    80,
    "response",
    valid="0-1",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field("ErrorMessage", "string", "0+", nullable="0+"),
    ],
)

AddRaftVoterRequest = REQUEST.cls
AddRaftVoterResponse = RESPONSE.cls
