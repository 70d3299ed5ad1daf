"""Classic consumer groups with real clients against one kafkacore broker
(``group.initial.rebalance.delay.ms=0``): kafka-python 3.x and aiokafka subscribe, read
everything once and resume after committed offsets (the split between members is covered
with three confluent-kafka members in tests/test_group_clients.py); kcat's
balanced consumer (``-G``); Kafka 4.3.1's console consumer with ``--group`` and
kafka-consumer-groups (describe, reset-offsets, delete); and static membership
(KIP-345) with confluent-kafka: a restart with the same group.instance.id keeps the
generation, and a member killed with SIGKILL is expired after its session timeout."""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import confluent_kafka as ck
import pytest
from confluent_kafka import admin as admin_mod

from compat.conftest import Broker, KafkaTools
from support.brokers import BrokerFactory

pytestmark = pytest.mark.timeout(120)

CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"


@pytest.fixture(scope="module")
def broker(broker_factory: BrokerFactory) -> Broker:
    b = broker_factory(
        "group.initial.rebalance.delay.ms=0", "group.min.session.timeout.ms=1000", name="groups"
    )
    warm_coordinator(b)
    return b


def warm_coordinator(broker: Broker) -> None:
    """The first FindCoordinator for a group creates ``__consumer_offsets``, as in Kafka,
    before any client under test joins.

    kafka-python 3.0.12 stalls for good (no heartbeat, no fetch) when its first SyncGroup
    answer arrives while its own metadata request is still outstanding. That happened in CI
    when the broker created the 50 offsets partitions lazily inside the first member's
    join (reproduced with both cores busy); the broker now creates them on FindCoordinator
    and this fixture makes sure of it before the clients run."""
    admin = admin_mod.AdminClient({"bootstrap.servers": broker.bootstrap})
    request = ck.ConsumerGroupTopicPartitions("warm-up")
    admin.list_consumer_group_offsets([request])["warm-up"].result(30)
    deadline = time.monotonic() + 30
    while "__consumer_offsets" not in admin.list_topics(timeout=10).topics:
        assert time.monotonic() < deadline, "__consumer_offsets was not created"
        time.sleep(0.1)


def make_topic(broker: Broker, name: str, partitions: int, records: int) -> None:
    admin = admin_mod.AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([admin_mod.NewTopic(name, partitions, 1)])[name].result(10)
    producer = ck.Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(records):
        producer.produce(name, key=b"%d" % i, value=b"v%d" % i, partition=i % partitions)
    assert producer.flush(10) == 0


# --------------------------------------------------------------------------- python clients

KAFKA_PYTHON = """
import json, sys, threading, time
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

B, T1, T2, T3, N = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
out = {}

def consumer(group, **kw):
    return KafkaConsumer(bootstrap_servers=B, group_id=group, auto_offset_reset="earliest",
                         enable_auto_commit=False, session_timeout_ms=6000,
                         heartbeat_interval_ms=500, **kw)

def drain(c, want, seconds=20):
    got = []
    deadline = time.monotonic() + seconds
    while len(got) < want and time.monotonic() < deadline:
        for recs in c.poll(timeout_ms=2000).values():
            got += [[r.partition, r.offset] for r in recs]
    return got

# kafka-python 3.0.12 stops for good (no heartbeat, no fetch) when a poll() times out
# while its SyncGroup is in flight; a second rebalance, caused by subscribing before the
# topic's metadata is known, made that likely on a loaded machine. So: metadata first
# (partitions_for_topic) and polls long enough to cover a join (they return on records).
c = consumer("kp-g1")
c.partitions_for_topic(T1)
c.subscribe([T1])
out["single"] = drain(c, N)
c.close()


c = consumer("kp-g3")
c.partitions_for_topic(T3)
c.subscribe([T3])
first = drain(c, N)
c.commit()
out["committed"] = sorted(
    [tp.partition, c.committed(tp)] for tp in c.assignment())
c.close()
p = KafkaProducer(bootstrap_servers=B)
for i in range(4):
    p.send(T3, value=b"new", partition=i % 2)
p.flush()
p.close()
c = consumer("kp-g3")
c.partitions_for_topic(T3)
c.subscribe([T3])
out["first"] = first
out["resumed"] = drain(c, 4)
c.close()
print(json.dumps(out))
"""

