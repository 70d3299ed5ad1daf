"""Kafka's wire protocol, sans-IO: bytes in, typed request objects out, and back.

* :mod:`~kafkacore.protocol.types`: the primitive types, with length checks;
* :mod:`~kafkacore.protocol.schema`: declarations and the compiled codec;
* :mod:`~kafkacore.protocol.messages`: one declaration per API;
* :mod:`~kafkacore.protocol.declared`: every declared API, served or not;
* :mod:`~kafkacore.protocol.headers`: request/response headers and their versions;
* :mod:`~kafkacore.protocol.api`: the API table and the entry points;
* :mod:`~kafkacore.protocol.errors`: Kafka's error codes and the codec's exceptions.
"""

from __future__ import annotations

from kafkacore.protocol.api import (
    APIS,
    APIS_BY_NAME,
    CONTROLLER_APIS,
    Api,
    ApiKey,
    api_versions_response,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
    unsupported_api_versions_response,
)
from kafkacore.protocol.errors import ErrorCode, ProtocolError, UnknownApiKey, UnsupportedVersion
from kafkacore.protocol.headers import RequestHeader, ResponseHeader
from kafkacore.protocol.schema import KafkaStruct, MessageSchema
from kafkacore.protocol.types import MalformedMessage

__all__ = [
    "APIS",
    "APIS_BY_NAME",
    "CONTROLLER_APIS",
    "Api",
    "ApiKey",
    "ErrorCode",
    "KafkaStruct",
    "MalformedMessage",
    "MessageSchema",
    "ProtocolError",
    "RequestHeader",
    "ResponseHeader",
    "UnknownApiKey",
    "UnsupportedVersion",
    "api_versions_response",
    "decode_request",
    "decode_response",
    "encode_request",
    "encode_response",
    "unsupported_api_versions_response",
]
