"""The broker's own counters (server/metrics.py): unit checks of the history and the
Prometheus text, then an in-process broker driven by confluent-kafka whose counters must
equal the bytes and records produced and consumed."""

from __future__ import annotations

import re
import time
from types import SimpleNamespace
from typing import Any

import pytest

from kafkacore import EmbeddedBroker
from kafkacore.server.metrics import BUCKET_BOUNDS_MS, SLOT_S, BrokerMetrics, quantile_ms

pytestmark = pytest.mark.timeout(60)


class _Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _batch(records: int, size: int) -> bytes:
    """A byte string shaped as a v2 batch as far as the counters look (records count at
    offset 57)."""
    data = bytearray(size)
    data[57:61] = records.to_bytes(4, "big")
    return bytes(data)


def _produce(topic: str, parts: list[tuple[bytes, int]]) -> tuple[Any, Any]:
    request = SimpleNamespace(
        topic_data=[
            SimpleNamespace(
                name=topic,
                partition_data=[
                    SimpleNamespace(index=i, records=r) for i, (r, _) in enumerate(parts)
                ],
            )
        ]
    )
    response = SimpleNamespace(
        responses=[
            SimpleNamespace(partition_responses=[SimpleNamespace(error_code=e) for _, e in parts])
        ]
    )
    return request, response


def _samples(text: str) -> dict[str, float]:
    """Prometheus text -> {'name{labels}': value}, checking each line's syntax."""
    out: dict[str, float] = {}
    sample = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$")
    for line in text.splitlines():
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            continue
        m = sample.match(line)
        assert m, f"not a Prometheus sample line: {line!r}"
        labels = m.group(2) or ""
        if labels:  # in name order, whatever order the exposition wrote them in
            labels = "{" + ",".join(sorted(labels[1:-1].split(","))) + "}"
        out[m.group(1) + labels] = float(m.group(3))
    return out


def test_counters_history_and_exposition() -> None:
    clock = _Clock(1_000_000.0)
    metrics = BrokerMetrics(clock)
    # 2 partitions appended (300 + 200 bytes, 3 + 2 records), one refused (not counted)
    metrics.record_produce(
        *_produce("orders", [(_batch(3, 300), 0), (_batch(2, 200), 0), (_batch(9, 900), 6)])
    )
    fetch = [SimpleNamespace(topic="orders", partitions=[SimpleNamespace(records=b"x" * 120)])]
    metrics.record_fetch(fetch, from_follower=False, version=17)
    metrics.record_fetch(fetch, from_follower=True, version=12)
    produce_frame = b"\x00\x00\x00\x0b"  # api key 0 (Produce), version 11
    for ms in (1.0, 1.0, 1.0, 50.0):
        metrics.record_request(produce_frame, 10.0, 10.0 + ms / 1000)
    totals = metrics.totals()
    assert totals["topics"]["orders"]["bytes_in"] == 500
    assert totals["topics"]["orders"]["records_in"] == 5
    assert totals["topics"]["orders"]["bytes_out"] == 120
    assert totals["topics"]["orders"]["replication_bytes_out"] == 120
    assert totals["topics"]["orders"]["failed_produce_requests"] == 1
    assert totals["requests"] == {"Produce": 4}
    # Kafka's split of Fetch by who sends it (RequestMetrics' FetchConsumer/FetchFollower)
    samples = _samples(metrics.prometheus_text())
    requests = "kafka_network_requestmetrics_requests_total"
    assert samples[f'{requests}{{request="FetchConsumer",version="17"}}'] == 1
    assert samples[f'{requests}{{request="FetchFollower",version="12"}}'] == 1

    clock.now += SLOT_S + 1  # close the slot
    series = metrics.topic_series("orders")
    assert sum(series["bytes_in"]) * SLOT_S == pytest.approx(500)
    assert sum(series["records_in"]) * SLOT_S == pytest.approx(5)
    broker = metrics.broker_series(60)
    assert sum(broker["bytes_in"]) == 500 and sum(broker["bytes_out"]) == 120
    assert sum(broker["requests"]) == 4
    latency = metrics.latency_series()
    p50 = [v for v in latency["p50"] if v is not None]
    p999 = [v for v in latency["p99.9"] if v is not None]
    assert len(p50) == 1 and 1.0 <= p50[0] < 1.13  # the bucket holding 1 ms: within 12 %
    assert 50.0 <= p999[0] < 56.5

    samples = _samples(metrics.prometheus_text())
    assert samples['kafka_server_brokertopicmetrics_bytesin_total{topic="orders"}'] == 500
    assert samples["kafka_server_brokertopicmetrics_bytesin_total"] == 500
    assert samples['kafka_server_brokertopicmetrics_messagesin_total{topic="orders"}'] == 5
    assert samples['kafka_server_brokertopicmetrics_bytesout_total{topic="orders"}'] == 120
    assert (
        samples['kafka_server_brokertopicmetrics_replicationbytesout_total{topic="orders"}'] == 120
    )
    assert (
        samples['kafka_network_requestmetrics_requests_total{request="Produce",version="11"}'] == 4
    )
    assert samples['kafka_network_requestmetrics_totaltimems_count{request="Produce"}'] == 4
    assert samples[
        'kafka_network_requestmetrics_totaltimems_sum{request="Produce"}'
    ] == pytest.approx(53)
    assert (
        50
        <= samples['kafka_network_requestmetrics_totaltimems{quantile="0.999",request="Produce"}']
        < 56.5
    )
    assert samples['kafkacore_request_latency_seconds_bucket{le="+Inf",request="Produce"}'] == 4
    assert samples['kafkacore_request_latency_seconds_bucket{le="0.01",request="Produce"}'] == 3
    # Kafka's percentiles as the JMX exporter labels them (50thPercentile -> "0.50")
    assert samples[
        'kafka_network_requestmetrics_totaltimems{quantile="0.50",request="Produce"}'
    ] == (pytest.approx(1.0))
    # a gauge its owner registers, named as the exporter names the MBean's Value
    metrics.add_gauge("server", "ReplicaManager", "UnderReplicatedPartitions", lambda: 3)
    samples = _samples(metrics.prometheus_text())
    assert samples["kafka_server_replicamanager_underreplicatedpartitions"] == 3


