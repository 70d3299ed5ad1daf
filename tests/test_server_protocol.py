"""The broker in-process, driven through raw sockets with the protocol codec: framing,
oversized frames, pipelining order, acks=0, malformed requests, ApiVersions fallback."""

from __future__ import annotations

import asyncio
import struct
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from kafkacore import backend
from kafkacore.protocol import (
    APIS_BY_NAME,
    ErrorCode,
    decode_response,
)
from kafkacore.server import KafkaServer
from support.raw_client import RawClient, make_request, run_broker

pytestmark = pytest.mark.timeout(30)


_req = make_request
Client = RawClient

Scenario = Callable[
    [KafkaServer, Callable[[], Coroutine[Any, Any, Client]]], Coroutine[Any, Any, None]
]


def run(tmp_path: Path, scenario: Scenario, **props: Any) -> None:
    async def with_server(server: KafkaServer) -> None:
        async def connect() -> Client:
            return await RawClient.connect(server.bound_port)

        await scenario(server, connect)

    run_broker(tmp_path, with_server, **props)


def _batch(values: list[bytes]) -> bytes:
    now = int(time.time() * 1000)
    return bytes(backend.build_batch([(i, now, None, v, []) for i, v in enumerate(values)]))


def _produce(topic: str, records: bytes, acks: int = 1) -> Any:
    cls: Any = APIS_BY_NAME["Produce"].request.cls
    return cls(
        acks=acks,
        timeout_ms=1000,
        topic_data=[
            cls.TopicProduceData(
                name=topic, partition_data=[cls.PartitionProduceData(index=0, records=records)]
            )
        ],
    )


def _fetch(topic: str, offset: int, max_wait_ms: int = 0, min_bytes: int = 1) -> Any:
    cls: Any = APIS_BY_NAME["Fetch"].request.cls
    return cls(
        max_wait_ms=max_wait_ms,
        min_bytes=min_bytes,
        max_bytes=1 << 20,
        topics=[
            cls.FetchTopic(
                topic=topic,
                partitions=[
                    cls.FetchPartition(
                        partition=0, fetch_offset=offset, partition_max_bytes=1 << 20
                    )
                ],
            )
        ],
    )


def test_api_versions_unknown_version_gets_v0_error_and_full_list(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer, connect: Any) -> None:
        client = await connect()
        frame = struct.pack(">hhih", 18, 99, 5, -1) + b"\x00"
        client.writer.write(struct.pack(">i", len(frame)) + frame)
        cid, response = decode_response(await client.frame(), 18, 0)
        assert cid == 5 and response.error_code == ErrorCode.UNSUPPORTED_VERSION
        assert {k.api_key for k in response.api_keys} >= {0, 1, 2, 3, 18, 19}
        ok = await client.call("ApiVersions", 3, _req("ApiVersions", client_software_name="t"))
        produce = next(k for k in ok.api_keys if k.api_key == 0)
        assert (produce.min_version, produce.max_version) == (0, 12)

    run(tmp_path, scenario)


def test_produce_fetch_pipelined_in_order_and_acks0_silent(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer, connect: Any) -> None:
        client = await connect()
        meta = await client.call(
            "Metadata",
            12,
            _req(
                "Metadata",
                topics=[APIS_BY_NAME["Metadata"].request.cls.MetadataRequestTopic(name="orders")],
                allow_auto_topic_creation=True,
            ),
        )
        assert meta.topics[0].error_code == 0 and meta.topics[0].partitions[0].leader_id == 1
        # acks=0 then acks=1, pipelined: only the acks=1 request is answered, in order
        client.send("Produce", 9, 10, _produce("orders", _batch([b"a", b"b"]), acks=0))
        for cid in (11, 12, 13):
            client.send("Produce", 9, cid, _produce("orders", _batch([b"c"])))
        offsets = []
        for cid in (11, 12, 13):
            got, response = await client.recv("Produce", 9)
            assert got == cid
            offsets.append(response.responses[0].partition_responses[0].base_offset)
        assert offsets == [2, 3, 4]
        fetched = await client.call("Fetch", 12, _fetch("orders", 0))
        data = fetched.responses[0].partitions[0]
        assert data.high_watermark == 5
        values = [r[3] for r in backend.batch_records(bytes(data.records), 0)]
        assert values == [b"a", b"b"]

    run(tmp_path, scenario)


