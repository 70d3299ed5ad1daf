"""SASL on a listener: Kafka's ``SaslServerAuthenticator`` state machine, one per connection
of a SASL_PLAINTEXT or SASL_SSL listener, in front of the request channel.

States (Kafka's names): ``HANDSHAKE_OR_VERSIONS_REQUEST`` -> ``HANDSHAKE_REQUEST`` ->
``AUTHENTICATE`` -> ``COMPLETE`` (or ``FAILED``); re-authentication (KIP-368) starts again
from ``REAUTH_PROCESS_HANDSHAKE``.

* ApiVersions (once, before the handshake) is answered with the full API list.
* SaslHandshake v0-1: an enabled mechanism is answered with error 0 and the enabled list;
  any other gets UNSUPPORTED_SASL_MECHANISM (33) with the enabled list, then the connection
  closes. v0 means the tokens that follow are raw size-prefixed frames without a Kafka
  header (the legacy path); v1 means SaslAuthenticate requests.
* SaslAuthenticate v0-2: each token goes to the mechanism (PLAIN: :mod:`.security.plain`;
  SCRAM-SHA-256/512: :class:`~kafkacore.security.scram.ScramServer` over
  ``services.scram_credentials``). The final response carries ``SessionLifetimeMs``
  (``connections.max.reauth.ms``, per listener and mechanism). A failed login gets
  SASL_AUTHENTICATION_FAILED (58) with Kafka's message.
* Any other request in the handshake states closes the connection without a response
  ("Unexpected Kafka request of type X during SASL handshake"); in ``AUTHENTICATE`` it is
  answered with that API's response carrying ILLEGAL_SASL_STATE (34), then closed.
* Every failure is answered (if at all) and closed after
  ``connection.failed.authentication.delay.ms``, as Kafka's delayed close.
* Until authenticated, frames above ``sasl.server.max.receive.size`` close the connection
  before they are read (the transport checks :attr:`ConnectionInfo.max_frame_bytes`).
* After authentication the principal is ``User:<authorization id>``; a connection whose
  session expired (``connections.max.reauth.ms``) is closed at its next request other
  than a re-authentication, and a re-authentication must keep the mechanism and principal.

Thread-safety: one authenticator per connection, driven by that connection's task on the
event loop.
"""

from __future__ import annotations

import logging
import struct
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from kafkacore.config.defs import ConfigError
from kafkacore.protocol import ApiKey, ErrorCode, KafkaStruct, ProtocolError, decode_request
from kafkacore.protocol.messages.sasl_authenticate import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
)
from kafkacore.protocol.messages.sasl_handshake import SaslHandshakeRequest, SaslHandshakeResponse
from kafkacore.security.jaas import PLAIN_LOGIN_MODULE, SCRAM_LOGIN_MODULE, parse_jaas_config
from kafkacore.security.plain import PlainAuthenticationError, PlainServer, jaas_users
from kafkacore.security.scram import (
    ScramAuthenticationError,
    ScramIllegalStateError,
    ScramMechanism,
    ScramServer,
)
from kafkacore.server.handlers.unimplemented import error_response
from kafkacore.server.network import CLOSE, ConnectionInfo, Outcome, Part

if TYPE_CHECKING:
    from kafkacore.config import BrokerConfig
    from kafkacore.protocol import RequestHeader
    from kafkacore.server.services import BrokerServices

__all__ = [
    "SUPPORTED_MECHANISMS",
    "SaslAuthenticator",
    "SaslListenerSettings",
    "sasl_listener_settings",
]

logger = logging.getLogger("kafkacore.sasl")

SUPPORTED_MECHANISMS: Final = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
_SIZE = struct.Struct(">i")
_HEADER_KEY = struct.Struct(">h")


@dataclass(frozen=True)
class SaslListenerSettings:
    """What one SASL listener accepts (resolved with the listener and mechanism prefixes)."""

    listener: str
    mechanisms: tuple[str, ...]
    plain_users: Mapping[str, str]
    reauth_ms: Mapping[str, int]
    max_receive_size: int
    failed_authentication_delay_ms: int

    def __repr__(self) -> str:  # plain_users holds passwords
        return f"SaslListenerSettings({self.listener!r}, mechanisms={self.mechanisms})"


