"""The Raft client over asyncio sockets (the roles of Kafka's ``KafkaRaftClientDriver``,
``KafkaNetworkChannel`` and the controller listener's socket server for the quorum APIs).

* **Listener**: accepts connections on the quorum's listener; each request frame
  (size-prefixed, request header v1 or v2) of a quorum API (Vote, BeginQuorumEpoch,
  EndQuorumEpoch, DescribeQuorum, Fetch, FetchSnapshot, Add/Remove/UpdateRaftVoter) is
  decoded with :mod:`kafkacore.raft.wire` and handed to the client; its response goes back
  on that connection, at the request's version. ApiVersions is answered here with the
  quorum APIs and ``kraft.version`` as a supported feature, as Kafka's controller does. A
  frame over ``max_request_bytes``, an API it does not serve or bytes that do not decode
  close the connection (Kafka's socket server does the same for what it cannot parse).
* **Peers**: one connection per destination, opened on the first request to it; requests
  are pipelined and matched to responses by correlation id (the client's). A connection
  that fails answers each of its pending requests with BROKER_NOT_AVAILABLE (Kafka's
  disconnect) and the next request opens a new one. Timeouts are the client's
  (``controller.quorum.request.timeout.ms``): a late answer is dropped by it.
* **The loop**: events in order, then :meth:`RaftClient.poll`, then the outbound
  messages, then what is new for each registered listener
  (:class:`~kafkacore.raft.listener.CommittedReader`: snapshots, committed batches, leader
  changes), then sleep until an event or the delay the client asked for.

Wire versions out: the latest of each API this node knows (``wire.LATEST_VERSIONS``).

Thread-safety: one event loop; every method runs on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import struct
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kafkacore.protocol import headers as h
from kafkacore.protocol.errors import ErrorCode
from kafkacore.protocol.types import MalformedMessage
from kafkacore.raft import wire
from kafkacore.raft.client import RaftClient
from kafkacore.raft.listener import CommittedReader, ListenerEvent
from kafkacore.raft.messages import (
    InboundRequest,
    InboundResponse,
    OutboundRequest,
    OutboundResponse,
    RaftRequest,
    error_response,
)
from kafkacore.raft.types import Node

__all__ = ["RaftDriver", "wall_clock_ms"]

log = logging.getLogger("kafkacore.raft")

_SIZE = struct.Struct(">i")
_PREFIX = struct.Struct(">hhi")
MAX_REQUEST_BYTES = 104857600  # socket.request.max.bytes
# Fetch versions a Raft replica may be asked at (Kafka's controller serves 4..latest).
_FETCH_MIN_VERSION = 4


def wall_clock_ms() -> int:
    """Kafka's ``Time.SYSTEM.milliseconds()``."""
    return int(time.time() * 1000)


def _flexible(api_key: int, version: int) -> bool:
    return version in wire.SCHEMAS[api_key][0].flexible


def _frame(parts: list[Any]) -> bytes:
    body = b"".join(parts)
    return _SIZE.pack(len(body)) + body


@dataclass(frozen=True)
class _Reply:
    """Where an inbound request's answer goes."""

    connection: _Inbound
    api_key: int
    version: int


