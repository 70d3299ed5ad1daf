"""Share groups (KIP-932) with confluent-kafka's ``ShareConsumer`` against a kafkacore
broker: work split across consumers of one partition with every record accepted exactly
once, released records redelivered with rising delivery counts, rejected records
archived, records of a SIGKILLed consumer redelivered, the group's configs
(``share.auto.offset.reset``, its validation), share groups in ListGroups and
DeleteGroups, and kafkacore's ``share.key.ordering`` (per-key order across consumers)."""

from __future__ import annotations

import collections
import itertools
import multiprocessing
import os
import signal
import threading
import time
import uuid

import pytest
from confluent_kafka import AcknowledgeType, KafkaException, Producer, ShareConsumer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
    ResourceType,
)

from kafkacore.protocol import APIS_BY_NAME
from support.brokers import Broker, BrokerFactory
from support.raw_brokers import Raw

pytestmark = pytest.mark.timeout(300)

OVERRIDES = (
    "offsets.topic.num.partitions=1",
    "share.coordinator.state.topic.num.partitions=2",
    "group.share.min.record.lock.duration.ms=1000",
    "group.share.heartbeat.interval.ms=1000",
    "group.share.min.heartbeat.interval.ms=1000",
)


@pytest.fixture(scope="module")
def broker(broker_factory: BrokerFactory) -> Broker:
    return broker_factory(*OVERRIDES)


def _admin(broker: Broker) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap})


def _topic(broker: Broker, partitions: int = 1) -> str:
    name = f"share-{uuid.uuid4().hex[:8]}"
    admin = _admin(broker)  # held: a collected client fails its futures
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)
    return name


def _group_configs(broker: Broker, group: str, **configs: str) -> None:
    resource = ConfigResource(
        ResourceType.GROUP,
        group,
        incremental_configs=[
            ConfigEntry(k.replace("_", "."), v, incremental_operation=AlterConfigOpType.SET)
            for k, v in configs.items()
        ],
    )
    admin = _admin(broker)
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(30)


def _produce(broker: Broker, topic: str, count: int, keys: int = 10) -> None:
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5})
    for i in range(count):
        producer.produce(topic, key=f"k{i % keys}", value=str(i))
        if i % 1000 == 999:
            producer.flush()
    producer.flush(30)


def _consumer(broker: Broker, group: str, **extra: object) -> ShareConsumer:
    config: dict[str, object] = {"bootstrap.servers": broker.bootstrap, "group.id": group}
    config.update(extra)
    return ShareConsumer(config)


def _group(broker: Broker, **configs: str) -> str:
    group = f"sg-{uuid.uuid4().hex[:8]}"
    _group_configs(broker, group, share_auto_offset_reset="earliest", **configs)
    return group


def test_three_consumers_split_one_partition_each_record_accepted_once(broker: Broker) -> None:
    topic = _topic(broker)
    group = _group(broker)
    total = 3000
    _produce(broker, topic, total)
    accepted: dict[int, int] = collections.Counter()
    by_consumer: dict[int, int] = collections.Counter()
    lock = threading.Lock()
    done = threading.Event()

    def run(index: int) -> None:
        consumer = _consumer(broker, group, **{"share.acknowledgement.mode": "explicit"})
        consumer.subscribe([topic])
        try:
            deadline = time.monotonic() + 120
            while not done.is_set() and time.monotonic() < deadline:
                for message in consumer.poll(0.5) or []:
                    assert message.error() is None, message.error()
                    consumer.acknowledge(message, AcknowledgeType.ACCEPT)
                    with lock:
                        accepted[message.offset()] += 1
                        by_consumer[index] += 1
                        if len(accepted) >= total:
                            done.set()
                consumer.commit_sync()
        finally:
            consumer.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    assert sorted(accepted) == list(range(total))
    assert set(accepted.values()) == {1}, "a record was accepted twice"
    assert sum(1 for n in by_consumer.values() if n > 0) >= 2, dict(by_consumer)


