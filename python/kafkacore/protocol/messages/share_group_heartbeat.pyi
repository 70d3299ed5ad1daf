# Generated from share_group_heartbeat.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in share_group_heartbeat.py."""

import uuid
from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "ShareGroupHeartbeatRequest", "ShareGroupHeartbeatResponse"]

class ShareGroupHeartbeatRequest(KafkaStruct):
    """Kafka's ``ShareGroupHeartbeatRequestData``: versions 1-1, flexible 0+."""

    group_id: str
    member_id: str
    member_epoch: int
    rack_id: str | None  # versions 0+; nullable 0+; default null
    subscribed_topic_names: Sequence[str] | None  # versions 0+; nullable 0+; default null
    def __init__(
        self,
        *,
        group_id: str = ...,
        member_id: str = ...,
        member_epoch: int = ...,
        rack_id: str | None = ...,
        subscribed_topic_names: Sequence[str] | None = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class ShareGroupHeartbeatResponse(KafkaStruct):
    """Kafka's ``ShareGroupHeartbeatResponseData``: versions 1-1, flexible 0+."""

    class Assignment(KafkaStruct):
        topic_partitions: list[ShareGroupHeartbeatResponse.TopicPartitions]
        def __init__(
            self,
            *,
            topic_partitions: list[ShareGroupHeartbeatResponse.TopicPartitions] = ...,
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
    assignment: ShareGroupHeartbeatResponse.Assignment | None
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        member_id: str | None = ...,
        member_epoch: int = ...,
        heartbeat_interval_ms: int = ...,
        assignment: ShareGroupHeartbeatResponse.Assignment | None = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[ShareGroupHeartbeatRequest]
RESPONSE: MessageSchema[ShareGroupHeartbeatResponse]