class _Inbound:
    """One accepted connection: request frames in, response frames out."""

    def __init__(
        self, driver: RaftDriver, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ):
        self.driver = driver
        self.reader = reader
        self.writer = writer

    async def serve(self) -> None:
        try:
            while True:
                size_bytes = await self.reader.readexactly(4)
                size = _SIZE.unpack(size_bytes)[0]
                if size < 8 or size > self.driver.max_request_bytes:
                    log.warning("closing a quorum connection: request frame of %d bytes", size)
                    return
                frame = await self.reader.readexactly(size)
                if not self._handle(frame):
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            self.writer.close()

    def _handle(self, frame: bytes) -> bool:
        api_key, version, correlation_id = _PREFIX.unpack_from(frame, 0)
        schemas = wire.SCHEMAS.get(api_key)
        if schemas is None or version not in schemas[0].valid:
            if api_key == h.API_VERSIONS_KEY:
                self.respond(correlation_id, api_key, 0, self.driver.api_versions(error=True))
                return True
            log.warning("closing a quorum connection: API %d v%d is not served", api_key, version)
            return False
        if api_key == wire.FETCH and version < _FETCH_MIN_VERSION:
            return False
        request_schema = schemas[0]
        try:
            header, pos = h.read_request_header(
                frame, h.request_header_version(_flexible(api_key, version))
            )
            struct_value, end = request_schema.reader(version)(memoryview(frame), pos, len(frame))
        except (struct.error, IndexError, MalformedMessage, ValueError) as exc:
            log.warning("closing a quorum connection: malformed %s: %s", request_schema.name, exc)
            return False
        if api_key == h.API_VERSIONS_KEY:
            self.respond(correlation_id, api_key, version, self.driver.api_versions())
            return True
        try:
            request = wire.request_from_wire(api_key, version, struct_value)
        except wire.Refused as refused:
            self.respond(correlation_id, api_key, version, refused.response)
            return True
        del header, end
        self.driver.post(InboundRequest(correlation_id, request, _Reply(self, api_key, version)))
        return True

    def respond(self, correlation_id: int, api_key: int, version: int, body: Any) -> None:
        if self.writer.is_closing():
            return
        parts: list[Any] = []
        header_version = h.response_header_version(api_key, _flexible(api_key, version))
        h.write_response_header(h.ResponseHeader(correlation_id), header_version, parts)
        wire.SCHEMAS[api_key][1].writer(version)(body, parts)
        self.writer.write(_frame(parts))


class _Peer:
    """The connection to one destination for this node's requests."""

    def __init__(self, driver: RaftDriver, node: Node):
        self.driver = driver
        self.node = node
        self.pending: dict[int, tuple[int, int, RaftRequest]] = {}
        self.writer: asyncio.StreamWriter | None = None
        self.failed = False
        self._connecting: asyncio.Task[None] | None = None
        self._queue: list[bytes] = []

    def send(self, correlation_id: int, request: RaftRequest) -> None:
        version = wire.LATEST_VERSIONS[wire.api_key_of(request)]
        api_key, body = wire.request_to_wire(request, version)
        parts: list[Any] = []
        header = h.RequestHeader(api_key, version, correlation_id, self.driver.client_id)
        h.write_request_header(header, h.request_header_version(_flexible(api_key, version)), parts)
        wire.SCHEMAS[api_key][0].writer(version)(body, parts)
        self.pending[correlation_id] = (api_key, version, request)
        frame = _frame(parts)
        if self.writer is not None:
            self.writer.write(frame)
            return
        self._queue.append(frame)
        if self._connecting is None:
            self._connecting = asyncio.ensure_future(self._connect_and_read())

    async def _connect_and_read(self) -> None:
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(self.node.host, self.node.port),
                self.driver.client.config.request_timeout_ms / 1000,
            )
        except (OSError, asyncio.TimeoutError) as exc:
            self._fail(f"connect: {exc}")
            return
        self.writer = writer
        for frame in self._queue:
            writer.write(frame)
        self._queue.clear()
        try:
            while True:
                size = _SIZE.unpack(await reader.readexactly(4))[0]
                if size < 4 or size > self.driver.max_response_bytes:
                    raise ConnectionError(f"response frame of {size} bytes")
                frame = await reader.readexactly(size)
                correlation_id = struct.unpack_from(">i", frame, 0)[0]
                entry = self.pending.pop(correlation_id, None)
                if entry is None:
                    raise ConnectionError(f"unknown correlation id {correlation_id}")
                api_key, version, _request = entry
                schema = wire.SCHEMAS[api_key][1]
                _, pos = h.read_response_header(
                    frame, h.response_header_version(api_key, _flexible(api_key, version))
                )
                body, _end = schema.reader(version)(memoryview(frame), pos, len(frame))
                response = wire.response_from_wire(api_key, version, body, self.driver.listener)
                self.driver.post(InboundResponse(self.node, correlation_id, response))
        except (asyncio.IncompleteReadError, ConnectionError, OSError) as exc:
            self._fail(str(exc))
        except (struct.error, IndexError, MalformedMessage, ValueError) as exc:
            self._fail(f"malformed response: {exc}")

    def _fail(self, reason: str) -> None:
        """Every pending request fails as a disconnection (BROKER_NOT_AVAILABLE)."""
        if self.failed:
            return
        self.failed = True
        log.info("quorum connection to %s failed: %s", self.node, reason)
        for correlation_id, (_key, _version, request) in self.pending.items():
            failed = error_response(request, ErrorCode.BROKER_NOT_AVAILABLE)
            self.driver.post(InboundResponse(self.node, correlation_id, failed))
        self.pending.clear()
        if self.writer is not None:
            self.writer.close()
        self.driver.forget_peer(self)

    async def close(self) -> None:
        if self._connecting is not None:
            self._connecting.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._connecting
        if self.writer is not None:
            self.writer.close()


