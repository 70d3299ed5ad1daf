"""Raw requests to a broker and an Apache Kafka node from the cached jars, for the tests
that send kafkacore and Kafka 4.3.1 the same requests and compare the answers field by
field (``interop/test_offset_commit_vs_kafka.py``,
``interop/test_consumer_group_heartbeat_vs_kafka.py``)."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkacore.protocol import APIS_BY_NAME, RequestHeader
from kafkacore.protocol.api import encode_request
from support.brokers import free_port
from support.kafka_jars import kraft_single_node_props, start_kraft_node, stop_process
from support.raw_client import receive_blocking

__all__ = ["KafkaNode", "Raw", "until"]


class Raw:
    """Raw requests to one broker, each on its own connection (so a JoinGroup that waits
    does not hold up the others)."""

    def __init__(self, port: int, data: Path | None = None) -> None:
        self.port = port
        self.data = data  # the broker's log directory
        self.cid = 0

    def send(self, name: str, version: int, **fields: Any) -> tuple[socket.socket, int]:
        api = APIS_BY_NAME[name]
        self.cid += 1
        sock = socket.create_connection(("localhost", self.port), timeout=30)
        header = RequestHeader(api.key, version, self.cid, "interop")
        sock.sendall(encode_request(header, api.request.cls(**fields)))
        return sock, self.cid

    @staticmethod
    def receive(sock: socket.socket, name: str, version: int, cid: int) -> Any:
        try:
            got, response = receive_blocking(sock, name, version)
            assert got == cid
            return response
        finally:
            sock.close()

    def call(self, name: str, version: int, **fields: Any) -> Any:
        sock, cid = self.send(name, version, **fields)
        return self.receive(sock, name, version, cid)


def until(what: str, probe: Any, timeout: float = 60) -> Any:
    """``probe()`` until it is truthy (connection errors count as not yet); its value."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = probe()
            if last:
                return last
        except OSError as exc:
            last = exc
        time.sleep(0.2)
    raise AssertionError(f"{what}: gave up, last {last!r}")


@dataclass
class KafkaNode:
    """Apache Kafka from the cached jars: KRaft broker+controller on free ports, with
    ``overrides`` in its server.properties; ``standalone``: a dynamic quorum formatted
    with ``--standalone`` (kraft.version 1, as a new Kafka 4.3.1 cluster), plus
    ``format_args`` for ``kafka-storage format``."""

    libs: Path
    home: Path
    overrides: Sequence[str] = ()
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    standalone: bool = False
    format_args: Sequence[str] = ()

    def start(self) -> KafkaNode:
        cport = free_port()
        props = self.home / "server.properties"
        props.write_text(
            kraft_single_node_props(
                self.home, self.port, cport, *self.overrides, standalone=self.standalone
            )
        )
        args = [*self.format_args, *(["--standalone"] if self.standalone else [])]
        self.proc = start_kraft_node(self.libs, props, self.home / "kafka.log", args)
        until("Kafka starts", lambda: Raw(self.port).call("ApiVersions", 0) is not None, 120)
        return self

    def stop(self) -> None:
        stop_process(self.proc)
