"""Run by tests/compat/test_kafka_python.py in a subprocess whose PYTHONPATH holds one
kafka-python version: ``kafka_python_client.py <bootstrap> <topic prefix>``.

Every scenario is recorded, as data or as an error string, in one JSON document printed
as the last stdout line; the test asserts on it."""

from __future__ import annotations

import json
import sys
import time
import traceback
from typing import Any

import kafka
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

BOOTSTRAP, PREFIX = sys.argv[1], sys.argv[2]
CODECS = [None, "gzip", "snappy", "lz4", "zstd"]
result: dict[str, Any] = {"version": kafka.__version__}


def scenario(name: str):  # type: ignore[no-untyped-def]
    def wrap(fn):  # type: ignore[no-untyped-def]
        try:
            result[name] = fn()
        except Exception as exc:
            result[name] = {"error": f"{type(exc).__name__}: {exc}"}
            sys.stderr.write(f"--- {name}\n{traceback.format_exc()}\n")
        return fn

    return wrap


def consume(
    topic: str, partition: int, count: int, start: int = 0, seconds: float = 60
) -> list[dict[str, Any]]:
    """Up to ``count`` records from ``start``, waiting at most ``seconds`` (a loaded
    machine, several test sessions at once, can take tens of seconds)."""
    consumer = KafkaConsumer(bootstrap_servers=BOOTSTRAP, enable_auto_commit=False)
    tp = TopicPartition(topic, partition)
    consumer.assign([tp])
    consumer.seek(tp, start)
    got: list[dict[str, Any]] = []
    deadline = time.monotonic() + seconds
    while len(got) < count and time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=500).values():
            for r in records:
                got.append(
                    {
                        "offset": r.offset,
                        "key": None if r.key is None else r.key.decode(),
                        "value": r.value.decode(),
                        "headers": [[k, v.decode()] for k, v in r.headers],
                        "timestamp": r.timestamp,
                        "timestamp_type": r.timestamp_type,
                    }
                )
    consumer.close()
    return got


for codec in CODECS:

    @scenario(f"codec-{codec or 'none'}")
    def _codec(codec: str | None = codec) -> dict[str, Any]:
        topic = f"{PREFIX}-codec-{codec or 'none'}"
        producer = KafkaProducer(bootstrap_servers=BOOTSTRAP, compression_type=codec, linger_ms=20)
        futures = [
            producer.send(
                topic,
                key=b"k%d" % i,
                value=b"v%d-%s" % (i, b"y" * (i % 5)),
                headers=[("h", b"%d" % i), ("const", b"c")],
                partition=0,
            )
            for i in range(50)
        ]
        producer.flush(20)
        offsets = [f.get(10).offset for f in futures]
        producer.close(10)
        # kafka-python 2.0.2 gets no zstd batch (see the test): that waits out its deadline
        seconds = 20 if codec == "zstd" and kafka.__version__ == "2.0.2" else 60
        return {"produced_offsets": offsets, "consumed": consume(topic, 0, 50, seconds=seconds)}


@scenario("create_time")
def _create_time() -> dict[str, Any]:
    topic = f"{PREFIX}-create-time"
    producer = KafkaProducer(bootstrap_servers=BOOTSTRAP)
    for i, ts in enumerate([1_000, 2_000, 3_000]):
        producer.send(topic, value=b"t%d" % i, partition=0, timestamp_ms=ts)
    producer.flush(10)
    producer.close(10)
    got = consume(topic, 0, 3)
    consumer = KafkaConsumer(bootstrap_servers=BOOTSTRAP, enable_auto_commit=False)
    tp = TopicPartition(topic, 0)
    found = consumer.offsets_for_times({tp: 1_500})[tp]
    none = consumer.offsets_for_times({tp: 10_000})[tp]
    begin, end = consumer.beginning_offsets([tp])[tp], consumer.end_offsets([tp])[tp]
    consumer.close()
    return {
        "consumed": got,
        "for_1500": None if found is None else [found.offset, found.timestamp],
        "for_10000": None if none is None else [none.offset, none.timestamp],
        "begin_end": [begin, end],
    }


@scenario("admin")
def _admin() -> dict[str, Any]:
    topic = f"{PREFIX}-lat"
    admin = KafkaAdminClient(bootstrap_servers=BOOTSTRAP)
    out: dict[str, Any] = {}
    admin.create_topics(
        [
            NewTopic(
                name=topic,
                num_partitions=3,
                replication_factor=1,
                topic_configs={"message.timestamp.type": "LogAppendTime"},
            )
        ]
    )
    out["listed_after_create"] = topic in admin.list_topics()
    try:
        admin.create_topics([NewTopic(name=topic, num_partitions=1, replication_factor=1)])
        out["duplicate"] = "no error"
    except Exception as exc:
        out["duplicate"] = type(exc).__name__
    before = int(time.time() * 1000)
    producer = KafkaProducer(bootstrap_servers=BOOTSTRAP)
    meta = producer.send(topic, value=b"lat", partition=2, timestamp_ms=1_000).get(10)
    producer.close(10)
    out["partitions"] = sorted(
        KafkaConsumer(bootstrap_servers=BOOTSTRAP).partitions_for_topic(topic) or []
    )
    out["record_metadata_ts_ge_before"] = meta.timestamp >= before
    (rec,) = consume(topic, 2, 1)
    out["lat_type"] = rec["timestamp_type"]
    out["lat_ts_ge_before"] = rec["timestamp"] >= before
    admin.delete_topics([topic])
    time.sleep(0.2)
    out["listed_after_delete"] = topic in admin.list_topics()
    admin.close()
    return out


print(json.dumps(result))
