# Generated from describe_topic_partitions.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in describe_topic_partitions.py."""

import uuid
from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = [
    "REQUEST",
    "RESPONSE",
    "DescribeTopicPartitionsRequest",
    "DescribeTopicPartitionsResponse",
]

class DescribeTopicPartitionsRequest(KafkaStruct):
    """Kafka's ``DescribeTopicPartitionsRequestData``: versions 0-0, flexible 0+."""

    class TopicRequest(KafkaStruct):
        name: str
        def __init__(
            self,
            *,
            name: str = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class Cursor(KafkaStruct):
        topic_name: str
        partition_index: int
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partition_index: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    topics: list[DescribeTopicPartitionsRequest.TopicRequest]
    response_partition_limit: int  # versions 0+; default 2000
    cursor: DescribeTopicPartitionsRequest.Cursor | None  # versions 0+; nullable 0+; default null
    def __init__(
        self,
        *,
        topics: list[DescribeTopicPartitionsRequest.TopicRequest] = ...,
        response_partition_limit: int = ...,
        cursor: DescribeTopicPartitionsRequest.Cursor | None = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class DescribeTopicPartitionsResponse(KafkaStruct):
    """Kafka's ``DescribeTopicPartitionsResponseData``: versions 0-0, flexible 0+."""

    class DescribeTopicPartitionsResponseTopic(KafkaStruct):
        error_code: int
        name: str | None  # versions 0+; nullable 0+
        topic_id: uuid.UUID
        is_internal: bool  # versions 0+; default false
        partitions: list[DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponsePartition]
        topic_authorized_operations: int  # versions 0+; default -2147483648
        def __init__(
            self,
            *,
            error_code: int = ...,
            name: str | None = ...,
            topic_id: uuid.UUID = ...,
            is_internal: bool = ...,
            partitions: list[
                DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponsePartition
            ] = ...,
            topic_authorized_operations: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class DescribeTopicPartitionsResponsePartition(KafkaStruct):
        error_code: int
        partition_index: int
        leader_id: int
        leader_epoch: int  # versions 0+; default -1
        replica_nodes: Sequence[int]
        isr_nodes: Sequence[int]
        eligible_leader_replicas: Sequence[int] | None  # versions 0+; nullable 0+; default null
        last_known_elr: Sequence[int] | None  # versions 0+; nullable 0+; default null
        offline_replicas: Sequence[int]
        def __init__(
            self,
            *,
            error_code: int = ...,
            partition_index: int = ...,
            leader_id: int = ...,
            leader_epoch: int = ...,
            replica_nodes: Sequence[int] = ...,
            isr_nodes: Sequence[int] = ...,
            eligible_leader_replicas: Sequence[int] | None = ...,
            last_known_elr: Sequence[int] | None = ...,
            offline_replicas: Sequence[int] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class Cursor(KafkaStruct):
        topic_name: str
        partition_index: int
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partition_index: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    topics: list[DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponseTopic]
    # versions 0+; nullable 0+; default null
    next_cursor: DescribeTopicPartitionsResponse.Cursor | None
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        topics: list[DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponseTopic] = ...,
        next_cursor: DescribeTopicPartitionsResponse.Cursor | None = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[DescribeTopicPartitionsRequest]
RESPONSE: MessageSchema[DescribeTopicPartitionsResponse]