class _Wake:
    """An event that only makes the loop poll again (an append, a resignation)."""


@dataclass(frozen=True)
class _FutureReply:
    """Where the answer to a request another socket server received goes (the controller
    listener's request processor awaits it)."""

    future: asyncio.Future[Any]
    api_key: int
    version: int


class RaftDriver:
    """Runs ``client`` on the running event loop, listening on ``host:port``."""

    def __init__(
        self,
        client: RaftClient,
        *,
        host: str,
        port: int,
        clock: Callable[[], int] = wall_clock_ms,
        client_id: str = "raft-client",
        max_request_bytes: int = MAX_REQUEST_BYTES,
        max_response_bytes: int = MAX_REQUEST_BYTES,
        listen: bool = True,
    ) -> None:
        self.client = client
        self.listener = client.listener
        self.host = host
        self.port = port
        self.clock = clock
        self.client_id = client_id
        self.max_request_bytes = max_request_bytes
        self.max_response_bytes = max_response_bytes
        self.listen = listen
        self._events: asyncio.Queue[InboundRequest | InboundResponse | _Wake] = asyncio.Queue()
        self._peers: dict[int, _Peer] = {}
        self._server: asyncio.base_events.Server | None = None
        self._task: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()
        self._connections: set[_Inbound] = set()
        self._listeners: list[tuple[CommittedReader, Callable[[list[ListenerEvent]], None]]] = []
        self.failure: BaseException | None = None

    # -- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        if self.listen:
            self._server = await asyncio.start_server(self._accept, self.host, self.port)
            if self.port == 0:
                self.port = self._server.sockets[0].getsockname()[1]
        self.client.initialize(self.clock())
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        """Stop at once (no graceful resignation; see :meth:`shutdown`)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._server is not None:
            self._server.close()
        for connection in list(self._connections):
            connection.writer.close()  # its serve() ends on the closed stream
        if self._server is not None:
            await self._server.wait_closed()
        for peer in list(self._peers.values()):
            await peer.close()
        self.client.log.flush()

    async def shutdown(self, timeout_ms: int) -> None:
        """Kafka's graceful shutdown: a leader resigns and tells the voters first."""
        self.client.shutdown(timeout_ms, self.clock())
        self.post(_Wake())
        deadline = time.monotonic() + timeout_ms / 1000
        while not self.client.shutdown_complete and time.monotonic() < deadline:
            await self.changed(0.05)
        await self.stop()

    # -- the owner's API ----------------------------------------------------------------

    def append(self, values: Sequence[bytes]) -> int:
        """:meth:`RaftClient.append` now (``NotLeaderError`` when not the leader)."""
        offset = self.client.append(values, self.clock())
        self.post(_Wake())
        return offset

    async def serve(self, api_key: int, version: int, body: Any) -> Any:
        """Answer a quorum API request another socket server decoded (the controller
        listener's): the response body at ``version``."""
        try:
            request = wire.request_from_wire(api_key, version, body)
        except wire.Refused as refused:
            return refused.response
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.post(InboundRequest(0, request, _FutureReply(future, api_key, version)))
        return await future

    def register_listener(
        self, on_events: Callable[[list[ListenerEvent]], None]
    ) -> CommittedReader:
        """Tell ``on_events`` (on the loop, after each round of the client) what is new in
        the committed log and the leadership, from the start of the log (Kafka's
        ``RaftClient.register``)."""
        reader = CommittedReader(self.client)
        self._listeners.append((reader, on_events))
        self.post(_Wake())
        return reader

    async def changed(self, timeout_s: float) -> None:
        """Wait until the loop ran again (a state, HW or log change may have happened)."""
        self._changed.clear()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._changed.wait(), timeout_s)

    def post(self, event: InboundRequest | InboundResponse | _Wake) -> None:
        self._events.put_nowait(event)

    def api_versions(self, *, error: bool = False) -> Any:
        """The ApiVersions response body: the quorum APIs, ``kraft.version`` supported."""
        cls: Any = wire.SCHEMAS[h.API_VERSIONS_KEY][1].cls
        keys = [
            cls.ApiVersion(
                api_key=key,
                min_version=_FETCH_MIN_VERSION if key == wire.FETCH else schemas[0].valid.lo,
                max_version=wire.LATEST_VERSIONS[key],
            )
            for key, schemas in sorted(wire.SCHEMAS.items())
        ]
        low, high = self.client.quorum.local_kraft_versions
        features = [
            cls.SupportedFeatureKey(
                name=wire.KRAFT_VERSION_FEATURE, min_version=low, max_version=high
            )
        ]
        code = ErrorCode.UNSUPPORTED_VERSION if error else ErrorCode.NONE
        return cls(error_code=code, api_keys=keys, supported_features=features)

    # -- internals ----------------------------------------------------------------------

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = _Inbound(self, reader, writer)
        self._connections.add(connection)
        try:
            await connection.serve()
        finally:
            self._connections.discard(connection)

    def forget_peer(self, peer: _Peer) -> None:
        if self._peers.get(peer.node.id) is peer:
            del self._peers[peer.node.id]

    def _dispatch(self, messages: list[OutboundRequest | OutboundResponse]) -> None:
        for message in messages:
            if isinstance(message, OutboundRequest):
                node = message.destination
                peer = self._peers.get(node.id)
                if (
                    peer is None
                    or peer.failed
                    or (peer.node.host, peer.node.port)
                    != (
                        node.host,
                        node.port,
                    )
                ):
                    peer = self._peers[node.id] = _Peer(self, node)
                peer.send(message.correlation_id, message.request)
            else:
                reply = message.reply_to
                if isinstance(reply, _FutureReply):
                    if not reply.future.done():
                        body = wire.response_to_wire(
                            reply.api_key, message.response, reply.version, self.listener
                        )
                        reply.future.set_result(body)
                elif isinstance(reply, _Reply):
                    body = wire.response_to_wire(
                        reply.api_key, message.response, reply.version, self.listener
                    )
                    reply.connection.respond(
                        message.correlation_id, reply.api_key, reply.version, body
                    )

    async def _run(self) -> None:
        client = self.client
        arrived: InboundRequest | InboundResponse | _Wake | None = None
        try:
            while True:
                now = self.clock()
                while arrived is not None:
                    if not isinstance(arrived, _Wake):
                        client.handle(arrived, now)
                    arrived = None if self._events.empty() else self._events.get_nowait()
                wait_ms = client.poll(now)
                self._dispatch(client.take_outbound())
                for reader, on_events in self._listeners:
                    events = reader.poll()
                    if events:
                        on_events(events)
                self._changed.set()
                try:
                    arrived = await asyncio.wait_for(self._events.get(), min(wait_ms, 1000) / 1000)
                except asyncio.TimeoutError:
                    arrived = None
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # the Raft thread dies: Kafka's fatal fault
            log.exception("the Raft client failed")
            self.failure = exc
            self._changed.set()
            raise
