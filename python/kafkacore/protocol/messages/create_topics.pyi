# Generated from create_topics.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in create_topics.py."""

import uuid
from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "CreateTopicsRequest", "CreateTopicsResponse"]

class CreateTopicsRequest(KafkaStruct):
    """Kafka's ``CreateTopicsRequestData``: versions 2-7, flexible 5+."""

    class CreatableTopic(KafkaStruct):
        name: str  # versions 2+
        num_partitions: int  # versions 2+
        replication_factor: int  # versions 2+
        assignments: list[CreateTopicsRequest.CreatableReplicaAssignment]  # versions 2+
        configs: list[CreateTopicsRequest.CreatableTopicConfig]  # versions 2+
        def __init__(
            self,
            *,
            name: str = ...,
            num_partitions: int = ...,
            replication_factor: int = ...,
            assignments: list[CreateTopicsRequest.CreatableReplicaAssignment] = ...,
            configs: list[CreateTopicsRequest.CreatableTopicConfig] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class CreatableReplicaAssignment(KafkaStruct):
        partition_index: int  # versions 2+
        broker_ids: Sequence[int]  # versions 2+
        def __init__(
            self,
            *,
            partition_index: int = ...,
            broker_ids: Sequence[int] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class CreatableTopicConfig(KafkaStruct):
        name: str  # versions 2+
        value: str | None  # versions 2+; nullable 2+
        def __init__(
            self,
            *,
            name: str = ...,
            value: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    topics: list[CreateTopicsRequest.CreatableTopic]  # versions 2+
    timeout_ms: int  # versions 2+; default 60000
    validate_only: bool  # versions 2+; default false
    def __init__(
        self,
        *,
        topics: list[CreateTopicsRequest.CreatableTopic] = ...,
        timeout_ms: int = ...,
        validate_only: bool = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class CreateTopicsResponse(KafkaStruct):
    """Kafka's ``CreateTopicsResponseData``: versions 2-7, flexible 5+."""

    class CreatableTopicResult(KafkaStruct):
        name: str  # versions 2+
        topic_id: uuid.UUID  # versions 7+
        error_code: int  # versions 2+
        error_message: str | None  # versions 2+; nullable 2+
        topic_config_error_code: int  # versions 5+; tag 0
        num_partitions: int  # versions 5+; default -1
        replication_factor: int  # versions 5+; default -1
        configs: list[CreateTopicsResponse.CreatableTopicConfigs] | None  # versions 5+; nullable 5+
        def __init__(
            self,
            *,
            name: str = ...,
            topic_id: uuid.UUID = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            topic_config_error_code: int = ...,
            num_partitions: int = ...,
            replication_factor: int = ...,
            configs: list[CreateTopicsResponse.CreatableTopicConfigs] | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class CreatableTopicConfigs(KafkaStruct):
        name: str  # versions 5+
        value: str | None  # versions 5+; nullable 5+
        read_only: bool  # versions 5+
        config_source: int  # versions 5+; default -1
        is_sensitive: bool  # versions 5+
        def __init__(
            self,
            *,
            name: str = ...,
            value: str | None = ...,
            read_only: bool = ...,
            config_source: int = ...,
            is_sensitive: bool = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int  # versions 2+
    topics: list[CreateTopicsResponse.CreatableTopicResult]  # versions 2+
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        topics: list[CreateTopicsResponse.CreatableTopicResult] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[CreateTopicsRequest]
RESPONSE: MessageSchema[CreateTopicsResponse]
