# Generated from api_versions.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in api_versions.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "ApiVersionsRequest", "ApiVersionsResponse"]

class ApiVersionsRequest(KafkaStruct):
    """Kafka's ``ApiVersionsRequestData``: versions 0-4, flexible 3+."""

    client_software_name: str  # versions 3+
    client_software_version: str  # versions 3+
    def __init__(
        self,
        *,
        client_software_name: str = ...,
        client_software_version: str = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class ApiVersionsResponse(KafkaStruct):
    """Kafka's ``ApiVersionsResponseData``: versions 0-4, flexible 3+."""

    class ApiVersion(KafkaStruct):
        api_key: int
        min_version: int
        max_version: int
        def __init__(
            self,
            *,
            api_key: int = ...,
            min_version: int = ...,
            max_version: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class SupportedFeatureKey(KafkaStruct):
        name: str  # versions 3+
        min_version: int  # versions 3+
        max_version: int  # versions 3+
        def __init__(
            self,
            *,
            name: str = ...,
            min_version: int = ...,
            max_version: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class FinalizedFeatureKey(KafkaStruct):
        name: str  # versions 3+
        max_version_level: int  # versions 3+
        min_version_level: int  # versions 3+
        def __init__(
            self,
            *,
            name: str = ...,
            max_version_level: int = ...,
            min_version_level: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    error_code: int
    api_keys: list[ApiVersionsResponse.ApiVersion]
    throttle_time_ms: int  # versions 1+
    supported_features: list[ApiVersionsResponse.SupportedFeatureKey]  # versions 3+; tag 0
    finalized_features_epoch: int  # versions 3+; tag 1; default -1
    finalized_features: list[ApiVersionsResponse.FinalizedFeatureKey]  # versions 3+; tag 2
    zk_migration_ready: bool  # versions 3+; tag 3; default false
    def __init__(
        self,
        *,
        error_code: int = ...,
        api_keys: list[ApiVersionsResponse.ApiVersion] = ...,
        throttle_time_ms: int = ...,
        supported_features: list[ApiVersionsResponse.SupportedFeatureKey] = ...,
        finalized_features_epoch: int = ...,
        finalized_features: list[ApiVersionsResponse.FinalizedFeatureKey] = ...,
        zk_migration_ready: bool = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[ApiVersionsRequest]
RESPONSE: MessageSchema[ApiVersionsResponse]
