"""The transport's limits side by side with Apache Kafka 4.3.1 (a KRaft node from the
jars), with the same settings: what a half-sent frame, a trickling one, a frame over
``socket.request.max.bytes``, a negative size and a connection over
``max.connections.per.ip`` get from each. Each answer is observed from outside (closed
or answered, and when), and the two must agree."""

from __future__ import annotations

import socket
import struct
import subprocess
import time
from collections.abc import Iterator

import pytest

from hostile.common import api_versions_frame, closed_by_peer, read_response
from support import kafka_jars
from support.brokers import Broker, BrokerFactory
from support.ports import free_port

pytestmark = pytest.mark.interop

IDLE_MS = 2000
LIMIT = 1 << 20
SETTINGS = [
    f"connections.max.idle.ms={IDLE_MS}",
    f"socket.request.max.bytes={LIMIT}",
    "max.connections.per.ip=5",
]


@pytest.fixture(scope="module")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """A Kafka node with SETTINGS: its client port."""
    home = tmp_path_factory.mktemp("kafka")
    port, controller = free_port(), free_port()
    props = home / "server.properties"
    props.write_text(kafka_jars.kraft_single_node_props(home, port, controller, *SETTINGS))
    proc: subprocess.Popen[bytes] | None = None
    try:
        proc = kafka_jars.start_kraft_node(kafka_jars.kafka_libs(), props, home / "kafka.log")
        deadline = time.monotonic() + 120
        while not _answers(port):
            assert proc.poll() is None, (home / "kafka.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "Kafka did not start"
            time.sleep(0.5)
        yield port
    finally:
        kafka_jars.stop_process(proc)


@pytest.fixture(scope="module")
def kafkacore(broker_factory: BrokerFactory) -> Broker:
    return broker_factory(*SETTINGS)


def _answers(port: int, source: str = "127.0.0.1") -> bool:
    try:
        with socket.socket() as sock:
            sock.bind((source, 0))
            sock.settimeout(5)
            sock.connect(("127.0.0.1", port))
            sock.sendall(api_versions_frame(7))
            cid, _ = read_response(sock, "ApiVersions", 3)
            return cid == 7
    except OSError:
        return False


def _connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.socket()
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return sock


def _closed_after(sock: socket.socket, within_s: float) -> float | None:
    """Seconds until the peer closes ``sock`` (None: still open after ``within_s``)."""
    start = time.monotonic()
    return time.monotonic() - start if closed_by_peer(sock, within_s) else None


def observe(port: int) -> dict[str, object]:
    """What the server on ``port`` does to each hostile client (rounded to what must
    agree: closed or not, and in which window)."""
    out: dict[str, object] = {}
    half = _connect(port)
    half.sendall(struct.pack(">i", 1000) + bytes(10))
    trickle = _connect(port)
    frame = api_versions_frame(9)
    start = time.monotonic()
    for i in range(8):  # one byte every 0.4 s: 3.2 s, longer than the idle time
        trickle.sendall(frame[i : i + 1])
        time.sleep(0.4)
    closed = _closed_after(half, 0.01)
    waited = time.monotonic() - start
    out["half frame closed after the idle time"] = closed is not None and waited >= IDLE_MS / 1000
    out["trickling frame still open"] = not closed_by_peer(trickle, 0.01)
    trickle.settimeout(5)
    trickle.sendall(frame[8:])
    cid, _ = read_response(trickle, "ApiVersions", 3)
    out["trickled frame answered"] = cid == 9
    for name, size in [("limit + 1", LIMIT + 1), ("negative", -1)]:
        sock = _connect(port)
        sock.sendall(struct.pack(">i", size))
        after = _closed_after(sock, 3)
        out[f"size {name} closed at once"] = after is not None and after < 1.5
        sock.close()
    held = [_connect(port, "127.0.0.2") for _ in range(5)]
    extra = _connect(port, "127.0.0.2")
    after = _closed_after(extra, 3)
    out["6th connection from one address closed at once"] = after is not None and after < 1.5
    out["the 5 others answered"] = all(_answers_on(s) for s in held)
    for sock in [half, trickle, extra, *held]:
        sock.close()
    return out


def _answers_on(sock: socket.socket) -> bool:
    sock.settimeout(5)
    sock.sendall(api_versions_frame(3))
    return read_response(sock, "ApiVersions", 3)[0] == 3


def test_the_same_as_kafka(kafka: int, kafkacore: Broker) -> None:
    theirs = observe(kafka)
    ours = observe(kafkacore.port)
    assert ours == theirs
    assert all(theirs.values()), theirs  # and what Kafka does is what the other tests assume
