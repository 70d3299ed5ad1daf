"""The broker-to-broker client (``kafkacore.net.NodeClient``): against a
real kafkacore broker (ApiVersions, Metadata, 50 pipelined requests matched by
correlation id), and against scripted peers for what a broker does not do on demand
(never answering, closing mid-request, a broken frame)."""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from kafkacore.net import NodeClient
from kafkacore.protocol import APIS, ApiKey, decode_request, encode_response
from kafkacore.protocol.errors import ProtocolError
from support.brokers import Broker

pytestmark = pytest.mark.timeout(60)


def _request(key: ApiKey, **fields: Any) -> Any:
    return APIS[key].request.cls(**fields)


def _run(coro: Awaitable[None]) -> None:
    asyncio.run(coro)  # type: ignore[arg-type]


# --- against a kafkacore broker ----------------------------------------------------------


def test_api_versions_lists_the_inter_broker_apis(broker: Broker) -> None:
    async def main() -> None:
        client = NodeClient("localhost", broker.port, client_id="broker-2")
        try:
            response = await client.send(ApiKey.API_VERSIONS, 3, _request(ApiKey.API_VERSIONS))
            assert response.error_code == 0
            versions = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
            assert versions[ApiKey.LEADER_AND_ISR] == (0, 7)
            assert versions[ApiKey.UPDATE_METADATA] == (0, 8)
            assert versions[ApiKey.STOP_REPLICA] == (0, 4)
            assert versions[ApiKey.CONTROLLED_SHUTDOWN] == (1, 3)
            assert versions[ApiKey.ALTER_PARTITION] == (0, 3)
            # ApiVersions v0 (header v1, response header v0) on the same connection
            v0 = await client.send(ApiKey.API_VERSIONS, 0, _request(ApiKey.API_VERSIONS))
            assert {k.api_key for k in v0.api_keys} == set(versions)
            assert client.in_flight == 0 and not client.closed
        finally:
            await client.close()
        assert client.closed
        with pytest.raises(ConnectionError):
            await client.send(ApiKey.API_VERSIONS, 3, _request(ApiKey.API_VERSIONS))

    _run(main())


def test_metadata_flexible_and_not(broker: Broker) -> None:
    async def main() -> None:
        client = NodeClient("localhost", broker.port, client_id="broker-2")
        try:
            for version in (1, 8, 12):  # header v1 and v2
                response = await client.send(
                    ApiKey.METADATA, version, _request(ApiKey.METADATA, topics=[])
                )
                assert [(b.host, b.port) for b in response.brokers] == [("localhost", broker.port)]
                assert response.topics == []
        finally:
            await client.close()

    _run(main())


def test_fifty_pipelined_requests_are_matched_by_correlation_id(broker: Broker) -> None:
    async def main() -> None:
        client = NodeClient("localhost", broker.port, client_id="broker-2")
        metadata: Any = APIS[ApiKey.METADATA].request.cls

        async def one(i: int) -> tuple[int, Any]:
            if i % 5 == 0:
                return i, await client.send(ApiKey.API_VERSIONS, 3, _request(ApiKey.API_VERSIONS))
            request = metadata(
                topics=[metadata.MetadataRequestTopic(name=f"absent-{i}")],
                allow_auto_topic_creation=False,
            )
            return i, await client.send(ApiKey.METADATA, 12 if i % 2 else 9, request)

        try:
            await client.send(ApiKey.API_VERSIONS, 3, _request(ApiKey.API_VERSIONS))  # connect
            tasks = [asyncio.ensure_future(one(i)) for i in range(50)]
            await asyncio.sleep(0)
            assert client.in_flight == 50  # all written before any answer is read
            results = await asyncio.gather(*tasks)
        finally:
            await client.close()
        for i, response in results:
            if i % 5 == 0:
                assert response.error_code == 0 and response.api_keys
            else:
                assert [(t.name, t.error_code) for t in response.topics] == [
                    (f"absent-{i}", 3)  # UNKNOWN_TOPIC_OR_PARTITION, for this request's topic
                ]

    _run(main())


# --- against scripted peers -----------------------------------------------------------------

Peer = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _frames(reader: asyncio.StreamReader) -> Any:
    while True:
        (size,) = struct.unpack(">i", await reader.readexactly(4))
        yield await reader.readexactly(size)