AIOKAFKA = """
import asyncio, json, sys, time
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

B, T1, T2, T3, N = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
out = {}

def consumer(group):
    return AIOKafkaConsumer(bootstrap_servers=B, group_id=group, auto_offset_reset="earliest",
                            enable_auto_commit=False, session_timeout_ms=6000,
                            heartbeat_interval_ms=500)

async def drain(c, want, seconds=20):
    got = []
    deadline = time.monotonic() + seconds
    while len(got) < want and time.monotonic() < deadline:
        for recs in (await c.getmany(timeout_ms=200)).values():
            got += [[r.partition, r.offset] for r in recs]
    return got

async def main():
    c = consumer("aio-g1")
    await c.start()
    c.subscribe([T1])
    out["single"] = await drain(c, N)
    await c.stop()


    c = consumer("aio-g3")
    await c.start()
    c.subscribe([T3])
    first = await drain(c, N)
    await c.commit()
    out["committed"] = sorted([[tp.partition, await c.committed(tp)] for tp in c.assignment()])
    await c.stop()
    p = AIOKafkaProducer(bootstrap_servers=B)
    await p.start()
    for i in range(4):
        await p.send(T3, value=b"new", partition=i % 2)
    await p.flush()
    await p.stop()
    c = consumer("aio-g3")
    await c.start()
    c.subscribe([T3])
    out["first"] = first
    out["resumed"] = await drain(c, 4)
    await c.stop()

asyncio.run(main())
print(json.dumps(out))
"""


def run_script(target: Path, source: str, *args: str, timeout: float = 100) -> Any:
    env = os.environ.copy()
    env["PYTHONPATH"] = str(target)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(source), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )
    if proc.returncode != 0 or not proc.stdout.strip():
        raise AssertionError(
            f"client exited {proc.returncode}\nstdout:\n{proc.stdout[-3000:]}\n"
            f"stderr:\n{proc.stderr[-5000:]}"
        )
    return json.loads(proc.stdout.strip().splitlines()[-1])


N = 40