def _jaas_key(config: BrokerConfig, listener: str, mechanism: str) -> str:
    prefix = f"listener.name.{listener.lower()}."
    for key in (f"{prefix}{mechanism.lower()}.sasl.jaas.config", f"{prefix}sasl.jaas.config"):
        if key in config.originals:
            return key
    return "sasl.jaas.config"


def sasl_listener_settings(config: BrokerConfig, listener: str) -> SaslListenerSettings:
    """The SASL settings of ``listener``; :class:`ConfigError` (key, hidden value,
    constraint) for a mechanism kafkacore does not implement or a missing/bad JAAS config."""
    mechanisms = list(config.listener_value(listener, "sasl.enabled.mechanisms") or [])
    prefixed = f"listener.name.{listener.lower()}.sasl.enabled.mechanisms"
    key = prefixed if prefixed in config.originals else "sasl.enabled.mechanisms"
    for mechanism in mechanisms:
        if mechanism not in SUPPORTED_MECHANISMS:
            raise ConfigError(
                key,
                mechanisms,
                f"SASL mechanism {mechanism} is not supported by kafkacore "
                f"(supported: {', '.join(SUPPORTED_MECHANISMS)})",
            )
    if not mechanisms:
        raise ConfigError(key, mechanisms, "a SASL listener needs at least one mechanism")
    plain_users: dict[str, str] = {}
    for mechanism in mechanisms:
        jaas = config.listener_value(listener, "sasl.jaas.config", mechanism)
        jaas_key = _jaas_key(config, listener, mechanism)
        if mechanism == "PLAIN":
            if jaas is None:
                raise ConfigError(
                    f"listener.name.{listener.lower()}.plain.sasl.jaas.config",
                    None,
                    f"required on listener {listener} for PLAIN: "
                    f'{PLAIN_LOGIN_MODULE} required user_<name>="<password>" ...;',
                )
            entry = parse_jaas_config(jaas, jaas_key, expected_module=PLAIN_LOGIN_MODULE)
            plain_users = jaas_users(entry.options)
        elif jaas is not None:
            parse_jaas_config(jaas, jaas_key, expected_module=SCRAM_LOGIN_MODULE)
    reauth = {
        m: int(config.listener_value(listener, "connections.max.reauth.ms", m) or 0)
        for m in mechanisms
    }
    return SaslListenerSettings(
        listener=listener,
        mechanisms=tuple(mechanisms),
        plain_users=plain_users,
        reauth_ms=reauth,
        max_receive_size=config.sasl_server_max_receive_size,
        failed_authentication_delay_ms=config.connection_failed_authentication_delay_ms,
    )


# what the channel does with a decoded request it should serve normally (ApiVersions)
Serve = Callable[[bytes, ConnectionInfo], Awaitable[Outcome]]
Encode = Callable[["RequestHeader", KafkaStruct], list[Part]]


