"""Tiered storage in a running kafkacore broker, driven by real clients (librdkafka
through confluent-kafka, and raw requests), with a real S3 store (S3Proxy):

* a consumer reads a topic from offset 0 after its first segments exist only in the
  bucket: every record, in order, byte-equal to what was produced;
* ListOffsets EARLIEST_LOCAL (-4) and LATEST_TIERED (-5), offsetsForTimes and
  read_committed across both tiers;
* a hung object store takes no partition offline and holds no request past its
  time-outs; a deleted topic's objects all go.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import confluent_kafka as ck
import pytest
from confluent_kafka import admin as admin_mod

from kafkacore.log.remote.object_store import S3ObjectStore
from kafkacore.protocol import APIS_BY_NAME
from support.brokers import Broker, BrokerFactory
from support.object_store import ObjectStoreServer, bucket_name
from support.raw_client import RawClient, fetch_request
from support.tiering import produce_transactions

SEGMENT_BYTES = 1 << 20


class TieredBroker:
    def __init__(self, broker: Broker, store: S3ObjectStore) -> None:
        self.broker = broker
        self.store = store

    @property
    def bootstrap(self) -> str:
        return self.broker.bootstrap


@pytest.fixture(scope="module")
def tiered(broker_factory: BrokerFactory, object_store: ObjectStoreServer) -> TieredBroker:
    bucket = object_store.create_bucket(bucket_name())
    broker = broker_factory(
        *object_store.broker_overrides(bucket),
        "rlmm.config.remote.log.metadata.topic.replication.factor=1",
        "rlmm.config.remote.log.metadata.topic.num.partitions=3",
        "remote.log.manager.task.interval.ms=300",
        "log.retention.check.interval.ms=300",
        "rsm.config.s3.request.timeout.ms=2000",
        "rsm.config.s3.max.retries=1",
        "rsm.config.s3.retry.timeout.ms=4000",
        "remote.fetch.max.wait.ms=3000",
    )
    return TieredBroker(broker, S3ObjectStore(object_store.storage_config(bucket)))


def _wait(what: str, check: Callable[[], bool], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def _create_topic(bootstrap: str, name: str, **configs: str) -> None:
    admin = admin_mod.AdminClient({"bootstrap.servers": bootstrap})
    topic = admin_mod.NewTopic(
        name,
        num_partitions=1,
        replication_factor=1,
        config={
            "remote.storage.enable": "true",
            "segment.bytes": str(SEGMENT_BYTES),
            "local.retention.bytes": "1",
            **configs,
        },
    )
    for future in admin.create_topics([topic]).values():
        future.result(30)


def _produce(
    bootstrap: str, topic: str, n: int, size: int = 1000
) -> list[tuple[bytes, bytes, int]]:
    producer = ck.Producer(
        {"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5, "compression.type": "none"}
    )
    sent = []
    base = int(time.time() * 1000) - 10 * n
    for i in range(n):
        key, value = f"k{i}".encode(), os.urandom(size)
        producer.produce(topic, value, key, timestamp=base + 10 * i)
        sent.append((key, value, base + 10 * i))
        if i % 500 == 0:
            producer.poll(0)
    assert producer.flush(30) == 0
    return sent


def _consume_all(bootstrap: str, topic: str, count: int, **extra: str) -> list[Any]:
    consumer = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"g-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "fetch.max.bytes": 1 << 20,
            **extra,
        }
    )
    consumer.assign([ck.TopicPartition(topic, 0, 0)])
    got: list[Any] = []
    deadline = time.monotonic() + 90
    try:
        while len(got) < count and time.monotonic() < deadline:
            for m in consumer.consume(500, 1.0):
                assert m.error() is None, m.error()
                got.append(m)
    finally:
        consumer.close()
    return got


def _local_segments(broker: Broker, topic: str) -> list[Path]:
    return sorted((broker.data / f"{topic}-0").glob("*.log"))


def _tiered_objects(store: S3ObjectStore, topic: str) -> list[str]:
    return [i.key for i in store.list(f"{topic}-0-") if i.key.endswith(".log")]


def _list_offsets(
    port: int, topic: str, spec: int, version: int = 9, timeout_ms: int = 0
) -> tuple[int, int, int]:
    async def ask() -> Any:
        client = await RawClient.connect(port)
        try:
            cls = APIS_BY_NAME["ListOffsets"].request.cls
            request = cls(
                replica_id=-1,
                isolation_level=0,
                timeout_ms=timeout_ms,
                topics=[
                    cls.ListOffsetsTopic(
                        name=topic,
                        partitions=[
                            cls.ListOffsetsPartition(
                                partition_index=0, current_leader_epoch=-1, timestamp=spec
                            )
                        ],
                    )
                ],
            )
            return await client.call("ListOffsets", version, request)
        finally:
            client.close()

    answer = asyncio.run(ask()).topics[0].partitions[0]
    return answer.error_code, answer.offset, answer.leader_epoch


def test_a_consumer_reads_from_offset_0_across_both_tiers(tiered: TieredBroker) -> None:
    topic = "clicks"
    _create_topic(tiered.bootstrap, topic)
    sent = _produce(tiered.bootstrap, topic, 5000)
    # the closed segments are copied, then local retention deletes them
    _wait("tiering", lambda: len(_tiered_objects(tiered.store, topic)) >= 3)
    _wait("local retention", lambda: len(_local_segments(tiered.broker, topic)) == 1)
    local_start = int(_local_segments(tiered.broker, topic)[0].stem)
    assert local_start > 0
    got = _consume_all(tiered.bootstrap, topic, len(sent))
    assert [m.offset() for m in got] == list(range(len(sent)))
    assert [(m.key(), m.value(), m.timestamp()[1]) for m in got] == sent
    # ListOffsets: EARLIEST 0, EARLIEST_LOCAL the local start, LATEST_TIERED just below it
    port = tiered.broker.port
    assert _list_offsets(port, topic, -2)[:2] == (0, 0)
    assert _list_offsets(port, topic, -4)[:2] == (0, local_start)
    assert _list_offsets(port, topic, -5)[:2] == (0, local_start - 1)
    # KIP-1023 (v11): the first offset not tiered yet
    assert _list_offsets(port, topic, -6, version=11)[:2] == (0, local_start)
    assert _list_offsets(port, topic, -1)[:2] == (0, len(sent))
    # offsetsForTimes: a timestamp in the tiered part, one in the local part
    consumer = ck.Consumer({"bootstrap.servers": tiered.bootstrap, "group.id": "times"})
    try:
        for index in (10, local_start + 5):
            ts = sent[index][2]
            found = consumer.offsets_for_times([ck.TopicPartition(topic, 0, ts)], 10)
            assert found[0].offset == index
    finally:
        consumer.close()
    # ListOffsets v10 by time: the tiered part within the request's TimeoutMs (KIP-1075)
    assert _list_offsets(port, topic, sent[10][2], version=10, timeout_ms=10_000)[:2] == (0, 10)


def test_read_committed_across_both_tiers(tiered: TieredBroker) -> None:
    topic = "txns"
    _create_topic(tiered.bootstrap, topic)
    committed = produce_transactions(tiered.bootstrap, topic, 24)
    _wait("tiering", lambda: len(_tiered_objects(tiered.store, topic)) >= 2)
    _wait("local retention", lambda: len(_local_segments(tiered.broker, topic)) == 1)
    got = _consume_all(
        tiered.bootstrap, topic, len(committed), **{"isolation.level": "read_committed"}
    )
    assert [m.value() for m in got] == committed


def test_a_hung_store_blocks_nothing_past_its_time_outs(
    tiered: TieredBroker, object_store: ObjectStoreServer
) -> None:
    topic = "hung"
    _create_topic(tiered.bootstrap, topic)
    sent = _produce(tiered.bootstrap, topic, 3000)
    _wait("tiering", lambda: len(_tiered_objects(tiered.store, topic)) >= 2)
    _wait("local retention", lambda: len(_local_segments(tiered.broker, topic)) == 1)
    local_start = int(_local_segments(tiered.broker, topic)[0].stem)
    object_store.pause()
    try:
        # the local tail and new produces are served as usual
        t0 = time.monotonic()
        more = _produce(tiered.bootstrap, topic, 100)
        consumer = ck.Consumer(
            {"bootstrap.servers": tiered.bootstrap, "group.id": "hung", "enable.auto.commit": False}
        )
        consumer.assign([ck.TopicPartition(topic, 0, local_start)])
        got = []
        deadline = time.monotonic() + 30
        while len(got) < 10 and time.monotonic() < deadline:
            got.extend(m for m in consumer.consume(100, 1.0) if m.error() is None)
        consumer.close()
        assert got and got[0].offset() == local_start
        assert time.monotonic() - t0 < 30

        # a fetch of a tiered offset is answered within remote.fetch.max.wait.ms (+slack)
        async def fetch_tiered() -> float:
            client = await RawClient.connect(tiered.broker.port)
            try:
                request = fetch_request(topic, 0, fetch_offset=0)
                start = time.monotonic()
                response = await client.call("Fetch", 12, request)
                answer = response.responses[0].partitions[0]
                assert answer.high_watermark == len(sent) + len(more)
                return time.monotonic() - start
            finally:
                client.close()

        assert asyncio.run(fetch_tiered()) < 10
        # a timestamp in the tiered part: REQUEST_TIMED_OUT past ListOffsets v10's TimeoutMs
        t0 = time.monotonic()
        assert _list_offsets(tiered.broker.port, topic, sent[5][2], 10, timeout_ms=500)[0] == 7
        assert time.monotonic() - t0 < 5
    finally:
        object_store.resume()
    # once the store answers again, the tiered part reads as it was written
    got = _consume_all(tiered.bootstrap, topic, 50)
    assert [m.value() for m in got[:50]] == [v for _k, v, _t in sent[:50]]


def test_deleting_a_topic_deletes_its_objects(tiered: TieredBroker) -> None:
    topic = "doomed"
    _create_topic(tiered.bootstrap, topic)
    _produce(tiered.bootstrap, topic, 3000)
    _wait("tiering", lambda: len(_tiered_objects(tiered.store, topic)) >= 2)
    admin = admin_mod.AdminClient({"bootstrap.servers": tiered.bootstrap})
    for future in admin.delete_topics([topic]).values():
        future.result(30)
    _wait("remote deletion", lambda: not tiered.store.list(f"{topic}-0-"))


def test_the_bucket_is_read_directly_without_a_broker_in_the_data_path(
    tiered: TieredBroker, object_store: ObjectStoreServer
) -> None:
    from kafkacore.client.tiered import committed_segments
    from kafkacore.log.remote.reader import TieredSegmentReader
    from kafkacore.record import iter_batches, records

    topic = "direct"
    _create_topic(tiered.bootstrap, topic)
    sent = _produce(tiered.bootstrap, topic, 4000)
    _wait("tiering", lambda: len(_tiered_objects(tiered.store, topic)) >= 3)
    segments = committed_segments(tiered.bootstrap, topic, 0, metadata_partitions=3)
    assert segments[0].start_offset == 0
    for before, after in itertools.pairwise(segments):
        assert after.start_offset == before.end_offset + 1
    reader = TieredSegmentReader(tiered.store)
    got = []
    for m in segments:
        for chunk in reader.batches(m, chunk_bytes=256 << 10):
            for pos, _magic, _size in iter_batches(chunk):
                got.extend((r.key, r.value, r.timestamp) for r in records(chunk, pos))
    assert got == sent[: segments[-1].end_offset + 1]
    # a range inside one segment: its first chunk starts at or before it
    middle = segments[1]
    chunk = next(reader.batches(middle, middle.start_offset + 50, middle.start_offset + 60))
    first = records(chunk, 0)[0].offset
    assert middle.start_offset <= first <= middle.start_offset + 50
    # a corrupt object is refused
    from kafkacore.log.remote.layout import IndexType, object_key

    key = object_key(segments[0], IndexType.SEGMENT)
    data = bytearray(tiered.store.get(key))
    data[200] ^= 0x01
    tiered.store.put(key, bytes(data))
    from kafkacore.log.remote.errors import CorruptRemoteDataError

    with pytest.raises(CorruptRemoteDataError):
        list(reader.batches(segments[0]))


def test_log_dirs_shows_both_tiers(tiered: TieredBroker) -> None:
    import subprocess
    import sys

    from kafkacore.client.tiered import committed_segments

    topic = "shown"
    _create_topic(tiered.bootstrap, topic)
    _produce(tiered.bootstrap, topic, 3000)
    _wait("tiering", lambda: len(_tiered_objects(tiered.store, topic)) >= 2)
    _wait("local retention", lambda: len(_local_segments(tiered.broker, topic)) == 1)
    local_start = int(_local_segments(tiered.broker, topic)[0].stem)
    segments = committed_segments(tiered.bootstrap, topic, 0, metadata_partitions=3)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "kafkacore.cli",
            "log-dirs",
            "--bootstrap-server",
            tiered.bootstrap,
            "--describe",
            "--topic-list",
            topic,
            "--remote-storage",
            "--metadata-partitions",
            "3",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.splitlines()
    assert out[2].startswith('{"brokers":')  # Kafka's own output first, unchanged
    assert out[3].split("\t")[0] == "TOPIC"
    row = out[4].split("\t")
    assert row == [
        topic,
        "0",
        "0",
        str(local_start),
        str(local_start - 1),
        "3000",
        str(len(segments)),
        str(sum(m.segment_size_in_bytes for m in segments)),
        str(3000 - local_start),
    ]
