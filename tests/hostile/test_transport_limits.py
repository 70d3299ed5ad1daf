"""The transport's own limits, on a :class:`SocketServer` whose request processor the test
controls (a handler that never answers, one that answers large): how much a connection
can make the broker hold, and what ends a connection. The same rules on a real broker are
in the other modules here."""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
import time
import tracemalloc
from pathlib import Path

import pytest

from kafkacore.server.network import (
    MAX_QUEUED_FRAMES,
    READ_AHEAD_BYTES,
    ConnectionInfo,
    FileRegion,
    Limits,
    Outcome,
    SocketServer,
)

FRAME = 512 * 1024


class Stuck:
    """Answers nothing: every request waits forever (a handler blocked on a slow disk)."""

    def __init__(self) -> None:
        self.received = 0
        self.release = asyncio.Event()

    async def process(self, frame: bytes, connection: ConnectionInfo) -> Outcome:
        self.received += 1
        await self.release.wait()
        return Outcome()


class Large:
    """Answers every request with ``size`` bytes."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.answered = 0

    async def process(self, frame: bytes, connection: ConnectionInfo) -> Outcome:
        self.answered += 1
        return Outcome(parts=[struct.pack(">i", self.size - 4) + bytes(self.size - 4)])


async def _server(processor: object, **limits: int) -> SocketServer:
    server = SocketServer(processor, [("PLAINTEXT", "127.0.0.1", 0)], Limits(**limits))  # type: ignore[arg-type]
    await server.start()
    return server


async def _send_for(sock: socket.socket, data: bytes, seconds: float) -> int:
    """Bytes of ``data`` the peer took within ``seconds`` (a non-blocking send loop)."""
    sent = 0
    deadline = time.monotonic() + seconds
    while sent < len(data) and time.monotonic() < deadline:
        try:
            sent += sock.send(data[sent : sent + (1 << 20)])
        except BlockingIOError:
            await asyncio.sleep(0.01)
    return sent


def _connect(port: int, small_buffers: bool = True) -> socket.socket:
    sock = socket.socket()
    if small_buffers:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.setblocking(False)
    return sock


def test_read_ahead_is_bounded_in_bytes_while_a_request_is_stuck() -> None:
    """64 pipelined frames of 512 KiB behind a stuck request: the broker reads about
    READ_AHEAD_BYTES of them, the rest stays in the client's socket (TCP back-pressure),
    not 64 x 512 KiB = 32 MiB in the broker."""

    async def main() -> int:
        stuck = Stuck()
        server = await _server(stuck)
        sock = _connect(server.bound_ports["PLAINTEXT"], small_buffers=False)
        try:
            frame = struct.pack(">i", FRAME) + bytes(FRAME)
            taken = await _send_for(sock, frame * MAX_QUEUED_FRAMES, 1.5)
            assert stuck.received == 1
            return taken
        finally:
            sock.close()
            stuck.release.set()
            await server.stop_accepting()
            await server.close_connections()

    taken = asyncio.run(main())
    print(f"read ahead: the broker took {taken / 2**20:.1f} MiB")
    # what the broker read ahead, plus the kernel's socket buffers (a few MiB at most)
    assert taken < READ_AHEAD_BYTES + 8 * FRAME + (6 << 20), taken >> 20
    assert taken < MAX_QUEUED_FRAMES * FRAME // 2


def test_a_client_that_does_not_read_its_answers_is_not_read_either() -> None:
    """Answers of 256 KiB to a client that never reads: the transport's buffer reaches
    its high-water mark, the worker waits in drain, and the reader stops reading that
    connection's requests: the broker answered only a few."""

    async def main() -> tuple[int, int]:
        large = Large(256 * 1024)
        server = await _server(large)
        sock = _connect(server.bound_ports["PLAINTEXT"])
        try:
            request = struct.pack(">i", 1020) + bytes(1020)
            taken = await _send_for(sock, request * 20_000, 1.5)
            return large.answered, taken
        finally:
            sock.close()
            await server.stop_accepting()
            await server.close_connections()

    answered, taken = asyncio.run(main())
    assert answered < 64, answered  # a few answers fill the kernel's and the transport's buffers
    assert taken < 12 << 20, taken  # of 20 MiB: the rest waits in the client


def test_a_half_sent_frame_is_closed_after_connections_max_idle_ms() -> None:
    """Kafka's idle expiry counts socket activity, not whole requests: a frame whose
    body stops arriving is closed after connections.max.idle.ms, one that keeps
    trickling is not."""

    async def main() -> tuple[float, bool]:
        stuck = Stuck()
        server = await _server(stuck, idle_ms=1000)
        port = server.bound_ports["PLAINTEXT"]
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            trickle_r, trickle_w = await asyncio.open_connection("127.0.0.1", port)
            start = time.monotonic()
            writer.write(struct.pack(">i", 100) + bytes(10))  # 10 of 100 bytes
            trickle_w.write(struct.pack(">i", 100))
            half = asyncio.ensure_future(reader.read())  # b"" once the broker closes
            trickle = asyncio.ensure_future(trickle_r.read())
            closed_after = -1.0
            for _ in range(25):  # 2.5 s: the trickle sends one byte every 0.1 s
                trickle_w.write(b"\0")
                await asyncio.sleep(0.1)
                if half.done() and closed_after < 0:
                    closed_after = time.monotonic() - start
            trickle_alive = not trickle.done()
            trickle.cancel()
            writer.close()
            trickle_w.close()
            return closed_after, trickle_alive
        finally:
            stuck.release.set()
            await server.stop_accepting()
            await server.close_connections()

    closed_after, trickle_alive = asyncio.run(main())
    assert 0.9 <= closed_after <= 2.0, closed_after
    assert trickle_alive


