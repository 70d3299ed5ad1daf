"""A fault-injecting TCP proxy for the chaos campaign (asyncio, on loopback).

Every broker of a chaos cluster advertises the port of its own :class:`FaultProxy`, so
clients *and the other brokers* (replica fetchers, the controller's channel, AlterPartition)
reach it only through that proxy; each broker's ``zookeeper.connect`` points at another
proxy of its own in front of ZooKeeper. Faults are rules on a proxy:

* **partition** (``block(source, direction)``): bytes from or to ``source`` stop moving,
  as when a firewall drops packets: TCP buffers them, nothing is lost or reordered, and they
  flow again after :meth:`FaultProxy.heal` (by then the peers have usually timed out and
  closed). ``direction`` is ``"both"``, ``"in"`` (towards the proxied server only) or
  ``"out"`` (the answers only): a one-way partition.
* **delay** (``delay_s``): each chunk waits that long before it is forwarded.
* **reset** (:meth:`FaultProxy.reset`): every connection (of one source) is aborted.

Who is connecting: a Kafka proxy reads the first request frame of each connection and
takes its ``client_id`` (request header v1+: api key, version, correlation id, then the
client id as an int16-length string). kafkacore's inter-broker clients name their broker:
``broker-<id>-fetcher``, ``broker-<id>-alter-partition``, ``broker-<id>-controlled-shutdown``,
``controller-<id>``; such a connection's source is ``"broker-<id>"``, anything else is
``"client"``. So cutting broker A from broker B needs no extra ports: A's proxy blocks
source ``broker-B`` and B's proxy blocks ``broker-A``. A ZooKeeper proxy has one source,
``"zk-client"`` (the broker it belongs to).

All proxies share one event loop on a daemon thread (:class:`ProxyLoop`); rules are plain
attributes read by the pumps, so the test thread may change them at any time.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
import struct
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

_T = TypeVar("_T")
BROKER_CLIENT_ID = re.compile(r"^(?:broker|controller)-(\d+)")
CHUNK = 64 * 1024
POLL_S = 0.02


class ProxyLoop:
    """One asyncio loop on a daemon thread, for every proxy of a run."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="chaos-proxy", daemon=True
        )
        self._thread.start()

    def call(self, coro: Coroutine[Any, Any, _T], timeout_s: float = 10.0) -> _T:
        future: Future[_T] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return future.result(timeout_s)

    def soon(self, fn: Callable[[], object]) -> None:
        self.loop.call_soon_threadsafe(fn)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)


def kafka_source(first_frame: bytes) -> str:
    """``"broker-<id>"`` when the request's client id names a broker, else ``"client"``."""
    # size:int32 api_key:int16 api_version:int16 correlation_id:int32 client_id:int16+bytes
    if len(first_frame) < 14:
        return "client"
    (length,) = struct.unpack_from(">h", first_frame, 12)
    if length < 0:
        return "client"
    client_id = first_frame[14 : 14 + length].decode("utf-8", errors="replace")
    match = BROKER_CLIENT_ID.match(client_id)
    return f"broker-{match.group(1)}" if match else "client"


class _Connection:
    def __init__(
        self, source: str, client: asyncio.StreamWriter, server: asyncio.StreamWriter
    ) -> None:
        self.source = source
        self.client = client
        self.server = server

    def abort(self) -> None:
        for writer in (self.client, self.server):
            sock = writer.get_extra_info("socket")
            if sock is not None:  # an RST, not a FIN
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()


class FaultProxy:
    """``localhost:<port>`` forwarding to ``target``; ``kafka`` says whether the first frame
    names the source (else every connection's source is ``"zk-client"``)."""

    def __init__(self, loop: ProxyLoop, name: str, target: tuple[str, int], *, kafka: bool) -> None:
        self.loop = loop
        self.name = name
        self.target = target
        self.kafka = kafka
        self.port = 0
        self.delay_s = 0.0
        # source -> "both" | "in" | "out"; "*" matches every source
        self.blocked: dict[str, str] = {}
        self._connections: set[_Connection] = set()
        self._server: asyncio.base_events.Server | None = None

    # -- control (any thread) ---------------------------------------------------------------

    def start(self) -> FaultProxy:
        self.loop.call(self._start())
        return self

    def stop(self) -> None:
        self.loop.call(self._stop())

    def block(self, source: str = "*", direction: str = "both") -> None:
        assert direction in ("both", "in", "out"), direction
        self.blocked[source] = direction

    def heal(self) -> None:
        self.blocked = {}
        self.delay_s = 0.0

    def reset(self, source: str = "*") -> None:
        def abort_all() -> None:
            for conn in list(self._connections):
                if source in ("*", conn.source):
                    conn.abort()

        self.loop.soon(abort_all)

    def sources(self) -> list[str]:
        return sorted({c.source for c in self._connections})

    # -- the event loop side ----------------------------------------------------------------

    def _stalled(self, source: str, towards_server: bool) -> bool:
        rule = self.blocked.get(source) or self.blocked.get("*")
        if rule is None:
            return False
        return rule == "both" or (rule == "in") == towards_server

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", self.port or 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for conn in list(self._connections):
            conn.abort()

    async def _accept(self, creader: asyncio.StreamReader, cwriter: asyncio.StreamWriter) -> None:
        first = b""
        try:
            if self.kafka:
                size = await creader.readexactly(4)
                (length,) = struct.unpack(">i", size)
                first = size + await creader.readexactly(max(0, length))
                source = kafka_source(first)
            else:
                source = "zk-client"
            while self._stalled(source, True):  # a SYN into a partition: nothing answers
                await asyncio.sleep(POLL_S)
            sreader, swriter = await asyncio.open_connection(*self.target)
        except (OSError, asyncio.IncompleteReadError):
            cwriter.transport.abort()
            return
        conn = _Connection(source, cwriter, swriter)
        self._connections.add(conn)
        try:
            if first:
                swriter.write(first)
            pumps = [
                asyncio.ensure_future(self._pump(conn, creader, swriter, True)),
                asyncio.ensure_future(self._pump(conn, sreader, cwriter, False)),
            ]
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            for pump in pumps:
                pump.cancel()
        finally:
            self._connections.discard(conn)
            for writer in (cwriter, swriter):
                writer.transport.abort()

    async def _pump(
        self,
        conn: _Connection,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        towards_server: bool,
    ) -> None:
        try:
            while True:
                data = await reader.read(CHUNK)
                if not data:
                    return
                if self.delay_s:
                    await asyncio.sleep(self.delay_s)
                while self._stalled(conn.source, towards_server):
                    await asyncio.sleep(POLL_S)
                writer.write(data)
                await writer.drain()
        except (OSError, asyncio.IncompleteReadError):
            return
