"""Fetch sessions (KIP-227) against Apache Kafka 4.3.1 and its own consumer.

- The raw scenario of ``support.fetch_session_scenario`` (session lifecycle, the
  incremental responses' partitions and their order, error codes 70, 71 and 106, the
  final epoch, Fetch v4) answered by kafkacore and by a Kafka KRaft node from its jars,
  compared field by field.
- Kafka's Java consumer (``SessionConsumer.java``) reading from a kafkacore broker uses
  sessions: the broker's cache counts the incremental fetches it served and holds the
  consumer's session; then confluent-kafka (librdkafka, which sends sessionless
  requests) still reads everything.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import confluent_kafka as ck
import pytest

from kafkacore import backend
from kafkacore.protocol import APIS_BY_NAME
from kafkacore.server import KafkaServer
from support.brokers import Broker
from support.fetch_session_scenario import TOPIC, Raw, prepare, run_scenario
from support.kafka_jars import JVM_FLAGS, KraftNode
from support.raw_client import run_broker

pytestmark = [pytest.mark.interop, pytest.mark.timeout(300)]

COMMON = ["offsets.topic.num.partitions=1", "group.initial.rebalance.delay.ms=0"]


@pytest.fixture(scope="module")
def both(kafka_libs: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, int]]:
    """(kafkacore port, Kafka port), started side by side."""
    kafka = KraftNode(kafka_libs, tmp_path_factory.mktemp("kafka"), *COMMON)
    ours = Broker(tmp_path_factory.mktemp("kafkacore") / "data", COMMON)
    try:
        with ThreadPoolExecutor(2) as pool:
            started = [pool.submit(kafka.start), pool.submit(ours.start)]
            for f in started:
                f.result()
        yield ours.port, kafka.port
    finally:
        kafka.stop()
        ours.stop()


def test_scenario_answers_as_kafka(both: tuple[int, int]) -> None:
    with ThreadPoolExecutor(2) as pool:
        ours, theirs = pool.map(run_scenario, both)
    assert [name for name, _ in ours] == [name for name, _ in theirs]
    for (name, got), (_, expected) in zip(ours, theirs, strict=True):
        assert got == expected, name


def _seed(port: int, partitions_records: int) -> None:
    raw = Raw(port)
    try:
        prepare(raw)
        produce: Any = APIS_BY_NAME["Produce"].request.cls
        for partition in (0, 1):
            for _ in range(partitions_records // 50):
                records = [(i, 1_700_000_000_000, None, b"x" * 100, []) for i in range(50)]
                batch = bytes(backend.build_batch(records))
                raw.call(
                    "Produce",
                    9,
                    produce(
                        acks=-1,
                        timeout_ms=10_000,
                        topic_data=[
                            produce.TopicProduceData(
                                name=TOPIC,
                                partition_data=[
                                    produce.PartitionProduceData(index=partition, records=batch)
                                ],
                            )
                        ],
                    ),
                )
    finally:
        raw.close()


def _confluent_count(bootstrap: str, wanted: int) -> int:
    consumer = ck.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "sessions-ck", "enable.auto.commit": False}
    )
    try:
        consumer.assign([ck.TopicPartition(TOPIC, p, ck.OFFSET_BEGINNING) for p in (0, 1)])
        got = 0
        deadline = time.monotonic() + 60
        while got < wanted and time.monotonic() < deadline:
            got += sum(m.error() is None for m in consumer.consume(500, 0.5))
        return got
    finally:
        consumer.close()


def test_java_consumer_uses_sessions(java: Any, tmp_path: Path) -> None:
    per_partition = 1000

    async def scenario(server: KafkaServer) -> None:
        port = server.socket_server.bound_ports["PLAINTEXT"]
        await asyncio.to_thread(_seed, port, per_partition)
        sessions = server.services.fetch_sessions
        before = sessions.incremental_fetches
        proc = await asyncio.create_subprocess_exec(
            "java",
            *java_flags(java),
            "SessionConsumer",
            f"localhost:{port}",
            TOPIC,
            str(2 * per_partition),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 120)
        assert proc.returncode == 0, err.decode(errors="replace")[-3000:]
        assert out.decode().strip().splitlines()[-1] == f"consumed {2 * per_partition}"
        # 2 x 1000 records of ~100 bytes at 2 KiB per partition and fetch: dozens of
        # fetches, all but the first incremental
        assert sessions.incremental_fetches - before >= 20
        assert sessions.evictions == 0
        got = await asyncio.to_thread(_confluent_count, f"localhost:{port}", 2 * per_partition)
        assert got == 2 * per_partition

    run_broker(tmp_path, scenario, **{"offsets.topic.num.partitions": 1})


def java_flags(java: Any) -> list[str]:
    return [*JVM_FLAGS, "-cp", java.classpath]
