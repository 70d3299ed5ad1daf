"""The request channel: frame in, outcome out (decode -> handler -> encode), between the
transport (:mod:`~kafkacore.server.network`) and the handlers.

Errors are data (CONVENTIONS 14):

* an ApiVersions request of an unknown version: a v0 body with UNSUPPORTED_VERSION and the
  full API list, header v0 (KIP-511);
* a version inside the advertised range but not implemented (Produce v0-2, as Kafka 4):
  the API's response at that version with UNSUPPORTED_VERSION;
* a malformed body whose header could be read: the API's response with INVALID_REQUEST in
  its top-level error fields;
* an unknown API key, a version beyond the advertised range or an unreadable header:
  the connection is closed (nothing the client could read), as Kafka does.
* a handler failure: UNKNOWN_SERVER_ERROR (logged); the broker keeps serving;
* a forwarded request whose version the controller no longer serves: the connection is
  closed, so that the client negotiates again (Kafka's forwarding does the same).

``acks=0`` Produce requests get no response, unless one of their partitions failed: then
the connection is closed, Kafka's way of telling such a producer.

On a SASL listener each connection gets a :class:`~kafkacore.server.sasl.SaslAuthenticator`
(:meth:`RequestChannel.on_connection`): until it is authenticated every frame goes through
it (only ApiVersions and the SASL APIs are served); afterwards a SaslHandshake may start a
re-authentication (KIP-368), and a connection whose session expired is closed at its next
request.
"""

from __future__ import annotations

import inspect
import logging
import struct
from collections.abc import Hashable, Mapping

from kafkacore.protocol import (
    APIS,
    ApiKey,
    ErrorCode,
    KafkaStruct,
    ProtocolError,
    RequestHeader,
    UnknownApiKey,
    UnsupportedVersion,
    decode_request,
    unsupported_api_versions_response,
)
from kafkacore.protocol import headers as h
from kafkacore.protocol.messages.produce import ProduceRequest, ProduceResponse
from kafkacore.protocol.requests import throttle_time_ms
from kafkacore.server.handlers import (
    HANDLERS,
    SHARED_ANSWERS,
    error_response,
    unimplemented_response,
)
from kafkacore.server.kraft.forwarding import CloseConnection
from kafkacore.server.network import CLOSE, NO_RESPONSE, ConnectionInfo, FileRegion, Outcome, Part
from kafkacore.server.request_context import RequestContext
from kafkacore.server.request_quota import (
    ConnectionTime,
    client_throttles,
    handle_with_request_quota,
    loop_time,
)
from kafkacore.server.sasl import SaslAuthenticator, SaslListenerSettings, peek_api_key
from kafkacore.server.services import BrokerServices

__all__ = ["RequestChannel", "encode_response_parts"]

logger = logging.getLogger("kafkacore.server")

_SIZE = struct.Struct(">i")


def encode_response_parts(
    header: RequestHeader, response: KafkaStruct, version: int | None = None
) -> list[Part]:
    """The framed response as parts (``records`` fields may be file regions)."""
    api = APIS[header.api_key]
    v = header.api_version if version is None else version
    parts: list[Part] = [b""]
    h.write_response_header(
        h.ResponseHeader(header.correlation_id), api.response_header_version(v), parts
    )
    api.response.writer(v)(response, parts)
    parts[0] = _SIZE.pack(sum(map(len, parts)))
    return parts


def _encode_body(header: RequestHeader, response: KafkaStruct) -> bytes:
    """The response's body (no size, no header) at the request's version."""
    parts: list[Part] = []
    APIS[header.api_key].response.writer(header.api_version)(response, parts)
    return b"".join(p for p in parts if not isinstance(p, FileRegion))


def _quota_throttle_ms(header: RequestHeader, response: KafkaStruct) -> int:
    """A response's client quota throttle time (byte rates for Produce and Fetch, the
    request time quota for any API): the channel is muted for it."""
    return max(0, throttle_time_ms(response))


def _client_throttles(header: RequestHeader) -> bool:
    """KIP-219: e.g. Produce v6+ and Fetch v8+ clients wait out the throttle time
    themselves, so the response goes at once; older ones get it late."""
    return client_throttles(header.api_key, header.api_version)


def _produce_failed(response: KafkaStruct) -> bool:
    assert isinstance(response, ProduceResponse)
    return any(p.error_code for t in response.responses for p in t.partition_responses)


