"""Committed offsets' lifetime as Kafka 4.x keeps it: OffsetCommit v2-4's RetentionTimeMs
(an expire timestamp in the record, honoured after a restart), the periodic expiry task
every ``offsets.retention.check.interval.ms``, and a deleted topic's offsets deleted with
it (tombstones in ``__consumer_offsets``; ``kafkacore consumer-groups --describe`` no
longer lists them)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import confluent_kafka as ck
import pytest
from confluent_kafka import admin as admin_mod

from kafkacore.config import BrokerConfig
from kafkacore.coordinator import records as recs
from kafkacore.protocol import ErrorCode
from kafkacore.server import KafkaServer
from kafkacore.server.group.coordinator import GroupCoordinator
from support.brokers import Broker
from support.offsets_log import offsets_records

pytestmark = pytest.mark.timeout(120)

T0 = 1_700_000_000_000
MINUTE = 60_000


class FakeClock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


Scenario = Callable[[GroupCoordinator, FakeClock], Awaitable[None]]


def run(tmp_path: Path, scenario: Scenario, **overrides: object) -> None:
    """``scenario`` against an in-process broker on ``tmp_path`` with topic ``t`` (2
    partitions) and a fake clock for the coordinator."""

    async def main() -> None:
        props = {
            "listeners": "PLAINTEXT://localhost:0",
            "log.dirs": str(tmp_path),
            "node.id": 1,
            "offsets.topic.num.partitions": 1,
            "offsets.retention.minutes": 10,
            **overrides,
        }
        server = KafkaServer(BrokerConfig(props))
        await server.startup()
        try:
            assert server.groups is not None and server.replicas is not None
            server.replicas.ensure_topic("t", 2)
            clock = FakeClock()
            server.groups.clock = clock
            await scenario(server.groups, clock)
        finally:
            await server.shutdown()

    asyncio.run(main())


def _records(coordinator: GroupCoordinator) -> list[tuple[object, bytes | None]]:
    return offsets_records(coordinator)


def _codes(answer: list[tuple[str, list[tuple[int, int]]]]) -> list[int]:
    return [code for _, partitions in answer for _, code in partitions]


def test_retention_time_ms_expires_offsets_at_their_own_timestamp(tmp_path: Path) -> None:
    async def commit_and_expire(coordinator: GroupCoordinator, clock: FakeClock) -> None:
        # v2-4: RetentionTimeMs overrides offsets.retention.minutes (10) for these offsets
        answer = await coordinator.commit(
            "g", -1, "", None, [("t", 0, 5, -1, "a")], retention_time_ms=MINUTE, api_version=2
        )
        assert _codes(answer) == [ErrorCode.NONE]
        answer = await coordinator.commit(
            "g", -1, "", None, [("t", 1, 6, -1, "b")], retention_time_ms=30 * MINUTE
        )
        assert _codes(answer) == [ErrorCode.NONE]
        await coordinator.commit("g", -1, "", None, [("t", 0, 7, 2, "c")], api_version=2)  # default
        # the records carry the expire timestamp (OffsetCommitValue v1, as Kafka writes it)
        values = [
            recs.decode_offset_commit_value(v) for k, v in _records(coordinator) if v is not None
        ]
        assert [(v.version, v.expire_timestamp) for v in values] == [
            (1, T0 + MINUTE),
            (1, T0 + 30 * MINUTE),
            (4, -1),  # and v4 without, with the topic id, as Kafka 4.3 writes it
        ]
        # the re-commit of t-0 without RetentionTimeMs replaced the expiring one
        assert await coordinator.cleanup_expired(T0 + 10 * MINUTE - 1) == 0
        assert await coordinator.cleanup_expired(T0 + 10 * MINUTE) == 1
        assert set(coordinator.fetch("g")) == {("t", 1)}
        clock.now = T0 + 11 * MINUTE
        await coordinator.commit("h", -1, "", None, [("t", 0, 1, -1, "")], retention_time_ms=MINUTE)

    async def after_restart(coordinator: GroupCoordinator, clock: FakeClock) -> None:
        # the expire timestamps came back from __consumer_offsets
        assert coordinator.fetch("g")[("t", 1)].expire_timestamp == T0 + 30 * MINUTE
        assert coordinator.fetch("h")[("t", 0)].expire_timestamp == T0 + 12 * MINUTE
        assert await coordinator.cleanup_expired(T0 + 12 * MINUTE - 1) == 0
        assert await coordinator.cleanup_expired(T0 + 12 * MINUTE) == 1  # h's, not g's yet
        assert "h" not in coordinator.groups
        assert await coordinator.cleanup_expired(T0 + 30 * MINUTE) == 1
        assert coordinator.groups == {}
        tombstones = [k for k, v in _records(coordinator) if v is None]
        assert tombstones == [
            recs.OffsetCommitKey("g", "t", 0),
            recs.OffsetCommitKey("h", "t", 0),
            recs.OffsetCommitKey("g", "t", 1),
        ]

    run(tmp_path, commit_and_expire)
    run(tmp_path, after_restart)


def test_the_periodic_task_runs_every_check_interval(tmp_path: Path) -> None:
    async def scenario(coordinator: GroupCoordinator, clock: FakeClock) -> None:
        await coordinator.commit("g", -1, "", None, [("t", 0, 5, -1, "")], retention_time_ms=1)
        clock.now += 1  # expired now, but only the periodic task may remove it
        deadline = time.monotonic() + 10
        while coordinator.fetch("g") and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert coordinator.fetch("g") == {}
        assert [k for k, v in _records(coordinator) if v is None] == [
            recs.OffsetCommitKey("g", "t", 0)
        ]

    run(tmp_path, scenario, **{"offsets.retention.check.interval.ms": 200})


def test_the_default_check_interval_does_not_run_early(tmp_path: Path) -> None:
    async def scenario(coordinator: GroupCoordinator, clock: FakeClock) -> None:
        await coordinator.commit("g", -1, "", None, [("t", 0, 5, -1, "")], retention_time_ms=1)
        clock.now += 1
        await asyncio.sleep(1)  # offsets.retention.check.interval.ms is 10 minutes
        assert set(coordinator.fetch("g")) == {("t", 0)}

    run(tmp_path, scenario)


def _subscription(*topics: str) -> bytes:
    """ConsumerProtocolSubscription v0: version, topics, user data (null)."""
    data = (0).to_bytes(2, "big") + len(topics).to_bytes(4, "big")
    for topic in topics:
        data += len(topic).to_bytes(2, "big") + topic.encode()
    return data + (-1).to_bytes(4, "big", signed=True)


def test_stable_group_offsets_of_unsubscribed_topics_expire(tmp_path: Path) -> None:
    """KIP-496: a Stable consumer group's offsets of topics it no longer subscribes to
    expire after offsets.retention.minutes from their commit; its subscribed topics'
    offsets never do while it is Stable."""

    async def scenario(coordinator: GroupCoordinator, clock: FakeClock) -> None:
        coordinator.replicas.create_topic("old", 1, {})
        joined = await coordinator.join(
            version=3,
            group_id="g",
            member_id="",
            instance_id=None,
            client_id="c",
            client_host="/127.0.0.1",
            session_timeout=30_000,
            rebalance_timeout=30_000,
            protocol_type="consumer",
            protocols=[("range", _subscription("t"))],
        )
        assert joined.error_code == ErrorCode.NONE and joined.leader == joined.member_id
        member, generation = joined.member_id, joined.generation
        synced = await coordinator.sync("g", generation, member, None, None, None, {member: b""})
        assert synced[0] == ErrorCode.NONE
        assert coordinator.groups["g"].state == "Stable"
        offsets = [("t", 0, 5, -1, ""), ("old", 0, 9, -1, "")]
        assert _codes(await coordinator.commit("g", generation, member, None, offsets)) == [0, 0]
        assert await coordinator.cleanup_expired(T0 + 10 * MINUTE - 1) == 0
        assert await coordinator.cleanup_expired(T0 + 10 * MINUTE) == 1
        assert set(coordinator.fetch("g")) == {("t", 0)}
        assert await coordinator.cleanup_expired(T0 + 1000 * MINUTE) == 0
        assert [k for k, v in _records(coordinator) if v is None] == [
            recs.OffsetCommitKey("g", "old", 0)
        ]

    run(tmp_path, scenario, **{"group.initial.rebalance.delay.ms": 0})


def test_commit_to_missing_topic_or_partition_commits_the_rest(tmp_path: Path) -> None:
    async def scenario(coordinator: GroupCoordinator, clock: FakeClock) -> None:
        answer = await coordinator.commit(
            "g",
            -1,
            "",
            None,
            [("t", 0, 5, -1, ""), ("t", 2, 5, -1, ""), ("gone", 0, 1, -1, ""), ("t", 1, 6, -1, "")],
        )
        assert answer == [
            ("t", [(2, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), (0, 0), (1, 0)]),
            ("gone", [(0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]),
        ]
        assert set(coordinator.fetch("g")) == {("t", 0), ("t", 1)}
        # offset.metadata.max.bytes counts Java chars (UTF-16 units): 2048 emoji = 4096
        answer = await coordinator.commit("g", -1, "", None, [("t", 0, 7, -1, "\U0001f600" * 2048)])
        assert _codes(answer) == [ErrorCode.NONE]
        answer = await coordinator.commit("g", -1, "", None, [("t", 0, 8, -1, "\U0001f600" * 2049)])
        assert _codes(answer) == [ErrorCode.OFFSET_METADATA_TOO_LARGE]
        assert coordinator.fetch("g")[("t", 0)].offset == 7

    run(tmp_path, scenario)


def _kc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafkacore.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ.copy(),
    )


def test_deleting_a_topic_deletes_its_committed_offsets(tmp_path: Path) -> None:
    broker = Broker(tmp_path / "data", ["offsets.topic.num.partitions=1"]).start()
    try:
        b = broker.bootstrap
        admin = admin_mod.AdminClient({"bootstrap.servers": b})
        for f in admin.create_topics(
            [admin_mod.NewTopic("doomed", 1, 1), admin_mod.NewTopic("kept", 1, 1)]
        ).values():
            f.result(30)
        consumer = ck.Consumer({"bootstrap.servers": b, "group.id": "g"})
        try:
            committed = consumer.commit(
                offsets=[ck.TopicPartition("doomed", 0, 3), ck.TopicPartition("kept", 0, 4)],
                asynchronous=False,
            )
            assert [tp.error for tp in committed] == [None, None]
            # librdkafka's reference behaviour: a missing topic's partition is refused
            with pytest.raises(ck.KafkaException) as refused:
                consumer.commit(offsets=[ck.TopicPartition("never", 0, 1)], asynchronous=False)
            assert "UNKNOWN_TOPIC_OR_PART" in str(refused.value)
        finally:
            consumer.close()
        described = _kc("consumer-groups", "--bootstrap-server", b, "--describe", "--group", "g")
        assert described.returncode == 0, described.stderr
        assert "doomed" in described.stdout and "kept" in described.stdout

        for f in admin.delete_topics(["doomed"], operation_timeout=30).values():
            f.result(30)
        described = _kc("consumer-groups", "--bootstrap-server", b, "--describe", "--group", "g")
        assert described.returncode == 0, described.stderr
        assert "doomed" not in described.stdout and "kept" in described.stdout
    finally:
        broker.stop()

    # the deletion is in __consumer_offsets (a tombstone), and stays after a restart
    async def reloaded(coordinator: GroupCoordinator, clock: FakeClock) -> None:
        entries = [
            (key.topic, value is None)
            for key, value in _records(coordinator)
            if isinstance(key, recs.OffsetCommitKey)
        ]
        assert entries == [("doomed", False), ("kept", False), ("doomed", True)]
        assert set(coordinator.fetch("g")) == {("kept", 0)}

    run(tmp_path / "data", reloaded, **{"offsets.topic.num.partitions": 1})
