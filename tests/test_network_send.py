"""The transport's plain-TCP response path (``server/network.py``): responses made of
bytes and file regions arrive whole and in request order, whether the socket takes them
at once (straight ``send``/``os.sendfile`` from the request's task) or only part of them
(a reader slower than the broker: the rest goes through the transport). Real sockets, a
real file; the processor is a small stand-in for the broker's request channel."""

from __future__ import annotations

import asyncio
import os
import socket
import struct
import time
from pathlib import Path
from typing import Any

from kafkacore.server.network import ConnectionInfo, FileRegion, Outcome, SocketServer

REGION = 1024 * 1024 + 17  # more than the socket buffers hold


class _Regions:
    """Answers frame ``n`` (4 bytes) with ``[header, region, middle, region, tail]``:
    two regions of the file at ``n``-dependent positions."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    async def process(self, frame: bytes, connection: ConnectionInfo) -> Outcome:
        (n,) = struct.unpack(">i", frame)
        body = [
            struct.pack(">i", n),
            FileRegion(self.path, n * 1000, REGION),
            b"middle",
            FileRegion(self.path, n * 3000 + 5, 1000),
            b"tail",
        ]
        size = sum(len(p) for p in body)
        return Outcome(parts=[struct.pack(">i", size), *body])


def _expected(data: bytes, n: int) -> bytes:
    body = (
        struct.pack(">i", n)
        + data[n * 1000 : n * 1000 + REGION]
        + b"middle"
        + data[n * 3000 + 5 : n * 3000 + 1005]
        + b"tail"
    )
    return struct.pack(">i", len(body)) + body


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        chunk = sock.recv(min(65536, n - len(out)))
        assert chunk, "connection closed early"
        out += chunk
    return bytes(out)


def _client(port: int, requests: list[int], slow: bool) -> list[bytes]:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        sock.connect(("127.0.0.1", port))
        for n in requests:  # pipelined: all sent before any answer is read
            sock.sendall(struct.pack(">ii", 4, n))
        if slow:
            time.sleep(0.3)  # the broker finds the socket full and falls back
        answers = []
        for _ in requests:
            (size,) = struct.unpack(">i", _read_exactly(sock, 4))
            answers.append(struct.pack(">i", size) + _read_exactly(sock, size))
        return answers


def test_file_region_responses_arrive_whole_and_in_order(tmp_path: Path, monkeypatch: Any) -> None:
    sendfiles: list[int] = []
    real_sendfile = asyncio.BaseEventLoop.sendfile

    async def counting(self: Any, transport: Any, file: Any, *args: Any, **kwargs: Any) -> Any:
        sendfiles.append(args[1])  # (offset, count)
        return await real_sendfile(self, transport, file, *args, **kwargs)

    monkeypatch.setattr(asyncio.BaseEventLoop, "sendfile", counting)
    data = os.urandom(REGION + 10_000)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)

    async def scenario() -> None:
        server = SocketServer(_Regions(path), [("PLAINTEXT", "127.0.0.1", 0)])
        await server.start()
        try:
            port = server.bound_ports["PLAINTEXT"]
            answers = await asyncio.to_thread(_client, port, [1, 2, 3], False)
            assert answers == [_expected(data, n) for n in (1, 2, 3)]
            # more than a socket send buffer grows to (tcp_wmem's 4 MiB) while not read
            slow = list(range(1, 9))
            answers = await asyncio.to_thread(_client, port, slow, True)
            assert answers == [_expected(data, n) for n in slow]
            # the slow reader's responses did not fit the socket: the rest of a region
            # went through the transport's sendfile
            assert sendfiles and all(0 < n < REGION + 1000 for n in sendfiles)
        finally:
            await server.stop_accepting()
            await server.close_connections()

    asyncio.run(scenario())


def test_region_of_a_deleted_or_truncated_file_keeps_the_declared_length(
    tmp_path: Path,
) -> None:
    data = os.urandom(REGION + 10_000)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)

    class Truncating(_Regions):
        async def process(self, frame: bytes, connection: ConnectionInfo) -> Outcome:
            outcome = await super().process(frame, connection)
            os.truncate(self.path, 2 * 1000 + 100)  # after the regions were handed out
            return outcome

    async def scenario() -> None:
        server = SocketServer(Truncating(path), [("PLAINTEXT", "127.0.0.1", 0)])
        await server.start()
        try:
            port = server.bound_ports["PLAINTEXT"]
            (answer,) = await asyncio.to_thread(_client, port, [2], False)
            want = _expected(data, 2)
            assert len(answer) == len(want)
            # the bytes still on disk, then zeros up to the declared length
            assert answer[8 : 8 + 100] == data[2000:2100]
            assert answer[8 + 100 : 8 + REGION] == bytes(REGION - 100)
            assert answer.endswith(b"tail")
        finally:
            await server.stop_accepting()
            await server.close_connections()

    asyncio.run(scenario())


def test_a_request_failing_outside_its_handler_closes_the_connection_at_once(
    tmp_path: Path,
) -> None:
    """The processor raising (a bug below the handlers, which answer their own errors):
    nothing can be answered in order any more, so the connection closes at once - it
    used to wait for the client's next request until the idle expiry - and the server
    goes on serving other connections."""

    class Failing:
        async def process(self, frame: bytes, connection: ConnectionInfo) -> Outcome:
            (n,) = struct.unpack(">i", frame)
            if n == 13:
                raise RuntimeError("a bug below the request handlers")
            return Outcome(parts=[struct.pack(">ii", 4, n)])

    def one_request(port: int, n: int) -> bytes:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(struct.pack(">ii", 4, n))
            return sock.recv(64)

    async def scenario() -> None:
        server = SocketServer(Failing(), [("PLAINTEXT", "127.0.0.1", 0)])
        await server.start()
        try:
            port = server.bound_ports["PLAINTEXT"]
            started = time.monotonic()
            assert await asyncio.to_thread(one_request, port, 13) == b""  # closed
            assert time.monotonic() - started < 5  # not the 10 min idle expiry
            assert await asyncio.to_thread(one_request, port, 7) == struct.pack(">ii", 4, 7)
        finally:
            await server.stop_accepting()
            await server.close_connections()

    asyncio.run(scenario())
