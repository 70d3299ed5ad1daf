"""Run by tests/compat/test_aiokafka.py in a subprocess whose PYTHONPATH holds aiokafka:
``aiokafka_client.py <bootstrap> <topic prefix>``. Every scenario is recorded, as data or
as an error string, in one JSON document printed as the last stdout line."""

from __future__ import annotations

import asyncio
import json
import sys
import time
import traceback
from typing import Any

import aiokafka
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

BOOTSTRAP, PREFIX = sys.argv[1], sys.argv[2]
CODECS = [None, "gzip", "snappy", "lz4", "zstd"]
result: dict[str, Any] = {"version": aiokafka.__version__}


async def consume(topic: str, partition: int, count: int) -> list[dict[str, Any]]:
    consumer = AIOKafkaConsumer(bootstrap_servers=BOOTSTRAP, enable_auto_commit=False)
    await consumer.start()
    tp = TopicPartition(topic, partition)
    consumer.assign([tp])
    consumer.seek(tp, 0)
    got: list[dict[str, Any]] = []
    deadline = time.monotonic() + 20
    try:
        while len(got) < count and time.monotonic() < deadline:
            for records in (await consumer.getmany(timeout_ms=500)).values():
                got += [
                    {
                        "offset": r.offset,
                        "key": None if r.key is None else r.key.decode(),
                        "value": r.value.decode(),
                        "headers": [[k, v.decode()] for k, v in r.headers],
                        "timestamp": r.timestamp,
                        "timestamp_type": r.timestamp_type,
                    }
                    for r in records
                ]
    finally:
        await consumer.stop()
    return got


async def codec_scenario(codec: str | None, idempotent: bool) -> dict[str, Any]:
    topic = f"{PREFIX}-codec-{codec or 'none'}{'-idem' if idempotent else ''}"
    producer = AIOKafkaProducer(
        bootstrap_servers=BOOTSTRAP,
        compression_type=codec,
        linger_ms=20,
        enable_idempotence=idempotent,
    )
    await producer.start()
    try:
        futures = [
            await producer.send(
                topic,
                key=b"k%d" % i,
                value=b"v%d-%s" % (i, b"y" * (i % 5)),
                headers=[("h", b"%d" % i), ("const", b"c")],
                partition=0,
            )
            for i in range(50)
        ]
        offsets = [(await f).offset for f in futures]
    finally:
        await producer.stop()
    return {"produced_offsets": offsets, "consumed": await consume(topic, 0, 50)}


async def create_time_scenario() -> dict[str, Any]:
    topic = f"{PREFIX}-create-time"
    producer = AIOKafkaProducer(bootstrap_servers=BOOTSTRAP)
    await producer.start()
    for i, ts in enumerate([1_000, 2_000, 3_000]):
        await producer.send_and_wait(topic, value=b"t%d" % i, partition=0, timestamp_ms=ts)
    await producer.stop()
    got = await consume(topic, 0, 3)
    consumer = AIOKafkaConsumer(bootstrap_servers=BOOTSTRAP, enable_auto_commit=False)
    await consumer.start()
    tp = TopicPartition(topic, 0)
    found = (await consumer.offsets_for_times({tp: 1_500}))[tp]
    none = (await consumer.offsets_for_times({tp: 10_000}))[tp]
    begin = (await consumer.beginning_offsets([tp]))[tp]
    end = (await consumer.end_offsets([tp]))[tp]
    await consumer.stop()
    return {
        "consumed": got,
        "for_1500": None if found is None else [found.offset, found.timestamp],
        "for_10000": None if none is None else [none.offset, none.timestamp],
        "begin_end": [begin, end],
    }


async def admin_scenario() -> dict[str, Any]:
    topic = f"{PREFIX}-lat"
    admin = AIOKafkaAdminClient(bootstrap_servers=BOOTSTRAP)
    await admin.start()
    out: dict[str, Any] = {}
    try:
        resp = await admin.create_topics(
            [
                NewTopic(
                    name=topic,
                    num_partitions=3,
                    replication_factor=1,
                    topic_configs={"message.timestamp.type": "LogAppendTime"},
                )
            ]
        )
        out["create_errors"] = [t[1] for t in resp.topic_errors]
        out["listed_after_create"] = topic in await admin.list_topics()
        dup = await admin.create_topics(
            [NewTopic(name=topic, num_partitions=1, replication_factor=1)]
        )
        out["duplicate_errors"] = [t[1] for t in dup.topic_errors]
        before = int(time.time() * 1000)
        producer = AIOKafkaProducer(bootstrap_servers=BOOTSTRAP)
        await producer.start()
        meta = await producer.send_and_wait(topic, value=b"lat", partition=2, timestamp_ms=1_000)
        out["partitions"] = sorted(await producer.partitions_for(topic))
        await producer.stop()
        out["record_metadata_ts_ge_before"] = meta.timestamp >= before
        (rec,) = await consume(topic, 2, 1)
        out["lat_type"] = rec["timestamp_type"]
        out["lat_ts_ge_before"] = rec["timestamp"] >= before
        deleted = await admin.delete_topics([topic])
        out["delete_errors"] = [t[1] for t in deleted.topic_error_codes]
        out["listed_after_delete"] = topic in await admin.list_topics()
    finally:
        await admin.close()
    return out


async def main() -> None:
    scenarios: dict[str, Any] = {}
    for codec in CODECS:
        scenarios[f"codec-{codec or 'none'}"] = lambda c=codec: codec_scenario(c, False)
    scenarios["idempotent-lz4"] = lambda: codec_scenario("lz4", True)
    scenarios["create_time"] = create_time_scenario
    scenarios["admin"] = admin_scenario
    for name, fn in scenarios.items():
        try:
            result[name] = await fn()
        except Exception as exc:
            result[name] = {"error": f"{type(exc).__name__}: {exc}"}
            sys.stderr.write(f"--- {name}\n{traceback.format_exc()}\n")


asyncio.run(main())
print(json.dumps(result))
