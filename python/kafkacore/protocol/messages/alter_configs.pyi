# Generated from alter_configs.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in alter_configs.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "AlterConfigsRequest", "AlterConfigsResponse"]

class AlterConfigsRequest(KafkaStruct):
    """Kafka's ``AlterConfigsRequestData``: versions 0-2, flexible 2+."""

    class AlterConfigsResource(KafkaStruct):
        resource_type: int
        resource_name: str
        configs: list[AlterConfigsRequest.AlterableConfig]
        def __init__(
            self,
            *,
            resource_type: int = ...,
            resource_name: str = ...,
            configs: list[AlterConfigsRequest.AlterableConfig] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class AlterableConfig(KafkaStruct):
        name: str
        value: str | None  # versions 0+; nullable 0+
        def __init__(
            self,
            *,
            name: str = ...,
            value: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    resources: list[AlterConfigsRequest.AlterConfigsResource]
    validate_only: bool
    def __init__(
        self,
        *,
        resources: list[AlterConfigsRequest.AlterConfigsResource] = ...,
        validate_only: bool = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class AlterConfigsResponse(KafkaStruct):
    """Kafka's ``AlterConfigsResponseData``: versions 0-2, flexible 2+."""

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
    responses: list[AlterConfigsResponse.AlterConfigsResourceResponse]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        responses: list[AlterConfigsResponse.AlterConfigsResourceResponse] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[AlterConfigsRequest]
RESPONSE: MessageSchema[AlterConfigsResponse]
