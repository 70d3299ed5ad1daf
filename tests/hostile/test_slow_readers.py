"""Slow readers: consumers that send Fetch requests but never read their socket.

Kafka mutes a channel while its response is in flight, so a client that does not read
holds at most one response in the broker. kafkacore reads requests ahead (pipelining) but
stops reading a connection while its unsent output is above a high-water mark; these
tests show the broker's memory stays bounded with many such clients, that other clients
keep being served at their normal latency, and that a connection whose output makes no
progress for ``connections.max.idle.ms`` is closed, as Kafka's idle expiry closes it."""

from __future__ import annotations

import socket
import statistics
import time
from collections.abc import Iterator

import pytest

from hostile.common import (
    Probe,
    batch,
    established,
    fetch_frame,
    rss_bytes,
    until,
)
from kafkacore.client import Client
from support.brokers import Broker, BrokerFactory

SLOW_READERS = 40
FETCHES_EACH = 200  # pipelined, never read: 200 x 1 MiB of answers asked for
TOPIC_BYTES = 4 << 20
IDLE_MS = 6000


@pytest.fixture(scope="module")
def broker(broker_factory: BrokerFactory) -> Broker:
    return broker_factory(f"connections.max.idle.ms={IDLE_MS}", "num.partitions=1")


@pytest.fixture(scope="module")
def big_topic(broker: Broker) -> str:
    with Client(broker.bootstrap, timeout_s=10) as client:
        client.create_topic("big", 1)
        records = batch(64, 4000)  # 256 KiB
        for _ in range(TOPIC_BYTES // len(records)):
            client.produce("big", 0, records)
    return "big"


@pytest.fixture
def probe(broker: Broker) -> Iterator[Probe]:
    p = Probe(broker, "probe")
    try:
        yield p
    finally:
        p.close()


def _slow_reader(port: int, topic: str, requests: bytes = b"", send_s: float = 2) -> socket.socket:
    """A connection that sends ``requests`` (by default FETCHES_EACH fetches of
    ``topic``) for up to ``send_s`` and never reads."""
    sock = socket.socket()
    # a small receive window: the kernel absorbs little, the broker has to hold the rest
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("localhost", port))
    sock.setblocking(False)
    if not requests:
        requests = b"".join(fetch_frame(topic, cid) for cid in range(FETCHES_EACH))
    sent = 0
    deadline = time.monotonic() + send_s
    while sent < len(requests) and time.monotonic() < deadline:
        try:
            sent += sock.send(requests[sent:])
        except BlockingIOError:
            time.sleep(0.005)  # the broker stopped reading us: back-pressure
    return sock


def test_slow_readers_hold_bounded_memory_and_others_are_served(
    broker: Broker, big_topic: str, probe: Probe
) -> None:
    probe.rounds(20)
    baseline = statistics.median(probe.latencies)
    rss_before = rss_bytes(broker)
    readers = [_slow_reader(broker.port, big_topic) for _ in range(SLOW_READERS)]
    try:
        peak = rss_before
        probe.latencies.clear()
        for _ in range(30):
            probe.round()
            peak = max(peak, rss_bytes(broker))
            time.sleep(0.05)
        grown = peak - rss_before
        # each reader asked for 200 MiB of answers; the broker holds about one each
        assert grown < SLOW_READERS * (1 << 20), f"RSS grew {grown >> 20} MiB"
        during = statistics.median(probe.latencies)
        # the machine is shared and loaded: generous bounds, a stalled broker fails them
        assert during < max(10 * baseline, 0.2), (during, baseline)
        assert probe.worst < 5.0, probe.latencies
    finally:
        for sock in readers:
            sock.close()
    print(
        f"\n{SLOW_READERS} slow readers: broker RSS {rss_before >> 20} -> {peak >> 20} MiB; "
        f"probe median {baseline * 1000:.1f} ms before, {during * 1000:.1f} ms during "
        f"(worst {probe.worst * 1000:.0f} ms)"
    )


def test_a_reader_that_never_reads_is_closed_after_connections_max_idle_ms(
    broker: Broker, big_topic: str
) -> None:
    """Its answer stops making progress (nothing leaves the broker's socket): closed an
    idle time later. Watched from /proc/net/tcp, without reading (a read is progress)."""
    before = established(broker)
    sock = _slow_reader(broker.port, big_topic)
    try:
        start = time.monotonic()
        assert established(broker) == before + 1
        until(lambda: established(broker) == before, IDLE_MS / 1000 + 8, "the idle close")
        assert time.monotonic() - start >= IDLE_MS / 1000 - 2.5  # the requests' send took 2 s
    finally:
        sock.close()
