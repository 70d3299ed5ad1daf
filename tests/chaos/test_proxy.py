"""The fault-injecting proxy on its own: forwarding, who is connecting (the client id of
the first Kafka frame), a partition that stalls and then delivers, a one-way partition,
a reset."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Iterator

import pytest

from chaos.proxy import FaultProxy, ProxyLoop, kafka_source


def frame(client_id: str, payload: bytes = b"") -> bytes:
    encoded = client_id.encode()
    body = struct.pack(">hhih", 18, 3, 7, len(encoded)) + encoded + payload
    return struct.pack(">i", len(body)) + body


@pytest.fixture
def echo() -> Iterator[int]:
    """A TCP server that sends back whatever it receives."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=pump, args=(conn,), daemon=True).start()

    def pump(conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):  # reset by the proxy: the point of a test
            while data := conn.recv(65536):
                conn.sendall(data)

    threading.Thread(target=serve, daemon=True).start()
    yield port
    server.close()


@pytest.fixture
def proxy(echo: int) -> Iterator[FaultProxy]:
    loop = ProxyLoop()
    p = FaultProxy(loop, "test", ("127.0.0.1", echo), kafka=True).start()
    yield p
    p.stop()
    loop.close()


def connect(proxy: FaultProxy, client_id: str) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
    s.sendall(frame(client_id))
    first = frame(client_id)
    assert recv_exactly(s, len(first)) == first
    return s


def recv_exactly(s: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = s.recv(n - len(out))
        if not chunk:
            raise ConnectionError("closed")
        out += chunk
    return out


def test_source_from_the_client_id() -> None:
    assert kafka_source(frame("broker-2-fetcher")) == "broker-2"
    assert kafka_source(frame("controller-13")) == "broker-13"
    assert kafka_source(frame("broker-3-alter-partition")) == "broker-3"
    assert kafka_source(frame("rdkafka")) == "client"
    assert kafka_source(struct.pack(">ihhih", 10, 18, 3, 7, -1)) == "client"


def test_forwards_and_names_its_connections(proxy: FaultProxy) -> None:
    a = connect(proxy, "broker-2-fetcher")
    b = connect(proxy, "rdkafka")
    a.sendall(b"hello")
    assert recv_exactly(a, 5) == b"hello"
    assert proxy.sources() == ["broker-2", "client"]
    a.close()
    b.close()


def test_a_partition_stalls_one_source_and_delivers_after_healing(proxy: FaultProxy) -> None:
    fetcher = connect(proxy, "broker-2-fetcher")
    client = connect(proxy, "rdkafka")
    proxy.block("broker-2")
    fetcher.sendall(b"ping")
    client.sendall(b"pong")
    assert recv_exactly(client, 4) == b"pong"  # other sources still pass
    fetcher.settimeout(0.5)
    with pytest.raises(TimeoutError):
        fetcher.recv(4)
    proxy.heal()
    fetcher.settimeout(5)
    assert recv_exactly(fetcher, 4) == b"ping"  # nothing lost, as TCP under a firewall


def test_one_way_partition(proxy: FaultProxy) -> None:
    s = connect(proxy, "controller-1")
    proxy.block("broker-1", "out")  # requests reach the server, answers stall
    s.sendall(b"abc")
    s.settimeout(0.5)
    with pytest.raises(TimeoutError):
        s.recv(3)
    proxy.heal()
    s.settimeout(5)
    assert recv_exactly(s, 3) == b"abc"


def test_new_connections_into_a_partition_hang(proxy: FaultProxy) -> None:
    proxy.block("*")
    s = socket.create_connection(("127.0.0.1", proxy.port), timeout=0.5)
    s.sendall(frame("rdkafka"))
    with pytest.raises(TimeoutError):
        s.recv(1)
    proxy.heal()
    s.settimeout(5)
    assert recv_exactly(s, len(frame("rdkafka"))) == frame("rdkafka")


def test_reset_aborts_the_connections(proxy: FaultProxy) -> None:
    s = connect(proxy, "rdkafka")
    proxy.reset()
    s.settimeout(5)
    with pytest.raises((ConnectionError, OSError)):
        for _ in range(50):
            s.sendall(b"x")
            if not s.recv(1):
                raise ConnectionError("closed")
            time.sleep(0.05)
