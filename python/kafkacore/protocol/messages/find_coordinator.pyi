# Generated from find_coordinator.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in find_coordinator.py."""

from collections.abc import Sequence

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "FindCoordinatorRequest", "FindCoordinatorResponse"]

class FindCoordinatorRequest(KafkaStruct):
    """Kafka's ``FindCoordinatorRequestData``: versions 0-6, flexible 3+."""

    key: str  # versions 0-3
    key_type: int  # versions 1+; default 0
    coordinator_keys: Sequence[str]  # versions 4+
    def __init__(
        self,
        *,
        key: str = ...,
        key_type: int = ...,
        coordinator_keys: Sequence[str] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class FindCoordinatorResponse(KafkaStruct):
    """Kafka's ``FindCoordinatorResponseData``: versions 0-6, flexible 3+."""

    class Coordinator(KafkaStruct):
        key: str  # versions 4+
        node_id: int  # versions 4+
        host: str  # versions 4+
        port: int  # versions 4+
        error_code: int  # versions 4+
        error_message: str | None  # versions 4+; nullable 4+
        def __init__(
            self,
            *,
            key: str = ...,
            node_id: int = ...,
            host: str = ...,
            port: int = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int  # versions 1+
    error_code: int  # versions 0-3
    error_message: str | None  # versions 1-3; nullable 1-3
    node_id: int  # versions 0-3
    host: str  # versions 0-3
    port: int  # versions 0-3
    coordinators: list[FindCoordinatorResponse.Coordinator]  # versions 4+
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        node_id: int = ...,
        host: str = ...,
        port: int = ...,
        coordinators: list[FindCoordinatorResponse.Coordinator] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[FindCoordinatorRequest]
RESPONSE: MessageSchema[FindCoordinatorResponse]
