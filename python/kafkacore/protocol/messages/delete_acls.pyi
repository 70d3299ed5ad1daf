# Generated from delete_acls.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in delete_acls.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "DeleteAclsRequest", "DeleteAclsResponse"]

class DeleteAclsRequest(KafkaStruct):
    """Kafka's ``DeleteAclsRequestData``: versions 1-3, flexible 2+."""

    class DeleteAclsFilter(KafkaStruct):
        resource_type_filter: int  # versions 1+
        resource_name_filter: str | None  # versions 1+; nullable 1+
        pattern_type_filter: int  # versions 1+; default 3
        principal_filter: str | None  # versions 1+; nullable 1+
        host_filter: str | None  # versions 1+; nullable 1+
        operation: int  # versions 1+
        permission_type: int  # versions 1+
        def __init__(
            self,
            *,
            resource_type_filter: int = ...,
            resource_name_filter: str | None = ...,
            pattern_type_filter: int = ...,
            principal_filter: str | None = ...,
            host_filter: str | None = ...,
            operation: int = ...,
            permission_type: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    filters: list[DeleteAclsRequest.DeleteAclsFilter]  # versions 1+
    def __init__(
        self,
        *,
        filters: list[DeleteAclsRequest.DeleteAclsFilter] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

class DeleteAclsResponse(KafkaStruct):
    """Kafka's ``DeleteAclsResponseData``: versions 1-3, flexible 2+."""

    class DeleteAclsFilterResult(KafkaStruct):
        error_code: int  # versions 1+
        error_message: str | None  # versions 1+; nullable 1+
        matching_acls: list[DeleteAclsResponse.DeleteAclsMatchingAcl]  # versions 1+
        def __init__(
            self,
            *,
            error_code: int = ...,
            error_message: str | None = ...,
            matching_acls: list[DeleteAclsResponse.DeleteAclsMatchingAcl] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class DeleteAclsMatchingAcl(KafkaStruct):
        error_code: int  # versions 1+
        error_message: str | None  # versions 1+; nullable 1+
        resource_type: int  # versions 1+
        resource_name: str  # versions 1+
        pattern_type: int  # versions 1+; default 3
        principal: str  # versions 1+
        host: str  # versions 1+
        operation: int  # versions 1+
        permission_type: int  # versions 1+
        def __init__(
            self,
            *,
            error_code: int = ...,
            error_message: str | None = ...,
            resource_type: int = ...,
            resource_name: str = ...,
            pattern_type: int = ...,
            principal: str = ...,
            host: str = ...,
            operation: int = ...,
            permission_type: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int  # versions 1+
    filter_results: list[DeleteAclsResponse.DeleteAclsFilterResult]  # versions 1+
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        filter_results: list[DeleteAclsResponse.DeleteAclsFilterResult] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[DeleteAclsRequest]
RESPONSE: MessageSchema[DeleteAclsResponse]
