# Generated from incremental_alter_configs.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in incremental_alter_configs.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = [
    "REQUEST",
    "RESPONSE",
    "IncrementalAlterConfigsRequest",
    "IncrementalAlterConfigsResponse",
]

class IncrementalAlterConfigsRequest(KafkaStruct):
    """Kafka's ``IncrementalAlterConfigsRequestData``: versions 0-1, flexible 1+."""

    class AlterConfigsResource(KafkaStruct):
        resource_type: int
        resource_name: str
        configs: list[IncrementalAlterConfigsRequest.AlterableConfig]
        def __init__(
            self,
            *,
            resource_type: int = ...,
            resource_name: str = ...,
            configs: list[IncrementalAlterConfigsRequest.AlterableConfig] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class AlterableConfig(KafkaStruct):
        name: str
        config_operation: int
        value: str | None  # versions 0+; nullable 0+
        def __init__(
            self,
            *,
            name: str = ...,
            config_operation: int = ...,
            value: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    resources: list[IncrementalAlterConfigsRequest.AlterConfigsResource]
    validate_only: bool
    def __init__(
        self,
        *,
        resources: list[IncrementalAlterConfigsRequest.AlterConfigsResource] = ...,
        validate_only: bool = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class IncrementalAlterConfigsResponse(KafkaStruct):
    """Kafka's ``IncrementalAlterConfigsResponseData``: versions 0-1, flexible 1+."""

    class AlterConfigsResourceResponse(KafkaStruct):
        error_code: int
        error_message: str | None  # versions 0+; nullable 0+
        resource_type: int
        resource_name: str
        def __init__(
            self,
            *,
            error_code: int = ...,
            error_message: str | None = ...,
            resource_type: int = ...,
            resource_name: str = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    responses: list[IncrementalAlterConfigsResponse.AlterConfigsResourceResponse]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        responses: list[IncrementalAlterConfigsResponse.AlterConfigsResourceResponse] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[IncrementalAlterConfigsRequest]
RESPONSE: MessageSchema[IncrementalAlterConfigsResponse]
