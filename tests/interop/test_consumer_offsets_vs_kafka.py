"""``__consumer_offsets`` as a kafkacore broker leaves it after a real client's group
(confluent-kafka: subscribe, consume, commit, close) and a deleted group (tombstones),
dumped by Apache Kafka's ``DumpLogSegments --offsets-decoder`` (no error, the committed
offsets and the group metadata decoded) and by ``kafkacore dump-log --offsets-decoder``:
the same lines."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import confluent_kafka as ck
import pytest
from confluent_kafka import admin as admin_mod

from support.brokers import Broker

pytestmark = [pytest.mark.interop, pytest.mark.timeout(300)]


DUMP_LOG = (sys.executable, "-m", "kafkacore.cli", "dump-log")
DUMP = "org.apache.kafka.tools.DumpLogSegments"
_JVM_NOISE = re.compile(
    r"^(SLF4J[(:]|OpenJDK 64-Bit Server VM warning|\[[^\]]*\] (WARN|ERROR|INFO) )"
)


def _consume_and_commit(bootstrap: str, group: str, topic: str) -> int:
    consumer = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 60
        seen = 0
        while seen < 3 and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                seen += 1
        assert seen == 3
        consumer.commit(asynchronous=False)
        committed = consumer.committed([ck.TopicPartition(topic, 0)], timeout=10)
        return int(committed[0].offset)
    finally:
        consumer.close()


def test_consumer_offsets_dump_like_kafka(tmp_path: Path, java: Any) -> None:
    broker = Broker(
        tmp_path / "data",
        ["offsets.topic.num.partitions=2", "group.initial.rebalance.delay.ms=0"],
    ).start()
    try:
        producer = ck.Producer({"bootstrap.servers": broker.bootstrap})
        for i in range(3):
            producer.produce("events", key=b"k%d" % i, value=b"v%d" % i, partition=0)
        assert producer.flush(30) == 0
        assert _consume_and_commit(broker.bootstrap, "kept", "events") == 3
        assert _consume_and_commit(broker.bootstrap, "gone", "events") == 3
        admin = admin_mod.AdminClient({"bootstrap.servers": broker.bootstrap})
        for future in admin.delete_consumer_groups(["gone"], request_timeout=15).values():
            future.result(30)
    finally:
        broker.stop()

    files = sorted((tmp_path / "data").glob("__consumer_offsets-*/*.log"))
    assert files
    kafka = java.run(DUMP, "--offsets-decoder", "--files", ",".join(map(str, files)))
    assert kafka.returncode == 0, kafka.stderr.decode(errors="replace")
    stderr = [line for line in kafka.stderr.decode().splitlines() if not _JVM_NOISE.match(line)]
    assert stderr == []
    stdout = kafka.stdout.decode("utf-8")
    assert "error" not in stdout.lower() and "exception" not in stdout.lower()
    for group in ("kept", "gone"):
        offset_key = (
            f'key: {{"type":"1","data":{{"group":"{group}","topic":"events","partition":0}}}}'
        )
        assert offset_key in stdout
    assert re.search(r'"offset":3\b', stdout)
    assert '{"type":"2","data":{"group":"kept"}}' in stdout
    # the deleted group's tombstones: null payloads of its keys
    assert re.search(
        r'key: \{"type":"1","data":\{"group":"gone","topic":"events","partition":0\}\} '
        r"payload: <DELETE>",
        stdout,
    ), stdout
    assert re.search(r'key: \{"type":"2","data":\{"group":"gone"\}\} payload: <DELETE>', stdout)

    ours = subprocess.run(
        [*DUMP_LOG, "--offsets-decoder", "--files", ",".join(map(str, files))],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert ours.returncode == 0, ours.stderr.decode(errors="replace")
    assert ours.stdout.decode("utf-8").splitlines() == stdout.splitlines()
