"""An in-process broker and raw-protocol clients for tests: requests encoded with
kafkacore's own codec over plain asyncio sockets, so a test sees exactly the bytes a
client would (framing, pipelining, error codes), without a client library in between."""

from __future__ import annotations

import asyncio
import socket
import struct
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from kafkacore.config import BrokerConfig
from kafkacore.protocol import APIS_BY_NAME, RequestHeader, decode_response, encode_request
from kafkacore.server import KafkaServer

__all__ = [
    "OneShotClient",
    "RawClient",
    "fetch_request",
    "make_request",
    "produce_request",
    "receive_blocking",
    "recv_exactly",
    "run_broker",
]


def make_request(name: str, **fields: Any) -> Any:
    """A request object of API ``name`` (Kafka's name, e.g. ``"Produce"``)."""
    return APIS_BY_NAME[name].request.cls(**fields)


def produce_request(
    topic: str, partition: int, records: bytes, *, acks: int = -1, timeout_ms: int = 5000
) -> Any:
    """A non-transactional Produce of ``records`` to one partition."""
    req = APIS_BY_NAME["Produce"].request.cls
    return req(
        transactional_id=None,
        acks=acks,
        timeout_ms=timeout_ms,
        topic_data=[
            req.TopicProduceData(
                name=topic,
                partition_data=[req.PartitionProduceData(index=partition, records=records)],
            )
        ],
    )


def fetch_request(
    topic: str,
    partition: int,
    *,
    fetch_offset: int = 0,
    replica_id: int = -1,
    min_bytes: int = 1,
    current_leader_epoch: int = -1,
    last_fetched_epoch: int = -1,
    log_start_offset: int = -1,
) -> Any:
    """A sessionless, read-uncommitted Fetch of one partition (1 MiB at most, no wait);
    ``replica_id`` -1 is a consumer's, a broker id a follower's."""
    req = APIS_BY_NAME["Fetch"].request.cls
    return req(
        replica_id=replica_id,
        max_wait_ms=0,
        min_bytes=min_bytes,
        max_bytes=1 << 20,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        topics=[
            req.FetchTopic(
                topic=topic,
                partitions=[
                    req.FetchPartition(
                        partition=partition,
                        current_leader_epoch=current_leader_epoch,
                        fetch_offset=fetch_offset,
                        last_fetched_epoch=last_fetched_epoch,
                        log_start_offset=log_start_offset,
                        partition_max_bytes=1 << 20,
                    )
                ],
            )
        ],
        forgotten_topics_data=[],
        rack_id="",
    )


class RawClient:
    """One connection; requests may be pipelined (:meth:`send` several, then :meth:`recv`)."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, client_id: str = "t"
    ) -> None:
        self.reader, self.writer = reader, writer
        self.client_id = client_id

    @classmethod
    async def connect(cls, port: int, client_id: str = "t") -> RawClient:
        return cls(*await asyncio.open_connection("localhost", port), client_id=client_id)

    def send(self, name: str, version: int, correlation_id: int, request: Any) -> None:
        api = APIS_BY_NAME[name]
        header = RequestHeader(api.key, version, correlation_id, self.client_id)
        self.writer.write(encode_request(header, request))

    async def frame(self, timeout_s: float = 5) -> bytes:
        """The next response frame, without its size prefix."""
        (size,) = struct.unpack(">i", await asyncio.wait_for(self.reader.readexactly(4), timeout_s))
        return await asyncio.wait_for(self.reader.readexactly(size), timeout_s)

    async def recv(self, name: str, version: int) -> tuple[int, Any]:
        """``(correlation id, response)`` of the next frame, decoded as ``name``."""
        return decode_response(await self.frame(), APIS_BY_NAME[name].key, version)

    async def call(self, name: str, version: int, request: Any, cid: int = 1) -> Any:
        self.send(name, version, cid, request)
        got, response = await self.recv(name, version)
        assert got == cid
        return response

    def close(self) -> None:
        self.writer.close()


def recv_exactly(sock: socket.socket, n: int) -> bytes:
    """``n`` bytes from a blocking socket; ConnectionError if it closes first."""
    out = bytearray()
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError("closed")
        out += chunk
    return bytes(out)


def receive_blocking(sock: socket.socket, name: str, version: int) -> tuple[int, Any]:
    """One response frame of API ``name`` from a blocking socket: (correlation id,
    response)."""
    size = struct.unpack(">i", recv_exactly(sock, 4))[0]
    return decode_response(recv_exactly(sock, size), APIS_BY_NAME[name].key, version)


class OneShotClient:
    """Each call on its own connection, so that calls may wait concurrently (a JoinGroup
    waiting for a rebalance does not hold up the next member's)."""

    def __init__(self, port: int, client_id: str = "c") -> None:
        self.port = port
        self.client_id = client_id
        self.cid = 0

    async def call(self, name: str, version: int, **fields: Any) -> Any:
        client = await RawClient.connect(self.port, self.client_id)
        try:
            self.cid += 1
            expected = self.cid
            client.send(name, version, expected, make_request(name, **fields))
            cid, response = decode_response(
                await client.frame(timeout_s=10), APIS_BY_NAME[name].key, version
            )
            assert cid == expected
            return response
        finally:
            client.close()


def run_broker(
    tmp_path: Path, scenario: Callable[[KafkaServer], Awaitable[None]], **props: Any
) -> None:
    """Start a broker on ``tmp_path`` (``listeners=PLAINTEXT://localhost:0``, node 1, plus
    ``props``), run ``scenario`` against it, shut it down."""

    async def main() -> None:
        config = {"listeners": "PLAINTEXT://localhost:0", "log.dirs": str(tmp_path), "node.id": 1}
        server = KafkaServer(BrokerConfig({**config, **props}))
        await server.startup()
        try:
            await scenario(server)
        finally:
            await server.shutdown()

    asyncio.run(main())
