"""SaslHandshake and SaslAuthenticate as Kafka's ``KafkaApis`` answers them: these handlers
only see requests that the SASL authenticator (:mod:`kafkacore.server.sasl`) did not take,
that is on a PLAINTEXT or SSL listener or on an already authenticated connection. Both
answer ILLEGAL_SASL_STATE (34), as Kafka does."""

from __future__ import annotations

from kafkacore.protocol import ErrorCode
from kafkacore.protocol.messages.sasl_authenticate import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
)
from kafkacore.protocol.messages.sasl_handshake import SaslHandshakeRequest, SaslHandshakeResponse
from kafkacore.server.request_context import RequestContext
from kafkacore.server.services import BrokerServices

__all__ = ["handle_sasl_authenticate", "handle_sasl_handshake"]


def handle_sasl_handshake(
    services: BrokerServices, context: RequestContext, request: SaslHandshakeRequest
) -> SaslHandshakeResponse:
    return SaslHandshakeResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE, mechanisms=[])


def handle_sasl_authenticate(
    services: BrokerServices, context: RequestContext, request: SaslAuthenticateRequest
) -> SaslAuthenticateResponse:
    return SaslAuthenticateResponse(
        error_code=ErrorCode.ILLEGAL_SASL_STATE,
        error_message="SaslAuthenticate request received after successful authentication",
        auth_bytes=b"",
    )
