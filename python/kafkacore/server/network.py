"""The broker's transport (Kafka's ``SocketServer``), on asyncio: it moves frames and
nothing else. Decoding, handling and encoding belong to the :class:`RequestProcessor`
it is given (the broker's request channel); this module never sees a request object.

Per connection (one slotted :class:`_Connection`, an asyncio ``BufferedProtocol``):

* **Framing**: a request is an ``int32`` size then that many bytes. The declared size is
  checked against ``socket.request.max.bytes`` *before* the body is read: a larger (or
  negative) size closes the connection, logged once, as Kafka does. Each frame is read
  into a buffer of its own size and handed on as a ``memoryview`` of it: no
  ``StreamReader`` buffer, no ``readexactly`` slice, no ``bytes()`` copy; a large body
  (a Produce's records) goes from the socket straight into that buffer. Between frames
  the transport reads into one scratch buffer the server shares among its connections,
  so an idle connection holds no read buffer.
* **Order**: frames are read ahead (pipelining: up to :data:`MAX_QUEUED_FRAMES`), but
  processed one at a time and answered strictly in request order (Kafka mutes a channel
  while its request is in flight for the same reason: appends from one producer
  connection must not be reordered). A connection has a task only while it has requests
  to process.
* **Answers**: the processor returns an :class:`Outcome`: response parts to write,
  nothing (``acks=0`` Produce), or "close". A part is ``bytes`` or a :class:`FileRegion`.
  On plain TCP, while the transport has nothing queued, a response goes straight to the
  socket from the request's task: bytes with ``send(MSG_MORE)``, regions with
  ``os.sendfile`` (zero copy); what the socket does not take at once goes through the
  transport (``write`` then waiting out ``pause_writing``, ``loop.sendfile``), so a slow
  reader is back-pressured. ``sendfile`` cannot go through
  TLS: on a TLS connection a region is read (one ``pread`` per region, on a worker
  thread when large) and handed to the TLS transport with the response's other parts
  in one ``writelines`` (no joined copy), so OpenSSL encrypts the whole response in one
  pass instead of asyncio's 16 KiB executor round trips.
* **TLS**: a listener with an :class:`ssl.SSLContext` (``tls``) serves only after the
  handshake; the peer certificate's principal name (``principal_of``) is put in
  :attr:`ConnectionInfo.principal_name` (``ANONYMOUS`` without a certificate); a
  certificate no mapping rule names closes the connection. asyncio's SSL layer reads
  decrypted bytes into the same buffers (it supports buffered protocols).
* **Before authentication** (SASL): :attr:`ConnectionInfo.max_frame_bytes`, when set
  (``sasl.server.max.receive.size``), bounds the declared size instead of
  ``socket.request.max.bytes``, checked before anything is allocated (CVE-2022-34917),
  and nothing is read ahead: the next frame is not parsed until the one in flight is
  answered (Kafka mutes the channel), so its bound is the one that applies then.
* **Back-pressure**: reading stops (``pause_reading``) while the transport is over its
  high-water mark (``pause_writing``), the queued requests hold more than
  :data:`READ_AHEAD_BYTES` or :data:`MAX_QUEUED_FRAMES`, or a quota throttles the
  connection, and resumes when they no longer do; the socket's receive buffer then fills
  and TCP stops the client. A client that sends requests but never reads its answers (a
  slow reader) so holds about one response and a bounded read-ahead in the broker,
  whatever it asks for (Kafka mutes the channel while a response is in flight).
* **Idle** (Kafka's idle expiry): a connection is closed after ``connections.max.idle.ms``
  with no socket activity: no byte received (a frame's head or body alike: a half-sent
  frame is no activity) and no progress writing its answer (a reader that stopped
  reading). A request being handled (a long-polling Fetch) is not idleness. One
  periodic sweep of the server checks every connection (no timer per connection).
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
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kafkacore.log import read_region

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
# the read buffer shared by the connections between frames (asyncio's own read size)
_SCRATCH_BYTES = 256 * 1024
# a frame body with at least this much left is read straight into the frame's buffer
_DIRECT_READ_BYTES = 64 * 1024
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

    async def process(self, frame: memoryview, connection: ConnectionInfo) -> Outcome: ...


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


class _Connection(asyncio.BufferedProtocol):
    """One connection (Kafka's ``KafkaChannel`` on its ``Processor``): reads frames into
    buffers of their own size, queues them, and runs one task that processes them in
    order and writes their answers; the task exists only while there is work, so an
    idle connection is this object, its :class:`ConnectionInfo` and asyncio's transport.

    Reading: while no frame is being read, the transport reads into the server's shared
    scratch buffer (many small pipelined frames in one ``recv``); a frame's body larger
    than that is read straight into the frame's own buffer (a large Produce lands in the
    buffer its request is decoded from: no copy). The asyncio transport calls
    ``get_buffer``, ``recv_into`` and ``buffer_updated`` one after the other on the loop
    thread, so one scratch buffer serves every connection. Bytes that may not be parsed
    yet (read ahead over the limits, or while an unauthenticated request is in flight)
    wait in :attr:`_parked`.

    Thread-safety: the event loop thread only."""

    __slots__ = (
        "_direct",
        "_drain_waiter",
        "_eof",
        "_filled",
        "_frame",
        "_head",
        "_in_flight",
        "_listener",
        "_parked",
        "_queue",
        "_queued_bytes",
        "_reading",
        "_server",
        "_stopped",
        "_task",
        "_throttled",
        "_unsent",
        "_write_paused",
        "closed",
        "info",
        "last_active",
        "transport",
        "waiting",
        "writing",
    )

    def __init__(self, server: SocketServer, listener: str) -> None:
        self._server = server
        self._listener = listener
        self.transport: asyncio.Transport | None = None
        self.info: ConnectionInfo | None = None
        self._head = b""  # a size prefix split between two reads
        self._frame: bytearray | None = None  # the frame being read
        self._filled = 0
        self._direct = False  # the last get_buffer was the frame's own buffer
        self._parked = b""
        self._queue: list[memoryview] = []
        self._queued_bytes = 0
        self._in_flight = False
        self._task: asyncio.Task[None] | None = None
        self._reading = True
        self._write_paused = False
        self._drain_waiter: asyncio.Future[None] | None = None
        self._throttled = False
        self._eof = False  # the socket is read no more
        self._stopped = False  # no further frame is taken (refused size, close, shutdown)
        self.closed = False
        #: waiting for a slot under ``max.connections`` (not registered yet)
        self.waiting = False
        #: a response is being written (its progress is the connection's activity)
        self.writing = False
        self.last_active = time.monotonic()
        #: the unsent bytes in the transport and in the kernel when last sampled
        self._unsent = (0, 0)

    @property
    def processing(self) -> bool:
        """Whether the connection has a request queued or in flight (so a task)."""
        return self._task is not None

    # -- asyncio's protocol callbacks ------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self._server._admit(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._queue.clear()
        self._queued_bytes = 0
        self._frame = None
        self._parked = b""
        waiter, self._drain_waiter = self._drain_waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(ConnectionResetError("Connection lost"))
        self._server._release(self)

    def eof_received(self) -> bool:
        # the requests read before the end are answered, then the connection closes
        self._eof = True
        self._set_reading()
        # asyncio's SSL layer closes at the end whatever this returns (and warns if True)
        return self._task is not None and not self._server.is_tls(self._listener)

    def pause_writing(self) -> None:
        self._write_paused = True  # a slow reader: its connection is not read either
        self._set_reading()

    def resume_writing(self) -> None:
        self._write_paused = False
        waiter, self._drain_waiter = self._drain_waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        self._set_reading()

    def get_buffer(self, sizehint: int) -> memoryview | bytearray:
        frame = self._frame
        if frame is not None and len(frame) - self._filled >= _DIRECT_READ_BYTES:
            self._direct = True
            return memoryview(frame)[self._filled :]
        self._direct = False
        # a memoryview, not the bytearray: asyncio's SSL layer fills it in pieces through
        # slices of it (a bytearray's slice would be a copy)
        return self._server.scratch_view

    def buffer_updated(self, nbytes: int) -> None:
        self.last_active = time.monotonic()
        if self._direct:
            self._filled += nbytes
            frame = self._frame
            assert frame is not None
            if self._filled == len(frame):
                self._complete(frame)
            return
        self._feed(self._server.scratch_view[:nbytes])

    # -- reading ---------------------------------------------------------------------------

    def _may_parse(self) -> bool:
        """Whether another frame may be taken now: not while an unauthenticated request
        is in flight (Kafka mutes the channel: a SASL peer holds at most one frame of
        ``sasl.server.max.receive.size``), and only up to the read-ahead bounds."""
        if self.closed or self._stopped:
            return False
        info = self.info
        if (
            info is not None
            and info.max_frame_bytes is not None
            and (self._queue or self._in_flight)
        ):
            return False
        return len(self._queue) < MAX_QUEUED_FRAMES and self._queued_bytes < READ_AHEAD_BYTES

    def _feed(self, data: memoryview) -> None:
        """Parse ``data`` (read from the socket) into frames; park what may not be
        parsed yet (copied: ``data`` may be the shared scratch)."""
        pos, end = 0, len(data)
        while pos < end:
            frame = self._frame
            if frame is None:
                if not self._may_parse():
                    if not self.closed and not self._stopped:
                        self._parked += bytes(data[pos:])
                        self._set_reading()
                    return
                need = 4 - len(self._head)
                if end - pos < need:
                    self._head += bytes(data[pos:])
                    return
                if self._head:
                    (size,) = _SIZE.unpack(self._head + bytes(data[pos : pos + need]))
                    self._head = b""
                else:
                    (size,) = _SIZE.unpack_from(data, pos)
                pos += need
                if not self._size_allowed(size):
                    self._end_reading()
                    return
                frame = self._frame = bytearray(size)
                self._filled = 0
            take = min(len(frame) - self._filled, end - pos)
            frame[self._filled : self._filled + take] = data[pos : pos + take]
            self._filled += take
            pos += take
            if self._filled == len(frame):
                self._complete(frame)

    def _size_allowed(self, size: int) -> bool:
        """Whether a frame of the declared ``size`` may be read (checked before anything
        is allocated); logs why not, as Kafka does."""
        info = self.info
        assert info is not None
        if info.max_frame_bytes is not None and not 0 <= size <= info.max_frame_bytes:
            logger.info(
                "Closing connection %s: Failing SASL authentication due to invalid "
                "receive size %d (sasl.server.max.receive.size %d)",
                info.connection_id,
                size,
                info.max_frame_bytes,
            )
            return False
        limit = self._server.limits.max_request_bytes
        if size < 0 or size > limit:
            logger.warning(
                "Closing connection %s: request size %d is larger than "
                "socket.request.max.bytes %d (or negative)",
                info.connection_id,
                size,
                limit,
            )
            return False
        return True

    def _complete(self, frame: bytearray) -> None:
        """A whole frame: queued for the connection's task (started if need be)."""
        self._frame = None
        info = self.info
        assert info is not None
        if info.on_frame_read is not None:
            info.on_frame_read()
        self._queue.append(memoryview(frame))
        self._queued_bytes += len(frame)
        if self._task is None:
            self._task = task = asyncio.get_running_loop().create_task(self._run())
            task.add_done_callback(self._task_done)
        self._set_reading()

    def _set_reading(self) -> None:
        """Read while the connection may take more: registered, not throttled, its
        answers leaving (the transport below its high-water mark), and room to read
        ahead (Kafka's muted channel, with a bounded read-ahead)."""
        transport = self.transport
        if transport is None or self.closed:
            return
        want = (
            not self._eof
            and not self.waiting
            and not self._throttled
            and not self._write_paused
            and not self._parked
            and self._may_parse()
        )
        if want != self._reading:
            self._reading = want
            if want:
                transport.resume_reading()
            else:
                transport.pause_reading()

    def _end_reading(self) -> None:
        """Read nothing more: the queued requests are answered, then the connection
        closes (at once when none is queued)."""
        self._eof = self._stopped = True
        self._parked = b""
        self._set_reading()
        if self._task is None and self.transport is not None:
            self.transport.close()

    def _unpark(self) -> None:
        """Parse the parked bytes if they may be parsed now."""
        if self._parked and self._may_parse():
            parked, self._parked = self._parked, b""
            self._feed(memoryview(parked))

    # -- processing ------------------------------------------------------------------------

    async def _run(self) -> None:
        """Process the queued frames one at a time, in order, answering each."""
        server = self._server
        info = self.info
        transport = self.transport
        assert info is not None and transport is not None
        loop = asyncio.get_running_loop()
        queue = self._queue
        while queue and not self.closed:
            frame = queue.pop(0)
            self._in_flight = True
            try:
                info.requests += 1
                started = loop.time()
                outcome = await server.processor.process(frame, info)
                if outcome.throttle_ms > 0 and outcome.delay_response:
                    await asyncio.sleep(outcome.throttle_ms / 1000)
                if outcome.parts:
                    self.writing = True
                    try:
                        await self._write(outcome.parts)
                    finally:
                        self.writing = False
                self.last_active = time.monotonic()
                if server.on_request_done is not None:
                    server.on_request_done(frame, started, loop.time())
                if outcome.on_written is not None:
                    outcome.on_written()
                if outcome.throttle_ms > 0 and not outcome.delay_response:
                    self._throttled = True  # KIP-219: nothing is read while throttled
                    self._set_reading()
                    try:
                        await asyncio.sleep(outcome.throttle_ms / 1000)
                    finally:
                        self._throttled = False
                if outcome.close:
                    queue.clear()
                    self._end_reading()
            finally:
                self._queued_bytes -= len(frame)
                self._in_flight = False
            # while it waits for the next request, an idle connection holds neither the
            # last request nor its answer's parts
            del frame, outcome
            self._unpark()
            self._set_reading()
        self._task = None
        if self._eof:
            transport.close()

    def _task_done(self, task: asyncio.Task[None]) -> None:
        if self._task is task:  # not a later task started after this one returned
            self._task = None
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
                self.info.connection_id if self.info is not None else "?",
                exc_info=exc,
            )
        if self.transport is not None:
            self.transport.abort()

    async def _drain(self) -> None:
        """Until the transport is below its high-water mark again."""
        if self.closed:
            raise ConnectionResetError("Connection lost")
        if self._write_paused:
            waiter = self._drain_waiter = asyncio.get_running_loop().create_future()
            await waiter

    async def _write(self, parts: Sequence[Part]) -> None:
        transport = self.transport
        assert transport is not None
        if transport.get_extra_info("ssl_object") is None:
            await _write_plain(transport, parts, self._drain)
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
            transport.writelines(pending)
        await self._drain()

    # -- idle expiry (the server's sweep) --------------------------------------------------

    def quiet_s(self, now: float) -> float:
        """Seconds without socket activity: 0 while a request is handled (not written);
        while one is written, its progress (the transport's buffer or the kernel's send
        queue went down since the last sweep: a ``sendfile`` in progress leaves the
        first empty, the second grows as the kernel's buffer is autotuned, without the
        peer reading anything) is activity."""
        if self._task is not None and not self.writing:
            return 0.0
        if self.writing and self.transport is not None:
            unsent = (self.transport.get_write_buffer_size(), _kernel_unsent(self.transport))
            if unsent[0] < self._unsent[0] or unsent[1] < self._unsent[1]:
                self.last_active = now
            self._unsent = unsent
        return now - self.last_active

    async def expire(self) -> None:
        """Close for idleness: the task first (a write stuck in ``loop.sendfile``:
        aborting the transport under it leaves asyncio a finished waiter to fail), then
        the transport: its unsent answers go nowhere."""
        task = self._task
        if task is not None:
            task.cancel()
            await asyncio.wait({task}, timeout=1.0)
        if self.transport is not None:
            self.transport.abort()


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
        self.processor = processor
        self._tls = dict(tls or {})
        self._on_connection: Callable[[ConnectionInfo], None] | None = getattr(
            processor, "on_connection", None
        )
        self._on_disconnect: Callable[[ConnectionInfo], None] | None = getattr(
            processor, "on_disconnect", None
        )
        self._listeners = list(listeners)
        self._security_protocols = dict(security_protocols or {})
        self.limits = limits or Limits()
        self._servers: list[asyncio.Server] = []
        self._connections: set[_Connection] = set()
        self._per_ip: dict[str, int] = {}
        # connections over max.connections waiting for a slot, oldest first
        self._slot_waiters: deque[_Connection] = deque()
        self._closing = False
        self._next_id = 0
        self._sweeper: asyncio.Task[None] | None = None
        self._expiring: set[asyncio.Task[None]] = set()
        #: the read buffer every connection's transport reads into between frames
        self.scratch = bytearray(_SCRATCH_BYTES)
        self.scratch_view = memoryview(self.scratch)
        self.bound_ports: dict[str, int] = {}
        self.on_request_done: Callable[[memoryview, float, float], None] | None = None  # metrics

    def is_tls(self, listener: str) -> bool:
        return listener in self._tls

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    def connection_counts(self) -> dict[str, int]:
        """``open`` connections, those ``processing`` a request (a delayed Fetch or
        Produce included), those ``waiting`` for a slot under ``max.connections``."""
        processing = sum(1 for c in self._connections if c.processing)
        return {
            "open": len(self._connections),
            "processing": processing,
            "waiting": len(self._slot_waiters),
        }

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        for name, host, port in self._listeners:
            tls = self._tls.get(name)
            server = await loop.create_server(
                functools.partial(_Connection, self, name),
                host=host or None,
                port=port,
                reuse_address=True,
                ssl=tls.context if tls is not None else None,
                ssl_handshake_timeout=10.0 if tls is not None else None,
            )
            self._servers.append(server)
            self.bound_ports[name] = server.sockets[0].getsockname()[1]
            logger.info("Listening on %s (%s:%s)", name, host or "*", self.bound_ports[name])
        if self._sweeper is None:
            self._sweeper = loop.create_task(self._sweep_idle(), name="idle-connections")

    async def stop_accepting(self) -> None:
        for server in self._servers:
            server.close()
        for server in self._servers:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 0.1)

    async def close_connections(self, grace_s: float = 1.0) -> None:
        """Close every connection: the requests in flight get ``grace_s`` to be answered,
        then are dropped (a shutdown past its grace period: an acks=all produce would
        hold it until its timeout; the shielded work goes on)."""
        self._closing = True
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        while self._slot_waiters:
            waiter = self._slot_waiters.popleft()
            if waiter.transport is not None:
                waiter.transport.close()
        connections = list(self._connections)
        tasks = {c._task for c in connections if c._task is not None}
        for connection in connections:
            connection._end_reading()
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=grace_s)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        for connection in connections:
            if connection.transport is not None:
                connection.transport.close()
        deadline = time.monotonic() + grace_s
        while self._connections and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        for connection in list(self._connections):
            if connection.transport is not None:
                connection.transport.abort()
        await asyncio.sleep(0)  # their connection_lost callbacks

    # -- admission (Kafka's Acceptor) ------------------------------------------------------

    def _admit(self, connection: _Connection) -> None:
        """A connection accepted (after its TLS handshake): served, waiting for a slot
        under ``max.connections`` (Kafka's acceptor blocks the same way, so it sends
        nothing and is not read), or closed."""
        transport = connection.transport
        assert transport is not None
        if self._closing:
            transport.close()
            return
        if len(self._connections) >= self.limits.max_connections:
            if len(self._slot_waiters) >= MAX_WAITING_CONNECTIONS:
                peer = transport.get_extra_info("peername") or ("?", 0)
                logger.info("Refusing connection from %s: too many connections waiting", peer[0])
                transport.close()
                return
            connection.waiting = True
            connection._set_reading()
            self._slot_waiters.append(connection)
            return
        self._register(connection)

    def _register(self, connection: _Connection) -> None:
        transport = connection.transport
        assert transport is not None
        connection.waiting = False
        peer = transport.get_extra_info("peername") or ("?", 0)
        local = transport.get_extra_info("sockname") or ("?", 0)
        ip = str(peer[0])
        limits = self.limits
        ip_limit = limits.per_ip_overrides.get(ip, limits.max_connections_per_ip)
        if self._per_ip.get(ip, 0) >= ip_limit:
            logger.info(
                "Refusing connection from %s: too many connections (maximum %d)", ip, ip_limit
            )
            transport.close()
            return
        self._next_id += 1
        listener = connection._listener
        info = ConnectionInfo(
            f"{local[0]}:{local[1]}-{ip}:{peer[1]}-{self._next_id}",
            listener,
            ip,
            int(peer[1]),
            int(local[1]),
            self._security_protocols.get(listener, "PLAINTEXT"),
        )
        tls = self._tls.get(listener)
        if tls is not None:
            try:
                info.principal_name = tls.principal_of(transport.get_extra_info("ssl_object"))
            except Exception as exc:
                logger.info("Failed authentication with %s (%s)", ip, exc)
                transport.close()
                return
        connection.info = info
        if self._on_connection is not None:
            self._on_connection(info)
        self._connections.add(connection)
        self._per_ip[ip] = self._per_ip.get(ip, 0) + 1
        connection.last_active = time.monotonic()
        connection._set_reading()

    def _release(self, connection: _Connection) -> None:
        """A connection ended: its slot goes to the oldest waiting one."""
        if connection.waiting:
            with contextlib.suppress(ValueError):
                self._slot_waiters.remove(connection)
            return
        if connection not in self._connections:
            return
        self._connections.discard(connection)
        info = connection.info
        assert info is not None
        if self._on_disconnect is not None:
            try:
                self._on_disconnect(info)
            except Exception:
                logger.exception("Disconnect listener failed on %s", info.connection_id)
        ip = info.peer_host
        self._per_ip[ip] -= 1
        if not self._per_ip[ip]:
            del self._per_ip[ip]
        while self._slot_waiters and len(self._connections) < self.limits.max_connections:
            waiter = self._slot_waiters.popleft()
            if not waiter.closed:
                self._register(waiter)

    # -- idle expiry (Kafka's connections.max.idle.ms) -------------------------------------

    async def _sweep_idle(self) -> None:
        """One periodic sweep over the connections instead of a timer per connection:
        every quarter of ``connections.max.idle.ms`` (at most every second), close
        those without socket activity for that long."""
        idle_s = self.limits.idle_ms / 1000
        period = max(0.01, min(1.0, idle_s / 4))
        while True:
            await asyncio.sleep(period)
            now = time.monotonic()
            for connection in list(self._connections):
                if connection.closed or connection.quiet_s(now) < idle_s:
                    continue
                assert connection.info is not None
                logger.info(
                    "Closing connection %s: idle for connections.max.idle.ms %d",
                    connection.info.connection_id,
                    self.limits.idle_ms,
                )
                connection.closed = True  # expired once
                task = asyncio.get_running_loop().create_task(connection.expire())
                self._expiring.add(task)
                task.add_done_callback(self._expiring.discard)


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


