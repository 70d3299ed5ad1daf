"""SaslHandshake and SaslAuthenticate as Kafka's ``KafkaApis`` answers them: these handlers
only see requests that the SASL authenticator (:mod:`kafkacore.server.sasl`) did not take,
that is on a PLAINTEXT or SSL listener or on an already authenticated connection. Both
answer ILLEGAL_SASL_STATE (34), as Kafka does."""

from __future__ import annotations

from typing import Any

from kafkacore.protocol import APIS, ApiKey, ErrorCode
from kafkacore.server.request_context import RequestContext
from kafkacore.server.services import BrokerServices

__all__ = ["handle_sasl_authenticate", "handle_sasl_handshake"]

_HANDSHAKE_RESPONSE: Any = APIS[ApiKey.SASL_HANDSHAKE].response.cls
_AUTHENTICATE_RESPONSE: Any = APIS[ApiKey.SASL_AUTHENTICATE].response.cls


def handle_sasl_handshake(services: BrokerServices, context: RequestContext, request: Any) -> Any:
    return _HANDSHAKE_RESPONSE(error_code=ErrorCode.ILLEGAL_SASL_STATE, mechanisms=[])


def handle_sasl_authenticate(
    services: BrokerServices, context: RequestContext, request: Any
) -> Any:
    return _AUTHENTICATE_RESPONSE(
        error_code=ErrorCode.ILLEGAL_SASL_STATE,
        error_message="SaslAuthenticate request received after successful authentication",
        auth_bytes=b"",
    )
