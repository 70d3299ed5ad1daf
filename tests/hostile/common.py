"""Shared pieces of the hostile-client tests: what the broker process uses (RSS, open
sockets, from ``/proc``), raw frames built with kafkacore's codec, and a well-behaved
client whose latency shows whether the broker still serves others."""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Callable
from typing import Any

from kafkacore.client import Client
from kafkacore.native import load_backend
from kafkacore.protocol import APIS_BY_NAME, RequestHeader, encode_request
from support.brokers import Broker
from support.raw_client import fetch_request, make_request, produce_request
from support.raw_client import receive_blocking as read_response

__all__ = [
    "Probe",
    "batch",
    "connection_tasks",
    "established",
    "fetch_frame",
    "frame",
    "open_sockets",
    "produce_frame",
    "read_response",
    "rss_bytes",
    "until",
]

T0 = 1_700_000_000_000


def rss_bytes(broker: Broker) -> int:
    """The broker process's resident set (``VmRSS``)."""
    assert broker.proc is not None
    with open(f"/proc/{broker.proc.pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def open_sockets(broker: Broker) -> int:
    """How many sockets the broker process holds open (listeners included)."""
    assert broker.proc is not None
    fd_dir = f"/proc/{broker.proc.pid}/fd"
    count = 0
    for name in os.listdir(fd_dir):
        try:
            if os.readlink(os.path.join(fd_dir, name)).startswith("socket:"):
                count += 1
        except FileNotFoundError:
            pass
    return count


def established(broker: Broker) -> int:
    """TCP connections established to the broker's port (its side of them, from
    ``/proc/net/tcp``): accepted or still in the listen backlog."""
    count = 0
    with open("/proc/net/tcp", encoding="ascii") as f:
        next(f)
        for line in f:
            fields = line.split()
            if fields[3] == "01" and int(fields[1].rsplit(":", 1)[1], 16) == broker.port:
                count += 1
    return count


def connection_tasks(broker: Broker) -> dict[str, int]:
    """The broker's connections (its ``SIGUSR1`` dump: every task's stack, then the socket
    server's counts): ``open`` connections, those ``processing`` (a request in flight, a
    delayed Fetch or Produce waiting in purgatory: each has a task then), and the tasks
    running the transport's ``_Connection._run`` (the same, seen from asyncio)."""
    assert broker.proc is not None
    seen = len(broker.log_text())
    broker.proc.send_signal(signal.SIGUSR1)
    until(lambda: "connections: open=" in broker.log_text()[seen:], 10, "the task dump")
    time.sleep(0.2)  # the dump is one log record: let it be written whole
    dump = broker.log_text()[seen:]
    counts = {"open": -1, "processing": -1, "tasks": 0}
    for line in dump.splitlines():
        if line.startswith("Stack for <Task") and "_Connection._run()" in line:
            counts["tasks"] += 1
        elif line.startswith("connections: "):
            for item in line.split()[1:]:
                key, _, value = item.partition("=")
                if key in counts:
                    counts[key] = int(value)
    return counts


def batch(n: int = 4, size: int = 200, *, seed: int = 0) -> bytes:
    """One RecordBatch v2 of ``n`` records of ``size`` bytes (native codec)."""
    backend = load_backend("native")
    value = bytes((seed + i) % 251 for i in range(size))
    return bytes(backend.build_batch([(i, T0, b"k%d" % i, value, []) for i in range(n)]))


def frame(
    name: str, version: int, correlation_id: int, request: Any, client_id: str = "h"
) -> bytes:
    """A whole request frame (size prefix included)."""
    header = RequestHeader(APIS_BY_NAME[name].key, version, correlation_id, client_id)
    return bytes(encode_request(header, request))


def fetch_frame(topic: str, correlation_id: int = 1, *, max_wait_ms: int = 0) -> bytes:
    request = fetch_request(topic, 0)
    request.max_wait_ms = max_wait_ms
    return frame("Fetch", 11, correlation_id, request)


def produce_frame(topic: str, records: bytes, correlation_id: int = 1, acks: int = -1) -> bytes:
    return frame("Produce", 8, correlation_id, produce_request(topic, 0, records, acks=acks))


def api_versions_frame(correlation_id: int = 1) -> bytes:
    request = make_request("ApiVersions", client_software_name="h", client_software_version="1")
    return frame("ApiVersions", 3, correlation_id, request)


def closed_by_peer(sock: socket.socket, timeout_s: float) -> bool:
    """Whether the broker closes ``sock`` within ``timeout_s`` (whatever it sends first
    is read and dropped)."""
    sock.settimeout(timeout_s)
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            sock.settimeout(max(deadline - time.monotonic(), 0.01))
            if not sock.recv(65536):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False
    return False


def until(check: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout_s:g} s: {what}")
        time.sleep(0.05)


class Probe:
    """A well-behaved client: each :meth:`round` produces one batch (acks=all) and
    fetches it back, on its own connection; the round's latency is recorded."""

    def __init__(self, broker: Broker, topic: str) -> None:
        self.client = Client(broker.bootstrap, timeout_s=10)
        self.topic = topic
        self.client.create_topic(topic, 1)
        self.latencies: list[float] = []
        self.records = batch(2, 100)

    def round(self) -> None:
        start = time.monotonic()
        offset = self.client.produce(self.topic, 0, self.records)
        got = self.client.fetch(self.topic, 0, offset)
        assert got.records, "the probe's own batch was not fetched back"
        self.latencies.append(time.monotonic() - start)

    def rounds(self, n: int, pause_s: float = 0.0) -> None:
        for _ in range(n):
            self.round()
            if pause_s:
                time.sleep(pause_s)

    @property
    def worst(self) -> float:
        return max(self.latencies)

    def close(self) -> None:
        self.client.close()
