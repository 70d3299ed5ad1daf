# Generated from describe_share_group_offsets.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in describe_share_group_offsets.py."""

import uuid
from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = [
    "REQUEST",
    "RESPONSE",
    "DescribeShareGroupOffsetsRequest",
    "DescribeShareGroupOffsetsResponse",
]

class DescribeShareGroupOffsetsRequest(KafkaStruct):
    """Kafka's ``DescribeShareGroupOffsetsRequestData``: versions 0-1, flexible 0+."""

    class DescribeShareGroupOffsetsRequestGroup(KafkaStruct):
        group_id: str
        # versions 0+; nullable 0+
        topics: list[DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestTopic] | None
        def __init__(
            self,
            *,
            group_id: str = ...,
            topics: list[DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestTopic]
            | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class DescribeShareGroupOffsetsRequestTopic(KafkaStruct):
        topic_name: str
        partitions: Sequence[int]
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partitions: Sequence[int] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    groups: list[DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestGroup]
    def __init__(
        self,
        *,
        groups: list[DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestGroup] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class DescribeShareGroupOffsetsResponse(KafkaStruct):
    """Kafka's ``DescribeShareGroupOffsetsResponseData``: versions 0-1, flexible 0+."""

    class DescribeShareGroupOffsetsResponseGroup(KafkaStruct):
        group_id: str
        topics: list[DescribeShareGroupOffsetsResponse.DescribeShareGroupOffsetsResponseTopic]
        error_code: int
        error_message: str | None  # versions 0+; nullable 0+; default null
        def __init__(
            self,
            *,
            group_id: str = ...,
            topics: list[
                DescribeShareGroupOffsetsResponse.DescribeShareGroupOffsetsResponseTopic
            ] = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class DescribeShareGroupOffsetsResponseTopic(KafkaStruct):
        topic_name: str
        topic_id: uuid.UUID
        partitions: list[
            DescribeShareGroupOffsetsResponse.DescribeShareGroupOffsetsResponsePartition
        ]
        def __init__(
            self,
            *,
            topic_name: str = ...,
            topic_id: uuid.UUID = ...,
            partitions: list[
                DescribeShareGroupOffsetsResponse.DescribeShareGroupOffsetsResponsePartition
            ] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class DescribeShareGroupOffsetsResponsePartition(KafkaStruct):
        partition_index: int
        start_offset: int
        leader_epoch: int
        lag: int  # versions 1+; default -1
        error_code: int
        error_message: str | None  # versions 0+; nullable 0+; default null
        def __init__(
            self,
            *,
            partition_index: int = ...,
            start_offset: int = ...,
            leader_epoch: int = ...,
            lag: int = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    groups: list[DescribeShareGroupOffsetsResponse.DescribeShareGroupOffsetsResponseGroup]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        groups: list[
            DescribeShareGroupOffsetsResponse.DescribeShareGroupOffsetsResponseGroup
        ] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[DescribeShareGroupOffsetsRequest]
RESPONSE: MessageSchema[DescribeShareGroupOffsetsResponse]
