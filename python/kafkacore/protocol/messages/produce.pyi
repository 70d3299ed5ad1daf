# Generated from produce.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in produce.py."""

import uuid

from kafkacore.protocol.schema import KafkaStruct, MessageSchema
from kafkacore.protocol.types import Records

__all__ = ["REQUEST", "RESPONSE", "ProduceRequest", "ProduceResponse"]

class ProduceRequest(KafkaStruct):
    """Kafka's ``ProduceRequestData``: versions 0-13, flexible 9+."""

    class TopicProduceData(KafkaStruct):
        name: str  # versions 0-12
        topic_id: uuid.UUID  # versions 13+
        partition_data: list[ProduceRequest.PartitionProduceData]
        def __init__(
            self,
            *,
            name: str = ...,
            topic_id: uuid.UUID = ...,
            partition_data: list[ProduceRequest.PartitionProduceData] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionProduceData(KafkaStruct):
        index: int
        records: Records | None  # versions 0+; nullable 0+
        def __init__(
            self,
            *,
            index: int = ...,
            records: Records | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    transactional_id: str | None  # versions 3+; nullable 3+; default null
    acks: int
    timeout_ms: int
    topic_data: list[ProduceRequest.TopicProduceData]
    def __init__(
        self,
        *,
        transactional_id: str | None = ...,
        acks: int = ...,
        timeout_ms: int = ...,
        topic_data: list[ProduceRequest.TopicProduceData] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class ProduceResponse(KafkaStruct):
    """Kafka's ``ProduceResponseData``: versions 0-13, flexible 9+."""

    class TopicProduceResponse(KafkaStruct):
        name: str  # versions 0-12
        topic_id: uuid.UUID  # versions 13+
        partition_responses: list[ProduceResponse.PartitionProduceResponse]
        def __init__(
            self,
            *,
            name: str = ...,
            topic_id: uuid.UUID = ...,
            partition_responses: list[ProduceResponse.PartitionProduceResponse] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class PartitionProduceResponse(KafkaStruct):
        index: int
        error_code: int
        base_offset: int
        log_append_time_ms: int  # versions 2+; default -1
        log_start_offset: int  # versions 5+; default -1
        record_errors: list[ProduceResponse.BatchIndexAndErrorMessage]  # versions 8+
        error_message: str | None  # versions 8+; nullable 8+; default null
        current_leader: ProduceResponse.LeaderIdAndEpoch  # versions 10+; tag 0
        def __init__(
            self,
            *,
            index: int = ...,
            error_code: int = ...,
            base_offset: int = ...,
            log_append_time_ms: int = ...,
            log_start_offset: int = ...,
            record_errors: list[ProduceResponse.BatchIndexAndErrorMessage] = ...,
            error_message: str | None = ...,
            current_leader: ProduceResponse.LeaderIdAndEpoch = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class BatchIndexAndErrorMessage(KafkaStruct):
        batch_index: int  # versions 8+
        batch_index_error_message: str | None  # versions 8+; nullable 8+; default null
        def __init__(
            self,
            *,
            batch_index: int = ...,
            batch_index_error_message: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class LeaderIdAndEpoch(KafkaStruct):
        leader_id: int  # versions 10+; default -1
        leader_epoch: int  # versions 10+; default -1
        def __init__(
            self,
            *,
            leader_id: int = ...,
            leader_epoch: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class NodeEndpoint(KafkaStruct):
        node_id: int  # versions 10+
        host: str  # versions 10+
        port: int  # versions 10+
        rack: str | None  # versions 10+; nullable 10+; default null
        def __init__(
            self,
            *,
            node_id: int = ...,
            host: str = ...,
            port: int = ...,
            rack: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    responses: list[ProduceResponse.TopicProduceResponse]
    throttle_time_ms: int  # versions 1+; default 0
    node_endpoints: list[ProduceResponse.NodeEndpoint]  # versions 10+; tag 0
    def __init__(
        self,
        *,
        responses: list[ProduceResponse.TopicProduceResponse] = ...,
        throttle_time_ms: int = ...,
        node_endpoints: list[ProduceResponse.NodeEndpoint] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[ProduceRequest]
RESPONSE: MessageSchema[ProduceResponse]
