# Generated from share_group_describe.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in share_group_describe.py."""

import uuid
from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "ShareGroupDescribeRequest", "ShareGroupDescribeResponse"]

class ShareGroupDescribeRequest(KafkaStruct):
    """Kafka's ``ShareGroupDescribeRequestData``: versions 1-1, flexible 0+."""

    group_ids: Sequence[str]
    include_authorized_operations: bool
    def __init__(
        self,
        *,
        group_ids: Sequence[str] = ...,
        include_authorized_operations: bool = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class ShareGroupDescribeResponse(KafkaStruct):
    """Kafka's ``ShareGroupDescribeResponseData``: versions 1-1, flexible 0+."""

    class DescribedGroup(KafkaStruct):
        error_code: int
        error_message: str | None  # versions 0+; nullable 0+; default null
        group_id: str
        group_state: str
        group_epoch: int
        assignment_epoch: int
        assignor_name: str
        members: list[ShareGroupDescribeResponse.Member]
        authorized_operations: int  # versions 0+; default -2147483648
        def __init__(
            self,
            *,
            error_code: int = ...,
            error_message: str | None = ...,
            group_id: str = ...,
            group_state: str = ...,
            group_epoch: int = ...,
            assignment_epoch: int = ...,
            assignor_name: str = ...,
            members: list[ShareGroupDescribeResponse.Member] = ...,
            authorized_operations: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class Member(KafkaStruct):
        member_id: str
        rack_id: str | None  # versions 0+; nullable 0+; default null
        member_epoch: int
        client_id: str
        client_host: str
        subscribed_topic_names: Sequence[str]
        assignment: ShareGroupDescribeResponse.Assignment
        def __init__(
            self,
            *,
            member_id: str = ...,
            rack_id: str | None = ...,
            member_epoch: int = ...,
            client_id: str = ...,
            client_host: str = ...,
            subscribed_topic_names: Sequence[str] = ...,
            assignment: ShareGroupDescribeResponse.Assignment = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class Assignment(KafkaStruct):
        topic_partitions: list[ShareGroupDescribeResponse.TopicPartitions]
        def __init__(
            self,
            *,
            topic_partitions: list[ShareGroupDescribeResponse.TopicPartitions] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class TopicPartitions(KafkaStruct):
        topic_id: uuid.UUID
        topic_name: str
        partitions: Sequence[int]
        def __init__(
            self,
            *,
            topic_id: uuid.UUID = ...,
            topic_name: str = ...,
            partitions: Sequence[int] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    groups: list[ShareGroupDescribeResponse.DescribedGroup]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        groups: list[ShareGroupDescribeResponse.DescribedGroup] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[ShareGroupDescribeRequest]
RESPONSE: MessageSchema[ShareGroupDescribeResponse]
