"""Consumer groups with a real client (confluent-kafka / librdkafka) against a broker
subprocess: partitions split between members without overlap, a leaving member's
partitions move, and committed offsets resume exactly after a broker restart."""

from __future__ import annotations

import time
from typing import Any

import confluent_kafka as ck
import pytest
from confluent_kafka import admin as admin_mod

from support.brokers import Broker, BrokerFactory

pytestmark = pytest.mark.timeout(120)

OVERRIDES = ["group.initial.rebalance.delay.ms=0", "group.min.session.timeout.ms=1000"]


@pytest.fixture(scope="module")
def broker(broker_factory: BrokerFactory) -> Broker:
    return broker_factory(*OVERRIDES)


def _topic(broker: Broker, name: str, partitions: int, records: int) -> None:
    admin = admin_mod.AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([admin_mod.NewTopic(name, partitions, 1)])[name].result(10)
    producer = ck.Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(records):
        producer.produce(name, key=b"%d" % i, value=b"v%d" % i, partition=i % partitions)
    assert producer.flush(30) == 0


def _consumer(broker: Broker, group: str, name: str) -> Any:
    return ck.Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": group,
            "client.id": name,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500,
        }
    )


def _poll_until(consumers: list[Any], done: Any, seconds: float = 30) -> dict[int, list[Any]]:
    got: dict[int, list[Any]] = {i: [] for i in range(len(consumers))}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not done(consumers, got):
        for i, c in enumerate(consumers):
            msg = c.poll(0.1)
            if msg is not None and not msg.error():
                got[i].append(msg)
    return got


def _assigned(c: Any) -> set[int]:
    return {tp.partition for tp in c.assignment()}


def test_members_split_partitions_and_take_over_on_leave(broker: Broker) -> None:
    _topic(broker, "split", 6, 60)
    members = [_consumer(broker, "split-group", name) for name in ("a", "b", "c")]
    for c in members:
        c.subscribe(["split"])

    def all_assigned(cs: list[Any], _: Any) -> bool:
        parts = [_assigned(c) for c in cs]
        return all(parts) and sum(len(p) for p in parts) == 6

    _poll_until(members, all_assigned)
    parts = [_assigned(c) for c in members]
    assert all(parts), parts
    assert sum(len(p) for p in parts) == 6 and set().union(*parts) == set(range(6)), parts
    # Within this (settled) generation every new record is consumed once, by the owner of
    # its partition. (Records read before the split may come from an earlier generation.)
    producer = ck.Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(60):
        producer.produce("split", value=b"after-%d" % i, partition=i % 6)
    assert producer.flush(30) == 0

    def all_new_read(_cs: list[Any], g: dict[int, list[Any]]) -> bool:
        return sum(1 for msgs in g.values() for m in msgs if m.value().startswith(b"after")) >= 60

    got = _poll_until(members, all_new_read)
    new = [(i, m) for i, msgs in got.items() for m in msgs if m.value().startswith(b"after")]
    assert sorted(m.value() for _, m in new) == sorted(b"after-%d" % i for i in range(60))
    assert all(m.partition() in parts[i] for i, m in new)

    members.pop().close()  # LeaveGroup: its partitions move to the others

    def two_have_all(cs: list[Any], _: Any) -> bool:
        ps = [_assigned(c) for c in cs]
        return all(ps) and set().union(*ps) == set(range(6)) and sum(len(p) for p in ps) == 6

    _poll_until(members, two_have_all)
    parts = [_assigned(c) for c in members]
    assert all(parts) and set().union(*parts) == set(range(6)), parts
    assert not parts[0] & parts[1]
    for c in members:
        c.close()


def test_committed_offsets_resume_after_broker_restart(broker: Broker) -> None:
    _topic(broker, "resume", 3, 90)
    c = _consumer(broker, "resume-group", "first")
    c.subscribe(["resume"])
    got = _poll_until([c], lambda _cs, g: len(g[0]) >= 90)[0]
    assert sorted((m.partition(), m.offset()) for m in got) == sorted(
        (p, o) for p in range(3) for o in range(30)
    )
    c.commit(asynchronous=False)
    c.close()

    broker.restart()
    producer = ck.Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(9):
        producer.produce("resume", value=b"new%d" % i, partition=i % 3)
    assert producer.flush(30) == 0

    c = _consumer(broker, "resume-group", "second")
    c.subscribe(["resume"])
    got = _poll_until([c], lambda _cs, g: len(g[0]) >= 9, seconds=20)[0]
    time.sleep(0.5)
    extra = c.poll(0.5)
    c.close()
    assert extra is None or extra.error()
    assert sorted(m.value() for m in got) == [b"new%d" % i for i in range(9)]
    assert sorted((m.partition(), m.offset()) for m in got) == sorted(
        (p, o) for p in range(3) for o in range(30, 33)
    )