def test_released_records_come_back_with_rising_delivery_counts(broker: Broker) -> None:
    topic = _topic(broker)
    group = _group(broker)
    _produce(broker, topic, 10)
    consumer = _consumer(broker, group, **{"share.acknowledgement.mode": "explicit"})
    consumer.subscribe([topic])
    seen: dict[int, list[int]] = collections.defaultdict(list)
    accepted: set[int] = set()
    try:
        deadline = time.monotonic() + 90
        while len(accepted) < 10 and time.monotonic() < deadline:
            for m in consumer.poll(0.5) or []:
                count = m.delivery_count()
                seen[m.offset()].append(count)
                # offsets 2 and 5 are released twice, then accepted
                if m.offset() in (2, 5) and count < 3:
                    consumer.acknowledge(m, AcknowledgeType.RELEASE)
                else:
                    consumer.acknowledge(m, AcknowledgeType.ACCEPT)
                    accepted.add(m.offset())
            consumer.commit_sync()
    finally:
        consumer.close()
    assert accepted == set(range(10))
    assert seen[2] == [1, 2, 3] and seen[5] == [1, 2, 3]
    assert all(seen[o] == [1] for o in range(10) if o not in (2, 5))


def test_rejected_records_are_archived(broker: Broker) -> None:
    topic = _topic(broker)
    group = _group(broker)
    _produce(broker, topic, 6)
    consumer = _consumer(broker, group, **{"share.acknowledgement.mode": "explicit"})
    consumer.subscribe([topic])
    delivered: list[int] = []
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            for m in consumer.poll(0.5) or []:
                delivered.append(m.offset())
                kind = AcknowledgeType.REJECT if m.offset() % 2 else AcknowledgeType.ACCEPT
                consumer.acknowledge(m, kind)
            consumer.commit_sync()
            if len(delivered) >= 6:
                time.sleep(2)  # a rejected record would be back by now
                for m in consumer.poll(1.0) or []:
                    delivered.append(m.offset())
                break
    finally:
        consumer.close()
    assert sorted(delivered) == list(range(6)), "a rejected record came back"


def _hold_records(bootstrap: str, group: str, topic: str, ready: object) -> None:
    """A consumer process that acquires records and never acknowledges them."""
    consumer = ShareConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "share.acknowledgement.mode": "explicit",
        }
    )
    consumer.subscribe([topic])
    while True:
        if consumer.poll(0.5):
            ready.set()  # type: ignore[attr-defined]


def test_a_killed_consumers_records_are_redelivered(broker: Broker) -> None:
    topic = _topic(broker)
    group = _group(broker, share_record_lock_duration_ms="2000")
    _produce(broker, topic, 20)
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    holder = ctx.Process(target=_hold_records, args=(broker.bootstrap, group, topic, ready))
    holder.start()
    try:
        assert ready.wait(60), "the first consumer got no records"
    finally:
        assert holder.pid is not None
        os.kill(holder.pid, signal.SIGKILL)
        holder.join(10)
    consumer = _consumer(broker, group, **{"share.acknowledgement.mode": "explicit"})
    consumer.subscribe([topic])
    counts: dict[int, int] = {}
    try:
        deadline = time.monotonic() + 60
        while len(counts) < 20 and time.monotonic() < deadline:
            for m in consumer.poll(0.5) or []:
                counts[m.offset()] = m.delivery_count()
                consumer.acknowledge(m, AcknowledgeType.ACCEPT)
            consumer.commit_sync()
    finally:
        consumer.close()
    assert sorted(counts) == list(range(20))
    assert max(counts.values()) >= 2, "no record came back from the killed consumer"


