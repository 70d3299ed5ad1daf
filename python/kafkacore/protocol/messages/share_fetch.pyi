# Generated from share_fetch.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in share_fetch.py."""

import uuid
from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema
from kafkacore.protocol.types import Records

__all__ = ["REQUEST", "RESPONSE", "ShareFetchRequest", "ShareFetchResponse"]

class ShareFetchRequest(KafkaStruct):
    """Kafka's ``ShareFetchRequestData``: versions 1-2, flexible 0+."""

    class FetchTopic(KafkaStruct):
        topic_id: uuid.UUID
        partitions: list[ShareFetchRequest.FetchPartition]
        def __init__(
            self,
            *,
            topic_id: uuid.UUID = ...,
            partitions: list[ShareFetchRequest.FetchPartition] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class FetchPartition(KafkaStruct):
        partition_index: int
        partition_max_bytes: int  # versions 0-0
        acknowledgement_batches: list[ShareFetchRequest.AcknowledgementBatch]
        def __init__(
            self,
            *,
            partition_index: int = ...,
            partition_max_bytes: int = ...,
            acknowledgement_batches: list[ShareFetchRequest.AcknowledgementBatch] = ...,
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

    class ForgottenTopic(KafkaStruct):
        topic_id: uuid.UUID
        partitions: Sequence[int]
        def __init__(
            self,
            *,
            topic_id: uuid.UUID = ...,
            partitions: Sequence[int] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    group_id: str | None  # versions 0+; nullable 0+; default null
    member_id: str | None  # versions 0+; nullable 0+
    share_session_epoch: int
    max_wait_ms: int
    min_bytes: int
    max_bytes: int  # versions 0+; default 2147483647
    max_records: int  # versions 1+
    batch_size: int  # versions 1+
    share_acquire_mode: int  # versions 2+; default 0
    is_renew_ack: bool  # versions 2+; default false
    topics: list[ShareFetchRequest.FetchTopic]
    forgotten_topics_data: list[ShareFetchRequest.ForgottenTopic]
    def __init__(
        self,
        *,
        group_id: str | None = ...,
        member_id: str | None = ...,
        share_session_epoch: int = ...,
        max_wait_ms: int = ...,
        min_bytes: int = ...,
        max_bytes: int = ...,
        max_records: int = ...,
        batch_size: int = ...,
        share_acquire_mode: int = ...,
        is_renew_ack: bool = ...,
        topics: list[ShareFetchRequest.FetchTopic] = ...,
        forgotten_topics_data: list[ShareFetchRequest.ForgottenTopic] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class ShareFetchResponse(KafkaStruct):
    """Kafka's ``ShareFetchResponseData``: versions 1-2, flexible 0+."""

    class ShareFetchableTopicResponse(KafkaStruct):
        topic_id: uuid.UUID
        partitions: list[ShareFetchResponse.PartitionData]
        def __init__(
            self,
            *,
            topic_id: uuid.UUID = ...,
            partitions: list[ShareFetchResponse.PartitionData] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionData(KafkaStruct):
        partition_index: int
        error_code: int
        error_message: str | None  # versions 0+; nullable 0+; default null
        acknowledge_error_code: int
        acknowledge_error_message: str | None  # versions 0+; nullable 0+; default null
        current_leader: ShareFetchResponse.LeaderIdAndEpoch
        records: Records | None  # versions 0+; nullable 0-0
        acquired_records: list[ShareFetchResponse.AcquiredRecords]
        def __init__(
            self,
            *,
            partition_index: int = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            acknowledge_error_code: int = ...,
            acknowledge_error_message: str | None = ...,
            current_leader: ShareFetchResponse.LeaderIdAndEpoch = ...,
            records: Records | None = ...,
            acquired_records: list[ShareFetchResponse.AcquiredRecords] = ...,
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

    class AcquiredRecords(KafkaStruct):
        first_offset: int
        last_offset: int
        delivery_count: int
        def __init__(
            self,
            *,
            first_offset: int = ...,
            last_offset: int = ...,
            delivery_count: int = ...,
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
    acquisition_lock_timeout_ms: int  # versions 1+
    responses: list[ShareFetchResponse.ShareFetchableTopicResponse]
    node_endpoints: list[ShareFetchResponse.NodeEndpoint]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        acquisition_lock_timeout_ms: int = ...,
        responses: list[ShareFetchResponse.ShareFetchableTopicResponse] = ...,
        node_endpoints: list[ShareFetchResponse.NodeEndpoint] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[ShareFetchRequest]
RESPONSE: MessageSchema[ShareFetchResponse]
