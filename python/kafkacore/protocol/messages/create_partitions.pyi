# Generated from create_partitions.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in create_partitions.py."""

from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "CreatePartitionsRequest", "CreatePartitionsResponse"]

class CreatePartitionsRequest(KafkaStruct):
    """Kafka's ``CreatePartitionsRequestData``: versions 0-3, flexible 2+."""

    class CreatePartitionsTopic(KafkaStruct):
        name: str
        count: int
        # versions 0+; nullable 0+
        assignments: list[CreatePartitionsRequest.CreatePartitionsAssignment] | None
        def __init__(
            self,
            *,
            name: str = ...,
            count: int = ...,
            assignments: list[CreatePartitionsRequest.CreatePartitionsAssignment] | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class CreatePartitionsAssignment(KafkaStruct):
        broker_ids: Sequence[int]
        def __init__(
            self,
            *,
            broker_ids: Sequence[int] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    topics: list[CreatePartitionsRequest.CreatePartitionsTopic]
    timeout_ms: int
    validate_only: bool
    def __init__(
        self,
        *,
        topics: list[CreatePartitionsRequest.CreatePartitionsTopic] = ...,
        timeout_ms: int = ...,
        validate_only: bool = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class CreatePartitionsResponse(KafkaStruct):
    """Kafka's ``CreatePartitionsResponseData``: versions 0-3, flexible 2+."""

    class CreatePartitionsTopicResult(KafkaStruct):
        name: str
        error_code: int
        error_message: str | None  # versions 0+; nullable 0+; default null
        def __init__(
            self,
            *,
            name: str = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    results: list[CreatePartitionsResponse.CreatePartitionsTopicResult]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        results: list[CreatePartitionsResponse.CreatePartitionsTopicResult] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[CreatePartitionsRequest]
RESPONSE: MessageSchema[CreatePartitionsResponse]