async def _with_peer(peer: Peer, test: Callable[[int], Awaitable[None]]) -> None:
    server = await asyncio.start_server(peer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        await test(port)
    finally:
        server.close()


def _api_versions_answer(frame: bytes) -> bytes:
    header, _ = decode_request(frame)
    return encode_response(header, APIS[ApiKey.API_VERSIONS].response.cls(error_code=0))


def test_request_timeout_keeps_the_connection_and_drops_the_late_answer() -> None:
    async def peer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        first = True
        async for frame in _frames(reader):
            if first:  # answer the first request late, after the client gave up on it
                first = False
                await asyncio.sleep(0.5)
            writer.write(_api_versions_answer(frame))

    async def test(port: int) -> None:
        client = NodeClient("127.0.0.1", port, client_id="c", request_timeout_s=0.2)
        try:
            with pytest.raises(TimeoutError):
                await client.send(ApiKey.API_VERSIONS, 3, _request(ApiKey.API_VERSIONS))
            assert client.in_flight == 0 and not client.closed
            client.request_timeout_s = 5.0
            response = await client.send(ApiKey.API_VERSIONS, 3, _request(ApiKey.API_VERSIONS))
            assert response.error_code == 0 and not client.closed
        finally:
            await client.close()

    _run(_with_peer(peer, test))


def test_peer_close_fails_every_pending_request() -> None:
    async def peer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        got = 0
        async for _ in _frames(reader):
            got += 1
            if got == 3:  # three requests in flight, none answered
                writer.close()
                return

    async def test(port: int) -> None:
        client = NodeClient("127.0.0.1", port, client_id="c", request_timeout_s=10)
        sends = [
            client.send(ApiKey.API_VERSIONS, 3, _request(ApiKey.API_VERSIONS)) for _ in range(3)
        ]
        results = await asyncio.gather(*sends, return_exceptions=True)
        assert all(isinstance(r, ConnectionError) for r in results), results
        assert client.closed and client.in_flight == 0
        with pytest.raises(ConnectionError):
            await client.send(ApiKey.API_VERSIONS, 3, _request(ApiKey.API_VERSIONS))
        await client.close()

    _run(_with_peer(peer, test))


@pytest.mark.parametrize("size", [-1, 0, 2**31 - 1])
def test_frame_size_out_of_range_is_a_connection_error(size: int) -> None:
    async def peer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async for _ in _frames(reader):
            writer.write(struct.pack(">i", size) + b"\0" * 16)

    async def test(port: int) -> None:
        client = NodeClient("127.0.0.1", port, client_id="c", request_timeout_s=5)
        with pytest.raises(ConnectionError):
            await client.send(ApiKey.API_VERSIONS, 3, _request(ApiKey.API_VERSIONS))
        assert client.closed
        await client.close()

    _run(_with_peer(peer, test))


def test_unknown_correlation_id_is_a_connection_error() -> None:
    async def peer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async for _ in _frames(reader):
            writer.write(encode_response(777, APIS[ApiKey.API_VERSIONS].response.cls(), 3))

    async def test(port: int) -> None:
        client = NodeClient("127.0.0.1", port, client_id="c", request_timeout_s=5)
        with pytest.raises(ConnectionError):
            await client.send(ApiKey.API_VERSIONS, 3, _request(ApiKey.API_VERSIONS))
        await client.close()

    _run(_with_peer(peer, test))


def test_undecodable_response_fails_only_its_request() -> None:
    async def peer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        first = True
        async for frame in _frames(reader):
            if first:  # the right correlation id, then a truncated body
                first = False
                writer.write(struct.pack(">i", 6) + frame[4:8] + b"\0\0")
            else:
                writer.write(_api_versions_answer(frame))

    async def test(port: int) -> None:
        client = NodeClient("127.0.0.1", port, client_id="c", request_timeout_s=5)
        try:
            with pytest.raises(ProtocolError):
                await client.send(ApiKey.API_VERSIONS, 3, _request(ApiKey.API_VERSIONS))
            response = await client.send(ApiKey.API_VERSIONS, 3, _request(ApiKey.API_VERSIONS))
            assert response.error_code == 0 and not client.closed
        finally:
            await client.close()

    _run(_with_peer(peer, test))


def test_connect_refused_and_connect_timeout() -> None:
    async def main() -> None:
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()
        client = NodeClient("127.0.0.1", port, client_id="c")
        with pytest.raises(ConnectionError):
            await client.send(ApiKey.API_VERSIONS, 3, _request(ApiKey.API_VERSIONS))
        assert client.closed
        await client.close()
        # a non-routable address (TEST-NET-1) never completes the handshake
        slow = NodeClient("192.0.2.1", 9092, client_id="c", connect_timeout_s=0.2)
        with pytest.raises((TimeoutError, ConnectionError)):
            await slow.send(ApiKey.API_VERSIONS, 3, _request(ApiKey.API_VERSIONS))
        await slow.close()

    _run(main())


def test_close_fails_pending_requests() -> None:
    async def peer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async for _ in _frames(reader):
            pass  # never answers

    async def test(port: int) -> None:
        client = NodeClient("127.0.0.1", port, client_id="c", request_timeout_s=10)
        pending = asyncio.ensure_future(
            client.send(ApiKey.API_VERSIONS, 3, _request(ApiKey.API_VERSIONS))
        )
        while client.in_flight == 0:
            await asyncio.sleep(0.01)
        await client.close()
        with pytest.raises(ConnectionError):
            await pending
        assert client.closed

    _run(_with_peer(peer, test))
