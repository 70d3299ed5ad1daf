"""What the broker's counters cost a Produce request, in CPU time (not wall time: the
machine this was written on is shared, and CPU seconds do not count the time a process
waits for a core):

* the hooks one Produce request calls (``record_produce`` + ``record_request``; a Fetch
  calls ``record_fetch`` instead), timed with ``timeit`` on ``time.process_time`` over
  decoded requests;
* the broker's CPU seconds per Produce request: a broker in a child process (utime +
  stime from ``/proc/<pid>/stat``) while a producer sends ``--requests`` single-batch
  requests (``acks=1``, one 100-byte record each, one request at a time).

    PYTHONPATH=python python benches/console/metrics_overhead.py [--requests 3000]

Prints both and their ratio (the bar: under 1 %).
"""

from __future__ import annotations

import argparse
import sys
import time
import timeit
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benches/_common.py
from _common import child_broker, cpu_seconds
from kafkacore.server.metrics import BrokerMetrics


def _hook_ns(partitions: int, loops: int = 50_000) -> float:
    batch = bytearray(1100)
    batch[57:61] = (10).to_bytes(4, "big")
    request = SimpleNamespace(
        topic_data=[
            SimpleNamespace(
                name="bench",
                partition_data=[
                    SimpleNamespace(index=i, records=bytes(batch)) for i in range(partitions)
                ],
            )
        ]
    )
    response = SimpleNamespace(
        responses=[
            SimpleNamespace(
                partition_responses=[SimpleNamespace(error_code=0) for _ in range(partitions)]
            )
        ]
    )
    metrics = BrokerMetrics()
    frame = b"\x00\x00\x00\x0b" + bytes(100)

    def one_request() -> None:
        metrics.record_produce(request, response)
        metrics.record_request(frame, 1.0, 1.0002)

    timer = timeit.Timer(one_request, timer=time.process_time)
    best = min(timer.repeat(number=loops, repeat=5))
    return best / loops * 1e9


def _broker_cpu_per_produce_ns(requests: int) -> float:
    from confluent_kafka import Producer

    with child_broker({"bench": 1}) as (bootstrap, pid):
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "acks": 1})
        for _ in range(50):  # warm up: metadata, connections
            producer.produce("bench", value=b"v" * 100)
            producer.flush(10)
        before = cpu_seconds(pid)
        for _ in range(requests):
            producer.produce("bench", value=b"v" * 100)
            producer.flush(10)
        used = cpu_seconds(pid) - before
    return used / requests * 1e9


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=3000)
    args = parser.parse_args()
    hook_1 = _hook_ns(1)
    hook_10 = _hook_ns(10)
    broker_ns = _broker_cpu_per_produce_ns(args.requests)
    print(f"hooks per Produce request, 1 partition (CPU):   {hook_1:9.0f} ns")
    print(f"hooks per Produce request, 10 partitions (CPU): {hook_10:9.0f} ns")
    print(f"broker CPU per Produce request (1 partition):   {broker_ns:9.0f} ns")
    print(f"overhead, 1 partition:                          {hook_1 / broker_ns:9.2%}")


if __name__ == "__main__":
    main()
