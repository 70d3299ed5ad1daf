# Generated from metadata.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in metadata.py."""

import uuid
from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "MetadataRequest", "MetadataResponse"]

class MetadataRequest(KafkaStruct):
    """Kafka's ``MetadataRequestData``: versions 0-13, flexible 9+."""

    class MetadataRequestTopic(KafkaStruct):
        topic_id: uuid.UUID  # versions 10+
        name: str | None  # versions 0+; nullable 10+
        def __init__(
            self,
            *,
            topic_id: uuid.UUID = ...,
            name: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    topics: list[MetadataRequest.MetadataRequestTopic] | None  # versions 0+; nullable 1+
    allow_auto_topic_creation: bool  # versions 4+; default true
    include_cluster_authorized_operations: bool  # versions 8-10
    include_topic_authorized_operations: bool  # versions 8+
    def __init__(
        self,
        *,
        topics: list[MetadataRequest.MetadataRequestTopic] | None = ...,
        allow_auto_topic_creation: bool = ...,
        include_cluster_authorized_operations: bool = ...,
        include_topic_authorized_operations: bool = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class MetadataResponse(KafkaStruct):
    """Kafka's ``MetadataResponseData``: versions 0-13, flexible 9+."""

    class MetadataResponseBroker(KafkaStruct):
        node_id: int
        host: str
        port: int
        rack: str | None  # versions 1+; nullable 1+; default null
        def __init__(
            self,
            *,
            node_id: int = ...,
            host: str = ...,
            port: int = ...,
            rack: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class MetadataResponseTopic(KafkaStruct):
        error_code: int
        name: str | None  # versions 0+; nullable 12+
        topic_id: uuid.UUID  # versions 10+
        is_internal: bool  # versions 1+; default false
        partitions: list[MetadataResponse.MetadataResponsePartition]
        topic_authorized_operations: int  # versions 8+; default -2147483648
        def __init__(
            self,
            *,
            error_code: int = ...,
            name: str | None = ...,
            topic_id: uuid.UUID = ...,
            is_internal: bool = ...,
            partitions: list[MetadataResponse.MetadataResponsePartition] = ...,
            topic_authorized_operations: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class MetadataResponsePartition(KafkaStruct):
        error_code: int
        partition_index: int
        leader_id: int
        leader_epoch: int  # versions 7+; default -1
        replica_nodes: Sequence[int]
        isr_nodes: Sequence[int]
        offline_replicas: Sequence[int]  # versions 5+
        def __init__(
            self,
            *,
            error_code: int = ...,
            partition_index: int = ...,
            leader_id: int = ...,
            leader_epoch: int = ...,
            replica_nodes: Sequence[int] = ...,
            isr_nodes: Sequence[int] = ...,
            offline_replicas: Sequence[int] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int  # versions 3+
    brokers: list[MetadataResponse.MetadataResponseBroker]
    cluster_id: str | None  # versions 2+; nullable 2+; default null
    controller_id: int  # versions 1+; default -1
    topics: list[MetadataResponse.MetadataResponseTopic]
    cluster_authorized_operations: int  # versions 8-10; default -2147483648
    error_code: int  # versions 13+
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        brokers: list[MetadataResponse.MetadataResponseBroker] = ...,
        cluster_id: str | None = ...,
        controller_id: int = ...,
        topics: list[MetadataResponse.MetadataResponseTopic] = ...,
        cluster_authorized_operations: int = ...,
        error_code: int = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[MetadataRequest]
RESPONSE: MessageSchema[MetadataResponse]
