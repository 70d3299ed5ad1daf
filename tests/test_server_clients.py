"""The broker as a subprocess (``python -m kafkacore.cli server-start``) with confluent-kafka
(librdkafka): every codec, keys, headers, both timestamp types, offsets_for_times, and
topic creation/deletion through the AdminClient. Consumers use assign() (no groups yet)."""

from __future__ import annotations

import time

import confluent_kafka as ck
import pytest
from confluent_kafka import admin as admin_mod

from support.brokers import BrokerFactory

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def broker(broker_factory: BrokerFactory) -> str:
    return broker_factory().bootstrap


def _consume(bootstrap: str, topic: str, count: int) -> list[object]:
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "unused"})
    consumer.assign([ck.TopicPartition(topic, 0, 0)])
    got: list[object] = []
    deadline = time.monotonic() + 15
    while len(got) < count and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and not msg.error():
            got.append(msg)
    consumer.close()
    return got


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_produce_and_consume_every_codec(broker: str, codec: str) -> None:
    topic = f"codec-{codec}"
    producer = ck.Producer({"bootstrap.servers": broker, "compression.type": codec, "linger.ms": 5})
    for i in range(20):
        producer.produce(topic, key=b"k%d" % i, value=b"v%d" % i, headers=[("h", b"%d" % i)])
    assert producer.flush(15) == 0
    msgs = _consume(broker, topic, 20)
    assert [m.offset() for m in msgs] == list(range(20))  # type: ignore[attr-defined]
    assert [m.key() for m in msgs] == [b"k%d" % i for i in range(20)]  # type: ignore[attr-defined]
    assert msgs[5].headers() == [("h", b"5")]  # type: ignore[attr-defined]


def test_admin_create_log_append_time_offsets_for_times_delete(broker: str) -> None:
    admin = admin_mod.AdminClient({"bootstrap.servers": broker})
    new = admin_mod.NewTopic("lat", 2, 1, config={"message.timestamp.type": "LogAppendTime"})
    admin.create_topics([new])["lat"].result(10)
    with pytest.raises(ck.KafkaException):
        admin.create_topics([admin_mod.NewTopic("lat", 1, 1)])["lat"].result(10)
    producer = ck.Producer({"bootstrap.servers": broker})
    before = int(time.time() * 1000)
    producer.produce("lat", value=b"x", partition=0, timestamp=1000)
    assert producer.flush(10) == 0
    (msg,) = _consume(broker, "lat", 1)
    ts_type, ts = msg.timestamp()  # type: ignore[attr-defined]
    assert ts_type == ck.TIMESTAMP_LOG_APPEND_TIME and ts >= before
    consumer = ck.Consumer({"bootstrap.servers": broker, "group.id": "unused"})
    (found,) = consumer.offsets_for_times([ck.TopicPartition("lat", 0, before)], timeout=10)
    assert found.offset == 0
    (later,) = consumer.offsets_for_times([ck.TopicPartition("lat", 0, ts + 10_000)], timeout=10)
    assert later.offset == -1
    assert consumer.get_watermark_offsets(ck.TopicPartition("lat", 0), timeout=10) == (0, 1)
    consumer.close()
    admin.delete_topics(["lat"])["lat"].result(10)
    assert "lat" not in admin.list_topics(timeout=10).topics
