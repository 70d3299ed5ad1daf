# Generated from add_raft_voter.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in add_raft_voter.py."""

import uuid

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "AddRaftVoterRequest", "AddRaftVoterResponse"]

class AddRaftVoterRequest(KafkaStruct):
    """Kafka's ``AddRaftVoterRequestData``: versions 0-1, flexible 0+."""

    class Listener(KafkaStruct):
        name: str
        host: str
        port: int
        def __init__(
            self,
            *,
            name: str = ...,
            host: str = ...,
            port: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    cluster_id: str | None  # versions 0+; nullable 0+
    timeout_ms: int
    voter_id: int
    voter_directory_id: uuid.UUID
    listeners: list[AddRaftVoterRequest.Listener]
    ack_when_committed: bool  # versions 1+; default true
    def __init__(
        self,
        *,
        cluster_id: str | None = ...,
        timeout_ms: int = ...,
        voter_id: int = ...,
        voter_directory_id: uuid.UUID = ...,
        listeners: list[AddRaftVoterRequest.Listener] = ...,
        ack_when_committed: bool = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class AddRaftVoterResponse(KafkaStruct):
    """Kafka's ``AddRaftVoterResponseData``: versions 0-1, flexible 0+."""

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

REQUEST: MessageSchema[AddRaftVoterRequest]
RESPONSE: MessageSchema[AddRaftVoterResponse]
