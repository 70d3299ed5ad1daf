"""The request time quota (``request_percentage``, Kafka's ClientRequestQuotaManager):
handling time recorded as a percentage of one thread, the throttle bounded by one window,
``throttle_time_ms`` in the response and the channel muted for it; inter-broker requests
and followers' fetches exempt; a throttled Fetch sends no records."""

from __future__ import annotations

import asyncio
import itertools
import os
import socket
import struct
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kafkacore.protocol import APIS, APIS_BY_NAME, ApiKey, RequestHeader, encode_request
from kafkacore.server import KafkaServer
from kafkacore.server.client_quotas import ClientQuotaManager
from kafkacore.server.request_context import ANONYMOUS, RequestContext, SecurityProtocol
from kafkacore.server.request_quota import (
    IDLE_NS,
    NANOS_TO_PERCENTAGE,
    ConnectionTime,
    LoopTime,
    _exempt,
    handle_with_request_quota,
    io_timed,
    loop_time,
)
from support.brokers import BrokerFactory, set_client_quota
from support.raw_client import RawClient, make_request, recv_exactly, run_broker

# serial: request time on the broker's threads is measured and throttled against its quota
pytestmark = pytest.mark.serial


def test_the_manager_bounds_the_throttle_by_one_window() -> None:
    now = [0.0]
    manager = ClientQuotaManager(clock_ms=lambda: now[0])
    assert not manager.has_request_quotas
    assert manager.record_request_time("u", "c", 1e6) == 0  # no quota: nothing recorded
    manager.on_quota_configs_changed("clients/c", {"request_percentage": "10.0"})
    assert manager.has_request_quotas
    # 10 windows of 1 s at 10 % of a thread = 1 percent-second per window
    assert manager.record_request_time("u", "c", 1.0) == 0
    # far over: (rate - 10) / 10 * window would be seconds, bounded to one window
    assert manager.record_request_time("u", "c", 500.0) == 1000
    # a little over: Kafka's formula, (observed - bound) / bound * window
    manager.on_quota_configs_changed("clients/c", {"request_percentage": "100.0"})
    manager.on_quota_configs_changed("clients/c", {})
    assert not manager.has_request_quotas
    manager.on_quota_configs_changed("users/u", {"request_percentage": "50.0"})
    # 1 % over the quota, measured over 10 windows: 0.01 x 10 000 ms
    assert manager.record_request_time("u", "x", 10 * 50.0 * 1.01) == 100
    assert manager.record_request_time("v", "x", 1e9) == 0  # another user: no quota


async def _port_with_quota(server: KafkaServer, entity: str, configs: dict[str, str]) -> int:
    """The broker's port, once the quota entity ``entity`` (``clients/<id>``) has ``configs``."""
    assert server.socket_server is not None
    store: Any = server.services.metadata_store
    await asyncio.to_thread(store.set_quota_configs, entity, configs)
    return next(iter(server.socket_server.bound_ports.values()))


def _all_topics_metadata(cluster_operations: bool) -> Any:
    """A Metadata request for every topic (no auto-creation)."""
    return make_request(
        "Metadata",
        topics=None,
        allow_auto_topic_creation=False,
        include_cluster_authorized_operations=cluster_operations,
        include_topic_authorized_operations=False,
    )


def _services(quotas: ClientQuotaManager) -> Any:
    return SimpleNamespace(client_quotas=quotas)


def _context(api: ApiKey, client_id: str = "c") -> RequestContext:
    return RequestContext(
        header=RequestHeader(api, 12, 0, client_id),
        connection_id="c",
        listener_name="PLAINTEXT",
        security_protocol=SecurityProtocol.PLAINTEXT,
        principal=ANONYMOUS,
        client_address="127.0.0.1",
        client_port=0,
    )


