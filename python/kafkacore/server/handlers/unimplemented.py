"""Answers for advertised APIs that are not implemented yet: a response of the right
shape carrying a documented error, never a dropped connection.

* the ACL APIs: SECURITY_DISABLED (no authorizer), as Kafka without one;
* everything else: UNKNOWN_SERVER_ERROR at every level that has an error code.

:func:`request_error_response` is the shape itself (Kafka's
``AbstractRequest.getErrorResponse``): every item of the request answered with one error,
as a KRaft broker answers a forwarded request the controller did not.
"""

from __future__ import annotations

from typing import Any

from kafkacore.protocol import APIS, ApiKey, ErrorCode, RequestHeader
from kafkacore.protocol.errors import message as default_message

__all__ = ["error_response", "request_error_response", "unimplemented_response"]

_ACL_APIS = {ApiKey.DESCRIBE_ACLS, ApiKey.CREATE_ACLS, ApiKey.DELETE_ACLS}


def _code_for(api_key: int) -> ErrorCode:
    if api_key in _ACL_APIS:
        return ErrorCode.SECURITY_DISABLED
    return ErrorCode.UNKNOWN_SERVER_ERROR


def error_response(api_key: int, code: int, message: str | None = None) -> Any:
    """A response of ``api_key`` with ``code`` in its top-level error fields (empty
    per-item lists): what can be said about a request that could not be decoded."""
    cls: Any = APIS[api_key].response.cls
    response = cls()
    if "error_code" in cls.__slots__:
        response.error_code = code
    if "error_message" in cls.__slots__:
        response.error_message = message
    return response


def unimplemented_response(header: RequestHeader, request: Any) -> Any:
    """The error answer to a decoded request of an API without a handler."""
    code = _code_for(header.api_key)
    return request_error_response(header, request, code, default_message(code))


def request_error_response(
    header: RequestHeader, request: Any, code: int, text: str | None = None
) -> Any:
    """``request`` answered with ``code`` (and ``text``) at its top level and for each of
    its items (Kafka's ``getErrorResponse``)."""
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
    elif key == ApiKey.CREATE_TOPICS:
        response.topics = [
            cls.CreatableTopicResult(name=t.name, error_code=code, error_message=text)
            for t in request.topics
        ]
    elif key == ApiKey.DELETE_TOPICS:
        if header.api_version >= 6:
            response.responses = [
                cls.DeletableTopicResult(
                    name=t.name, topic_id=t.topic_id, error_code=code, error_message=text
                )
                for t in request.topics
            ]
        else:
            response.responses = [
                cls.DeletableTopicResult(name=name, error_code=code, error_message=text)
                for name in request.topic_names
            ]
    elif key == ApiKey.CREATE_PARTITIONS:
        response.results = [
            cls.CreatePartitionsTopicResult(name=t.name, error_code=code, error_message=text)
            for t in request.topics
        ]
    elif key == ApiKey.ALTER_CLIENT_QUOTAS:
        response.entries = [
            cls.EntryData(
                error_code=code,
                error_message=text,
                entity=[
                    cls.EntityData(entity_type=e.entity_type, entity_name=e.entity_name)
                    for e in entry.entity
                ],
            )
            for entry in request.entries
        ]
    elif key == ApiKey.ALTER_USER_SCRAM_CREDENTIALS:
        users = dict.fromkeys(
            [d.name for d in request.deletions] + [u.name for u in request.upsertions]
        )
        response.results = [
            cls.AlterUserScramCredentialsResult(user=user, error_code=code, error_message=text)
            for user in users
        ]
    return response
