"""The transport's plain-TCP response path (``server/network.py``): responses made of
bytes and file regions arrive whole and in request order, whether the socket takes them
at once (straight ``send``/``os.sendfile`` from the request's task) or only part of them
(a reader slower than the broker: the rest goes through the transport). Real sockets, a
real file; the processor is a small stand-in for the broker's request channel."""

from __future__ import annotations

import asyncio
import os
import socket
import ssl
import struct
import time
from pathlib import Path
from typing import Any

import pytest

from kafkacore.server.network import ConnectionInfo, FileRegion, Outcome, SocketServer, TlsListener
from support.certs import make_pki
from support.secure import write_pem_files

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


class _Recording:
    """Records each frame as it arrives (what it is, its bytes) and answers its length."""

    def __init__(self) -> None:
        self.frames: list[tuple[type, type, bytes]] = []

    async def process(self, frame: memoryview, connection: ConnectionInfo) -> Outcome:
        self.frames.append((type(frame), type(frame.obj), bytes(frame)))
        return Outcome(parts=[struct.pack(">ii", 4, len(frame))])


def _mixed_frames() -> list[bytes]:
    """Large frames (read straight into their buffers) between small pipelined ones, with
    content that shows any byte out of place."""
    sizes = [10, 3 << 20, 7, 200_000, 1, 65_537, 5]
    return [bytes((i * 7 + n) % 251 for i in range(n)) for n in sizes]


def _exchange(port: int, frames: list[bytes], context: Any = None) -> list[int]:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
        sock = context.wrap_socket(raw) if context is not None else raw
        sock.sendall(b"".join(struct.pack(">i", len(f)) + f for f in frames))  # pipelined
        return [struct.unpack(">ii", _read_exactly(sock, 8))[1] for _ in frames]


@pytest.mark.parametrize("tls", [False, True], ids=["plaintext", "tls"])
def test_frames_arrive_whole_as_memoryviews_of_their_own_buffers(tmp_path: Path, tls: bool) -> None:
    """Each frame reaches the processor as a memoryview of a buffer of exactly its size
    (no copy into a stream buffer, no ``bytes()``), byte for byte, in order, also when a
    large body is read straight into its buffer and over TLS (asyncio's SSL layer fills
    the buffer through slices of it)."""
    frames = _mixed_frames()

    async def scenario() -> tuple[list[int], list[tuple[type, type, bytes]]]:
        recording = _Recording()
        listeners = {}
        client_context = None
        if tls:
            pem = write_pem_files(tmp_path / "pki", make_pki())
            server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            server_context.load_cert_chain(pem.server_keystore)
            listeners["L"] = TlsListener(server_context, lambda _obj: "ANONYMOUS")
            client_context = ssl.create_default_context(cafile=str(pem.ca))
            client_context.check_hostname = False
        server = SocketServer(recording, [("L", "127.0.0.1", 0)], tls=listeners)
        await server.start()
        try:
            port = server.bound_ports["L"]
            answers = await asyncio.to_thread(_exchange, port, frames, client_context)
        finally:
            await server.stop_accepting()
            await server.close_connections()
        return answers, recording.frames

    answers, seen = asyncio.run(scenario())
    assert answers == [len(f) for f in frames]
    assert [data for _, _, data in seen] == frames
    assert all(kind is memoryview and owner is bytearray for kind, owner, _ in seen)
