"""One member of a consumer group, for the tests that mix clients and protocols in one
group (through tests/support/group_members.py):
``group_member.py <client> <bootstrap> <group> <topic> <name>`` with ``<client>`` one of
``kafka-python`` (classic protocol), ``aiokafka`` (classic) or ``confluent`` (the consumer
protocol, KIP-848). Its PYTHONPATH holds the client.

It consumes in batches and commits each batch synchronously, printing one JSON line per
step: ``{"pending": id, "records": [[partition, offset], ...]}`` before the commit, then
``{"committed": id}`` or ``{"failed": id, "error": ...}``; ``{"assigned": [...]}`` when
its assignment changes. SIGTERM closes the consumer (it leaves the group) and exits;
SIGKILL is the crash the tests inflict."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from typing import Any

CLIENT, BOOTSTRAP, GROUP, TOPIC, NAME = sys.argv[1:6]
stopping = False


def emit(event: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def on_term(_signum: int, _frame: Any) -> None:
    global stopping
    stopping = True


signal.signal(signal.SIGTERM, on_term)


class Batches:
    """Numbers the batches and reports an assignment once it changes."""

    def __init__(self) -> None:
        self.next_id = 0
        self.assignment: list[list[Any]] = []

    def assigned(self, partitions: list[list[Any]]) -> None:
        listed = sorted(partitions)
        if listed != self.assignment:
            self.assignment = listed
            emit({"assigned": listed})

    def pending(self, records: list[list[int]]) -> int:
        self.next_id += 1
        emit({"pending": self.next_id, "records": records})
        return self.next_id


def run_kafka_python() -> None:
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    consumer = KafkaConsumer(
        TOPIC,
        bootstrap_servers=BOOTSTRAP,
        group_id=GROUP,
        client_id=NAME,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        session_timeout_ms=10000,
        heartbeat_interval_ms=1000,
    )
    batches = Batches()
    while not stopping:
        polled = consumer.poll(timeout_ms=200, max_records=100)
        batches.assigned([[tp.topic, tp.partition] for tp in consumer.assignment()])
        records = [[r.partition, r.offset] for rs in polled.values() for r in rs]
        if not records:
            continue
        batch = batches.pending(records)
        offsets = {}
        for tp, rs in polled.items():
            try:
                offsets[tp] = OffsetAndMetadata(rs[-1].offset + 1, "", -1)
            except TypeError:  # kafka-python 2.0: (offset, metadata)
                offsets[tp] = OffsetAndMetadata(rs[-1].offset + 1, "")  # type: ignore[call-arg]
        try:
            consumer.commit(offsets)
        except Exception as exc:
            emit({"failed": batch, "error": f"{type(exc).__name__}: {exc}"})
            # the uncommitted records go back to whoever owns their partition next
            for tp in polled:
                if tp in consumer.assignment():
                    committed = consumer.committed(TopicPartition(tp.topic, tp.partition))
                    consumer.seek(tp, committed if committed is not None else 0)
        else:
            emit({"committed": batch})
    consumer.close()


async def run_aiokafka_async() -> None:
    from aiokafka import AIOKafkaConsumer
    from aiokafka.errors import KafkaError

    consumer = AIOKafkaConsumer(
        TOPIC,
        bootstrap_servers=BOOTSTRAP,
        group_id=GROUP,
        client_id=NAME,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        session_timeout_ms=10000,
        heartbeat_interval_ms=1000,
    )
    await consumer.start()
    batches = Batches()
    try:
        while not stopping:
            polled = await consumer.getmany(timeout_ms=200, max_records=100)
            batches.assigned([[tp.topic, tp.partition] for tp in consumer.assignment()])
            records = [[r.partition, r.offset] for rs in polled.values() for r in rs]
            if not records:
                continue
            batch = batches.pending(records)
            try:
                await consumer.commit({tp: rs[-1].offset + 1 for tp, rs in polled.items()})
            except KafkaError as exc:
                emit({"failed": batch, "error": f"{type(exc).__name__}: {exc}"})
                for tp in polled:
                    if tp in consumer.assignment():
                        committed = await consumer.committed(tp)
                        consumer.seek(tp, committed if committed is not None else 0)
            else:
                emit({"committed": batch})
    finally:
        await consumer.stop()


def run_confluent() -> None:
    import confluent_kafka as ck

    consumer = ck.Consumer(
        {
            "bootstrap.servers": BOOTSTRAP,
            "group.id": GROUP,
            "group.protocol": "consumer",
            "client.id": NAME,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "topic.metadata.refresh.interval.ms": 1000,
        }
    )
    consumer.subscribe([TOPIC])
    batches = Batches()
    while not stopping:
        messages = consumer.consume(num_messages=100, timeout=0.2)
        batches.assigned([[tp.topic, tp.partition] for tp in consumer.assignment()])
        good = [m for m in messages if m.error() is None]
        if not good:
            continue
        batch = batches.pending([[m.partition(), m.offset()] for m in good])
        last: dict[int, int] = {}
        for m in good:
            last[m.partition()] = max(last.get(m.partition(), -1), m.offset())
        offsets = [ck.TopicPartition(TOPIC, p, o + 1) for p, o in sorted(last.items())]
        try:
            answered = consumer.commit(offsets=offsets, asynchronous=False)
            errors = [tp for tp in answered or [] if tp.error is not None]
            if errors:
                raise ck.KafkaException(errors[0].error)
        except ck.KafkaException as exc:
            emit({"failed": batch, "error": str(exc)})
            for tp in offsets:  # back to the committed position, if still ours
                if any(a.partition == tp.partition for a in consumer.assignment()):
                    committed = consumer.committed([ck.TopicPartition(TOPIC, tp.partition)], 10)
                    consumer.seek(
                        ck.TopicPartition(TOPIC, tp.partition, max(committed[0].offset, 0))
                    )
        else:
            emit({"committed": batch})
    consumer.close()


if __name__ == "__main__":
    started = time.monotonic()
    if CLIENT == "kafka-python":
        run_kafka_python()
    elif CLIENT == "aiokafka":
        asyncio.run(run_aiokafka_async())
    elif CLIENT == "confluent":
        run_confluent()
    else:
        raise SystemExit(f"unknown client {CLIENT}")
    emit({"closed": round(time.monotonic() - started, 1)})
