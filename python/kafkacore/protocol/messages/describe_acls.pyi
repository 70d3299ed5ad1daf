# Generated from describe_acls.py by `python -m kafkacore.protocol.stubgen`:
# do not edit (tests/test_protocol_stubs.py fails when this is stale).

"""Typed classes of the messages declared in describe_acls.py."""

from kafkacore.protocol.schema import KafkaStruct, MessageSchema

__all__ = ["REQUEST", "RESPONSE", "DescribeAclsRequest", "DescribeAclsResponse"]

class DescribeAclsRequest(KafkaStruct):
    """Kafka's ``DescribeAclsRequestData``: versions 1-3, flexible 2+."""

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

class DescribeAclsResponse(KafkaStruct):
    """Kafka's ``DescribeAclsResponseData``: versions 1-3, flexible 2+."""

    class DescribeAclsResource(KafkaStruct):
        resource_type: int  # versions 1+
        resource_name: str  # versions 1+
        pattern_type: int  # versions 1+; default 3
        acls: list[DescribeAclsResponse.AclDescription]  # versions 1+
        def __init__(
            self,
            *,
            resource_type: int = ...,
            resource_name: str = ...,
            pattern_type: int = ...,
            acls: list[DescribeAclsResponse.AclDescription] = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    class AclDescription(KafkaStruct):
        principal: str  # versions 1+
        host: str  # versions 1+
        operation: int  # versions 1+
        permission_type: int  # versions 1+
        def __init__(
            self,
            *,
            principal: str = ...,
            host: str = ...,
            operation: int = ...,
            permission_type: int = ...,
            _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
        ) -> None: ...

    throttle_time_ms: int  # versions 1+
    error_code: int  # versions 1+
    error_message: str | None  # versions 1+; nullable 1+
    resources: list[DescribeAclsResponse.DescribeAclsResource]  # versions 1+
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        resources: list[DescribeAclsResponse.DescribeAclsResource] = ...,
        _unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ...,
    ) -> None: ...

REQUEST: MessageSchema[DescribeAclsRequest]
RESPONSE: MessageSchema[DescribeAclsResponse]
