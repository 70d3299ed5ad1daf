"""The ``kafkacore`` source reads a tiered topic's segments straight from the bucket
(``kafkacore.tiered.s3.*``), one Spark partition per tiered segment, the local tail
through the broker: the same rows as the same read entirely through the broker (which
serves the tiered offsets from the bucket itself), read_uncommitted and read_committed;
and the planned partitions follow the segments."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import confluent_kafka as ck
import pytest
from confluent_kafka import admin as admin_mod

from kafkacore.client.tiered import committed_segments
from kafkacore.log.remote.object_store import S3ObjectStore
from kafkacore.spark.options import parse_read_options
from kafkacore.spark.reader import KafkaCoreBatchReader
from support.brokers import Broker, BrokerFactory
from support.object_store import ObjectStoreServer, bucket_name
from support.tiering import produce_transactions

pytestmark = pytest.mark.timeout(600)


def _wait(what: str, check: Callable[[], bool], timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.3)


@pytest.fixture(scope="module")
def tiered(
    broker_factory: BrokerFactory, object_store: ObjectStoreServer
) -> tuple[Broker, dict[str, str]]:
    bucket = object_store.create_bucket(bucket_name())
    broker = broker_factory(
        *object_store.broker_overrides(bucket),
        "rlmm.config.remote.log.metadata.topic.replication.factor=1",
        "rlmm.config.remote.log.metadata.topic.num.partitions=3",
        "remote.log.manager.task.interval.ms=300",
        "log.retention.check.interval.ms=300",
    )
    options = {"kafkacore.tiered." + k: v for k, v in object_store.storage_config(bucket).items()}
    options["kafkacore.tiered.metadata.partitions"] = "3"
    return broker, options


def _topic(broker: Broker, name: str) -> None:
    admin = admin_mod.AdminClient({"bootstrap.servers": broker.bootstrap})
    config = {
        "remote.storage.enable": "true",
        "segment.bytes": str(1 << 20),
        "local.retention.bytes": "1",
    }
    for f in admin.create_topics([admin_mod.NewTopic(name, 1, 1, config=config)]).values():
        f.result(30)


def _tiered_and_deleted(broker: Broker, topic: str, segments: int) -> None:
    _wait(
        "tiering",
        lambda: (
            len(committed_segments(broker.bootstrap, topic, 0, metadata_partitions=3)) >= segments
        ),
    )
    _wait("local retention", lambda: len(list((broker.data / f"{topic}-0").glob("*.log"))) == 1)


def _rows(spark: Any, options: dict[str, str]) -> list[tuple[Any, ...]]:
    df = spark.read.format("kafkacore").options(**options).load()
    return [
        (r.offset, bytes(r.key) if r.key else None, bytes(r.value), r.timestamp)
        for r in df.orderBy("offset").collect()
    ]


def test_tiered_segments_are_read_from_the_bucket(
    spark: Any, tiered: tuple[Broker, dict[str, str]]
) -> None:
    broker, bucket_options = tiered
    topic = "spark-tiered"
    _topic(broker, topic)
    producer = ck.Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5})
    for i in range(4000):
        producer.produce(topic, os.urandom(900), f"k{i}".encode())
    assert producer.flush(30) == 0
    _tiered_and_deleted(broker, topic, 3)
    base = {"kafka.bootstrap.servers": broker.bootstrap, "subscribe": topic}
    direct = {**base, **bucket_options}
    # planned: one partition per tiered segment, then the tail
    segments = committed_segments(broker.bootstrap, topic, 0, metadata_partitions=3)
    planned = KafkaCoreBatchReader(parse_read_options(direct, streaming=False)).partitions()
    from_bucket = [p for p in planned if p.segment is not None]
    assert [(p.start, p.until) for p in from_bucket] == [
        (m.start_offset, m.end_offset + 1) for m in segments
    ]
    assert planned[-1].segment is None and planned[-1].until == 4000
    rows = _rows(spark, direct)
    assert [r[0] for r in rows] == list(range(4000))
    assert rows == _rows(spark, base)  # the broker serves the same from the bucket itself
    # the bucket is really read: a corrupt tiered object fails the direct read only
    store = S3ObjectStore(
        {
            k.removeprefix("kafkacore.tiered."): v
            for k, v in bucket_options.items()
            if k.startswith("kafkacore.tiered.s3.")
        }
    )
    from kafkacore.log.remote.layout import IndexType, object_key

    key = object_key(segments[0], IndexType.SEGMENT)
    data = bytearray(store.get(key))
    data[300] ^= 0x10
    store.put(key, bytes(data))
    with pytest.raises(Exception, match="CRC"):
        _rows(spark, direct)


def test_read_committed_from_the_bucket(spark: Any, tiered: tuple[Broker, dict[str, str]]) -> None:
    broker, bucket_options = tiered
    topic = "spark-tiered-txn"
    _topic(broker, topic)
    committed = produce_transactions(broker.bootstrap, topic, 20)
    _tiered_and_deleted(broker, topic, 2)
    options = {
        "kafka.bootstrap.servers": broker.bootstrap,
        "subscribe": topic,
        "kafka.isolation.level": "read_committed",
        **bucket_options,
    }
    planned = KafkaCoreBatchReader(parse_read_options(options, streaming=False)).partitions()
    assert any(p.segment is not None and p.aborted for p in planned)
    assert [r[2] for r in _rows(spark, options)] == committed
