# Generated from share_acknowledge.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in share_acknowledge.py."""

import uuid
from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "ShareAcknowledgeRequest", "ShareAcknowledgeResponse"]

class ShareAcknowledgeRequest(KafkaStruct):
    """Kafka's ``ShareAcknowledgeRequestData``: versions 1-2, flexible 0+."""

    class AcknowledgeTopic(KafkaStruct):
        topic_id: uuid.UUID
        partitions: list[ShareAcknowledgeRequest.AcknowledgePartition]
        def __init__(
            self,
            *,
            topic_id: uuid.UUID = ...,
            partitions: list[ShareAcknowledgeRequest.AcknowledgePartition] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class AcknowledgePartition(KafkaStruct):
        partition_index: int
        acknowledgement_batches: list[ShareAcknowledgeRequest.AcknowledgementBatch]
        def __init__(
            self,
            *,
            partition_index: int = ...,
            acknowledgement_batches: list[ShareAcknowledgeRequest.AcknowledgementBatch] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class AcknowledgementBatch(KafkaStruct):
        first_offset: int
        last_offset: int
        acknowledge_types: Sequence[int]
        def __init__(
            self,
            *,
            first_offset: int = ...,
            last_offset: int = ...,
            acknowledge_types: Sequence[int] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    group_id: str | None  # versions 0+; nullable 0+; default null
    member_id: str | None  # versions 0+; nullable 0+
    share_session_epoch: int
    is_renew_ack: bool  # versions 2+; default false
    topics: list[ShareAcknowledgeRequest.AcknowledgeTopic]
    def __init__(
        self,
        *,
        group_id: str | None = ...,
        member_id: str | None = ...,
        share_session_epoch: int = ...,
        is_renew_ack: bool = ...,
        topics: list[ShareAcknowledgeRequest.AcknowledgeTopic] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class ShareAcknowledgeResponse(KafkaStruct):
    """Kafka's ``ShareAcknowledgeResponseData``: versions 1-2, flexible 0+."""

    class ShareAcknowledgeTopicResponse(KafkaStruct):
        topic_id: uuid.UUID
        partitions: list[ShareAcknowledgeResponse.PartitionData]
        def __init__(
            self,
            *,
            topic_id: uuid.UUID = ...,
            partitions: list[ShareAcknowledgeResponse.PartitionData] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionData(KafkaStruct):
        partition_index: int
        error_code: int
        error_message: str | None  # versions 0+; nullable 0+; default null
        current_leader: ShareAcknowledgeResponse.LeaderIdAndEpoch
        def __init__(
            self,
            *,
            partition_index: int = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            current_leader: ShareAcknowledgeResponse.LeaderIdAndEpoch = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class LeaderIdAndEpoch(KafkaStruct):
        leader_id: int
        leader_epoch: int
        def __init__(
            self,
            *,
            leader_id: int = ...,
            leader_epoch: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class NodeEndpoint(KafkaStruct):
        node_id: int
        host: str
        port: int
        rack: str | None  # versions 0+; nullable 0+; default null
        def __init__(
            self,
            *,
            node_id: int = ...,
            host: str = ...,
            port: int = ...,
            rack: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    error_message: str | None  # versions 0+; nullable 0+; default null
    acquisition_lock_timeout_ms: int  # versions 2+
    responses: list[ShareAcknowledgeResponse.ShareAcknowledgeTopicResponse]
    node_endpoints: list[ShareAcknowledgeResponse.NodeEndpoint]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        acquisition_lock_timeout_ms: int = ...,
        responses: list[ShareAcknowledgeResponse.ShareAcknowledgeTopicResponse] = ...,
        node_endpoints: list[ShareAcknowledgeResponse.NodeEndpoint] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[ShareAcknowledgeRequest]
RESPONSE: MessageSchema[ShareAcknowledgeResponse]