class RequestChannel:
    """Implements the transport's ``RequestProcessor`` over :data:`HANDLERS`."""

    def __init__(
        self,
        services: BrokerServices,
        sasl: Mapping[str, SaslListenerSettings] | None = None,
    ) -> None:
        self.services = services
        self._sasl = dict(sasl or {})
        # encoded bodies of shareable answers (SHARED_ANSWERS), with the metadata cache's
        # version they were built at: one per listener, version and flags
        self._shared: dict[Hashable, tuple[int, bytes]] = {}

    def on_connection(self, connection: ConnectionInfo) -> None:
        """A new connection: on a SASL listener, its authenticator and the pre-auth bound."""
        settings = self._sasl.get(connection.listener)
        if settings is not None:
            connection.state = SaslAuthenticator(settings, self.services)
            connection.max_frame_bytes = settings.max_receive_size

    def on_disconnect(self, connection: ConnectionInfo) -> None:
        """A connection closed: its share session ends (Kafka's share session cache is a
        ``ConnectionDisconnectListener``)."""
        share = self.services.share
        if share is not None:
            share.manager.on_disconnect(connection.connection_id)

    async def process(self, frame: memoryview, connection: ConnectionInfo) -> Outcome:
        auth = connection.state
        if isinstance(auth, SaslAuthenticator):
            if not auth.authenticated:
                return await auth.process(frame, connection, self.serve, encode_response_parts)
            if peek_api_key(frame) == ApiKey.SASL_HANDSHAKE and auth.begin_reauthentication():
                # the re-authentication's tokens are bounded as the first login's were
                connection.max_frame_bytes = auth.settings.max_receive_size
                return await auth.process(frame, connection, self.serve, encode_response_parts)
            if auth.session_expired():
                logger.info(
                    "Closing connection %s: its SASL session expired (connections.max.reauth.ms)",
                    connection.connection_id,
                )
                return CLOSE
        return await self.serve(frame, connection)

    async def serve(self, frame: memoryview, connection: ConnectionInfo) -> Outcome:
        """Decode, handle and encode one request (no authentication step)."""
        connection_time = self._connection_time(connection)
        try:
            header, request = decode_request(frame)
        except ProtocolError as exc:
            return self._refuse(exc, connection)
        context = RequestContext.for_connection(header, connection)
        written = None
        try:
            shared = await self._shared_answer(header, request, context)
            if shared is not None:
                return Outcome(shared)
            handler = HANDLERS.get(ApiKey(header.api_key), _unimplemented)
            response, written = await handle_with_request_quota(
                self.services, context, handler, request, connection_time
            )
        except CloseConnection as exc:
            logger.info("Closing connection %s: %s", connection.connection_id, exc)
            return CLOSE
        except Exception:
            logger.exception(
                "Error handling %s v%d from %s",
                APIS[header.api_key].name,
                header.api_version,
                connection.connection_id,
            )
            response = error_response(header.api_key, ErrorCode.UNKNOWN_SERVER_ERROR)
        throttle_ms = _quota_throttle_ms(header, response)
        if isinstance(request, ProduceRequest) and request.acks == 0:
            if _produce_failed(response):
                return CLOSE
            return Outcome(throttle_ms=throttle_ms) if throttle_ms else NO_RESPONSE
        return Outcome(
            encode_response_parts(header, response),
            throttle_ms=throttle_ms,
            delay_response=throttle_ms > 0 and not _client_throttles(header),
            on_written=written,
        )

    async def _shared_answer(
        self, header: RequestHeader, request: KafkaStruct, context: RequestContext
    ) -> list[Part] | None:
        """The framed answer from an encoded body shared by the requests of one key
        (:data:`SHARED_ANSWERS`: an all-topics Metadata), built and kept when missing or
        older than the metadata cache; ``None`` when the request's answer is its own
        (then, too, while request quotas are on: the answer carries a throttle time and
        its handling is timed)."""
        key_of = SHARED_ANSWERS.get(ApiKey(header.api_key))
        services = self.services
        if key_of is None or services.client_quotas.has_request_quotas:
            return None
        key = key_of(services, context, request)
        if key is None:
            return None
        version = services.metadata_cache.version  # before building: a change meanwhile
        kept = self._shared.get(key)  # leaves it older, so built again next time
        if kept is not None and kept[0] == version:
            body = kept[1]
        else:
            response = HANDLERS[ApiKey(header.api_key)](services, context, request)
            if inspect.isawaitable(response):
                response = await response
            body = _encode_body(header, response)
            self._shared[key] = (version, body)
        parts: list[Part] = [b""]
        api = APIS[header.api_key]
        h.write_response_header(
            h.ResponseHeader(header.correlation_id),
            api.response_header_version(header.api_version),
            parts,
        )
        parts.append(body)
        parts[0] = _SIZE.pack(sum(map(len, parts)))
        return parts

    def _connection_time(self, connection: ConnectionInfo) -> ConnectionTime | None:
        """The connection's loop time not charged yet, kept (the transport settles it as
        each frame is read) while some client has a request time quota."""
        timed = connection.on_frame_read
        if not self.services.client_quotas.has_request_quotas:
            if timed is not None:
                connection.on_frame_read = None
            return None
        if not isinstance(timed, ConnectionTime):
            timed = connection.on_frame_read = ConnectionTime(loop_time())
        return timed

    def _refuse(self, exc: ProtocolError, connection: ConnectionInfo) -> Outcome:
        cid, key, version = exc.correlation_id, exc.api_key, exc.api_version
        logger.info("Refusing request from %s: %s", connection.connection_id, exc)
        if cid is None or key is None or version is None or isinstance(exc, UnknownApiKey):
            return CLOSE
        if key == ApiKey.API_VERSIONS and isinstance(exc, UnsupportedVersion):
            return Outcome([unsupported_api_versions_response(cid)])
        api = APIS[key]
        if not api.min_version <= version <= api.max_version:
            return CLOSE
        header = RequestHeader(key, version, cid, exc.client_id)
        try:
            parts = encode_response_parts(header, error_response(key, exc.error_code, str(exc)))
        except Exception:  # a version the codec cannot write
            return CLOSE
        return Outcome(parts)


def _unimplemented(
    services: BrokerServices, context: RequestContext, request: KafkaStruct
) -> KafkaStruct:
    return unimplemented_response(context.header, request)
