# Generated from alter_client_quotas.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in alter_client_quotas.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "AlterClientQuotasRequest", "AlterClientQuotasResponse"]

class AlterClientQuotasRequest(KafkaStruct):
    """Kafka's ``AlterClientQuotasRequestData``: versions 0-1, flexible 1+."""

    class EntryData(KafkaStruct):
        entity: list[AlterClientQuotasRequest.EntityData]
        ops: list[AlterClientQuotasRequest.OpData]
        def __init__(
            self,
            *,
            entity: list[AlterClientQuotasRequest.EntityData] = ...,
            ops: list[AlterClientQuotasRequest.OpData] = ...,
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

    class OpData(KafkaStruct):
        key: str
        value: float
        remove: bool
        def __init__(
            self,
            *,
            key: str = ...,
            value: float = ...,
            remove: bool = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    entries: list[AlterClientQuotasRequest.EntryData]
    validate_only: bool
    def __init__(
        self,
        *,
        entries: list[AlterClientQuotasRequest.EntryData] = ...,
        validate_only: bool = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class AlterClientQuotasResponse(KafkaStruct):
    """Kafka's ``AlterClientQuotasResponseData``: versions 0-1, flexible 1+."""

    class EntryData(KafkaStruct):
        error_code: int
        error_message: str | None  # versions 0+; nullable 0+
        entity: list[AlterClientQuotasResponse.EntityData]
        def __init__(
            self,
            *,
            error_code: int = ...,
            error_message: str | None = ...,
            entity: list[AlterClientQuotasResponse.EntityData] = ...,
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

    throttle_time_ms: int
    entries: list[AlterClientQuotasResponse.EntryData]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        entries: list[AlterClientQuotasResponse.EntryData] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[AlterClientQuotasRequest]
RESPONSE: MessageSchema[AlterClientQuotasResponse]
