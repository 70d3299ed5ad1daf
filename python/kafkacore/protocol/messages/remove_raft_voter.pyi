# Generated from remove_raft_voter.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in remove_raft_voter.py."""

import uuid

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "RemoveRaftVoterRequest", "RemoveRaftVoterResponse"]

class RemoveRaftVoterRequest(KafkaStruct):
    """Kafka's ``RemoveRaftVoterRequestData``: versions 0-0, flexible 0+."""

    cluster_id: str | None  # versions 0+; nullable 0+
    voter_id: int
    voter_directory_id: uuid.UUID
    def __init__(
        self,
        *,
        cluster_id: str | None = ...,
        voter_id: int = ...,
        voter_directory_id: uuid.UUID = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class RemoveRaftVoterResponse(KafkaStruct):
    """Kafka's ``RemoveRaftVoterResponseData``: versions 0-0, flexible 0+."""

    throttle_time_ms: int
    error_code: int
    error_message: str | None  # versions 0+; nullable 0+
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[RemoveRaftVoterRequest]
RESPONSE: MessageSchema[RemoveRaftVoterResponse]
