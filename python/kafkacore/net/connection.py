"""One connection to one Kafka broker (Kafka's ``NetworkClient`` for one node, aiokafka's
``AIOKafkaConnection``): the client of the controller's channel, the replica fetchers,
the transaction marker channel, AlterPartition, KIP-890 verification and the tools' own
requests. Requests are pipelined and matched to their responses by correlation id.

* **Connection**: opened on the first :meth:`NodeClient.send` (``connect_timeout_s``);
  a client never reconnects: after a transport failure it is :attr:`~NodeClient.closed`
  and the caller makes a new one.
* **Requests**: framed with :func:`kafkacore.protocol.encode_request` (request header v1,
  or v2 for a flexible version), each with the next correlation id; any number may be in
  flight. One reader task reads the response frames and completes the request with that
  correlation id (the broker answers in order, but nothing here relies on it).
* **Failures**: losing the connection (or reading a frame that cannot belong to it: a
  size over :attr:`NodeClient.max_response_bytes` or negative, an unknown correlation id)
  fails every pending request with :class:`ConnectionError` (:class:`ConnectionClosed`
  when the peer closed it) and closes the client. A request not answered within
  ``request_timeout_s`` raises :class:`TimeoutError`; the connection stays up for the
  others and the late answer is discarded. A response that does not decode fails only its
  request, with :class:`~kafkacore.protocol.errors.ProtocolError` (frames are
  length-delimited, so the stream stays in step).
* Requests without a response (Produce with ``acks=0``) are not supported.
* **Security** (:class:`~kafkacore.net.security.ClientSecurity`): TLS, then SaslHandshake
  v1 and SaslAuthenticate v1 until the mechanism completes, before any other request
  (correlation ids from the same counter). A refused login fails the connection with
  :class:`AuthenticationError` (a ConnectionError) carrying the broker's message.
* :func:`send_once`: one request on a connection of its own, from synchronous code (the
  tools).

Thread-safety: a :class:`NodeClient` belongs to one event loop; every method runs on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import struct
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload

from kafkacore.net.security import ClientSecurity, inter_broker_security
from kafkacore.net.timeouts import stop_task, within
from kafkacore.protocol import Api, ApiKey, RequestHeader, decode_response, encode_request
from kafkacore.protocol.errors import ProtocolError
from kafkacore.protocol.schema import KafkaStruct
from kafkacore.security.sasl import (
    SaslAuthenticateRefused,
    SaslClientError,
    SaslHandshakeRefused,
    sasl_login,
)

if TYPE_CHECKING:
    from kafkacore.config import BrokerConfig

__all__ = [
    "AuthenticationError",
    "ConnectionClosed",
    "NodeClient",
    "NodeClientFactory",
    "broker_client",
    "node_client_factory",
    "send_once",
]

log = logging.getLogger(__name__)

_SIZE = struct.Struct(">i")
_MAX_CORRELATION_ID = 0x7FFFFFFF
# a SASL response is a few hundred bytes: a larger frame is not one
_MAX_SASL_RESPONSE_BYTES = 1024 * 1024
Req = TypeVar("Req", bound=KafkaStruct)
Resp = TypeVar("Resp", bound=KafkaStruct)


class AuthenticationError(ConnectionError):
    """The broker refused the SASL login (its message), or answered it with nonsense."""


class ConnectionClosed(ConnectionError):
    """The broker closed the connection before answering every request sent on it."""


NodeClientFactory = Callable[[str, int], "NodeClient"]
"""Makes the client of one broker from its ``host`` and ``port`` (what the controller's
channel, the replica fetchers and the AlterPartition manager are given)."""


def node_client_factory(
    client_id: str,
    *,
    request_timeout_s: float = 30.0,
    security: ClientSecurity | None = None,
) -> NodeClientFactory:
    """A :data:`NodeClientFactory` of clients named ``client_id``, secured as
    ``security`` says."""
    return functools.partial(
        NodeClient, client_id=client_id, request_timeout_s=request_timeout_s, security=security
    )


class BrokerEndpoints(Protocol):
    """A broker as the metadata describes it (:class:`~kafkacore.metadata.BrokerInfo`)."""

    def endpoint(self, listener: str) -> tuple[str, int]: ...


def broker_client(config: BrokerConfig, broker: BrokerEndpoints, client_id: str) -> NodeClient:
    """A client to ``broker``'s endpoint on this broker's inter-broker listener, with
    ``request.timeout.ms`` and :func:`~kafkacore.net.security.inter_broker_security`
    (the coordinators' and the replica manager's connections to other brokers)."""
    listener, _protocol = config.inter_broker_listener()
    host, port = broker.endpoint(listener)
    return NodeClient(
        host,
        port,
        client_id=client_id,
        request_timeout_s=config.request_timeout_ms / 1000,
        security=inter_broker_security(config),
    )


def send_once(
    host: str,
    port: int,
    api_key: ApiKey,
    version: int,
    request: KafkaStruct,
    *,
    client_id: str,
    timeout_s: float,
    security: ClientSecurity | None = None,
) -> Any:
    """``request`` as ``api_key`` v``version`` on a connection of its own, from code that
    runs no event loop (a tool, or a worker thread); the decoded response. Raises as
    :meth:`NodeClient.send` does; ``timeout_s`` bounds the connection (login included) and
    the answer each."""

    async def once() -> Any:
        client = NodeClient(
            host,
            port,
            client_id=client_id,
            connect_timeout_s=timeout_s,
            request_timeout_s=timeout_s,
            security=security,
        )
        try:
            return await client.send(api_key, version, request)
        finally:
            await client.close()

    return asyncio.run(once())


class NodeClient:
    """One connection to the broker at ``host:port``; see the module documentation."""

    max_response_bytes = 256 * 1024 * 1024
    """The largest response frame accepted; a larger declared size is a broken stream (it
    is checked before anything is allocated)."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        client_id: str,
        connect_timeout_s: float = 5.0,
        request_timeout_s: float = 30.0,
        security: ClientSecurity | None = None,
    ) -> None:
        self.security = security
        self.host = host
        self.port = port
        self.client_id = client_id
        self.connect_timeout_s = connect_timeout_s
        self.request_timeout_s = request_timeout_s
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self._connect_lock = asyncio.Lock()
        # correlation id -> (future of the response, API key, version)
        self._pending: dict[int, tuple[asyncio.Future[KafkaStruct], int, int]] = {}
        self._next_correlation_id = 0
        self._wrapped = False  # correlation ids went past 2**31 - 1 and restarted at 0
        self._closed = False
        self._failure: str | None = None

    def __repr__(self) -> str:
        return f"NodeClient({self.host}:{self.port}, client_id={self.client_id!r})"

    @property
    def closed(self) -> bool:
        """Closed by :meth:`close` or by a transport failure: it sends nothing more."""
        return self._closed

    @property
    def in_flight(self) -> int:
        """Requests sent and not yet answered."""
        return len(self._pending)

    @overload
    async def send(self, api: Api[Req, Resp], version: int, request: Req) -> Resp: ...

    @overload
    async def send(self, api: ApiKey, version: int, request: KafkaStruct) -> KafkaStruct: ...

    async def send(
        self, api: Api[Req, Resp] | ApiKey, version: int, request: KafkaStruct
    ) -> KafkaStruct:
        """``request`` as ``api`` v``version``; returns the decoded response body, typed
        when ``api`` is an :class:`Api` (``APIS[ApiKey.FETCH]`` -> a ``FetchResponse``).

        Raises :class:`ConnectionError` (cannot connect, connection lost or closed),
        :class:`TimeoutError` (connect or response timeout), ``ProtocolError`` (an
        undecodable response)."""
        api_key = api.key if isinstance(api, Api) else api
        writer = await self._connected()
        correlation_id = self._next_correlation_id
        if correlation_id == _MAX_CORRELATION_ID:
            self._wrapped = True
        self._next_correlation_id = (correlation_id + 1) & _MAX_CORRELATION_ID
        frame = encode_request(
            RequestHeader(int(api_key), version, correlation_id, self.client_id), request
        )
        future: asyncio.Future[KafkaStruct] = asyncio.get_running_loop().create_future()
        self._pending[correlation_id] = (future, int(api_key), version)
        try:
            writer.write(frame)
            try:
                await writer.drain()
            except OSError as exc:
                self._fail(f"write failed: {exc}")
            return await within(asyncio.shield(future), self.request_timeout_s)
        except asyncio.TimeoutError:
            raise TimeoutError(
                f"{self}: no response to {ApiKey(api_key).name} v{version} "
                f"(correlation id {correlation_id}) within {self.request_timeout_s}s"
            ) from None
        finally:
            entry = self._pending.get(correlation_id)
            if entry is not None and entry[0] is future:
                del self._pending[correlation_id]
            if not future.done():
                future.cancel()
            elif not future.cancelled():
                future.exception()  # retrieved: never "exception was never retrieved"

    async def close(self) -> None:
        """Close the connection; pending requests fail with :class:`ConnectionError`."""
        if self._closed and self._writer is None:
            return
        self._fail("client closed")
        task = self._reader_task
        if task is not None and task is not asyncio.current_task():
            # not `await task` under suppress(CancelledError): that would also swallow a
            # cancellation of the caller (a fetcher being shut down)
            await stop_task(task, timeout_s=5.0)
        writer, self._writer = self._writer, None
        if writer is not None:
            with contextlib.suppress(OSError, asyncio.TimeoutError, TimeoutError):
                await within(writer.wait_closed(), 1.0)

    # -- connection ------------------------------------------------------------------------

    async def _connected(self) -> asyncio.StreamWriter:
        if self._closed:
            raise ConnectionError(f"{self} is closed ({self._failure})")
        if self._writer is not None:
            return self._writer
        async with self._connect_lock:
            if self._closed:
                raise ConnectionError(f"{self} is closed ({self._failure})")
            if self._writer is None:
                try:
                    reader, writer = await within(self._open(), self.connect_timeout_s)
                except (asyncio.TimeoutError, TimeoutError):
                    self._closed, self._failure = True, "connect timed out"
                    raise TimeoutError(
                        f"{self}: connect timed out after {self.connect_timeout_s}s"
                    ) from None
                except AuthenticationError as exc:
                    self._closed, self._failure = True, f"login refused: {exc}"
                    raise
                except OSError as exc:
                    self._closed, self._failure = True, f"connect failed: {exc}"
                    raise ConnectionError(f"{self}: connect failed: {exc}") from exc
                self._reader, self._writer = reader, writer
                self._reader_task = asyncio.get_running_loop().create_task(
                    self._read_loop(reader), name=f"node-client-{self.host}:{self.port}"
                )
            return self._writer

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        security = self.security
        context = security.ssl_context if security is not None else None
        reader, writer = await asyncio.open_connection(
            self.host,
            self.port,
            ssl=context,
            server_hostname=self.host if context is not None else None,
        )
        if security is not None and security.sasl_mechanism is not None:
            try:
                await self._authenticate(reader, writer, security)
            except BaseException:
                writer.close()
                raise
        return reader, writer

    async def _authenticate(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        security: ClientSecurity,
    ) -> None:
        """SaslHandshake v1 + SaslAuthenticate v1 round trips, before any other request
        (correlation ids from the same counter)."""
        mechanism = security.sasl_mechanism
        assert mechanism is not None
        login = sasl_login(mechanism, security.username, security.password)
        try:
            api_key, request = next(login)
            while True:
                response = await self._round_trip(reader, writer, api_key, 1, request)
                api_key, request = login.send(response)
        except StopIteration:
            return
        except SaslHandshakeRefused as exc:
            enabled = list(exc.response.mechanisms)
            raise AuthenticationError(
                f"Unsupported SASL mechanism {mechanism} (the broker enables {enabled})"
            ) from None
        except SaslAuthenticateRefused as exc:
            message = exc.response.error_message
            raise AuthenticationError(
                message or f"SASL authentication failed with error {exc.response.error_code}"
            ) from None
        except SaslClientError as exc:
            raise AuthenticationError(str(exc)) from None

    async def _round_trip(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        api_key: ApiKey,
        version: int,
        request: KafkaStruct,
    ) -> KafkaStruct:
        correlation_id = self._next_correlation_id
        self._next_correlation_id += 1
        writer.write(
            encode_request(
                RequestHeader(int(api_key), version, correlation_id, self.client_id), request
            )
        )
        await writer.drain()
        try:
            (size,) = _SIZE.unpack(await reader.readexactly(4))
            if size < 4 or size > _MAX_SASL_RESPONSE_BYTES:
                raise AuthenticationError(f"SASL response frame size {size} out of range")
            frame = await reader.readexactly(size)
        except asyncio.IncompleteReadError:
            raise ConnectionClosed("connection closed during the SASL login") from None
        _, response = decode_response(frame, int(api_key), version)
        return response

    def _fail(self, reason: str, error: type[ConnectionError] = ConnectionError) -> None:
        """Close the transport and fail every pending request with ``error``."""
        if not self._closed:
            self._closed, self._failure = True, reason
            if reason != "client closed":
                log.info("%s: %s", self, reason)
        if self._writer is not None:
            self._writer.close()
        pending, self._pending = self._pending, {}
        for future, _, _ in pending.values():
            if not future.done():
                future.set_exception(error(f"{self}: {reason}"))

    async def _read_loop(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                (size,) = _SIZE.unpack(await reader.readexactly(4))
                if size < 4 or size > self.max_response_bytes:
                    self._fail(f"response frame size {size} out of range")
                    return
                frame = await reader.readexactly(size)
                (correlation_id,) = _SIZE.unpack_from(frame, 0)
                entry = self._pending.pop(correlation_id, None)
                if entry is None:
                    if self._issued(correlation_id):
                        continue  # the request timed out or was cancelled: a late answer
                    self._fail(f"response with unknown correlation id {correlation_id}")
                    return
                future, api_key, version = entry
                if future.done():
                    continue
                try:
                    _, response = decode_response(frame, api_key, version)
                except ProtocolError as exc:
                    future.set_exception(exc)
                except Exception as exc:  # a malformed value the codec did not classify
                    future.set_exception(
                        ProtocolError(f"{ApiKey(api_key).name} v{version} response: {exc!r}")
                    )
                else:
                    future.set_result(response)
        except asyncio.IncompleteReadError:
            self._fail("connection closed by the peer", ConnectionClosed)
        except OSError as exc:
            self._fail(f"connection lost: {exc}")
        except asyncio.CancelledError:
            self._fail("client closed")
            raise
        except Exception as exc:  # never leave requests waiting on a dead reader
            log.exception("%s: response reader failed", self)
            self._fail(f"response reader failed: {exc!r}")

    def _issued(self, correlation_id: int) -> bool:
        """Whether ``correlation_id`` was given to a request of this connection (ids count
        up from 0 and wrap around)."""
        if 0 <= correlation_id < self._next_correlation_id:
            return True
        return self._wrapped and 0 <= correlation_id <= _MAX_CORRELATION_ID
