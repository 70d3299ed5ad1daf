"""A compacted topic through the broker: the background cleaner (started by the broker)
keeps the latest value per key in the rolled segments, read back by a real client."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import confluent_kafka as ck
import pytest
from confluent_kafka import admin as admin_mod

from support.brokers import BrokerFactory

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(scope="module")
def broker(broker_factory: BrokerFactory) -> tuple[str, Path]:
    b = broker_factory("log.cleaner.backoff.ms=200")
    return b.bootstrap, b.data


def _read_all(bootstrap: str, topic: str) -> list[tuple[int, bytes, bytes | None]]:
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "unused"})
    low, high = consumer.get_watermark_offsets(ck.TopicPartition(topic, 0), timeout=10)
    consumer.assign([ck.TopicPartition(topic, 0, low)])
    out: list[tuple[int, bytes, bytes | None]] = []
    deadline = time.monotonic() + 20
    while (not out or out[-1][0] < high - 1) and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and not msg.error():
            out.append((msg.offset(), msg.key(), msg.value()))
    consumer.close()
    return out


def test_compacted_topic_keeps_latest_value_per_key(broker: tuple[str, Path]) -> None:
    bootstrap, data = broker
    admin = admin_mod.AdminClient({"bootstrap.servers": bootstrap})
    topic = admin_mod.NewTopic(
        "compacted",
        1,
        1,
        config={
            "cleanup.policy": "compact",
            "segment.ms": "300",
            "min.cleanable.dirty.ratio": "0.01",
            "delete.retention.ms": "0",
        },
    )
    admin.create_topics([topic])["compacted"].result(10)
    producer = ck.Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    # 5 rounds of the same 10 keys, each round in its own segment (segment.ms = 300).
    for round_ in range(5):
        for key in range(10):
            producer.produce("compacted", key=b"key-%d" % key, value=b"v%d-%d" % (key, round_))
        producer.flush(10)
        time.sleep(0.5)
    producer.produce("compacted", key=b"key-0", value=b"last")  # rolls; stays active
    producer.flush(10)

    deadline = time.monotonic() + 30
    records = _read_all(bootstrap, "compacted")
    while len(records) > 11 and time.monotonic() < deadline:
        time.sleep(0.5)
        records = _read_all(bootstrap, "compacted")
    latest = {k: v for _, k, v in records}
    assert latest == {b"key-0": b"last", **{b"key-%d" % k: b"v%d-4" % k for k in range(1, 10)}}
    assert len(records) <= 11, f"not compacted: {len(records)} records"
    offsets = [o for o, _, _ in records]
    assert offsets == sorted(set(offsets)) and offsets[-1] == 50  # offsets kept, gaps allowed
    assert (data / "cleaner-offset-checkpoint").exists()


def _read_values(bootstrap: str, topic: str, isolation: str) -> list[tuple[int, bytes, bytes]]:
    consumer = ck.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "unused", "isolation.level": isolation}
    )
    low, high = consumer.get_watermark_offsets(ck.TopicPartition(topic, 0), timeout=10)
    consumer.assign([ck.TopicPartition(topic, 0, low)])
    out: list[tuple[int, bytes, bytes]] = []
    deadline = time.monotonic() + 10
    while (not out or out[-1][0] < high - 1) and time.monotonic() < deadline:
        msg = consumer.poll(0.3)
        if msg is not None and not msg.error():
            out.append((msg.offset(), msg.key(), msg.value()))
    consumer.close()
    return out


def test_the_cleaner_removes_aborted_transactions(broker: tuple[str, Path]) -> None:
    """A transactional producer commits one transaction and aborts the next, of the
    same keys, on a compacted topic: the cleaner removes the aborted records (their
    offsets, acknowledged to the producer, are gone for read_uncommitted consumers too)
    and keeps the committed ones, which the later aborted writes never shadow."""
    bootstrap, _ = broker
    admin = admin_mod.AdminClient({"bootstrap.servers": bootstrap})
    config = {
        "cleanup.policy": "compact",
        "segment.ms": "300",
        "min.cleanable.dirty.ratio": "0.01",
    }
    admin.create_topics([admin_mod.NewTopic("txn-compacted", 1, 1, config=config)])[
        "txn-compacted"
    ].result(10)
    producer = ck.Producer({"bootstrap.servers": bootstrap, "transactional.id": "compacting"})
    producer.init_transactions(10)
    written: dict[bytes, list[int]] = {b"committed": [], b"aborted": []}

    def delivered(err: Any, msg: Any) -> None:
        assert err is None, err
        written[msg.value()].append(msg.offset())

    for outcome in (b"committed", b"aborted"):
        producer.begin_transaction()
        for key in range(5):
            producer.produce(
                "txn-compacted", key=b"k%d" % key, value=outcome, on_delivery=delivered
            )
        producer.flush(10)
        if outcome == b"committed":
            producer.commit_transaction(10)
        else:
            producer.abort_transaction(10)
    assert [len(offsets) for offsets in written.values()] == [5, 5]
    time.sleep(0.5)
    plain = ck.Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    plain.produce("txn-compacted", key=b"tail", value=b"t")  # rolls; stays active
    plain.flush(10)

    deadline = time.monotonic() + 30
    seen = _read_values(bootstrap, "txn-compacted", "read_uncommitted")
    while any(o in written[b"aborted"] for o, _, _ in seen) and time.monotonic() < deadline:
        time.sleep(0.5)
        seen = _read_values(bootstrap, "txn-compacted", "read_uncommitted")
    assert [(o, k, v) for o, k, v in seen if k != b"tail"] == [
        (o, b"k%d" % i, b"committed") for i, o in enumerate(written[b"committed"])
    ]
    committed = _read_values(bootstrap, "txn-compacted", "read_committed")
    assert {k: v for _, k, v in committed if k != b"tail"} == {
        b"k%d" % i: b"committed" for i in range(5)
    }
