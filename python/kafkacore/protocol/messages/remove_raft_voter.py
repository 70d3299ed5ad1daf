"""RemoveRaftVoter (API key 81), version 0: a KRaft quorum API (KIP-595, KIP-853).

Declared from the facts of Kafka 4.3.1's message definitions ``RemoveRaftVoterRequest.json`` and
``RemoveRaftVoterResponse.json`` (in ``kafka-clients-4.3.1.jar``).
"""

from kafkacore.protocol.schema import field, message

__all__ = ["REQUEST", "RESPONSE", "RemoveRaftVoterRequest", "RemoveRaftVoterResponse"]

REQUEST = message(
    "RemoveRaftVoterRequest",
    81,
    "request",
    valid="0",
    flexible="0+",
    fields=[
        field("ClusterId", "string", "0+", nullable="0+"),
        field("VoterId", "int32", "0+"),
        field("VoterDirectoryId", "uuid", "0+"),
    ],
)

RESPONSE = message(
    "RemoveRaftVoterResponse",
    81,
    "response",
    valid="0",
    flexible="0+",
    fields=[
        field("ThrottleTimeMs", "int32", "0+"),
        field("ErrorCode", "int16", "0+"),
        field("ErrorMessage", "string", "0+", nullable="0+"),
    ],
)

RemoveRaftVoterRequest = REQUEST.cls
RemoveRaftVoterResponse = RESPONSE.cls
