"""The broker's transport (Kafka's ``SocketServer``), on asyncio: it moves frames and
nothing else. Decoding, handling and encoding belong to the :class:`RequestProcessor`
it is given (the broker's request channel); this module never sees a request object.

Per connection:

* **Framing**: a request is an ``int32`` size then that many bytes. The declared size is
  checked against ``socket.request.max.bytes`` *before* the body is read: a larger (or
  negative) size closes the connection, logged once, as Kafka does.
* **Order**: frames are read ahead (pipelining: up to :data:`MAX_QUEUED_FRAMES`), but
  processed one at a time and answered strictly in request order (Kafka mutes a channel
  while its request is in flight for the same reason: appends from one producer
  connection must not be reordered).
* **Answers**: the processor returns an :class:`Outcome`: response parts to write,
  nothing (``acks=0`` Produce), or "close". A part is ``bytes`` or a :class:`FileRegion`.
  On plain TCP, while the transport has nothing queued, a response goes straight to the
  socket from the request's task: bytes with ``send(MSG_MORE)``, regions with
  ``os.sendfile`` (zero copy); what the socket does not take at once goes through the
  transport (``write``/``drain``, ``loop.sendfile``), so a slow reader is back-pressured
  as before. ``sendfile`` cannot go through
  TLS: on a TLS connection a region is read (one ``pread`` per region, on a worker
  thread when large) and handed to the TLS transport with the response's other parts
  in one ``writelines`` (no joined copy), so OpenSSL encrypts the whole response in one
  pass instead of asyncio's 16 KiB executor round trips.
* **TLS**: a listener with an :class:`ssl.SSLContext` (``tls``) serves only after the
  handshake; the peer certificate's principal name (``principal_of``) is put in
  :attr:`ConnectionInfo.principal_name` (``ANONYMOUS`` without a certificate); a
  certificate no mapping rule names closes the connection.
* **Before authentication** (SASL): :attr:`ConnectionInfo.max_frame_bytes`, when set
  (``sasl.server.max.receive.size``), bounds the declared size instead of
  ``socket.request.max.bytes``, checked before anything is allocated (CVE-2022-34917).
* **Back-pressure**: read-ahead stops while the connection's unsent output is above the
  transport's high-water mark or its queued requests hold more than
  :data:`READ_AHEAD_BYTES`, and resumes when the worker catches up; the socket's receive
  buffer then fills and TCP stops the client. A client that sends requests but never reads
  its answers (a slow reader) so holds about one response and a bounded read-ahead in the
  broker, whatever it asks for (Kafka mutes the channel while a response is in flight).
* **Idle** (Kafka's idle expiry): a connection is closed after ``connections.max.idle.ms``
  with no socket activity: no byte received (a frame's head or body alike: a half-sent
  frame is no activity) and no progress writing its answer (a reader that stopped
  reading). A request being handled (a long-polling Fetch) is not idleness.
* **Limits**: ``max.connections.per.ip`` (plus ``max.connections.per.ip.overrides``): a
  connection over the limit is closed at once. ``max.connections``: as Kafka's acceptor
  blocks until a slot is free, a connection over the limit waits, unread, for one (up to
  :data:`MAX_WAITING_CONNECTIONS` of them, the listen backlog's size; more are closed).

Thread-safety: everything runs on the event loop thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import functools
import logging
import os
import socket
import ssl
import struct
import sys
import termios
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, SupportsIndex, TypeVar

from kafkacore.log import read_region
from kafkacore.net.timeouts import within

__all__ = [
    "MAX_QUEUED_FRAMES",
    "MAX_WAITING_CONNECTIONS",
    "READ_AHEAD_BYTES",
    "ConnectionInfo",
    "FileRegion",
    "Outcome",
    "SocketServer",
    "TlsListener",
]

logger = logging.getLogger("kafkacore.network")
_T = TypeVar("_T")
_TIOCOUTQ: int | None = getattr(termios, "TIOCOUTQ", None)  # Linux: SIOCOUTQ

MAX_QUEUED_FRAMES = 64
#: read-ahead stops while a connection's queued requests hold more bytes than this
READ_AHEAD_BYTES = 1 << 20
#: connections over ``max.connections`` waiting for a slot (the listen backlog's size)
MAX_WAITING_CONNECTIONS = 100
_SIZE = struct.Struct(">i")
# a file region up to this size is read on the event loop (a page-cache read is faster
# than a thread hop); a larger one on a worker thread
_INLINE_READ_BYTES = 256 * 1024
_MSG_MORE = getattr(socket, "MSG_MORE", 0)


@dataclass(frozen=True, slots=True)
class FileRegion:
    """``length`` bytes of ``file`` from ``position``: a part of a response sent from the
    file (a Fetch response's records). ``len()`` is its length, so the codec can frame it
    as a ``records`` field without reading it."""

    file: str
    position: int
    length: int

    def __len__(self) -> int:
        return self.length

    def read_bytes(self) -> bytes:
        """The bytes (from the ``.deleted`` file if the segment was deleted since),
        zero-padded if the log was truncated since: the response already declared the
        length."""
        return read_region(self.file, self.position, self.length).ljust(self.length, b"\0")


Part = bytes | bytearray | memoryview | FileRegion


@dataclass(frozen=True, slots=True)
class Outcome:
    """What to do after a request: write ``parts`` (if any), then close if ``close``.
    ``throttle_ms`` (a client quota): the connection reads no further request for that
    long after the response (KIP-219's muted channel), or, with ``delay_response`` (clients
    too old to throttle themselves), the response itself waits that long."""

    parts: Sequence[Part] | None = None
    close: bool = False
    throttle_ms: int = 0
    delay_response: bool = False
    #: called once the response is written (Kafka's ``recordNetworkThreadTimeCallback``)
    on_written: Callable[[], object] | None = None


NO_RESPONSE = Outcome()
CLOSE = Outcome(close=True)


@dataclass(slots=True)
class ConnectionInfo:
    """Who is on the other end (for logs, quotas and listener-dependent answers)."""

    connection_id: str
    listener: str
    peer_host: str
    peer_port: int
    local_port: int
    security_protocol: str = "PLAINTEXT"
    requests: int = field(default=0)
    #: the authenticated principal's name (``User:<name>``): the TLS certificate's mapped
    #: subject, or the SASL authorization id once authenticated
    principal_name: str = "ANONYMOUS"
    #: while set, the largest frame accepted (a SASL connection before authentication)
    max_frame_bytes: int | None = None
    #: the request processor's per-connection state (the SASL authenticator)
    state: object = None
    #: called as each frame is read whole (the request quota's reading time)
    on_frame_read: Callable[[], None] | None = None


class RequestProcessor(Protocol):
    """The broker side of the transport: one frame (no size prefix) in, an outcome out.
    A processor may also define ``on_connection(info)``, called once per accepted
    connection before its first frame is read, and ``on_disconnect(info)``, called once
    it closed (Kafka's ``ConnectionDisconnectListener``)."""

    async def process(self, frame: bytes, connection: ConnectionInfo) -> Outcome: ...


@dataclass(frozen=True)
class TlsListener:
    """A TLS listener's context and how a peer certificate names the principal
    (``principal_of(ssl_object)``, which raises when no mapping rule applies)."""

    context: ssl.SSLContext
    principal_of: Callable[[ssl.SSLObject], str]


@dataclass
class Limits:
    """The transport's settings (Kafka's names in :meth:`SocketServer.from_config`)."""

    max_request_bytes: int = 100 * 1024 * 1024
    idle_ms: int = 600_000
    max_connections: int = 2**31 - 1
    max_connections_per_ip: int = 2**31 - 1
    per_ip_overrides: dict[str, int] = field(default_factory=dict)


class _Reader(asyncio.StreamReader):
    """A stream reader that notes when it last received bytes (for idle expiry)."""

    def __init__(self, *, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop=loop)
        self.last_received = time.monotonic()

    def feed_data(self, data: Iterable[SupportsIndex]) -> None:
        self.last_received = time.monotonic()
        super().feed_data(data)

    def holds(self, n: int) -> bool:
        """Whether ``n`` bytes are buffered already (``readexactly(n)`` will not wait)."""
        buffer: bytearray = getattr(self, "_buffer")  # noqa: B009 (asyncio's own buffer)
        return len(buffer) >= n


class _IdleConnection(Exception):
    """No socket activity for ``connections.max.idle.ms``."""


class _Waiter:
    """The one waiter of :class:`_Frames` and :class:`_Signal`: it awaits ``arm()`` until
    its condition holds, and ``wake`` completes what it awaits (a plain future, no
    coroutine frame of its own kept while a connection is idle)."""

    __slots__ = ("_future",)

    def __init__(self) -> None:
        self._future: asyncio.Future[None] | None = None

    def arm(self) -> asyncio.Future[None]:
        self._future = future = asyncio.get_running_loop().create_future()
        return future

    def wake(self) -> None:
        future, self._future = self._future, None
        if future is not None and not future.done():
            future.set_result(None)


class _Frames:
    """A connection's frames read ahead and not processed yet, oldest first: the part of
    ``asyncio.Queue`` the connection uses (``put_nowait``, ``get`` for its one worker,
    ``task_done``, ``join``). An ``asyncio.Queue`` holds four deques, and an empty deque
    takes about 600 bytes; every idle connection has one of these."""

    __slots__ = ("_getter", "_items", "_joiner", "_unfinished")

    def __init__(self) -> None:
        self._items: list[bytes | None] = []
        self._unfinished = 0
        self._getter = _Waiter()
        self._joiner = _Waiter()

    def qsize(self) -> int:
        return len(self._items)

    def empty(self) -> bool:
        return not self._items

    def put_nowait(self, frame: bytes | None) -> None:
        self._items.append(frame)
        self._unfinished += 1
        self._getter.wake()

    async def get(self) -> bytes | None:
        while not self._items:
            await self._getter.arm()
        return self._items.pop(0)

    def task_done(self) -> None:
        self._unfinished -= 1
        if not self._unfinished:
            self._joiner.wake()

    async def join(self) -> None:
        """Until every frame put has been marked done."""
        while self._unfinished:
            await self._joiner.arm()


class _Signal:
    """``asyncio.Event``'s ``set``/``clear``/``wait`` for one waiter, without the event's
    deque of waiters (see :class:`_Frames`)."""

    __slots__ = ("_value", "_waiter")

    def __init__(self) -> None:
        self._value = False
        self._waiter = _Waiter()

    def set(self) -> None:
        self._value = True
        self._waiter.wake()

    def clear(self) -> None:
        self._value = False

    async def wait(self) -> None:
        while not self._value:
            await self._waiter.arm()


@dataclass(slots=True)
class _Flow:
    """One connection's read-ahead (back-pressure) and activity (idle expiry). The
    reader and the worker of the connection share it, on the event loop thread."""

    reader: _Reader
    transport: asyncio.WriteTransport
    #: bytes of the frames read but not processed yet
    queued_bytes: int = 0
    #: the worker is writing a response (its progress is the connection's activity)
    writing: bool = False
    #: the worker waits out a quota's throttle time (the channel is muted)
    throttled: bool = False
    #: a request is queued or in flight
    busy: bool = False
    last_written: float = field(default_factory=time.monotonic)
    #: the unsent bytes in the transport and in the kernel when last looked at: either
    #: going down is progress (moved to the kernel, acknowledged by the peer)
    unsent: tuple[int, int] = (0, 0)
    #: set whenever the worker finished a frame (the reader may read ahead again)
    room: _Signal = field(default_factory=_Signal)

    def quiet_s(self) -> float:
        """Seconds since the last byte received or the last progress writing (the
        transport's buffer or the kernel's send queue went down: a ``sendfile`` in
        progress leaves the first empty; the second grows as the kernel's buffer is
        autotuned, without the peer reading anything)."""
        now = time.monotonic()
        unsent = (self.transport.get_write_buffer_size(), _kernel_unsent(self.transport))
        if unsent[0] < self.unsent[0] or unsent[1] < self.unsent[1]:
            self.last_written = now
        self.unsent = unsent
        return now - max(self.reader.last_received, self.last_written)


class SocketServer:
    """Listeners plus their connections. ``listeners``: ``(name, host, port)``; port 0
    binds a free port (:attr:`bound_ports` says which). ``security_protocols``: listener
    name -> security protocol, told to the processor with each connection (PLAINTEXT when
    not given)."""

    def __init__(
        self,
        processor: RequestProcessor,
        listeners: Sequence[tuple[str, str | None, int]],
        limits: Limits | None = None,
        security_protocols: Mapping[str, str] | None = None,
        tls: Mapping[str, TlsListener] | None = None,
    ) -> None:
        self._processor = processor
        self._tls = dict(tls or {})
        self._on_connection: Callable[[ConnectionInfo], None] | None = getattr(
            processor, "on_connection", None
        )
        self._on_disconnect: Callable[[ConnectionInfo], None] | None = getattr(
            processor, "on_disconnect", None
        )
        self._listeners = list(listeners)
        self._security_protocols = dict(security_protocols or {})
        self._limits = limits or Limits()
        self._servers: list[asyncio.Server] = []
        self._connections: dict[str, asyncio.Task[None]] = {}
        self._per_ip: dict[str, int] = {}
        # connections over max.connections waiting for a slot, oldest first
        self._slot_waiters: deque[asyncio.Future[None]] = deque()
        self._closing = False
        self._next_id = 0
        self.bound_ports: dict[str, int] = {}
        self.on_request_done: Callable[[bytes, float, float], None] | None = None  # metrics

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        for name, host, port in self._listeners:
            tls = self._tls.get(name)
            accept = functools.partial(self._accept, listener=name)

            def protocol(
                accept: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]] = (
                    accept
                ),
            ) -> asyncio.StreamReaderProtocol:
                # asyncio.start_server's protocol, with a reader that notes its activity
                return asyncio.StreamReaderProtocol(_Reader(loop=loop), accept, loop=loop)

            server = await loop.create_server(
                protocol,
                host=host or None,
                port=port,
                reuse_address=True,
                ssl=tls.context if tls is not None else None,
                ssl_handshake_timeout=10.0 if tls is not None else None,
            )
            self._servers.append(server)
            self.bound_ports[name] = server.sockets[0].getsockname()[1]
            logger.info("Listening on %s (%s:%s)", name, host or "*", self.bound_ports[name])

    async def stop_accepting(self) -> None:
        for server in self._servers:
            server.close()
        for server in self._servers:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 0.1)

    async def close_connections(self, grace_s: float = 1.0) -> None:
        self._closing = True
        for waiter in self._slot_waiters:
            if not waiter.done():
                waiter.set_result(None)
        tasks = list(self._connections.values())
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=grace_s)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

    async def _accept(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, listener: str
    ) -> None:
        peer = writer.get_extra_info("peername") or ("?", 0)
        local = writer.get_extra_info("sockname") or ("?", 0)
        ip = str(peer[0])
        limits = self._limits
        if len(self._connections) >= limits.max_connections and not await self._slot(ip):
            writer.close()
            return
        ip_limit = limits.per_ip_overrides.get(ip, limits.max_connections_per_ip)
        if self._per_ip.get(ip, 0) >= ip_limit:
            logger.info(
                "Refusing connection from %s: too many connections (maximum %d)", ip, ip_limit
            )
            writer.close()
            return
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._next_id += 1
        conn_id = f"{local[0]}:{local[1]}-{ip}:{peer[1]}-{self._next_id}"
        protocol = self._security_protocols.get(listener, "PLAINTEXT")
        info = ConnectionInfo(conn_id, listener, ip, int(peer[1]), int(local[1]), protocol)
        tls = self._tls.get(listener)
        if tls is not None:
            try:
                info.principal_name = tls.principal_of(writer.get_extra_info("ssl_object"))
            except Exception as exc:
                logger.info("Failed authentication with %s (%s)", ip, exc)
                writer.close()
                return
        if self._on_connection is not None:
            self._on_connection(info)
        task = asyncio.current_task()
        assert task is not None
        self._connections[conn_id] = task
        self._per_ip[ip] = self._per_ip.get(ip, 0) + 1
        try:
            await self._serve(reader, writer, info)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            pass
        except Exception:
            logger.exception("Unexpected error on connection %s", conn_id)
        finally:
            del self._connections[conn_id]
            if self._on_disconnect is not None:
                try:
                    self._on_disconnect(info)
                except Exception:
                    logger.exception("Disconnect listener failed on %s", conn_id)
            self._per_ip[ip] -= 1
            if not self._per_ip[ip]:
                del self._per_ip[ip]
            while self._slot_waiters:
                waiter = self._slot_waiters.popleft()
                if not waiter.done():
                    waiter.set_result(None)
                    break
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _slot(self, ip: str) -> bool:
        """Wait until fewer than ``max.connections`` are open (Kafka's acceptor blocks
        the same way); ``False`` when too many connections wait already."""
        if len(self._slot_waiters) >= MAX_WAITING_CONNECTIONS:
            logger.info("Refusing connection from %s: too many connections waiting", ip)
            return False
        while len(self._connections) >= self._limits.max_connections:
            waiter = asyncio.get_running_loop().create_future()
            self._slot_waiters.append(waiter)
            try:
                await waiter
            finally:
                with contextlib.suppress(ValueError):
                    self._slot_waiters.remove(waiter)
            if self._closing:
                return False
        return True

    async def _serve(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, info: ConnectionInfo
    ) -> None:
        # unbounded: the reader stops reading ahead before MAX_QUEUED_FRAMES (_may_read_ahead)
        frames = _Frames()
        assert isinstance(reader, _Reader)
        flow = _Flow(reader, writer.transport)
        worker = asyncio.create_task(self._process_frames(frames, writer, info, flow))

        def worker_done(task: asyncio.Task[None]) -> None:
            flow.room.set()
            exc = None if task.cancelled() else task.exception()
            if exc is None:
                return
            # the requests of a connection are answered in order: one that failed outside
            # its handler (which answers its own errors) leaves nothing to answer with, so
            # the connection closes now, as Kafka's Processor closes it, instead of waiting
            # for the client's next request until connections.max.idle.ms
            if not isinstance(exc, ConnectionError):
                logger.error(
                    "Closing connection %s: processing a request failed",
                    info.connection_id,
                    exc_info=exc,
                )
            writer.transport.abort()

        worker.add_done_callback(worker_done)
        try:
            while not worker.done():
                while not worker.done() and not self._may_read_ahead(frames, flow):
                    flow.room.clear()  # muted until the worker catches up
                    await self._active(flow.room.wait, flow)
                size = await self._read_size(reader, worker, flow)
                if size is None:
                    break
                if info.max_frame_bytes is not None and not 0 <= size <= info.max_frame_bytes:
                    logger.info(
                        "Closing connection %s: Failing SASL authentication due to invalid "
                        "receive size %d (sasl.server.max.receive.size %d)",
                        info.connection_id,
                        size,
                        info.max_frame_bytes,
                    )
                    break
                if size < 0 or size > self._limits.max_request_bytes:
                    logger.warning(
                        "Closing connection %s: request size %d is larger than "
                        "socket.request.max.bytes %d (or negative)",
                        info.connection_id,
                        size,
                        self._limits.max_request_bytes,
                    )
                    break
                # a half-sent frame is no activity: it is subject to the idle expiry too
                frame = await self._read_exactly(reader, size, flow)
                if info.on_frame_read is not None:
                    info.on_frame_read()
                flow.busy = True
                flow.queued_bytes += size
                frames.put_nowait(frame)
                del frame  # the queue's now: an idle connection holds no request
                if info.max_frame_bytes is not None:
                    # not authenticated: no read-ahead (Kafka mutes the channel while a
                    # request is in flight), so an unauthenticated peer holds at most one
                    # frame of sasl.server.max.receive.size in the broker's memory
                    await self._until_processed(frames, worker)
        except _IdleConnection:
            logger.info(
                "Closing connection %s: idle for connections.max.idle.ms %d",
                info.connection_id,
                self._limits.idle_ms,
            )
            # the worker first (a write stuck in loop.sendfile: aborting the transport under
            # it leaves asyncio a finished waiter to fail), then the transport: its unsent
            # answers go nowhere
            worker.cancel()
            await asyncio.wait({worker}, timeout=1.0)
            writer.transport.abort()
        except asyncio.CancelledError:
            # a shutdown past its grace period: the request in flight is dropped (its
            # response would go nowhere) instead of holding the shutdown until it completes
            # (an acks=all produce waits up to its timeout); the shielded work goes on
            worker.cancel()
            raise
        finally:
            if not worker.done():
                frames.put_nowait(None)
            with contextlib.suppress(Exception):
                await worker  # also retrieves its error (a reset while writing)

    @staticmethod
    def _may_read_ahead(frames: _Frames, flow: _Flow) -> bool:
        """Whether the reader may read another frame: few enough queued, and the unsent
        output below the transport's high-water mark (a slow reader's connection is
        muted until its answers leave), and not throttled by a quota."""
        if frames.qsize() >= MAX_QUEUED_FRAMES or flow.queued_bytes >= READ_AHEAD_BYTES:
            return False
        if flow.throttled:
            return False
        return flow.transport.get_write_buffer_size() <= flow.transport.get_write_buffer_limits()[1]

    async def _read_exactly(self, reader: _Reader, n: int, flow: _Flow) -> bytes:
        """``reader.readexactly(n)`` under the idle expiry; without a timer when the bytes
        are there already (pipelined frames, a frame's body after its size)."""
        if reader.holds(n):
            return await reader.readexactly(n)
        return await self._active(functools.partial(reader.readexactly, n), flow)

    async def _active(self, operation: Callable[[], Awaitable[_T]], flow: _Flow) -> _T:
        """``operation()``'s result (it must be safe to cancel and start again, as
        ``readexactly`` is: it consumes nothing until it has every byte); raises
        :class:`_IdleConnection` once the connection had no socket activity for
        ``connections.max.idle.ms``. A request being handled (not written) keeps the
        connection active."""
        idle_s = self._limits.idle_ms / 1000
        while True:
            if flow.busy and not flow.writing:
                left = min(idle_s, 1.0)  # handling a request: look again later
            else:
                left = idle_s - flow.quiet_s()
                if left <= 0:
                    raise _IdleConnection
                if flow.writing:
                    left = min(left, 1.0)  # progress is sampled: date it within a second
            try:
                return await within(operation(), left)
            except TimeoutError:
                continue

    @staticmethod
    async def _until_processed(frames: _Frames, worker: asyncio.Task[None]) -> None:
        join = asyncio.ensure_future(frames.join())
        try:
            await asyncio.wait({join, worker}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            join.cancel()

    async def _read_size(
        self,
        reader: _Reader,
        worker: asyncio.Task[None],
        flow: _Flow,
    ) -> int | None:
        """The next frame's size; ``None`` at EOF or when the worker ended (idle:
        :class:`_IdleConnection`)."""
        if worker.done():
            return None
        try:
            head = await self._read_exactly(reader, 4, flow)
        except asyncio.IncompleteReadError:
            return None
        return int(_SIZE.unpack(head)[0])

    async def _process_frames(
        self,
        frames: _Frames,
        writer: asyncio.StreamWriter,
        info: ConnectionInfo,
        flow: _Flow,
    ) -> None:
        while True:
            frame = await frames.get()
            try:
                if frame is None:
                    return
                info.requests += 1
                started = asyncio.get_running_loop().time()
                outcome = await self._processor.process(frame, info)
                if outcome.throttle_ms > 0 and outcome.delay_response:
                    await asyncio.sleep(outcome.throttle_ms / 1000)
                if outcome.parts:
                    flow.writing = True
                    try:
                        await self._write(writer, outcome.parts)
                    finally:
                        flow.writing = False
                        flow.last_written = time.monotonic()
                if self.on_request_done is not None:
                    self.on_request_done(frame, started, asyncio.get_running_loop().time())
                if outcome.on_written is not None:
                    outcome.on_written()
                if outcome.throttle_ms > 0 and not outcome.delay_response:
                    flow.throttled = True  # KIP-219: nothing is read while throttled
                    try:
                        await asyncio.sleep(outcome.throttle_ms / 1000)
                    finally:
                        flow.throttled = False
                if frames.empty():
                    flow.busy = False
                if outcome.close:
                    writer.close()
                    return
            finally:
                if frame is not None:
                    flow.queued_bytes -= len(frame)
                flow.room.set()
                frames.task_done()
            # while it waits for the next request, an idle connection holds neither the
            # last request nor its answer's parts
            del frame, outcome

    async def _write(self, writer: asyncio.StreamWriter, parts: Sequence[Part]) -> None:
        if writer.get_extra_info("ssl_object") is None:
            await _write_plain(writer, parts)
            return
        # no sendfile through TLS: the regions are read (all in one worker-thread call
        # when they are large) and sent with the other parts
        regions = [p for p in parts if isinstance(p, FileRegion) and p.length]
        if sum(r.length for r in regions) > _INLINE_READ_BYTES:
            read = await asyncio.to_thread(_read_regions, regions)
        else:
            read = _read_regions(regions)
        pending: list[bytes | bytearray | memoryview] = []
        for part in parts:
            if not isinstance(part, FileRegion):
                pending.append(part)
            elif part.length:
                pending.append(read[id(part)])
        if pending:
            # one list to the TLS transport: encrypted part by part, no joined copy
            writer.writelines(pending)
        await writer.drain()


def _kernel_unsent(transport: asyncio.BaseTransport) -> int:
    """Bytes in the socket's send queue not yet acknowledged by the peer (``TIOCOUTQ``;
    0 where the platform has no such query)."""
    sock = transport.get_extra_info("socket")
    if sock is None or _TIOCOUTQ is None:
        return 0
    try:
        raw = fcntl.ioctl(sock.fileno(), _TIOCOUTQ, b"\0\0\0\0")
    except OSError:
        return 0
    return int.from_bytes(raw, sys.byteorder, signed=True)


def _read_regions(regions: Sequence[FileRegion]) -> dict[int, bytes]:
    """Each region's bytes, by ``id`` of the region (blocking: file reads)."""
    return {id(r): r.read_bytes() for r in regions}


def _direct_socket(writer: asyncio.StreamWriter) -> socket.socket | None:
    """The connection's socket when bytes may be written to it directly: a plain TCP
    transport with nothing queued (so nothing can be overtaken) that is not closing."""
    transport = writer.transport
    if transport.is_closing() or transport.get_write_buffer_size():
        return None
    # asyncio's TransportSocket wraps the real socket as ``_sock`` (3.8+)
    sock = getattr(writer.get_extra_info("socket"), "_sock", None)
    return sock if isinstance(sock, socket.socket) else None


def _send_direct(sock: socket.socket, data: bytes, more: bool) -> int:
    """Bytes of ``data`` the kernel took now (``MSG_MORE`` when parts follow, so a
    response's header goes out in the same segments as its records)."""
    try:
        return sock.send(data, _MSG_MORE if more else 0)
    except (BlockingIOError, InterruptedError):
        return 0


def _open_region(region: FileRegion) -> int | None:
    """A descriptor on the region's file, or ``None`` when the region must be sent from
    :meth:`FileRegion.read_bytes` (the segment was deleted since, or truncated below the
    region: the response already declared its length)."""
    try:
        fd = os.open(region.file, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    if os.fstat(fd).st_size < region.position + region.length:
        os.close(fd)
        return None
    return fd


async def _write_plain(writer: asyncio.StreamWriter, parts: Sequence[Part]) -> None:
    """A response on a plain TCP connection. While the transport has nothing queued, the
    parts go straight to the socket from this call: bytes with ``send`` (``MSG_MORE``
    when more follow), file regions with ``os.sendfile`` -- no task switch, no
    ``pause_reading``/``resume_reading``, one file descriptor per region. What the
    kernel does not take at once (a full socket buffer: a slow reader) goes through the
    transport (``write`` + ``drain``, ``loop.sendfile``), which applies back-pressure."""
    sock = _direct_socket(writer)
    pending: list[bytes | bytearray | memoryview] = []
    last = len(parts) - 1
    for i, part in enumerate(parts):
        if not isinstance(part, FileRegion):
            pending.append(part)
            continue
        if part.length == 0:
            continue
        if pending:
            data = b"".join(pending)
            pending = []
            sent = _send_direct(sock, data, True) if sock is not None else 0
            if sent < len(data):
                sock = None
                writer.write(data[sent:])
        fd = _open_region(part)
        if fd is None:
            data = part.read_bytes()
            sent = _send_direct(sock, data, i < last) if sock is not None else 0
            if sent < len(data):
                sock = None
                writer.write(data[sent:])
            continue
        try:
            position, left = part.position, part.length
            if sock is not None:
                with contextlib.suppress(BlockingIOError, InterruptedError):
                    while left > 0:
                        n = os.sendfile(sock.fileno(), fd, position, left)
                        if n == 0:  # the file ended under us: keep the declared framing
                            break
                        position += n
                        left -= n
            if left > 0:
                sock = None
                rest = FileRegion(part.file, position, left)
                await writer.drain()
                with open(fd, "rb", closefd=False) as f:
                    fits = os.fstat(fd).st_size >= position + left
                    if fits:
                        await asyncio.get_running_loop().sendfile(
                            writer.transport, f, position, left, fallback=True
                        )
                    else:
                        writer.write(rest.read_bytes())
        finally:
            os.close(fd)
    if pending:
        data = b"".join(pending)
        sent = _send_direct(sock, data, False) if sock is not None else 0
        if sent < len(data):
            writer.write(data[sent:])
    await writer.drain()
