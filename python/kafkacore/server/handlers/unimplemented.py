"""Answers for advertised APIs that are not implemented yet: a response of the right
shape carrying a documented error, never a dropped connection.

* the ACL APIs: SECURITY_DISABLED (no authorizer), as Kafka without one;
* everything else: UNKNOWN_SERVER_ERROR at every level that has an error code.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from kafkacore.protocol import ApiKey, ErrorCode, KafkaStruct, RequestHeader
from kafkacore.protocol.api import api_for
from kafkacore.protocol.errors import message as default_message
from kafkacore.protocol.messages.alter_configs import AlterConfigsRequest, AlterConfigsResponse
from kafkacore.protocol.messages.create_acls import CreateAclsRequest, CreateAclsResponse
from kafkacore.protocol.messages.delete_acls import DeleteAclsRequest, DeleteAclsResponse
from kafkacore.protocol.messages.describe_configs import (
    DescribeConfigsRequest,
    DescribeConfigsResponse,
)
from kafkacore.protocol.messages.incremental_alter_configs import (
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)

__all__ = ["error_response", "unimplemented_response"]

_ACL_APIS = {ApiKey.DESCRIBE_ACLS, ApiKey.CREATE_ACLS, ApiKey.DELETE_ACLS}


def _code_for(api_key: int) -> ErrorCode:
    if api_key in _ACL_APIS:
        return ErrorCode.SECURITY_DISABLED
    return ErrorCode.UNKNOWN_SERVER_ERROR


def error_response(api_key: int, code: int, message: str | None = None) -> KafkaStruct:
    """A response of ``api_key`` with ``code`` in its top-level error fields (empty
    per-item lists): what can be said about a request that could not be decoded."""
    cls: type[KafkaStruct] = api_for(api_key).response.cls
    fields: dict[str, int | str | None] = {}
    if "error_code" in cls.__slots__:
        fields["error_code"] = code
    if "error_message" in cls.__slots__:
        fields["error_message"] = message
    return cls(**fields)


_Result = TypeVar(
    "_Result",
    AlterConfigsResponse.AlterConfigsResourceResponse,
    IncrementalAlterConfigsResponse.AlterConfigsResourceResponse,
)


def _per_resource(
    result: type[_Result],
    resources: Iterable[AlterConfigsRequest.AlterConfigsResource]
    | Iterable[IncrementalAlterConfigsRequest.AlterConfigsResource],
    code: int,
    text: str | None,
) -> list[_Result]:
    """One error result per resource of an AlterConfigs or IncrementalAlterConfigs."""
    return [
        result(
            error_code=code,
            error_message=text,
            resource_type=r.resource_type,
            resource_name=r.resource_name,
        )
        for r in resources
    ]


def unimplemented_response(header: RequestHeader, request: KafkaStruct) -> KafkaStruct:
    """The error answer to a decoded request of an API without a handler: the per-item
    results where the response has them (those responses have no top-level error)."""
    code = _code_for(header.api_key)
    text = default_message(code)
    if isinstance(request, DescribeConfigsRequest):  # one result per resource
        return DescribeConfigsResponse(
            results=[
                DescribeConfigsResponse.DescribeConfigsResult(
                    error_code=code,
                    error_message=text,
                    resource_type=r.resource_type,
                    resource_name=r.resource_name,
                    configs=[],
                )
                for r in request.resources
            ]
        )
    if isinstance(request, AlterConfigsRequest):
        return AlterConfigsResponse(
            responses=_per_resource(
                AlterConfigsResponse.AlterConfigsResourceResponse, request.resources, code, text
            )
        )
    if isinstance(request, IncrementalAlterConfigsRequest):
        return IncrementalAlterConfigsResponse(
            responses=_per_resource(
                IncrementalAlterConfigsResponse.AlterConfigsResourceResponse,
                request.resources,
                code,
                text,
            )
        )
    if isinstance(request, CreateAclsRequest):
        return CreateAclsResponse(
            results=[
                CreateAclsResponse.AclCreationResult(error_code=code, error_message=text)
                for _ in request.creations
            ]
        )
    if isinstance(request, DeleteAclsRequest):
        return DeleteAclsResponse(
            filter_results=[
                DeleteAclsResponse.DeleteAclsFilterResult(
                    error_code=code, error_message=text, matching_acls=[]
                )
                for _ in request.filters
            ]
        )
    return error_response(header.api_key, code, text)
