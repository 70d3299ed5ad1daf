# Generated from describe_configs.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in describe_configs.py."""

from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "DescribeConfigsRequest", "DescribeConfigsResponse"]

class DescribeConfigsRequest(KafkaStruct):
    """Kafka's ``DescribeConfigsRequestData``: versions 1-4, flexible 4+."""

    class DescribeConfigsResource(KafkaStruct):
        resource_type: int  # versions 1+
        resource_name: str  # versions 1+
        configuration_keys: Sequence[str] | None  # versions 1+; nullable 1+
        def __init__(
            self,
            *,
            resource_type: int = ...,
            resource_name: str = ...,
            configuration_keys: Sequence[str] | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    resources: list[DescribeConfigsRequest.DescribeConfigsResource]  # versions 1+
    include_synonyms: bool  # versions 1+; default false
    include_documentation: bool  # versions 3+; default false
    def __init__(
        self,
        *,
        resources: list[DescribeConfigsRequest.DescribeConfigsResource] = ...,
        include_synonyms: bool = ...,
        include_documentation: bool = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class DescribeConfigsResponse(KafkaStruct):
    """Kafka's ``DescribeConfigsResponseData``: versions 1-4, flexible 4+."""

    class DescribeConfigsResult(KafkaStruct):
        error_code: int  # versions 1+
        error_message: str | None  # versions 1+; nullable 1+
        resource_type: int  # versions 1+
        resource_name: str  # versions 1+
        configs: list[DescribeConfigsResponse.DescribeConfigsResourceResult]  # versions 1+
        def __init__(
            self,
            *,
            error_code: int = ...,
            error_message: str | None = ...,
            resource_type: int = ...,
            resource_name: str = ...,
            configs: list[DescribeConfigsResponse.DescribeConfigsResourceResult] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class DescribeConfigsResourceResult(KafkaStruct):
        name: str  # versions 1+
        value: str | None  # versions 1+; nullable 1+
        read_only: bool  # versions 1+
        config_source: int  # versions 1+; default -1
        is_sensitive: bool  # versions 1+
        synonyms: list[DescribeConfigsResponse.DescribeConfigsSynonym]  # versions 1+
        config_type: int  # versions 3+; default 0
        documentation: str | None  # versions 3+; nullable 1+
        def __init__(
            self,
            *,
            name: str = ...,
            value: str | None = ...,
            read_only: bool = ...,
            config_source: int = ...,
            is_sensitive: bool = ...,
            synonyms: list[DescribeConfigsResponse.DescribeConfigsSynonym] = ...,
            config_type: int = ...,
            documentation: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class DescribeConfigsSynonym(KafkaStruct):
        name: str  # versions 1+
        value: str | None  # versions 1+; nullable 1+
        source: int  # versions 1+
        def __init__(
            self,
            *,
            name: str = ...,
            value: str | None = ...,
            source: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int  # versions 1+
    results: list[DescribeConfigsResponse.DescribeConfigsResult]  # versions 1+
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        results: list[DescribeConfigsResponse.DescribeConfigsResult] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[DescribeConfigsRequest]
RESPONSE: MessageSchema[DescribeConfigsResponse]
