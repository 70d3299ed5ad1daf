# Generated from consumer_group_heartbeat.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in consumer_group_heartbeat.py."""

import uuid
from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "ConsumerGroupHeartbeatRequest", "ConsumerGroupHeartbeatResponse"]

class ConsumerGroupHeartbeatRequest(KafkaStruct):
    """Kafka's ``ConsumerGroupHeartbeatRequestData``: versions 0-1, flexible 0+."""

    class TopicPartitions(KafkaStruct):
        topic_id: uuid.UUID
        partitions: Sequence[int]
        def __init__(
            self,
            *,
            topic_id: uuid.UUID = ...,
            partitions: Sequence[int] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None  # versions 0+; nullable 0+; default null
    rack_id: str | None  # versions 0+; nullable 0+; default null
    rebalance_timeout_ms: int  # versions 0+; default -1
    subscribed_topic_names: Sequence[str] | None  # versions 0+; nullable 0+; default null
    subscribed_topic_regex: str | None  # versions 1+; nullable 1+; default null
    server_assignor: str | None  # versions 0+; nullable 0+; default null
    # versions 0+; nullable 0+; default null
    topic_partitions: list[ConsumerGroupHeartbeatRequest.TopicPartitions] | None
    def __init__(
        self,
        *,
        group_id: str = ...,
        member_id: str = ...,
        member_epoch: int = ...,
        instance_id: str | None = ...,
        rack_id: str | None = ...,
        rebalance_timeout_ms: int = ...,
        subscribed_topic_names: Sequence[str] | None = ...,
        subscribed_topic_regex: str | None = ...,
        server_assignor: str | None = ...,
        topic_partitions: list[ConsumerGroupHeartbeatRequest.TopicPartitions] | None = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class ConsumerGroupHeartbeatResponse(KafkaStruct):
    """Kafka's ``ConsumerGroupHeartbeatResponseData``: versions 0-1, flexible 0+."""

    class Assignment(KafkaStruct):
        topic_partitions: list[ConsumerGroupHeartbeatResponse.TopicPartitions]
        def __init__(
            self,
            *,
            topic_partitions: list[ConsumerGroupHeartbeatResponse.TopicPartitions] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class TopicPartitions(KafkaStruct):
        topic_id: uuid.UUID
        partitions: Sequence[int]
        def __init__(
            self,
            *,
            topic_id: uuid.UUID = ...,
            partitions: Sequence[int] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    error_message: str | None  # versions 0+; nullable 0+; default null
    member_id: str | None  # versions 0+; nullable 0+; default null
    member_epoch: int
    heartbeat_interval_ms: int
    # versions 0+; nullable 0+; default null
    assignment: ConsumerGroupHeartbeatResponse.Assignment | None
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        member_id: str | None = ...,
        member_epoch: int = ...,
        heartbeat_interval_ms: int = ...,
        assignment: ConsumerGroupHeartbeatResponse.Assignment | None = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[ConsumerGroupHeartbeatRequest]
RESPONSE: MessageSchema[ConsumerGroupHeartbeatResponse]
