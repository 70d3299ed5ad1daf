"""Frames at and beyond ``socket.request.max.bytes``, and clients that disconnect
mid-request or mid-response.

Kafka reads a frame's size first and closes the connection when it is larger than
``socket.request.max.bytes`` or negative (``InvalidReceiveException``), before it
allocates anything; a frame of exactly the limit is read and answered. A client that
goes away mid-request or mid-response leaves nothing behind: the connection's task, its
requests in flight and its delayed operations (a long-polling Fetch in purgatory, which
Kafka too keeps until it completes or expires) are gone afterwards - seen in the broker's
own task dump (``SIGUSR1``)."""

from __future__ import annotations

import contextlib
import socket
import struct
import time
from collections.abc import Iterator

import pytest

from hostile.common import (
    Probe,
    batch,
    closed_by_peer,
    connection_tasks,
    fetch_frame,
    frame,
    open_sockets,
    produce_frame,
    read_response,
    rss_bytes,
    until,
)
from kafkacore.client import Client
from support.brokers import Broker, BrokerFactory
from support.raw_client import fetch_request

LIMIT = 1 << 20


@pytest.fixture(scope="module")
def broker(broker_factory: BrokerFactory) -> Broker:
    return broker_factory(
        f"socket.request.max.bytes={LIMIT}", "message.max.bytes=2000000", "num.partitions=1"
    )


@pytest.fixture(scope="module")
def probe(broker: Broker) -> Iterator[Probe]:
    p = Probe(broker, "probe")
    yield p
    p.close()


def _connect(broker: Broker) -> socket.socket:
    sock = socket.create_connection(("localhost", broker.port))
    sock.settimeout(10)
    return sock


def _produce_of_size(size: int, topic: str = "exact") -> bytes:
    """A valid Produce frame whose size field says exactly ``size``."""
    value = size - 200
    for _ in range(20):
        data = produce_frame(topic, batch(1, value), acks=1)
        declared = struct.unpack(">i", data[:4])[0]
        if declared == size:
            return data
        value += size - declared
    raise AssertionError("no frame of that size")


def test_a_frame_of_exactly_the_limit_is_answered(broker: Broker) -> None:
    with Client(broker.bootstrap) as client:
        client.create_topic("exact", 1)
    data = _produce_of_size(LIMIT)
    sock = _connect(broker)
    try:
        sock.sendall(data)
        cid, response = read_response(sock, "Produce", 8)
        assert cid == 1
        assert response.responses[0].partition_responses[0].error_code == 0
    finally:
        sock.close()


@pytest.mark.parametrize("size", [LIMIT + 1, 2**31 - 1, -1, -(2**31)])
def test_a_size_over_the_limit_or_negative_closes_before_any_body_is_read(
    broker: Broker, probe: Probe, size: int
) -> None:
    rss_before = rss_bytes(broker)
    sock = _connect(broker)
    try:
        sock.sendall(struct.pack(">i", size))  # the size alone: no body follows
        assert closed_by_peer(sock, 2), "the broker waited for the body"
    finally:
        sock.close()
    assert rss_bytes(broker) - rss_before < 8 << 20  # nothing of that size allocated
    probe.round()
    assert "is larger than socket.request.max.bytes" in broker.log_text()


def test_one_byte_over_the_limit_closes_even_with_the_body_sent(broker: Broker) -> None:
    data = _produce_of_size(LIMIT + 1)
    sock = _connect(broker)
    try:
        with contextlib.suppress(OSError):  # closed while we were sending: the answer
            sock.sendall(data)
        assert closed_by_peer(sock, 2)
    finally:
        sock.close()
    with Client(broker.bootstrap) as client:
        # only the frame of exactly the limit was appended, not this one
        assert client.list_offsets({("exact", 0): -1})[("exact", 0)][0] == 1


def test_disconnects_mid_request_and_mid_response_leave_nothing_behind(
    broker: Broker, probe: Probe
) -> None:
    with Client(broker.bootstrap) as client:
        client.create_topic("large", 1)
        for _ in range(8):  # 8 x 256 KiB
            client.produce("large", 0, batch(64, 4000))
        client.create_topic("quiet", 1)
    probe.round()
    until(lambda: connection_tasks(broker)["open"] <= 2, 10, "settled")
    tasks_before = connection_tasks(broker)
    sockets_before = open_sockets(broker)
    rss_before = rss_bytes(broker)
    long_poll = fetch_request("quiet", 0)
    long_poll.max_wait_ms, long_poll.min_bytes = 1500, 1 << 20
    for i in range(60):
        sock = _connect(broker)
        kind = i % 4
        if kind == 0:  # half a frame: the size and part of the body
            whole = produce_frame("large", batch(4, 1000), acks=1)
            sock.sendall(whole[: len(whole) // 2])
        elif kind == 1:  # a size larger than what is sent, then gone
            sock.sendall(struct.pack(">i", 100_000) + bytes(5000))
        elif kind == 2:  # a 1 MiB fetch answer, read a little of it
            sock.sendall(fetch_frame("large"))
            sock.recv(100)
        else:  # a long-polling fetch waiting in purgatory
            sock.sendall(frame("Fetch", 11, 1, long_poll))
            time.sleep(0.01)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()  # a reset: the broker's writes fail
    probe.round()
    # the delayed fetches expire (1.5 s) and their answers go nowhere; then nothing is left
    until(lambda: open_sockets(broker) <= sockets_before, 10, "sockets closed")
    time.sleep(1.6)
    tasks_after = connection_tasks(broker)
    assert tasks_after == tasks_before, (tasks_before, tasks_after)
    assert tasks_before["open"] >= 1  # the probe's connection: the dump is read right
    assert open_sockets(broker) <= sockets_before
    assert rss_bytes(broker) - rss_before < 16 << 20
    probe.round()
    assert "Unexpected error" not in broker.log_text()
