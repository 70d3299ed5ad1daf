"""A rolling restart of a three-broker kafkacore cluster, as Kafka's rolling-bounce system
tests do it: SIGTERM on a broker moves its leaderships away first (ControlledShutdown to
the controller, which also takes the broker out of every ISR), so idempotent acks=all
producers (``min.insync.replicas=2``, replication factor 3) see no NOT_ENOUGH_REPLICAS,
no NOT_ENOUGH_REPLICAS_AFTER_APPEND and no timeout while every broker in turn stops,
restarts and catches up; and no acknowledged record is lost. With
``auto.leader.rebalance.enable=false`` the leaders stay where the restarts left them."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import KafkaError

from cluster.conftest import create_topic, new_cluster, producer
from cluster.test_cluster_failover import check_delivery
from support.cluster import Cluster, wait_until
from support.zookeeper import ZooKeeperServer

pytestmark = pytest.mark.timeout(300)

TOPIC = "rolling"
PARTITIONS = 3
CHECK_INTERVAL_S = 1
# a new controller's first leader imbalance check: 5 s after its election (Kafka's delay)
FIRST_CHECK_S = 5
# the errors a controlled shutdown must spare acks=all producers
FORBIDDEN = {
    KafkaError.NOT_ENOUGH_REPLICAS,
    KafkaError.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    KafkaError.REQUEST_TIMED_OUT,
    KafkaError._MSG_TIMED_OUT,
    KafkaError._TIMED_OUT,
}


@pytest.fixture
def fresh(zookeeper: ZooKeeperServer, tmp_path: Path) -> Iterator[Cluster]:
    # no automatic rebalance: leaderships move only because of the restarts (and the
    # test checks that nothing moves them back, whatever the check interval)
    c = new_cluster(
        zookeeper,
        tmp_path,
        "auto.leader.rebalance.enable=false",
        f"leader.imbalance.check.interval.seconds={CHECK_INTERVAL_S}",
    )
    try:
        yield c.start()
    finally:
        c.stop()


class RecordingProducer:
    """Sends ``r<seq>`` values round-robin over the partitions until stopped; keeps the
    acknowledged ones per partition in order and every delivery error, with the errors
    the client itself logged (a retried NOT_ENOUGH_REPLICAS reaches only the log)."""

    def __init__(self, cluster: Cluster) -> None:
        self.client_errors: list[str] = []
        self.logger = _Logger(self)
        self.producer = producer(
            cluster,
            **{"message.timeout.ms": 30000, "error_cb": self._on_error, "debug": "msg"},
            logger=self.logger,
        )
        self.acked: dict[int, list[bytes]] = {p: [] for p in range(PARTITIONS)}
        self.errors: list[KafkaError] = []
        self.latencies: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _on_error(self, err: KafkaError) -> None:
        if err.code() in FORBIDDEN:  # not the refused connections of a restart
            self.client_errors.append(str(err))

    def _on_delivery(self, err: KafkaError | None, msg: object) -> None:
        if err is None:
            self.acked[msg.partition()].append(msg.value())  # type: ignore[attr-defined]
            self.latencies.append(msg.latency())  # type: ignore[attr-defined]
        else:
            self.errors.append(err)

    def _run(self) -> None:
        seq = 0
        while not self._stop.is_set():
            self.producer.produce(
                TOPIC,
                f"r{seq:07d}".encode(),
                partition=seq % PARTITIONS,
                on_delivery=self._on_delivery,
            )
            seq += 1
            self.producer.poll(0.005)
        self.producer.flush(60)

    def total(self) -> int:
        return sum(len(v) for v in self.acked.values())

    def __enter__(self) -> RecordingProducer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(90)


class _Logger:
    """librdkafka's log lines: keeps those naming a produce error the client retried."""

    def __init__(self, owner: RecordingProducer) -> None:
        self.owner = owner
        self.lines = 0

    def log(self, level: int, msg: str, *args: object) -> None:
        text = msg % args if args else msg
        self.lines += 1
        if any(name in text for name in ("NOT_ENOUGH_REPLICAS", "TIMED_OUT")):
            self.owner.client_errors.append(text)

    def __getattr__(self, name: str) -> object:
        return self.log if name in {"debug", "info", "warning", "error", "critical"} else None


def test_rolling_restart_under_acks_all_producers(fresh: Cluster) -> None:
    create_topic(fresh, TOPIC, PARTITIONS, 3, {"min.insync.replicas": "2"})
    with RecordingProducer(fresh) as background:
        wait_until(lambda: background.total() > 200, 30, "records flowing")
        for node_id in sorted(fresh.brokers):
            before = background.total()
            broker = fresh.brokers[node_id]
            broker.stop()  # SIGTERM, waits for the exit: a controlled shutdown
            # the controller moved everything away before the broker went: ZooKeeper
            # names it neither leader nor in-sync replica of any partition
            assert "controlled shutdown succeeded" in broker.log_text()
            for p in range(PARTITIONS):
                state = fresh.partition_state(TOPIC, p)
                assert state is not None
                assert state["leader"] != node_id and node_id not in state["isr"], (p, state)
            fresh.restart(node_id)
            for p in range(PARTITIONS):
                fresh.wait_for_isr(TOPIC, p, 3)
            wait_until(lambda b=before: background.total() > b + 100, 60, "progress")
    restarted = time.monotonic()
    # the last broker restarted leads nothing: with auto.leader.rebalance.enable=false
    # no check moves its preferred partitions back to it
    imbalanced = {p: fresh.leader(TOPIC, p) for p in range(PARTITIONS)}
    last = max(fresh.brokers)
    assert last not in imbalanced.values(), imbalanced
    forbidden = [e for e in background.errors if e.code() in FORBIDDEN]
    assert not forbidden, forbidden[:5]
    assert not background.errors, background.errors[:5]
    assert not background.client_errors, background.client_errors[:5]
    assert background.total() > 600
    # each stop cost the producers a leader change, not an outage (30 s is the timeout)
    assert max(background.latencies) < 15, sorted(background.latencies)[-5:]
    check_delivery(fresh, TOPIC, background.acked)
    time.sleep(max(0.0, FIRST_CHECK_S + 2 * CHECK_INTERVAL_S - (time.monotonic() - restarted)))
    assert {p: fresh.leader(TOPIC, p) for p in range(PARTITIONS)} == imbalanced
