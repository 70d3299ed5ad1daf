# Generated from consumer_group_describe.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in consumer_group_describe.py."""

import uuid
from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "ConsumerGroupDescribeRequest", "ConsumerGroupDescribeResponse"]

class ConsumerGroupDescribeRequest(KafkaStruct):
    """Kafka's ``ConsumerGroupDescribeRequestData``: versions 0-1, flexible 0+."""

    group_ids: Sequence[str]
    include_authorized_operations: bool
    def __init__(
        self,
        *,
        group_ids: Sequence[str] = ...,
        include_authorized_operations: bool = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class ConsumerGroupDescribeResponse(KafkaStruct):
    """Kafka's ``ConsumerGroupDescribeResponseData``: versions 0-1, flexible 0+."""

    class DescribedGroup(KafkaStruct):
        error_code: int
        error_message: str | None  # versions 0+; nullable 0+; default null
        group_id: str
        group_state: str
        group_epoch: int
        assignment_epoch: int
        assignor_name: str
        members: list[ConsumerGroupDescribeResponse.Member]
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
            members: list[ConsumerGroupDescribeResponse.Member] = ...,
            authorized_operations: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class Member(KafkaStruct):
        member_id: str
        instance_id: str | None  # versions 0+; nullable 0+; default null
        rack_id: str | None  # versions 0+; nullable 0+; default null
        member_epoch: int
        client_id: str
        client_host: str
        subscribed_topic_names: Sequence[str]
        subscribed_topic_regex: str | None  # versions 0+; nullable 0+; default null
        assignment: ConsumerGroupDescribeResponse.Assignment
        target_assignment: ConsumerGroupDescribeResponse.Assignment
        member_type: int  # versions 1+; default -1
        def __init__(
            self,
            *,
            member_id: str = ...,
            instance_id: str | None = ...,
            rack_id: str | None = ...,
            member_epoch: int = ...,
            client_id: str = ...,
            client_host: str = ...,
            subscribed_topic_names: Sequence[str] = ...,
            subscribed_topic_regex: str | None = ...,
            assignment: ConsumerGroupDescribeResponse.Assignment = ...,
            target_assignment: ConsumerGroupDescribeResponse.Assignment = ...,
            member_type: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class Assignment(KafkaStruct):
        topic_partitions: list[ConsumerGroupDescribeResponse.TopicPartitions]
        def __init__(
            self,
            *,
            topic_partitions: list[ConsumerGroupDescribeResponse.TopicPartitions] = ...,
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
    groups: list[ConsumerGroupDescribeResponse.DescribedGroup]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        groups: list[ConsumerGroupDescribeResponse.DescribedGroup] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[ConsumerGroupDescribeRequest]
RESPONSE: MessageSchema[ConsumerGroupDescribeResponse]