def test_delayed_fetch_is_woken_by_an_append(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer, connect: Any) -> None:
        consumer, producer = await connect(), await connect()
        await producer.call("Produce", 9, _produce("t", _batch([b"x"])))
        started = time.monotonic()
        consumer.send("Fetch", 11, 1, _fetch("t", 1, max_wait_ms=5000))
        await asyncio.sleep(0.2)
        await producer.call("Produce", 9, _produce("t", _batch([b"y"])))
        _, response = await consumer.recv("Fetch", 11)
        assert time.monotonic() - started < 3
        assert response.responses[0].partitions[0].high_watermark == 2
        assert len(response.responses[0].partitions[0].records) > 0

    run(tmp_path, scenario)


def test_oversized_frame_closes_connection_and_broker_keeps_serving(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer, connect: Any) -> None:
        client = await connect()
        client.writer.write(struct.pack(">i", 10_000))
        assert await asyncio.wait_for(client.reader.read(), 5) == b""
        other = await connect()
        await other.call("ApiVersions", 0, _req("ApiVersions"))

    run(tmp_path, scenario, **{"socket.request.max.bytes": 1000})


def test_malformed_and_refused_requests_get_error_codes(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer, connect: Any) -> None:
        client = await connect()
        # Metadata v1 with a truncated body: INVALID_REQUEST? Metadata has no top-level
        # error, so the response is empty but well-formed with the same correlation id.
        frame = struct.pack(">hhih", 3, 1, 77, -1) + b"\x00\x00"
        client.writer.write(struct.pack(">i", len(frame)) + frame)
        cid, _ = decode_response(await client.frame(), 3, 1)
        assert cid == 77
        # Produce v2 (advertised, removed in Kafka 4): an answer, not a dropped connection
        client.send("Produce", 2, 78, _produce("t", b""))
        cid, _ = await client.recv("Produce", 2)
        assert cid == 78
        # InitProducerId with a truncated body -> INVALID_REQUEST in error_code
        frame = struct.pack(">hhih", 22, 1, 79, -1) + b"\x00"
        client.writer.write(struct.pack(">i", len(frame)) + frame)
        cid, response = decode_response(await client.frame(), 22, 1)
        assert (cid, response.error_code) == (79, ErrorCode.INVALID_REQUEST)
        # two batches in one partition -> INVALID_RECORD; still serving
        response = await client.call("Produce", 9, _produce("t", _batch([b"a"]) * 2))
        assert response.responses[0].partition_responses[0].error_code == ErrorCode.INVALID_RECORD
        response = await client.call("Produce", 9, _produce("t", b"\x00" * 70))
        assert response.responses[0].partition_responses[0].error_code == ErrorCode.INVALID_RECORD
        acl = await client.call("DescribeAcls", 1, _req("DescribeAcls", resource_type_filter=1))
        assert acl.error_code == ErrorCode.SECURITY_DISABLED
        out_of_range = await client.call("Fetch", 12, _fetch("t", 99))
        assert out_of_range.responses[0].partitions[0].error_code == ErrorCode.OFFSET_OUT_OF_RANGE

    run(tmp_path, scenario)


def test_unknown_topic_without_auto_create(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer, connect: Any) -> None:
        client = await connect()
        response = await client.call("Produce", 9, _produce("nope", _batch([b"a"])))
        code = response.responses[0].partition_responses[0].error_code
        assert code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION

    run(tmp_path, scenario, **{"auto.create.topics.enable": "false"})


def test_too_large_and_min_isr(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer, connect: Any) -> None:
        client = await connect()
        big = await client.call("Produce", 9, _produce("t", _batch([b"x" * 3000])))
        assert big.responses[0].partition_responses[0].error_code == ErrorCode.MESSAGE_TOO_LARGE
        isr = await client.call("Produce", 9, _produce("t", _batch([b"x"]), acks=-1))
        assert isr.responses[0].partition_responses[0].error_code == ErrorCode.NOT_ENOUGH_REPLICAS

    run(tmp_path, scenario, **{"message.max.bytes": 1000, "min.insync.replicas": 2})
