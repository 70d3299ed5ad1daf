# Generated from update_metadata.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in update_metadata.py."""

import uuid
from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "UpdateMetadataRequest", "UpdateMetadataResponse"]

class UpdateMetadataRequest(KafkaStruct):
    """Kafka's ``UpdateMetadataRequestData``: versions 0-8, flexible 6+."""

    class UpdateMetadataPartitionState(KafkaStruct):
        topic_name: str  # versions 0-4
        partition_index: int
        controller_epoch: int
        leader: int
        leader_epoch: int
        isr: Sequence[int]
        zk_version: int
        replicas: Sequence[int]
        offline_replicas: Sequence[int]  # versions 4+
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partition_index: int = ...,
            controller_epoch: int = ...,
            leader: int = ...,
            leader_epoch: int = ...,
            isr: Sequence[int] = ...,
            zk_version: int = ...,
            replicas: Sequence[int] = ...,
            offline_replicas: Sequence[int] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class UpdateMetadataTopicState(KafkaStruct):
        topic_name: str  # versions 5+
        topic_id: uuid.UUID  # versions 7+
        partition_states: list[UpdateMetadataRequest.UpdateMetadataPartitionState]  # versions 5+
        def __init__(
            self,
            *,
            topic_name: str = ...,
            topic_id: uuid.UUID = ...,
            partition_states: list[UpdateMetadataRequest.UpdateMetadataPartitionState] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class UpdateMetadataBroker(KafkaStruct):
        id: int
        v0_host: str  # versions 0-0
        v0_port: int  # versions 0-0
        endpoints: list[UpdateMetadataRequest.UpdateMetadataEndpoint]  # versions 1+
        rack: str | None  # versions 2+; nullable 0+
        def __init__(
            self,
            *,
            id: int = ...,
            v0_host: str = ...,
            v0_port: int = ...,
            endpoints: list[UpdateMetadataRequest.UpdateMetadataEndpoint] = ...,
            rack: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class UpdateMetadataEndpoint(KafkaStruct):
        port: int  # versions 1+
        host: str  # versions 1+
        listener: str  # versions 3+
        security_protocol: int  # versions 1+
        def __init__(
            self,
            *,
            port: int = ...,
            host: str = ...,
            listener: str = ...,
            security_protocol: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    controller_id: int
    is_k_raft_controller: bool  # versions 8+; default false
    type: int  # versions 8+; tag 0; default 0
    controller_epoch: int
    broker_epoch: int  # versions 5+; default -1
    # versions 0-4
    ungrouped_partition_states: list[UpdateMetadataRequest.UpdateMetadataPartitionState]
    topic_states: list[UpdateMetadataRequest.UpdateMetadataTopicState]  # versions 5+
    live_brokers: list[UpdateMetadataRequest.UpdateMetadataBroker]
    def __init__(
        self,
        *,
        controller_id: int = ...,
        is_k_raft_controller: bool = ...,
        type: int = ...,
        controller_epoch: int = ...,
        broker_epoch: int = ...,
        ungrouped_partition_states: list[UpdateMetadataRequest.UpdateMetadataPartitionState] = ...,
        topic_states: list[UpdateMetadataRequest.UpdateMetadataTopicState] = ...,
        live_brokers: list[UpdateMetadataRequest.UpdateMetadataBroker] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class UpdateMetadataResponse(KafkaStruct):
    """Kafka's ``UpdateMetadataResponseData``: versions 0-8, flexible 6+."""

    error_code: int
    def __init__(
        self,
        *,
        error_code: int = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[UpdateMetadataRequest]
RESPONSE: MessageSchema[UpdateMetadataResponse]
