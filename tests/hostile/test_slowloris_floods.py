"""Slowloris senders and connection floods against a running broker.

* Kafka's idle expiry (``connections.max.idle.ms``) counts socket activity: a connection
  whose frame stops half-way is closed after the idle time; one that keeps trickling
  bytes is kept (Kafka keeps it too: each read is activity), and its bytes cost the broker
  no more than what arrived.
* ``max.connections.per.ip`` (and its overrides): a connection over the limit is closed
  at once (Kafka's ``TooManyConnectionsException``). ``max.connections``: Kafka's acceptor
  blocks until a slot is free; the connection over the limit is not served until then.
* Throughout, a client that connected before keeps being served."""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Iterator

import pytest

from hostile.common import (
    Probe,
    api_versions_frame,
    closed_by_peer,
    established,
    open_sockets,
    read_response,
    rss_bytes,
    until,
)
from kafkacore.server.network import MAX_WAITING_CONNECTIONS
from support.brokers import Broker, BrokerFactory

IDLE_MS = 2000


@pytest.fixture(scope="module")
def idle_broker(broker_factory: BrokerFactory) -> Broker:
    return broker_factory(f"connections.max.idle.ms={IDLE_MS}", name="idle")


@pytest.fixture(scope="module")
def limited_broker(broker_factory: BrokerFactory) -> Broker:
    return broker_factory(
        "max.connections=40",
        "max.connections.per.ip=25",
        "max.connections.per.ip.overrides=127.0.0.3:2",
        name="limited",
    )


def _connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.socket()
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return sock


def _answered(sock: socket.socket, timeout_s: float) -> bool:
    """Whether an ApiVersions request on ``sock`` is answered within ``timeout_s``."""
    sock.settimeout(timeout_s)
    try:
        sock.sendall(api_versions_frame(7))
        cid, response = read_response(sock, "ApiVersions", 3)
    except (TimeoutError, ConnectionError):
        return False
    return cid == 7 and response.error_code == 0


@pytest.fixture
def idle_probe(idle_broker: Broker) -> Iterator[Probe]:
    p = Probe(idle_broker, "probe")
    yield p
    p.close()


def test_half_frames_are_closed_after_the_idle_time_and_others_are_served(
    idle_broker: Broker, idle_probe: Probe
) -> None:
    before = open_sockets(idle_broker)
    rss_before = rss_bytes(idle_broker)
    idle_probe.round()
    halves = []
    for i in range(100):
        sock = _connect(idle_broker.port)
        # frames that declare 1 MiB and send part of it, or only part of the size
        sock.sendall(struct.pack(">i", 1 << 20) + bytes(1000) if i % 2 else b"\0\0")
        halves.append(sock)
    start = time.monotonic()
    try:
        until(lambda: open_sockets(idle_broker) >= before + 100, 5, "100 connections")
        while time.monotonic() - start < IDLE_MS / 1000 * 0.8:
            idle_probe.round()  # served while the half frames wait
            time.sleep(0.05)
        assert open_sockets(idle_broker) >= before + 100, "closed before the idle time"
        until(lambda: open_sockets(idle_broker) <= before, IDLE_MS / 1000 + 5, "idle closes")
        closed_after = time.monotonic() - start
        assert all(closed_by_peer(sock, 1) for sock in halves)
    finally:
        for sock in halves:
            sock.close()
    assert closed_after >= IDLE_MS / 1000
    assert idle_probe.worst < 5.0, idle_probe.latencies
    # the declared 1 MiB frames were never allocated: only what arrived is held
    assert rss_bytes(idle_broker) - rss_before < 20 << 20


def test_a_trickling_frame_is_activity_and_stays_open_until_it_stops(
    idle_broker: Broker, idle_probe: Probe
) -> None:
    before = open_sockets(idle_broker)
    trickles = [_connect(idle_broker.port) for _ in range(30)]
    frame = api_versions_frame(7)
    try:
        # one byte every 0.5 s (a quarter of the idle time), for 1.5 idle times
        for i in range(int(IDLE_MS / 1000 * 1.5 / 0.5)):
            for sock in trickles:
                sock.sendall(frame[i : i + 1])
            idle_probe.round()
            time.sleep(0.5)
        assert open_sockets(idle_broker) >= before + 30, "a trickling connection was closed"
        # then silence: closed an idle time later
        until(lambda: open_sockets(idle_broker) <= before, IDLE_MS / 1000 + 5, "idle closes")
    finally:
        for sock in trickles:
            sock.close()


def test_connections_over_max_connections_per_ip_are_closed_at_once(
    limited_broker: Broker,
) -> None:
    probe = Probe(limited_broker, "probe")
    held: list[socket.socket] = []
    try:
        for _ in range(25):
            sock = _connect(limited_broker.port, "127.0.0.2")
            held.append(sock)
        assert _answered(held[-1], 5)
        refused = 0
        start = time.monotonic()
        for _ in range(200):  # a flood from the same address
            sock = _connect(limited_broker.port, "127.0.0.2")
            refused += closed_by_peer(sock, 2)
            sock.close()
        rate = 200 / (time.monotonic() - start)
        assert refused == 200
        probe.rounds(5)  # another address is served
        # the override: two from 127.0.0.3, the third closed
        a, b, c = (_connect(limited_broker.port, "127.0.0.3") for _ in range(3))
        held += [a, b]
        assert closed_by_peer(c, 2)
        assert _answered(a, 5) and _answered(b, 5)
        assert all(_answered(sock, 5) for sock in held[:3])  # the existing ones are served
    finally:
        for sock in held:
            sock.close()
        probe.close()
    assert rate > 50, f"{rate:.0f} refused connections/s"
    print(f"\nrefused {rate:.0f} connections/s over max.connections.per.ip")


def test_over_max_connections_a_connection_waits_for_a_slot_as_kafkas_acceptor_does(
    limited_broker: Broker,
) -> None:
    until(lambda: established(limited_broker) == 0, 10, "earlier connections closed")
    held = [_connect(limited_broker.port, f"127.0.1.{i}") for i in range(40)]
    try:
        assert all(_answered(sock, 5) for sock in held)
        waiting = _connect(limited_broker.port, "127.0.2.1")
        assert not _answered(waiting, 1.5), "served over max.connections"
        held.append(waiting)
        # up to MAX_WAITING_CONNECTIONS wait (the listen backlog); more are closed at once
        more = [
            _connect(limited_broker.port, "127.0.2.2") for _ in range(MAX_WAITING_CONNECTIONS - 1)
        ]
        held += more
        extra = _connect(limited_broker.port, "127.0.2.3")
        assert closed_by_peer(extra, 2)
        extra.close()
        assert not any(closed_by_peer(sock, 0.01) for sock in more[:5])
        for sock in more:
            held.remove(sock)
            sock.close()
        held.pop(0).close()  # a slot is free: the waiting connection is served
        assert _read_late_answer(waiting, 5)
        assert all(_answered(sock, 5) for sock in held[:5])
    finally:
        for sock in held:
            sock.close()


def _read_late_answer(sock: socket.socket, timeout_s: float) -> bool:
    """The answer to the ApiVersions request sent while the connection waited."""
    sock.settimeout(timeout_s)
    try:
        cid, response = read_response(sock, "ApiVersions", 3)
    except (TimeoutError, ConnectionError):
        return False
    return cid == 7 and response.error_code == 0
