# Generated from describe_client_quotas.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in describe_client_quotas.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "DescribeClientQuotasRequest", "DescribeClientQuotasResponse"]

class DescribeClientQuotasRequest(KafkaStruct):
    """Kafka's ``DescribeClientQuotasRequestData``: versions 0-1, flexible 1+."""

    class ComponentData(KafkaStruct):
        entity_type: str
        match_type: int
        match: str | None  # versions 0+; nullable 0+
        def __init__(
            self,
            *,
            entity_type: str = ...,
            match_type: int = ...,
            match: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    components: list[DescribeClientQuotasRequest.ComponentData]
    strict: bool
    def __init__(
        self,
        *,
        components: list[DescribeClientQuotasRequest.ComponentData] = ...,
        strict: bool = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class DescribeClientQuotasResponse(KafkaStruct):
    """Kafka's ``DescribeClientQuotasResponseData``: versions 0-1, flexible 1+."""

    class EntryData(KafkaStruct):
        entity: list[DescribeClientQuotasResponse.EntityData]
        values: list[DescribeClientQuotasResponse.ValueData]
        def __init__(
            self,
            *,
            entity: list[DescribeClientQuotasResponse.EntityData] = ...,
            values: list[DescribeClientQuotasResponse.ValueData] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class EntityData(KafkaStruct):
        entity_type: str
        entity_name: str | None  # versions 0+; nullable 0+
        def __init__(
            self,
            *,
            entity_type: str = ...,
            entity_name: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class ValueData(KafkaStruct):
        key: str
        value: float
        def __init__(
            self,
            *,
            key: str = ...,
            value: float = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    error_message: str | None  # versions 0+; nullable 0+
    entries: list[DescribeClientQuotasResponse.EntryData] | None  # versions 0+; nullable 0+
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        entries: list[DescribeClientQuotasResponse.EntryData] | None = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[DescribeClientQuotasRequest]
RESPONSE: MessageSchema[DescribeClientQuotasResponse]
