"""The log pipeline (examples/log_pipeline) end to end on a small generated log: the agent
produces 3000 seeded events spread over 200 s of event time (some of them late, across
window boundaries) to ``logs`` on a kafkacore broker, the Spark job runs both of its queries
with ``trigger(availableNow=True)`` through the ``kafkacore`` source, and what lands in
``log-stats`` (the exactly-once ``kafkacore`` sink) and in Parquet equals the aggregates
computed here in plain Python: counts and maxima exactly, percentiles within
``percentile_approx``'s rank error.

Append mode emits a window once the watermark (max event time - 15 s) has passed its end, so
of the four 1-minute windows the first three are written and the last one is not."""

from __future__ import annotations

import bisect
import json
import math
import sys
from collections import defaultdict
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import confluent_kafka as ck
import pytest

from support.brokers import Broker

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the examples package

from examples.log_pipeline import agent, job, topics

pytestmark = pytest.mark.timeout(300)


START_MS = 1_735_689_600_000  # 2025-01-01T00:00:00Z, a window boundary
SPAN_MS = 200_000
COUNT = 3000
WINDOW_MS = 60_000
WATERMARK_MS = 15_000
ACCURACY = 10_000


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    # The generated events are stamped in 2025: no time-based retention, or the broker's
    # retention check would delete them while the job runs.
    b = Broker(tmp_path_factory.mktemp("pipeline") / "data", ["log.retention.ms=-1"]).start()
    yield b
    b.stop()


def event_ms(event: dict[str, Any]) -> int:
    moment = datetime.fromisoformat(str(event["timestamp"]).replace("Z", "+00:00"))
    return round(moment.timestamp() * 1000)


def iso_ms(text: str) -> int:
    return round(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def expected_windows(events: list[dict[str, Any]]) -> dict[tuple[int, str], list[dict[str, Any]]]:
    groups: dict[tuple[int, str], list[dict[str, Any]]] = defaultdict(list)
    for event in events:
        t = event_ms(event)
        groups[(t - t % WINDOW_MS, event["service"])].append(event)
    return groups


def assert_percentile(value: float, ordered: list[float], p: float) -> None:
    """``value`` is one of the latencies, and its rank is within percentile_approx's error
    (n / accuracy) of the exact percentile's: the smallest value with at least p of the
    values at or below it."""
    n = len(ordered)
    exact_rank = max(math.ceil(p * n), 1)
    first, last = bisect.bisect_left(ordered, value) + 1, bisect.bisect_right(ordered, value)
    assert first <= last, f"p{p * 100:g} = {value} is not one of the {n} latencies"
    slack = math.ceil(n / ACCURACY)
    assert first - slack <= exact_rank <= last + slack, (p, value, ordered[exact_rank - 1])


def assert_stats(row: dict[str, Any], events: list[dict[str, Any]]) -> None:
    latencies = sorted(e["latency_ms"] for e in events)
    assert row["events"] == len(events)
    assert row["errors"] == sum(e["level"] == "ERROR" for e in events)
    assert row["max_ms"] == latencies[-1]
    for p, column in ((0.5, "p50_ms"), (0.95, "p95_ms"), (0.99, "p99_ms")):
        assert_percentile(row[column], latencies, p)


def read_topic(bootstrap: str, topic: str) -> list[Any]:
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "unused"})
    ends = topics.end_offsets(consumer, topic)
    consumer.assign([ck.TopicPartition(topic, p, 0) for p in ends])
    messages: list[Any] = []
    while len(messages) < sum(ends.values()):
        msg = consumer.poll(10)
        assert msg is not None, f"{len(messages)} of {sum(ends.values())} records read"
        assert not msg.error(), msg.error()
        messages.append(msg)
    consumer.close()
    return messages


def test_pipeline_end_to_end(spark: Any, broker: Broker, tmp_path: Path) -> None:
    events = agent.generate(COUNT, seed=2025, start_ms=START_MS, span_ms=SPAN_MS)
    windows = expected_windows(events)
    watermark = max(event_ms(e) for e in events) - WATERMARK_MS
    final = {key for key in windows if key[0] + WINDOW_MS <= watermark}
    # The data exercise what they should: three finalized windows of five services, a last
    # window still open, and late events that belong to the window before their neighbours'.
    assert len(final) == 15 and len(windows) == 20
    order = [event_ms(e) // WINDOW_MS for e in events]
    assert any(order[i] < order[i - 1] for i in range(1, len(order)))

    topics.create_topics(broker.bootstrap, {"logs": 3, "log-stats": 1})
    producer = agent.make_producer(broker.bootstrap)
    deliveries = agent.Deliveries()
    assert agent.produce(producer, "logs", events, deliveries) == COUNT
    assert producer.flush(30) == 0
    assert (deliveries.delivered, deliveries.failed) == (COUNT, 0)

    settings = job.Settings(
        bootstrap=broker.bootstrap,
        output=str(tmp_path / "out"),
        sink_id="pipeline-test",
        watermark=f"{WATERMARK_MS // 1000} seconds",
        percentile_accuracy=ACCURACY,
    )
    queries = job.start(spark, settings, trigger={"availableNow": True})
    for query in queries:
        query.awaitTermination(240)
        assert query.exception() is None, query.exception()
        assert not query.isActive

    # The kafkacore topic: one record per finalized window and service, keyed by service.
    records = read_topic(broker.bootstrap, "log-stats")
    by_key: dict[tuple[int, str], dict[str, Any]] = {}
    for record in records:
        row = json.loads(record.value())
        assert record.key() == row["service"].encode()
        assert iso_ms(row["window_end"]) == iso_ms(row["window_start"]) + WINDOW_MS
        by_key[(iso_ms(row["window_start"]), row["service"])] = row
    assert len(records) == len(by_key), "a window was written twice"
    assert set(by_key) == final
    for key, row in by_key.items():
        assert sorted(row) == sorted(job.STATS_COLUMNS)
        assert_stats(row, windows[key])

    # Parquet: the same windows with the same figures.
    parquet = spark.read.parquet(settings.parquet_path).selectExpr(
        "unix_millis(window_start) AS start_ms", "unix_millis(window_end) AS end_ms", "*"
    )
    table = {(r["start_ms"], r["service"]): r.asDict() for r in parquet.collect()}
    assert parquet.count() == len(table) == len(final)
    assert set(table) == final
    for key, row in table.items():
        assert row["end_ms"] == key[0] + WINDOW_MS
        assert_stats(row, windows[key])
        assert {c: row[c] for c in job.STATS_COLUMNS[2:]} == {
            c: by_key[key][c] for c in job.STATS_COLUMNS[2:]
        }