def test_quantiles_from_buckets() -> None:
    buckets = [0] * (len(BUCKET_BOUNDS_MS) + 1)
    assert quantile_ms(buckets, 0.5) is None
    buckets[40] = 99  # 1 ms
    buckets[80] = 1  # 100 ms
    assert quantile_ms(buckets, 0.5) == pytest.approx(1.0)
    assert quantile_ms(buckets, 0.99) == pytest.approx(1.0)
    assert quantile_ms(buckets, 0.999) == pytest.approx(100.0)


def test_broker_counts_what_clients_produce_and_consume() -> None:
    from confluent_kafka import Consumer, Producer

    with EmbeddedBroker(topics={"metered": 2}) as broker:
        producer = Producer(
            {
                "bootstrap.servers": broker.bootstrap_servers,
                "linger.ms": 0,
                "compression.type": "none",
            }
        )
        for i in range(40):
            producer.produce("metered", key=str(i % 4).encode(), value=b"v" * 100)
            producer.flush(10)  # one batch per record: exact counts of both sides
        consumer = Consumer(
            {
                "bootstrap.servers": broker.bootstrap_servers,
                "group.id": "metered-reader",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
            }
        )
        consumer.subscribe(["metered"])
        got = 0
        deadline = time.monotonic() + 20
        while got < 40 and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                got += 1
        consumer.close()
        assert got == 40
        totals = broker.call(lambda: broker.server.services.metrics.totals())
        exposed = _samples(broker.call(lambda: broker.server.services.metrics.prometheus_text()))
        on_disk = broker.call(
            lambda: sum(broker.server.replicas.partition("metered", p).log.size for p in range(2))
        )
    topic = totals["topics"]["metered"]
    assert topic["records_in"] == 40
    # the log holds exactly the batches appended (offsets assigned in place)
    assert topic["bytes_in"] == on_disk
    # everything appended was read back once (one consumer, no re-reads of the same offsets
    # in a fresh group), and the fetch sizes are whole batches
    assert topic["bytes_out"] >= on_disk
    assert totals["requests"]["Produce"] == 40
    assert totals["requests"]["Fetch"] >= 1
    assert exposed['kafka_server_brokertopicmetrics_messagesin_total{topic="metered"}'] == 40
    assert exposed['kafka_server_brokertopicmetrics_bytesin_total{topic="metered"}'] == on_disk
    # the replica manager's gauges: the two partitions and the internal ones, all led
    # here, none under-replicated (one broker: the ISR is the replica set)
    partitions = exposed["kafka_server_replicamanager_partitioncount"]
    assert partitions >= 2
    assert exposed["kafka_server_replicamanager_leadercount"] == partitions
    assert exposed["kafka_server_replicamanager_underreplicatedpartitions"] == 0
    produce_requests = sum(
        v
        for k, v in exposed.items()
        if k.startswith('kafka_network_requestmetrics_requests_total{request="Produce"')
    )
    assert produce_requests == 40


def _asgi_get(app: Any, path: str) -> tuple[int, str]:
    """One GET through the ASGI app (its middleware included), without a server."""
    import asyncio

    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
        "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"",
        "headers": [(b"host", b"console")], "client": ("127.0.0.1", 1),
        "server": ("console", 80), "root_path": "",
    }  # fmt: skip
    asyncio.run(app(scope, receive, send))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body.decode()


def test_outside_the_broker_charts_say_so_and_metrics_is_404() -> None:
    """``kafkacore console`` (no broker in its process) has no counters: the Charts page
    says why, ``/metrics`` answers 404 (no cluster is contacted for either)."""
    from kafkacore.console.app import create_app
    from kafkacore.console.context import BROKER_ONLY_NOTICE, ConsoleContext

    ctx = ConsoleContext(bootstrap="127.0.0.1:1")
    try:
        app = create_app(ctx)
        status, text = _asgi_get(app, "/charts")
        assert status == 200
        assert 'id="broker-only"' in text
        assert "runs inside a kafkacore broker (console.listeners)" in BROKER_ONLY_NOTICE
        assert "runs inside a kafkacore broker (console.listeners)" in text
        assert _asgi_get(app, "/metrics")[0] == 404
        assert _asgi_get(app, "/charts/data")[0] == 404
    finally:
        ctx.close()