class SaslAuthenticator:
    """One connection's authenticator; see the module documentation."""

    HANDSHAKE_OR_VERSIONS = "HANDSHAKE_OR_VERSIONS_REQUEST"
    HANDSHAKE = "HANDSHAKE_REQUEST"
    AUTHENTICATE = "AUTHENTICATE"
    REAUTH_HANDSHAKE = "REAUTH_PROCESS_HANDSHAKE"
    REAUTH_BAD_MECHANISM = "REAUTH_BAD_MECHANISM"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"

    def __init__(
        self,
        settings: SaslListenerSettings,
        services: BrokerServices,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.services = services
        self._clock = clock
        self.state = self.HANDSHAKE_OR_VERSIONS
        self.mechanism: str | None = None
        self._server: PlainServer | ScramServer | None = None
        self._legacy = False  # SaslHandshake v0: raw token frames
        self.principal_name: str | None = None
        self.session_expiry: float | None = None  # clock() seconds
        self._previous: tuple[str, str] | None = None  # re-authenticating: (mechanism, name)
        self._bad_mechanism_message = ""

    # -- what the channel asks ---------------------------------------------------------

    @property
    def authenticated(self) -> bool:
        """Requests are served normally (also true while a re-authentication's old session
        still holds: the state machine only takes SASL frames then)."""
        return self.state == self.COMPLETE

    def session_expired(self) -> bool:
        return self.session_expiry is not None and self._clock() >= self.session_expiry

    def begin_reauthentication(self) -> bool:
        """A SaslHandshake on an authenticated connection: a KIP-368 re-authentication if
        this session has a lifetime (else the handshake goes to the API handler, 34)."""
        if self.state != self.COMPLETE or self.session_expiry is None:
            return False
        assert self.mechanism is not None and self.principal_name is not None
        self._previous = (self.mechanism, self.principal_name)
        self.state = self.REAUTH_HANDSHAKE
        return True

    async def process(
        self, frame: bytes, connection: ConnectionInfo, serve: Serve, encode: Encode
    ) -> Outcome:
        """One frame while not (or being re-) authenticated."""
        if self.state == self.AUTHENTICATE and self._legacy:
            return self._legacy_token(frame, connection)
        if self.state == self.REAUTH_BAD_MECHANISM:
            logger.info("%s: %s", connection.connection_id, self._bad_mechanism_message)
            return self._fail(connection, None)
        try:
            header, request = decode_request(frame)
        except ProtocolError as exc:
            if (
                exc.api_key == ApiKey.API_VERSIONS
                and self.state == self.HANDSHAKE_OR_VERSIONS
                and exc.correlation_id is not None
            ):
                return await serve(frame, connection)  # UNSUPPORTED_VERSION / INVALID_REQUEST
            logger.info(
                "%s: not a valid Kafka request during SASL authentication (%s); GSSAPI is "
                "not supported by this server",
                connection.connection_id,
                exc,
            )
            return self._fail(connection, None)
        api_key = header.api_key
        if self.state in (self.HANDSHAKE_OR_VERSIONS, self.HANDSHAKE, self.REAUTH_HANDSHAKE):
            if api_key == ApiKey.API_VERSIONS and self.state == self.HANDSHAKE_OR_VERSIONS:
                outcome = await serve(frame, connection)
                self.state = self.HANDSHAKE
                return outcome
            if not isinstance(request, SaslHandshakeRequest):
                logger.info(
                    "%s: Unexpected Kafka request of type %s during SASL handshake.",
                    connection.connection_id,
                    ApiKey(api_key).name,
                )
                return self._fail(connection, None)
            return self._handshake(header, request, connection, encode)
        if self.state == self.AUTHENTICATE:
            if not isinstance(request, SaslAuthenticateRequest):
                logger.info(
                    "%s: Unexpected Kafka request of type %s during SASL authentication.",
                    connection.connection_id,
                    ApiKey(api_key).name,
                )
                response = error_response(api_key, ErrorCode.ILLEGAL_SASL_STATE)
                return self._fail(connection, encode(header, response))
            return self._authenticate(header, request, connection, encode)
        return self._fail(connection, None)

    # -- steps -------------------------------------------------------------------------

    def _handshake(
        self,
        header: RequestHeader,
        request: SaslHandshakeRequest,
        connection: ConnectionInfo,
        encode: Encode,
    ) -> Outcome:
        mechanism = request.mechanism
        enabled = list(self.settings.mechanisms)
        self._legacy = header.api_version == 0
        if mechanism not in enabled:
            logger.info("%s: Unsupported SASL mechanism %s", connection.connection_id, mechanism)
            response = SaslHandshakeResponse(
                error_code=ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms=enabled
            )
            return self._fail(connection, encode(header, response))
        parts = encode(header, SaslHandshakeResponse(error_code=0, mechanisms=enabled))
        if self._previous is not None and self._previous[0] != mechanism:
            self._bad_mechanism_message = (
                f"SASL mechanism '{mechanism}' requested by client is not supported for "
                f"re-authentication of mechanism '{self._previous[0]}'"
            )
            self.state = self.REAUTH_BAD_MECHANISM
            return Outcome(parts)
        self.mechanism = mechanism
        self._server = self._new_server(mechanism)
        self.state = self.AUTHENTICATE
        return Outcome(parts)

    def _new_server(self, mechanism: str) -> PlainServer | ScramServer:
        if mechanism == "PLAIN":
            return PlainServer(self.settings.plain_users.get)
        scram = ScramMechanism.from_name(mechanism)
        assert scram is not None
        cache = self.services.scram_credentials
        return ScramServer(scram, lambda user: cache.get(mechanism, user))

    def _evaluate(self, token: bytes) -> bytes:
        assert self._server is not None
        return self._server.evaluate_response(token)

    def _failure_message(self, exc: Exception) -> str:
        reauth = self._previous is not None
        if isinstance(exc, (PlainAuthenticationError, ScramAuthenticationError)):
            return exc.client_message(self.mechanism or "", reauthentication=reauth)
        during = "re-authentication" if reauth else "authentication"
        return (
            f"Authentication failed during {during} due to invalid credentials with SASL "
            f"mechanism {self.mechanism}"
        )

    def _authenticate(
        self,
        header: RequestHeader,
        request: SaslAuthenticateRequest,
        connection: ConnectionInfo,
        encode: Encode,
    ) -> Outcome:
        try:
            token = self._evaluate(bytes(request.auth_bytes))
            lifetime_ms = self._maybe_complete(connection) if self._server_complete() else 0
        except ScramIllegalStateError as exc:
            logger.info("%s: %s", connection.connection_id, exc)
            return self._fail(connection, None)
        except Exception as exc:  # Kafka's SaslException: the generic message
            message = self._failure_message(exc)
            logger.info(
                "%s: Failed authentication with %s (%s)",
                connection.connection_id,
                connection.peer_host,
                getattr(exc, "message", str(exc)),
            )
            response = SaslAuthenticateResponse(
                error_code=ErrorCode.SASL_AUTHENTICATION_FAILED,
                error_message=message,
                auth_bytes=b"",
            )
            return self._fail(connection, encode(header, response))
        response = SaslAuthenticateResponse(
            error_code=0, error_message=None, auth_bytes=token, session_lifetime_ms=lifetime_ms
        )
        return Outcome(encode(header, response))

    def _legacy_token(self, frame: bytes, connection: ConnectionInfo) -> Outcome:
        try:
            token = self._evaluate(frame)
            if self._server_complete():
                self._maybe_complete(connection)
        except Exception as exc:
            logger.info(
                "%s: Failed authentication with %s (%s)",
                connection.connection_id,
                connection.peer_host,
                getattr(exc, "message", str(exc)),
            )
            return self._fail(connection, None)
        return Outcome([_SIZE.pack(len(token)) + token])

    def _server_complete(self) -> bool:
        return self._server is not None and bool(self._server.complete)

    def _maybe_complete(self, connection: ConnectionInfo) -> int:
        """The exchange succeeded: check a re-authentication's principal, record the
        principal and the session's lifetime (returned, in ms)."""
        assert self._server is not None and self.mechanism is not None
        name = self._server.authorization_id or ""
        if self._previous is not None and self._previous[1] != name:
            raise PlainAuthenticationError(
                f"Cannot change principals during re-authentication from "
                f"User.{self._previous[1]}: User.{name}"
            )
        if self._previous is not None:
            logger.debug("%s re-authenticated as User:%s", connection.connection_id, name)
        lifetime_ms = max(0, self.settings.reauth_ms.get(self.mechanism, 0))
        self.session_expiry = self._clock() + lifetime_ms / 1000 if lifetime_ms > 0 else None
        self.principal_name = name
        self.state = self.COMPLETE
        self._server = None
        self._previous = None
        connection.principal_name = name
        connection.max_frame_bytes = None
        return lifetime_ms

    def _fail(self, connection: ConnectionInfo, parts: list[Part] | None) -> Outcome:
        """Kafka's delayed close: the answer (if any) goes after
        ``connection.failed.authentication.delay.ms``, then the connection closes."""
        self.state = self.FAILED
        self._server = None
        delay = self.settings.failed_authentication_delay_ms
        if delay <= 0:
            return Outcome(parts, close=True) if parts else CLOSE
        return Outcome(parts, close=True, throttle_ms=delay, delay_response=True)


def peek_api_key(frame: bytes) -> int | None:
    """The API key of a request frame (None if too short), without decoding it."""
    if len(frame) < 2:
        return None
    return int(_HEADER_KEY.unpack_from(frame, 0)[0])
