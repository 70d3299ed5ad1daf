# Generated from create_acls.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in create_acls.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "CreateAclsRequest", "CreateAclsResponse"]

class CreateAclsRequest(KafkaStruct):
    """Kafka's ``CreateAclsRequestData``: versions 1-3, flexible 2+."""

    class AclCreation(KafkaStruct):
        resource_type: int  # versions 1+
        resource_name: str  # versions 1+
        resource_pattern_type: int  # versions 1+; default 3
        principal: str  # versions 1+
        host: str  # versions 1+
        operation: int  # versions 1+
        permission_type: int  # versions 1+
        def __init__(
            self,
            *,
            resource_type: int = ...,
            resource_name: str = ...,
            resource_pattern_type: int = ...,
            principal: str = ...,
            host: str = ...,
            operation: int = ...,
            permission_type: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    creations: list[CreateAclsRequest.AclCreation]  # versions 1+
    def __init__(
        self,
        *,
        creations: list[CreateAclsRequest.AclCreation] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class CreateAclsResponse(KafkaStruct):
    """Kafka's ``CreateAclsResponseData``: versions 1-3, flexible 2+."""

    class AclCreationResult(KafkaStruct):
        error_code: int  # versions 1+
        error_message: str | None  # versions 1+; nullable 1+
        def __init__(
            self,
            *,
            error_code: int = ...,
            error_message: str | None = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int  # versions 1+
    results: list[CreateAclsResponse.AclCreationResult]  # versions 1+
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        results: list[CreateAclsResponse.AclCreationResult] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[CreateAclsRequest]
RESPONSE: MessageSchema[CreateAclsResponse]