class FromFile:
    """Answers every request with 4 MiB of ``path`` (a Fetch's records: sendfile)."""

    def __init__(self, path: str) -> None:
        self.path = path

    async def process(self, frame: bytes, connection: ConnectionInfo) -> Outcome:
        size = 4 << 20
        header = struct.pack(">ii", size + 4, 1)
        return Outcome(parts=[header, FileRegion(self.path, 0, size)])


def test_a_reader_stuck_in_a_sendfile_is_closed_after_the_idle_time_cleanly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Its answer makes no progress (the kernel's send queue does not go down): closed an
    idle time (plus the one-second sampling) later, the stuck sendfile ended without
    asyncio complaining (a transport aborted under loop.sendfile does)."""
    path = tmp_path / "records"
    path.write_bytes(bytes(8 << 20))

    async def main() -> float:
        server = await _server(FromFile(str(path)), idle_ms=1500)
        sock = _connect(server.bound_ports["PLAINTEXT"])
        try:
            await _send_for(sock, (struct.pack(">i", 10) + bytes(10)) * 10, 0.2)
            while not server.connection_count:
                await asyncio.sleep(0.01)
            start = time.monotonic()
            while server.connection_count and time.monotonic() - start < 10:
                await asyncio.sleep(0.1)
            return time.monotonic() - start
        finally:
            sock.close()
            await server.stop_accepting()
            await server.close_connections()

    with caplog.at_level(logging.INFO):
        closed_after = asyncio.run(main())
    assert 1.3 <= closed_after <= 4.0, closed_after
    assert "idle for connections.max.idle.ms 1500" in caplog.text
    assert "Exception in callback" not in caplog.text


def test_an_idle_connection_holds_neither_its_last_request_nor_its_answer() -> None:
    """Four clients each send one request of 1 MiB, read its answer of 4 MiB, then stay
    connected and quiet: the broker keeps no part of either (it used to keep the last
    frame and the answer's parts in the connection's reader and worker until the next
    request: 20 MiB here, 5 MiB per idle connection)."""
    clients, request_bytes, answer_bytes = 4, 1 << 20, 4 << 20

    async def exchange(port: int) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", port))
        frame = struct.pack(">i", request_bytes) + bytes(request_bytes)
        await asyncio.to_thread(sock.sendall, frame)
        got = 0
        while got < answer_bytes:
            got += len(await asyncio.to_thread(sock.recv, 1 << 20))
        return sock

    async def main() -> int:
        tracemalloc.start()
        server = await _server(Large(answer_bytes))
        port = server.bound_ports["PLAINTEXT"]
        socks = [await exchange(port)]  # imports, the thread pool: before the baseline
        try:
            await asyncio.sleep(0.2)
            before = tracemalloc.get_traced_memory()[0]
            for _ in range(clients):
                socks.append(await exchange(port))
            await asyncio.sleep(0.2)  # the workers are back waiting for a next request
            return tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
            for sock in socks:
                sock.close()
            await server.stop_accepting()
            await server.close_connections()

    held = asyncio.run(main())
    print(f"{clients} idle connections hold {held} bytes")
    assert held < 256 * 1024, held


def test_an_idle_connection_costs_less_than_kafkas() -> None:
    """Python memory per idle connection after one request (what ``make bench-scale``
    measures as RSS): the transport's own objects, asyncio's transport and selector
    entry. Kafka 4.3.1 holds 3.1 KB per idle connection there; the StreamReader transport
    held 10.2 KB."""
    count = 400

    def connect_all(port: int) -> list[socket.socket]:
        socks = []
        for _ in range(count):
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(struct.pack(">i", 12) + bytes(12))
            socks.append(sock)
        return socks

    async def main() -> int:
        server = await _server(Large(64))
        port = server.bound_ports["PLAINTEXT"]
        warm = await asyncio.to_thread(connect_all, port)  # imports, the thread pool
        while server.connection_count < count:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)
        tracemalloc.start()
        socks: list[socket.socket] = []
        try:
            before = tracemalloc.get_traced_memory()[0]
            socks = await asyncio.to_thread(connect_all, port)
            deadline = time.monotonic() + 30
            while server.connection_count < 2 * count and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.5)  # every request answered, the connections idle
            held = tracemalloc.get_traced_memory()[0] - before
            assert server.connection_count == 2 * count
            return held
        finally:
            tracemalloc.stop()
            for sock in warm + socks:
                sock.close()
            await server.stop_accepting()
            await server.close_connections()

    held = asyncio.run(main()) / count
    print(f"{held:.0f} bytes of Python objects per idle connection")
    assert held < 2800, held  # the client sockets of this process included (~300 B)