def _spin(seconds: float) -> None:
    """Keep this thread's CPU busy for ``seconds`` of its CPU time."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_time_on_the_loop_and_on_io_threads_counts_waiting_does_not() -> None:
    """The loop's CPU time until the handler is done and the handler's run_io calls (at
    their wall time) are recorded with a throttle; the loop's time from there until the
    response is written goes with the connection's next request; the time the handler
    waits (a long-poll, replication) is not recorded."""
    recorded: list[float] = []

    class Quotas(ClientQuotaManager):
        def record_request_time(self, user: str, client_id: str, percent: float) -> int:
            recorded.append(percent / NANOS_TO_PERCENTAGE / 1e6)  # back to ms
            return 0

    quotas = Quotas()
    quotas.load({"clients/c": {"request_percentage": "1"}})
    connection_time = ConnectionTime(loop_time())

    async def handler(services: Any, context: Any, request: Any) -> Any:
        _spin(0.05)  # 50 ms on the loop
        await asyncio.sleep(0.3)  # waiting: free
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, io_timed(lambda: time.sleep(0.1)))  # 100 ms of I/O
        _spin(0.02)
        return SimpleNamespace(throttle_time_ms=0)

    async def serve(api: ApiKey) -> None:
        connection_time()  # the transport read the frame
        connection_time.get_and_reset()  # (what the loop did before: not this request's)
        _, written = await handle_with_request_quota(
            _services(quotas), _context(api), handler, None, connection_time
        )
        assert written is not None
        _spin(0.03)  # encoding and writing the response: 30 ms
        written()

    asyncio.run(serve(ApiKey.METADATA))
    (handled,) = recorded
    assert 165 <= handled < 260, handled
    assert 29e6 <= connection_time.get_and_reset() < 60e6  # charged with the next request
    # an exempt request's time is recorded nowhere
    asyncio.run(serve(ApiKey.LEADER_AND_ISR))
    assert len(recorded) == 1
    assert connection_time.get_and_reset() == 0


def test_the_loop_time_of_a_request_is_charged_once() -> None:
    """The loop's CPU time is handed out span by span: what the transport took for a
    connection's reading is not charged again to the request after it, and a span after
    the loop sat idle for more than IDLE_NS is charged to no one."""
    clock = LoopTime()
    reading = ConnectionTime(clock)
    _spin(0.02)
    reading()  # the transport read a frame: 20 ms
    _spin(0.01)
    handled = clock.take()  # the handler's end: 10 ms
    assert 19e6 <= reading.get_and_reset() < 40e6
    assert 9e6 <= handled < 20e6
    assert reading.get_and_reset() == 0
    _spin(0.01)
    time.sleep(IDLE_NS / 1e9 + 0.1)
    assert clock.take() == 0


def test_exempt_requests() -> None:
    fetch = APIS_BY_NAME["Fetch"].request.cls
    follower = fetch(replica_id=2, replica_state=fetch.ReplicaState(replica_id=2))
    consumer = fetch(replica_id=-1, replica_state=fetch.ReplicaState(replica_id=-1))
    assert _exempt(_context(ApiKey.FETCH), follower)
    assert not _exempt(_context(ApiKey.FETCH), consumer)
    assert _exempt(_context(ApiKey.UPDATE_METADATA), None)
    produce = APIS[ApiKey.PRODUCE].request.cls
    assert _exempt(_context(ApiKey.PRODUCE), produce(acks=0))
    assert not _exempt(_context(ApiKey.PRODUCE), produce(acks=1))
    assert not _exempt(_context(ApiKey.METADATA), None)


def test_a_client_over_its_request_quota_is_throttled_and_muted(tmp_path: Path) -> None:
    """Metadata requests of client id ``greedy`` (quota 0.0001 % of a thread: 10 µs of
    handling per 10 s) get throttle_time_ms > 0 (at most one window) and the next request
    on the connection waits that long; client id ``free`` is never throttled."""

    async def scenario(server: KafkaServer) -> None:
        port = await _port_with_quota(server, "clients/greedy", {"request_percentage": "0.0001"})
        request = _all_topics_metadata(cluster_operations=False)
        free = await RawClient.connect(port, client_id="free")
        greedy = await RawClient.connect(port, client_id="greedy")
        try:
            for i in range(20):
                response = await free.call("Metadata", 12, request, cid=i)
                assert response.throttle_time_ms == 0
            throttles = []
            for i in range(4):
                start = time.monotonic()
                response = await greedy.call("Metadata", 12, request, cid=i)
                throttles.append((response.throttle_time_ms, time.monotonic() - start))
            assert all(0 <= t <= 1000 for t, _ in throttles), throttles
            assert all(t > 0 for t, _ in throttles[1:]), throttles
            # each response came at once; the request after it waited out the mute
            for (previous, _), (_, took) in itertools.pairwise(throttles):
                assert took >= previous / 1000 - 0.05, throttles
        finally:
            free.close()
            greedy.close()

    run_broker(tmp_path, scenario)


def test_a_consumers_fetch_is_capped_to_its_quota_window() -> None:
    """Kafka's getMaxValueInQuotaWindow: quota x (quota.window.num - 1) windows of 1 s."""
    manager = ClientQuotaManager()
    assert manager.max_fetch_bytes("u", "c") == 2**31 - 1
    manager.on_quota_configs_changed("clients/c", {"consumer_byte_rate": "1000"})
    assert manager.max_fetch_bytes("u", "c") == 10_000
    assert manager.max_fetch_bytes("u", "other") == 2**31 - 1