def _direct_socket(transport: asyncio.Transport) -> socket.socket | None:
    """The connection's socket when bytes may be written to it directly: a plain TCP
    transport with nothing queued (so nothing can be overtaken) that is not closing."""
    if transport.is_closing() or transport.get_write_buffer_size():
        return None
    # asyncio's TransportSocket wraps the real socket as ``_sock`` (3.8+)
    sock = getattr(transport.get_extra_info("socket"), "_sock", None)
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


async def _write_plain(
    transport: asyncio.Transport, parts: Sequence[Part], drain: Callable[[], Awaitable[None]]
) -> None:
    """A response on a plain TCP connection. While the transport has nothing queued, the
    parts go straight to the socket from this call: bytes with ``send`` (``MSG_MORE``
    when more follow), file regions with ``os.sendfile`` -- no task switch, no
    ``pause_reading``/``resume_reading``, one file descriptor per region. What the
    kernel does not take at once (a full socket buffer: a slow reader) goes through the
    transport (``write`` + ``drain``, ``loop.sendfile``), which applies back-pressure."""
    sock = _direct_socket(transport)
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
                transport.write(data[sent:])
        fd = _open_region(part)
        if fd is None:
            data = part.read_bytes()
            sent = _send_direct(sock, data, i < last) if sock is not None else 0
            if sent < len(data):
                sock = None
                transport.write(data[sent:])
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
                await drain()
                with open(fd, "rb", closefd=False) as f:
                    fits = os.fstat(fd).st_size >= position + left
                    if fits:
                        await asyncio.get_running_loop().sendfile(
                            transport, f, position, left, fallback=True
                        )
                    else:
                        transport.write(rest.read_bytes())
        finally:
            os.close(fd)
    if pending:
        data = b"".join(pending)
        sent = _send_direct(sock, data, False) if sock is not None else 0
        if sent < len(data):
            transport.write(data[sent:])
    await drain()
