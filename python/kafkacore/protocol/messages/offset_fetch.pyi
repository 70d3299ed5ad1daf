# Generated from offset_fetch.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in offset_fetch.py."""

import uuid
from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "OffsetFetchRequest", "OffsetFetchResponse"]

class OffsetFetchRequest(KafkaStruct):
    """Kafka's ``OffsetFetchRequestData``: versions 1-10, flexible 6+."""

    class OffsetFetchRequestTopic(KafkaStruct):
        name: str  # versions 1-7
        partition_indexes: Sequence[int]  # versions 1-7
        def __init__(
            self,
            *,
            name: str = ...,
            partition_indexes: Sequence[int] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class OffsetFetchRequestGroup(KafkaStruct):
        group_id: str  # versions 8+
        member_id: str | None  # versions 9+; nullable 9+; default null
        member_epoch: int  # versions 9+; default -1
        topics: list[OffsetFetchRequest.OffsetFetchRequestTopics] | None  # versions 8+; nullable 8+
        def __init__(
            self,
            *,
            group_id: str = ...,
            member_id: str | None = ...,
            member_epoch: int = ...,
            topics: list[OffsetFetchRequest.OffsetFetchRequestTopics] | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class OffsetFetchRequestTopics(KafkaStruct):
        name: str  # versions 8-9
        topic_id: uuid.UUID  # versions 10+
        partition_indexes: Sequence[int]  # versions 8+
        def __init__(
            self,
            *,
            name: str = ...,
            topic_id: uuid.UUID = ...,
            partition_indexes: Sequence[int] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    group_id: str  # versions 1-7
    topics: list[OffsetFetchRequest.OffsetFetchRequestTopic] | None  # versions 1-7; nullable 2-7
    groups: list[OffsetFetchRequest.OffsetFetchRequestGroup]  # versions 8+
    require_stable: bool  # versions 7+; default false
    def __init__(
        self,
        *,
        group_id: str = ...,
        topics: list[OffsetFetchRequest.OffsetFetchRequestTopic] | None = ...,
        groups: list[OffsetFetchRequest.OffsetFetchRequestGroup] = ...,
        require_stable: bool = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class OffsetFetchResponse(KafkaStruct):
    """Kafka's ``OffsetFetchResponseData``: versions 1-10, flexible 6+."""

    class OffsetFetchResponseTopic(KafkaStruct):
        name: str  # versions 1-7
        partitions: list[OffsetFetchResponse.OffsetFetchResponsePartition]  # versions 1-7
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[OffsetFetchResponse.OffsetFetchResponsePartition] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class OffsetFetchResponsePartition(KafkaStruct):
        partition_index: int  # versions 1-7
        committed_offset: int  # versions 1-7
        committed_leader_epoch: int  # versions 5-7; default -1
        metadata: str | None  # versions 1-7; nullable 1-7
        error_code: int  # versions 1-7
        def __init__(
            self,
            *,
            partition_index: int = ...,
            committed_offset: int = ...,
            committed_leader_epoch: int = ...,
            metadata: str | None = ...,
            error_code: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class OffsetFetchResponseGroup(KafkaStruct):
        group_id: str  # versions 8+
        topics: list[OffsetFetchResponse.OffsetFetchResponseTopics]  # versions 8+
        error_code: int  # versions 8+; default 0
        def __init__(
            self,
            *,
            group_id: str = ...,
            topics: list[OffsetFetchResponse.OffsetFetchResponseTopics] = ...,
            error_code: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class OffsetFetchResponseTopics(KafkaStruct):
        name: str  # versions 8-9
        topic_id: uuid.UUID  # versions 10+
        partitions: list[OffsetFetchResponse.OffsetFetchResponsePartitions]  # versions 8+
        def __init__(
            self,
            *,
            name: str = ...,
            topic_id: uuid.UUID = ...,
            partitions: list[OffsetFetchResponse.OffsetFetchResponsePartitions] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class OffsetFetchResponsePartitions(KafkaStruct):
        partition_index: int  # versions 8+
        committed_offset: int  # versions 8+
        committed_leader_epoch: int  # versions 8+; default -1
        metadata: str | None  # versions 8+; nullable 8+
        error_code: int  # versions 8+
        def __init__(
            self,
            *,
            partition_index: int = ...,
            committed_offset: int = ...,
            committed_leader_epoch: int = ...,
            metadata: str | None = ...,
            error_code: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int  # versions 3+
    topics: list[OffsetFetchResponse.OffsetFetchResponseTopic]  # versions 1-7
    error_code: int  # versions 2-7; default 0
    groups: list[OffsetFetchResponse.OffsetFetchResponseGroup]  # versions 8+
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        topics: list[OffsetFetchResponse.OffsetFetchResponseTopic] = ...,
        error_code: int = ...,
        groups: list[OffsetFetchResponse.OffsetFetchResponseGroup] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[OffsetFetchRequest]
RESPONSE: MessageSchema[OffsetFetchResponse]
