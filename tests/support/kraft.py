"""KRaft controller nodes for the tests: formatted with ``kafkacore storage format``'s
code, assembled by :func:`kafkacore.server.assembly.kraft_controller`, run in-process
(:func:`controller_node`, requests handed to its ``ControllerApis`` without a socket) or
as processes (:class:`ControllerProcess`, ``kafkacore server-start``), and requests built
from the declared schemas (:func:`request`)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafkacore.config import BrokerConfig
from kafkacore.log.checkpoints import random_uuid, uuid_to_base64
from kafkacore.metadata.storage import FormatOptions, format_storage
from kafkacore.protocol.api import api_for
from kafkacore.protocol.headers import RequestHeader
from kafkacore.server.assembly import AssembledController, kraft_controller
from kafkacore.server.network import SocketServer

__all__ = [
    "ControllerProcess",
    "Node",
    "controller_node",
    "controller_props",
    "request",
]

REPO = Path(__file__).resolve().parents[2]


def request(api_key: int, **fields: Any) -> Any:
    """A request of ``api_key`` with ``fields`` (nested structs given as instances)."""
    cls: Any = api_for(api_key).request.cls
    return cls(**fields)


def controller_props(
    node_id: int, port: int, directory: Path, *, voters: str | None = None, **extra: str
) -> dict[str, str]:
    props = {
        "process.roles": "controller",
        "node.id": str(node_id),
        "listeners": f"CONTROLLER://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "log.dirs": str(directory),
        "controller.quorum.election.timeout.ms": "300",
        "controller.quorum.fetch.timeout.ms": "600",
        "controller.quorum.request.timeout.ms": "600",
    }
    if voters is None:
        props["controller.quorum.bootstrap.servers"] = f"127.0.0.1:{port}"
    else:
        props["controller.quorum.voters"] = voters
    props.update(extra)
    return props


def format_node(props: Mapping[str, str], cluster_id: str, *, standalone: bool) -> BrokerConfig:
    config = BrokerConfig(dict(props))
    format_storage(config, FormatOptions(cluster_id=cluster_id, standalone=standalone))
    return config


@dataclass
class Node:
    """An in-process controller: its parts and a way to send it requests."""

    assembled: AssembledController
    socket_server: SocketServer | None
    _correlation: int = 0

    @property
    def controller(self) -> Any:
        return self.assembled.controller

    async def send(self, api_key: int, version: int, body: Any) -> Any:
        self._correlation += 1
        header = RequestHeader(api_key, version, self._correlation, "test")
        return await self.assembled.apis.handle(header, body)

    async def call(self, api_key: int, version: int, **fields: Any) -> Any:
        return await self.send(api_key, version, request(api_key, **fields))

    async def wait(self, check: Any, timeout_s: float = 15.0) -> Any:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            value = check()
            if value:
                return value
            await asyncio.sleep(0.02)
        raise AssertionError("condition not met in time")


@contextlib.asynccontextmanager
async def controller_node(
    directory: Path, port: int, *, listen: bool = False, **extra: str
) -> AsyncIterator[Node]:
    """A single-voter quorum (``--standalone``), active and bootstrapped."""
    props = controller_props(1, port, directory, **extra)
    config = format_node(props, uuid_to_base64(random_uuid()), standalone=True)
    assembled = kraft_controller(config)
    server = None
    if listen:
        server = SocketServer(
            assembled.apis, [(e.listener_name, e.host, e.port) for e in assembled.endpoints]
        )
        await server.start()
    await assembled.raft.start()
    await assembled.controller.start()
    node = Node(assembled, server)
    try:
        await node.wait(
            lambda: (
                assembled.controller.is_active
                and assembled.controller.committed.image.features.metadata_version is not None
            )
        )
        yield node
    finally:
        await assembled.controller.stop()
        await assembled.raft.stop()
        if server is not None:
            await server.stop_accepting()
            await server.close_connections()
        assembled.metadata_log.close()


class ControllerProcess:
    """``kafkacore server-start`` of a controller, its output in ``<home>/out.log``."""

    def __init__(self, home: Path, props: Mapping[str, str]) -> None:
        self.home = home
        self.props = dict(props)
        self.process: subprocess.Popen[bytes] | None = None
        home.mkdir(parents=True, exist_ok=True)
        self.config_path = home / "server.properties"
        self.config_path.write_text("".join(f"{k}={v}\n" for k, v in self.props.items()))

    @property
    def node_id(self) -> int:
        return int(self.props["node.id"])

    @property
    def port(self) -> int:
        return int(self.props["listeners"].rsplit(":", 1)[1])

    def format(self, cluster_id: str, *extra: str) -> None:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "kafkacore",
                "storage",
                "format",
                "-t",
                cluster_id,
                "-c",
                str(self.config_path),
                *extra,
            ],
            check=True,
            capture_output=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": str(REPO / "python")},
        )

    def start(self) -> None:
        out = open(self.home / "out.log", "ab")  # noqa: SIM115 (the process owns it)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "kafkacore", "server-start", str(self.config_path)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": str(REPO / "python")},
        )

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)

    def log(self) -> str:
        try:
            return (self.home / "out.log").read_text(errors="replace")
        except FileNotFoundError:
            return ""


def new_cluster_id() -> str:
    return uuid_to_base64(uuid.uuid4())
