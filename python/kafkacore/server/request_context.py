"""Who asked: what a handler knows about the request besides its body (Kafka's
``RequestContext``): the header, the connection, the listener and its security protocol,
the authenticated principal and the client's address.

Built by the request channel from the transport's
:class:`~kafkacore.server.network.ConnectionInfo`, one per request. The principal is the
connection's (Kafka's ``DefaultKafkaPrincipalBuilder``): ``User:ANONYMOUS`` on PLAINTEXT
listeners and on TLS without a client certificate, ``User:<mapped subject DN>`` with one,
``User:<authorization id>`` after SASL authentication.

Immutable: thread-safe.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, NoReturn

from kafkacore.protocol import ApiKey, KafkaStruct, RequestHeader
from kafkacore.server.network import ConnectionInfo

if TYPE_CHECKING:
    from kafkacore.server.services import BrokerServices

__all__ = [
    "ANONYMOUS",
    "ApiHandler",
    "Handler",
    "HandlerResult",
    "KafkaPrincipal",
    "RequestContext",
    "SecurityProtocol",
]


class SecurityProtocol(str, Enum):
    """Kafka's ``SecurityProtocol`` names (``listener.security.protocol.map`` values)."""

    PLAINTEXT = "PLAINTEXT"
    SSL = "SSL"
    SASL_PLAINTEXT = "SASL_PLAINTEXT"
    SASL_SSL = "SASL_SSL"


@dataclass(frozen=True, slots=True)
class KafkaPrincipal:
    """An authenticated identity (Kafka's ``KafkaPrincipal``), written ``type:name``."""

    principal_type: str
    name: str

    def __str__(self) -> str:
        return f"{self.principal_type}:{self.name}"


ANONYMOUS = KafkaPrincipal("User", "ANONYMOUS")
"""The principal of an unauthenticated connection (Kafka's ``KafkaPrincipal.ANONYMOUS``)."""


@dataclass(frozen=True, slots=True)
class RequestContext:
    header: RequestHeader
    connection_id: str
    listener_name: str
    security_protocol: SecurityProtocol
    principal: KafkaPrincipal
    client_address: str
    client_port: int

    @classmethod
    def for_connection(
        cls,
        header: RequestHeader,
        connection: ConnectionInfo,
        principal: KafkaPrincipal | None = None,
    ) -> RequestContext:
        if principal is None:
            name = connection.principal_name
            principal = ANONYMOUS if name == ANONYMOUS.name else KafkaPrincipal("User", name)
        return cls(
            header=header,
            connection_id=connection.connection_id,
            listener_name=connection.listener,
            security_protocol=SecurityProtocol(connection.security_protocol),
            principal=principal,
            client_address=connection.peer_host,
            client_port=connection.peer_port,
        )

    @property
    def api_key(self) -> ApiKey:
        return ApiKey(self.header.api_key)

    @property
    def api_version(self) -> int:
        return self.header.api_version

    @property
    def client_id(self) -> str | None:
        return self.header.client_id


HandlerResult = KafkaStruct | Awaitable[KafkaStruct]
"""A handler's answer: the response, or an awaitable of it (work on the I/O threads, a
delayed operation)."""

Handler = Callable[["BrokerServices", RequestContext, KafkaStruct], HandlerResult]
"""A request handler as the channel calls it: ``(services, context, request)``. Each handler
takes its own API's request class (``ProduceRequest``, ...), which is what the codec decodes
for that API key: :data:`~kafkacore.server.handlers.HANDLERS` states it once."""

ApiHandler = Callable[["BrokerServices", RequestContext, NoReturn], HandlerResult]
"""A handler of one API, whatever request class it takes (``NoReturn``, the bottom type, is
a subtype of each): what the tables of handlers hold before
:data:`~kafkacore.server.handlers.HANDLERS` pairs them with their API keys."""