def test_group_configs_are_validated_and_described(broker: Broker) -> None:
    group = f"cfg-{uuid.uuid4().hex[:8]}"
    bad = ConfigResource(
        ResourceType.GROUP,
        group,
        incremental_configs=[
            ConfigEntry(
                "share.record.lock.duration.ms", "500", incremental_operation=AlterConfigOpType.SET
            )
        ],
    )
    admin = _admin(broker)
    with pytest.raises(KafkaException) as refused:
        for future in admin.incremental_alter_configs([bad]).values():
            future.result(30)
    assert "share.record.lock.duration.ms" in str(refused.value)
    _group_configs(broker, group, share_isolation_level="read_committed")
    # (librdkafka's describe_configs does not answer for GROUP resources: raw requests)
    req = APIS_BY_NAME["DescribeConfigs"].request.cls
    answer = Raw(broker.port).call(
        "DescribeConfigs",
        4,
        resources=[req.DescribeConfigsResource(resource_type=32, resource_name=group)],
        include_synonyms=False,
        include_documentation=False,
    )
    described = {c.name: (c.value, c.config_source) for c in answer.results[0].configs}
    assert described["share.isolation.level"] == ("read_committed", 8)  # DYNAMIC_GROUP_CONFIG
    assert described["share.auto.offset.reset"] == ("latest", 5)  # DEFAULT_CONFIG


def test_share_groups_are_listed_and_deleted(broker: Broker) -> None:
    topic = _topic(broker)
    group = _group(broker)
    _produce(broker, topic, 3)
    consumer = _consumer(broker, group)
    consumer.subscribe([topic])
    try:
        deadline = time.monotonic() + 60
        got = 0
        while got < 3 and time.monotonic() < deadline:
            got += len(consumer.poll(0.5) or [])
    finally:
        consumer.close()
    admin = _admin(broker)
    raw = Raw(broker.port)  # confluent-kafka's group types know no "share"
    listed = raw.call("ListGroups", 5, states_filter=[], types_filter=["share"])
    assert [(g.group_id, g.group_type) for g in listed.groups if g.group_id == group] == [
        (group, "share")
    ]
    deadline = time.monotonic() + 60
    while True:  # the member leaves with its close; then the group can go
        try:
            admin.delete_consumer_groups([group])[group].result(30)
            break
        except KafkaException:
            assert time.monotonic() < deadline
            time.sleep(1)
    listed = raw.call("ListGroups", 5, states_filter=[], types_filter=[])
    assert group not in {g.group_id for g in listed.groups}


def test_key_ordering_hands_a_keys_records_out_one_at_a_time_in_order(broker: Broker) -> None:
    """kafkacore's ``share.key.ordering``: three consumers on one partition, each taking
    a little while per record. A key's next record reaches a consumer only after the
    previous one's acknowledgement was sent (the broker cannot hand it out before it
    has that acknowledgement), and every key's records arrive in offset order."""
    topic = _topic(broker)
    group = _group(broker, share_key_ordering="true")
    total, keys = 300, 10
    _produce(broker, topic, total, keys=keys)
    received: dict[int, float] = {}  # offset -> when a consumer got it
    ack_sent: dict[int, float] = {}  # offset -> when its acknowledgement went out
    key_of: dict[int, bytes] = {}
    lock = threading.Lock()
    done = threading.Event()

    def run(index: int) -> None:
        consumer = _consumer(broker, group, **{"share.acknowledgement.mode": "explicit"})
        consumer.subscribe([topic])
        try:
            deadline = time.monotonic() + 120
            while not done.is_set() and time.monotonic() < deadline:
                batch = consumer.poll(0.5) or []
                now = time.monotonic()
                for message in batch:
                    assert message.error() is None, message.error()
                    with lock:
                        offset = message.offset()
                        assert offset is not None and offset not in received, offset
                        received[offset], key_of[offset] = now, bytes(message.key() or b"")
                    time.sleep(0.002 * (index + 1))  # the work
                    consumer.acknowledge(message, AcknowledgeType.ACCEPT)
                sent = time.monotonic()
                with lock:
                    for message in batch:
                        ack_sent[message.offset()] = sent
                    if len(ack_sent) >= total:
                        done.set()
                consumer.commit_sync()
        finally:
            consumer.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    assert sorted(received) == list(range(total))
    by_key: dict[bytes, list[int]] = collections.defaultdict(list)
    for offset in range(total):
        by_key[key_of[offset]].append(offset)
    assert len(by_key) == keys
    violations = [
        (previous, offset)
        for offsets in by_key.values()
        for previous, offset in itertools.pairwise(offsets)
        if received[offset] < ack_sent[previous]
    ]
    assert violations == [], violations[:10]