def test_a_fetch_reads_no_more_than_the_quota_window(tmp_path: Path) -> None:
    """A consumer with consumer_byte_rate=100 gets at most 1000 bytes of records per
    fetch (beyond the first batch, which always comes whole)."""
    from kafkacore.pure.batch import build_batch

    async def scenario(server: KafkaServer) -> None:
        port = await _port_with_quota(server, "clients/capped", {"consumer_byte_rate": "100"})
        client = await RawClient.connect(port, client_id="capped")
        try:
            req: Any = APIS_BY_NAME["CreateTopics"].request.cls
            await client.call(
                "CreateTopics",
                5,
                req(
                    topics=[req.CreatableTopic(name="t", num_partitions=1, replication_factor=1)],
                    timeout_ms=10_000,
                ),
            )
            from support.raw_client import fetch_request, produce_request

            for _ in range(10):  # ten batches of ~600 bytes
                now = int(time.time() * 1000)
                batch = bytes(build_batch([(0, now, None, b"v" * 500, [])]))
                produced = await client.call("Produce", 9, produce_request("t", 0, batch), cid=2)
                assert produced.responses[0].partition_responses[0].error_code == 0
            response = await client.call("Fetch", 12, fetch_request("t", 0), cid=3)
            records = response.responses[0].partitions[0].records
            assert records is not None and 0 < len(records) <= 1000 + 700
        finally:
            client.close()

    run_broker(tmp_path, scenario)


def test_which_clients_wait_out_a_throttle_themselves() -> None:
    """KIP-219 versions (Kafka's shouldClientThrottle): the response goes at once and the
    channel is muted; to older clients the response goes after the throttle time."""
    from kafkacore.server.request_quota import client_throttles

    assert client_throttles(ApiKey.METADATA, 6) and not client_throttles(ApiKey.METADATA, 5)
    assert client_throttles(ApiKey.PRODUCE, 6) and not client_throttles(ApiKey.PRODUCE, 5)
    assert client_throttles(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0)
    assert not client_throttles(ApiKey.DESCRIBE_CLIENT_QUOTAS, 1)  # never overridden


def _broker_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (all its threads), as the kernel counts
    them (``/proc/<pid>/stat``): the broker's time, measured outside the broker."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_request_percentage_is_achieved(broker_factory: BrokerFactory) -> None:
    """A client sending Metadata requests back to back on one connection with
    ``request_percentage=10`` (10 % of a thread) costs the broker 10 % of a thread (±10 %)
    over the 10.9 s span of the quota's samples (see test_quota_measured). Measured outside
    the broker: the CPU seconds the kernel counts for the broker process while only this
    client is active, less the idle broker's, divided by the span. Kafka's quota counts the
    request handler's and the network threads' time, which is all the broker does for it."""
    span_s, quota = 10.9, 10.0
    broker = broker_factory()
    assert broker.proc is not None
    set_client_quota(broker, "busy", "request_percentage", quota)
    header = RequestHeader(ApiKey.METADATA, 12, 1, "busy")
    frame = bytes(encode_request(header, _all_topics_metadata(cluster_operations=True)))
    host, port = broker.bootstrap.split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        idle_start = _broker_cpu_seconds(broker.proc.pid)
        time.sleep(2.0)
        idle_per_s = (_broker_cpu_seconds(broker.proc.pid) - idle_start) / 2.0
        cpu_start, start = _broker_cpu_seconds(broker.proc.pid), time.monotonic()
        sent, throttled = 0, 0
        while time.monotonic() - start < span_s:
            sock.sendall(frame)
            body = recv_exactly(sock, struct.unpack(">i", recv_exactly(sock, 4))[0])
            # correlation id (4), empty tagged fields (1), then throttle_time_ms
            throttled += struct.unpack_from(">i", body, 5)[0] > 0
            sent += 1
        used = _broker_cpu_seconds(broker.proc.pid) - cpu_start - idle_per_s * span_s
    achieved = 100 * used / span_s  # percent of one thread
    print(f"\nrequest_percentage {quota}: achieved {achieved:.2f} % ({sent} requests)")
    assert throttled > 0, "the client was never throttled"
    assert abs(achieved / quota - 1) <= 0.10, (achieved, sent)