@pytest.mark.parametrize(
    ("client", "source"), [("kafka-python-3.0.12", KAFKA_PYTHON), ("aiokafka-0.14.0", AIOKAFKA)]
)
def test_python_client_groups(
    broker: Broker, test_clients: dict[str, Path], client: str, source: str
) -> None:
    prefix = "kp" if client.startswith("kafka") else "aio"
    t1, t2, t3 = (f"{prefix}-grp-{i}" for i in (1, 2, 3))
    make_topic(broker, t1, 3, N)
    make_topic(broker, t2, 4, 0)
    make_topic(broker, t3, 2, N)
    out = run_script(test_clients[client], source, broker.bootstrap, t1, t2, t3, str(N))
    # one subscriber reads everything exactly once
    assert sorted(map(tuple, out["single"])) == sorted(
        (p, o) for p in range(3) for o in range(N // 3 + (p < N % 3))
    )
    # commit, then a new member of the group resumes after the committed offsets
    assert len(out["first"]) == N
    assert [c for _, c in out["committed"]] == [N // 2, N // 2]
    half = N // 2
    assert sorted(map(tuple, out["resumed"])) == [(p, half + i) for p in (0, 1) for i in (0, 1)]


# --------------------------------------------------------------------------- kcat


def test_kcat_balanced_consumer(broker: Broker, kcat: str) -> None:
    make_topic(broker, "kcat-grp", 3, 30)
    proc = subprocess.run(
        [
            *(kcat, "-b", broker.bootstrap, "-G", "kcat-g", "-o", "beginning", "-c", "30"),
            *("-e", "-f", "%p:%o\\n", "-X", "session.timeout.ms=6000", "kcat-grp"),
        ],
        capture_output=True,
        text=True,
        timeout=40,
        check=False,
    )
    lines = [line for line in proc.stdout.splitlines() if line]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sorted(lines) == sorted(f"{i % 3}:{i // 3}" for i in range(30)), proc.stderr[-2000:]


# --------------------------------------------------------------------------- Java tools


def describe_rows(out: str) -> list[dict[str, str]]:
    lines = [line.split() for line in out.splitlines() if line.strip()]
    header = next(i for i, cols in enumerate(lines) if cols[:2] == ["GROUP", "TOPIC"])
    names = lines[header]
    return [dict(zip(names, cols, strict=False)) for cols in lines[header + 1 :]]


def test_java_console_consumer_and_consumer_groups(broker: Broker, kafka_tools: KafkaTools) -> None:
    make_topic(broker, "java-grp", 2, 20)
    b = ("--bootstrap-server", broker.bootstrap)
    consumed = kafka_tools.run(
        CONSUMER,
        *b,
        "--topic",
        "java-grp",
        "--group",
        "java-g",
        "--from-beginning",
        "--max-messages",
        "20",
        "--timeout-ms",
        "30000",
    ).check()
    assert sorted(consumed.stdout.split()) == sorted(f"v{i}" for i in range(20))
    described = kafka_tools.run(GROUPS, *b, "--describe", "--group", "java-g").check()
    rows = describe_rows(described.stdout)
    assert sorted(r["PARTITION"] for r in rows) == ["0", "1"], described.stdout
    for r in rows:
        assert r["CURRENT-OFFSET"] == r["LOG-END-OFFSET"] == "10", described.stdout
        assert r["LAG"] == "0", described.stdout
    listed = kafka_tools.run(GROUPS, *b, "--list").check()
    assert "java-g" in listed.stdout.split()
    reset = kafka_tools.run(
        GROUPS,
        *b,
        "--reset-offsets",
        "--to-earliest",
        "--execute",
        "--group",
        "java-g",
        "--topic",
        "java-grp",
    ).check()
    assert "java-g" in reset.stdout
    again = describe_rows(
        kafka_tools.run(GROUPS, *b, "--describe", "--group", "java-g").check().stdout
    )
    assert sorted((r["PARTITION"], r["CURRENT-OFFSET"], r["LAG"]) for r in again) == [
        ("0", "0", "10"),
        ("1", "0", "10"),
    ]
    deleted = kafka_tools.run(GROUPS, *b, "--delete", "--group", "java-g").check()
    assert "Deletion of requested consumer groups ('java-g') was successful." in deleted.stdout
    listed = kafka_tools.run(GROUPS, *b, "--list").check()
    assert "java-g" not in listed.stdout.split()


# --------------------------------------------------------------------------- static membership

STATIC_MEMBER = """
import json, sys, time
import confluent_kafka as ck
B, T, G, INST = sys.argv[1:5]
c = ck.Consumer({"bootstrap.servers": B, "group.id": G, "group.instance.id": INST,
                 "session.timeout.ms": 3000, "heartbeat.interval.ms": 300,
                 "auto.offset.reset": "earliest", "enable.auto.commit": False})
c.subscribe([T])
while True:
    c.poll(0.1)
    a = c.assignment()
    if a:
        print(json.dumps(sorted(p.partition for p in a)), flush=True)
        break
while True:
    c.poll(0.1)
"""


def describe_group(broker: Broker, group: str) -> Any:
    admin = admin_mod.AdminClient({"bootstrap.servers": broker.bootstrap})
    return admin.describe_consumer_groups([group])[group].result(10)


def assignment_of(consumer: Any, seconds: float = 20) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        consumer.poll(0.1)
        got = consumer.assignment()
        if got:
            return sorted(p.partition for p in got)
    raise AssertionError("no assignment")


def generation(consumer: Any) -> int:
    """The generation id in librdkafka's serialized group metadata ("CGMDv2:" + i32)."""
    data = bytes(consumer.consumer_group_metadata())
    assert data.startswith(b"CGMDv2:"), data
    return int(struct.unpack_from("=i", data, 7)[0])


def static_consumer(broker: Broker, group: str, instance: str) -> Any:
    return ck.Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": group,
            "group.instance.id": instance,
            "session.timeout.ms": 3000,
            "heartbeat.interval.ms": 300,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )


def test_static_member_restart_keeps_generation(broker: Broker) -> None:
    make_topic(broker, "static-grp", 4, 0)
    a = static_consumer(broker, "static-g", "inst-a")
    bc = static_consumer(broker, "static-g", "inst-b")
    a.subscribe(["static-grp"])
    bc.subscribe(["static-grp"])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        a.poll(0.05)
        bc.poll(0.05)
        pa, pb = a.assignment(), bc.assignment()
        if pa and pb and len(pa) + len(pb) == 4:
            break
    before_a = sorted(p.partition for p in a.assignment())
    before_b = sorted(p.partition for p in bc.assignment())
    assert before_a and before_b
    desc = describe_group(broker, "static-g")
    gen = generation(bc)
    assert gen > 0
    host = {m.host for m in desc.members}
    assert host == {"/127.0.0.1"}, host
    # a closes without leaving (static members do not send LeaveGroup) and comes back
    a.close()
    a = static_consumer(broker, "static-g", "inst-a")
    a.subscribe(["static-grp"])
    assert assignment_of(a) == before_a
    for _ in range(10):
        bc.poll(0.1)
    assert sorted(p.partition for p in bc.assignment()) == before_b
    assert generation(bc) == gen
    assert generation(a) == gen
    a.close()
    bc.close()


def test_killed_member_expires_after_session_timeout(broker: Broker) -> None:
    make_topic(broker, "kill-grp", 2, 0)
    env = os.environ.copy()
    proc = subprocess.Popen(
        [sys.executable, "-c", STATIC_MEMBER, broker.bootstrap, "kill-grp", "kill-g", "k1"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline())
        assert first == [0, 1]
        survivor = static_consumer(broker, "kill-g", "k2")
        survivor.subscribe(["kill-grp"])
        for _ in range(10):
            survivor.poll(0.1)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(5)
        killed_at = time.monotonic()
        deadline = killed_at + 20
        while time.monotonic() < deadline:
            survivor.poll(0.1)
            if len(survivor.assignment()) == 2:
                break
        took = time.monotonic() - killed_at
        assert sorted(p.partition for p in survivor.assignment()) == [0, 1]
        assert took > 1.5, took  # not before the 3 s session timeout (minus poll slack)
        members = describe_group(broker, "kill-g").members
        assert [m.group_instance_id for m in members] == ["k2"]
        survivor.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
