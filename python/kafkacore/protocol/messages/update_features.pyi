# Generated from update_features.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in update_features.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "UpdateFeaturesRequest", "UpdateFeaturesResponse"]

class UpdateFeaturesRequest(KafkaStruct):
    """Kafka's ``UpdateFeaturesRequestData``: versions 0-2, flexible 0+."""

    class FeatureUpdateKey(KafkaStruct):
        feature: str
        max_version_level: int
        allow_downgrade: bool  # versions 0-0
        upgrade_type: int  # versions 1+; default 1
        def __init__(
            self,
            *,
            feature: str = ...,
            max_version_level: int = ...,
            allow_downgrade: bool = ...,
            upgrade_type: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    timeout_ms: int  # versions 0+; default 60000
    feature_updates: list[UpdateFeaturesRequest.FeatureUpdateKey]
    validate_only: bool  # versions 1+; default false
    def __init__(
        self,
        *,
        timeout_ms: int = ...,
        feature_updates: list[UpdateFeaturesRequest.FeatureUpdateKey] = ...,
        validate_only: bool = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class UpdateFeaturesResponse(KafkaStruct):
    """Kafka's ``UpdateFeaturesResponseData``: versions 0-2, flexible 0+."""

    class UpdatableFeatureResult(KafkaStruct):
        feature: str
        error_code: int
        error_message: str | None  # versions 0+; nullable 0+
        def __init__(
            self,
            *,
            feature: str = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    error_message: str | None  # versions 0+; nullable 0+
    results: list[UpdateFeaturesResponse.UpdatableFeatureResult]  # versions 0-1
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        results: list[UpdateFeaturesResponse.UpdatableFeatureResult] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[UpdateFeaturesRequest]
RESPONSE: MessageSchema[UpdateFeaturesResponse]
