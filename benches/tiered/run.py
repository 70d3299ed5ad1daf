"""Tiered storage benchmarks on one kafkacore broker and S3Proxy (both on this machine):

* **catch-up read**: a consumer (librdkafka) reads ``--gib`` GiB from offset 0, once from a
  topic whose segments are all on local disk, once from the same data after it was tiered
  and deleted locally (every fetch served from the bucket); MiB/s and the ratio;
* **produce latency while copying**: ``--seconds`` of acks=all produce at ``--rate``
  records/s of 1 KiB, p50/p99 delivery latency, on a topic without tiering and on a tiered
  topic while its closed segments are being copied; the p99 ratio (goal: <= 1.1).

Writes ``benches/results/tiered.json`` (date, machine, command, figures).

    .venv/bin/python benches/tiered/run.py [--gib 1] [--seconds 30] [--rate 5000]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

import confluent_kafka as ck  # noqa: E402
from confluent_kafka import admin as admin_mod  # noqa: E402

from support.brokers import Broker  # noqa: E402
from support.object_store import ObjectStoreServer  # noqa: E402

RECORD = 1024
SEGMENT = 64 << 20


def create(bootstrap: str, name: str, tiered: bool) -> None:
    config = {"segment.bytes": str(SEGMENT)}
    if tiered:
        config |= {"remote.storage.enable": "true", "local.retention.bytes": "1"}
    admin = admin_mod.AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([admin_mod.NewTopic(name, 1, 1, config=config)]).values():
        f.result(60)


def fill(bootstrap: str, topic: str, total: int) -> int:
    producer = ck.Producer(
        {"bootstrap.servers": bootstrap, "acks": "1", "linger.ms": 20, "batch.size": 1 << 20}
    )
    value = os.urandom(RECORD)
    n = total // RECORD
    for i in range(n):
        while True:
            try:
                producer.produce(topic, value)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 10_000 == 0:
            producer.poll(0)
    assert producer.flush(300) == 0
    return n


def read_all(bootstrap: str, topic: str, count: int) -> float:
    consumer = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-{topic}-{time.time()}",
            "enable.auto.commit": False,
            "fetch.max.bytes": 50 << 20,
            "max.partition.fetch.bytes": 8 << 20,
        }
    )
    consumer.assign([ck.TopicPartition(topic, 0, 0)])
    got = 0
    t0 = time.perf_counter()
    deadline = time.monotonic() + 1800
    while got < count and time.monotonic() < deadline:
        got += sum(1 for m in consumer.consume(10_000, 1.0) if m.error() is None)
    elapsed = time.perf_counter() - t0
    consumer.close()
    assert got >= count, (got, count)
    return elapsed


def produce_latency(bootstrap: str, topic: str, seconds: float, rate: int) -> dict[str, float]:
    producer = ck.Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 1})
    latencies: list[float] = []
    value = os.urandom(RECORD)

    def done(err: Any, _msg: Any, sent: float = 0.0) -> None:
        if err is None:
            latencies.append(time.perf_counter() - sent)

    start = time.perf_counter()
    i = 0
    while time.perf_counter() - start < seconds:
        due = start + i / rate
        now = time.perf_counter()
        if due > now:
            time.sleep(due - now)
        sent = time.perf_counter()
        producer.produce(topic, value, on_delivery=lambda e, m, s=sent: done(e, m, s))
        producer.poll(0)
        i += 1
    producer.flush(60)
    latencies.sort()
    return {
        "records": len(latencies),
        "p50_ms": round(1000 * latencies[len(latencies) // 2], 2),
        "p99_ms": round(1000 * latencies[int(len(latencies) * 0.99)], 2),
    }


def local_segments(broker: Broker, topic: str) -> int:
    return len(list((broker.data / f"{topic}-0").glob("*.log")))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--rate", type=int, default=5000)
    ap.add_argument("--out", default=str(ROOT / "benches" / "results" / "tiered.json"))
    args = ap.parse_args()
    total = int(args.gib * (1 << 30))
    with tempfile.TemporaryDirectory(prefix="kc-tiered-bench-") as tmp:
        store = ObjectStoreServer(Path(tmp) / "s3").start()
        store.create_bucket("bench")
        broker = Broker(
            Path(tmp) / "data",
            [
                *store.broker_overrides("bench"),
                "rlmm.config.remote.log.metadata.topic.replication.factor=1",
                "remote.log.manager.task.interval.ms=1000",
                "log.retention.check.interval.ms=1000",
            ],
        ).start()
        try:
            bootstrap = broker.bootstrap
            create(bootstrap, "local", tiered=False)
            create(bootstrap, "tiered", tiered=True)
            n = fill(bootstrap, "local", total)
            fill(bootstrap, "tiered", total)
            deadline = time.monotonic() + 3600
            while local_segments(broker, "tiered") > 1 and time.monotonic() < deadline:
                time.sleep(1)
            assert local_segments(broker, "tiered") == 1, "the tiered topic was not tiered"
            local_s = [read_all(bootstrap, "local", n) for _ in range(2)]
            remote_s = [read_all(bootstrap, "tiered", n) for _ in range(2)]
            mib = total / (1 << 20)
            catch_up = {
                "gib": args.gib,
                "local_mib_per_s": round(mib / statistics.median(local_s), 1),
                "remote_mib_per_s": round(mib / statistics.median(remote_s), 1),
            }
            catch_up["remote_over_local"] = round(
                catch_up["remote_mib_per_s"] / catch_up["local_mib_per_s"], 2
            )
            # produce latency: plain topic, then a tiered one while copies run
            create(bootstrap, "plain-p", tiered=False)
            create(bootstrap, "tiered-p", tiered=True)
            plain = produce_latency(bootstrap, "plain-p", args.seconds, args.rate)
            fill(bootstrap, "tiered-p", 4 * SEGMENT)  # closed segments waiting for copies
            copying = produce_latency(bootstrap, "tiered-p", args.seconds, args.rate)
            latency = {
                "rate": args.rate,
                "without_tiering": plain,
                "while_copying": copying,
                "p99_ratio": round(copying["p99_ms"] / plain["p99_ms"], 2),
            }
        finally:
            broker.stop(check=False)
            store.stop()
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}",
        "command": "python benches/tiered/run.py " + " ".join(sys.argv[1:]),
        "catch_up_read": catch_up,
        "produce_latency": latency,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
