# Generated from update_raft_voter.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in update_raft_voter.py."""

import uuid

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "UpdateRaftVoterRequest", "UpdateRaftVoterResponse"]

class UpdateRaftVoterRequest(KafkaStruct):
    """Kafka's ``UpdateRaftVoterRequestData``: versions 0-0, flexible 0+."""

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

    class KRaftVersionFeature(KafkaStruct):
        min_supported_version: int
        max_supported_version: int
        def __init__(
            self,
            *,
            min_supported_version: int = ...,
            max_supported_version: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    cluster_id: str | None  # versions 0+; nullable 0+
    current_leader_epoch: int
    voter_id: int
    voter_directory_id: uuid.UUID
    listeners: list[UpdateRaftVoterRequest.Listener]
    k_raft_version_feature: UpdateRaftVoterRequest.KRaftVersionFeature
    def __init__(
        self,
        *,
        cluster_id: str | None = ...,
        current_leader_epoch: int = ...,
        voter_id: int = ...,
        voter_directory_id: uuid.UUID = ...,
        listeners: list[UpdateRaftVoterRequest.Listener] = ...,
        k_raft_version_feature: UpdateRaftVoterRequest.KRaftVersionFeature = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class UpdateRaftVoterResponse(KafkaStruct):
    """Kafka's ``UpdateRaftVoterResponseData``: versions 0-0, flexible 0+."""

    class CurrentLeader(KafkaStruct):
        leader_id: int  # versions 0+; default -1
        leader_epoch: int  # versions 0+; default -1
        host: str
        port: int
        def __init__(
            self,
            *,
            leader_id: int = ...,
            leader_epoch: int = ...,
            host: str = ...,
            port: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    current_leader: UpdateRaftVoterResponse.CurrentLeader  # versions 0+; tag 0
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        current_leader: UpdateRaftVoterResponse.CurrentLeader = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[UpdateRaftVoterRequest]
RESPONSE: MessageSchema[UpdateRaftVoterResponse]
