"""Answers for advertised APIs that are not implemented yet: a response of the right
shape carrying a documented error, never a dropped connection.

* the ACL APIs: SECURITY_DISABLED (no authorizer), as Kafka without one;
* everything else: UNKNOWN_SERVER_ERROR at every level that has an error code.
"""

from __future__ import annotations

from typing import Any

from kafkacore.protocol import ApiKey, ErrorCode, RequestHeader
from kafkacore.protocol.api import api_for
from kafkacore.protocol.errors import message as default_message

__all__ = ["error_response", "unimplemented_response"]

_ACL_APIS = {ApiKey.DESCRIBE_ACLS, ApiKey.CREATE_ACLS, ApiKey.DELETE_ACLS}


def _code_for(api_key: int) -> ErrorCode:
    if api_key in _ACL_APIS:
        return ErrorCode.SECURITY_DISABLED
    return ErrorCode.UNKNOWN_SERVER_ERROR


def error_response(api_key: int, code: int, message: str | None = None) -> Any:
    """A response of ``api_key`` with ``code`` in its top-level error fields (empty
    per-item lists): what can be said about a request that could not be decoded."""
    cls: Any = api_for(api_key).response.cls
    response = cls()
    if "error_code" in cls.__slots__:
        response.error_code = code
    if "error_message" in cls.__slots__:
        response.error_message = message
    return response


def unimplemented_response(header: RequestHeader, request: Any) -> Any:
    """The error answer to a decoded request of an API without a handler."""
    code = _code_for(header.api_key)
    text = default_message(code)
    response = error_response(header.api_key, code, text)
    cls: Any = type(response)
    key = header.api_key
    if key == ApiKey.DESCRIBE_CONFIGS:  # one result per resource
        response.results = [
            cls.DescribeConfigsResult(
                error_code=code,
                error_message=text,
                resource_type=r.resource_type,
                resource_name=r.resource_name,
                configs=[],
            )
            for r in request.resources
        ]
    elif key in (ApiKey.ALTER_CONFIGS, ApiKey.INCREMENTAL_ALTER_CONFIGS):
        item = cls.AlterConfigsResourceResponse
        response.responses = [
            item(
                error_code=code,
                error_message=text,
                resource_type=r.resource_type,
                resource_name=r.resource_name,
            )
            for r in request.resources
        ]
    elif key == ApiKey.CREATE_ACLS:
        response.results = [
            cls.AclCreationResult(error_code=code, error_message=text) for _ in request.creations
        ]
    elif key == ApiKey.DELETE_ACLS:
        response.filter_results = [
            cls.DeleteAclsFilterResult(error_code=code, error_message=text, matching_acls=[])
            for _ in request.filters
        ]
    return response
