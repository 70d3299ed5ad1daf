"""Offset expiry as Kafka's GroupMetadataManager.cleanupGroupMetadata does it, driven
deterministically through ``GroupCoordinator.cleanup_expired`` with a fake clock on an
in-process broker: an Empty group's offsets expire ``offsets.retention.minutes`` after it
became empty (tombstones in ``__consumer_offsets``, gone after a restart), not before; a
Stable consumer group's subscribed topics' offsets never expire."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from kafkacore.protocol import ErrorCode
from kafkacore.server import KafkaServer
from kafkacore.server.group.coordinator import GroupCoordinator
from kafkacore.tools import offsets_records as recs
from support.offsets_log import offsets_records
from support.raw_client import OneShotClient as Client
from support.raw_client import run_broker
from test_group_protocol import PROPS, _commit, _fetch, _join, _sync

pytestmark = pytest.mark.timeout(30)

T0 = 1_700_000_000_000
MINUTE = 60_000
RETENTION = 10 * MINUTE


class FakeClock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


Scenario = Callable[[Client, GroupCoordinator, FakeClock], Awaitable[None]]


def run(tmp_path: Path, scenario: Scenario) -> None:
    async def with_server(server: KafkaServer) -> None:
        assert server.replicas is not None
        server.replicas.ensure_topic("t", 1)  # Kafka refuses commits to unknown topics
        coordinator = server.groups
        assert coordinator is not None
        clock = FakeClock()
        coordinator.clock = clock
        await scenario(Client(server.bound_port), coordinator, clock)

    run_broker(tmp_path, with_server, **PROPS, **{"offsets.retention.minutes": RETENTION // MINUTE})


def _tombstones(coordinator: GroupCoordinator) -> list[object]:
    return [key for key, value in offsets_records(coordinator) if value is None]


def test_empty_group_offsets_expire_after_retention(tmp_path: Path) -> None:
    async def scenario(c: Client, coordinator: GroupCoordinator, clock: FakeClock) -> None:
        assert await _commit(c, "a", 42) == ErrorCode.NONE
        assert await _commit(c, "b", 7) == ErrorCode.NONE
        clock.now += MINUTE
        assert await _commit(c, "b", 8) == ErrorCode.NONE  # b's commit is a minute younger
        # not before the retention has passed
        assert await coordinator.cleanup_expired(T0 + RETENTION - 1) == 0
        assert await _fetch(c, ["a", "b"]) == {
            "a": [("t", 0, 42, 3, "meta")],
            "b": [("t", 0, 8, 3, "meta")],
        }
        assert _tombstones(coordinator) == []
        # a's offset is exactly retention old: expired; b's is not yet
        assert await coordinator.cleanup_expired(T0 + RETENTION) == 1
        got = await _fetch(c, ["a", "b"])
        assert got == {"a": [], "b": [("t", 0, 8, 3, "meta")]}
        assert "a" not in coordinator.groups  # Empty, no offsets left: deleted
        # a simple consumer's group (generation 0): no GroupMetadata tombstone
        assert _tombstones(coordinator) == [recs.OffsetCommitKey("a", "t", 0)]
        # the periodic task's entry point uses the (fake) clock
        clock.now = T0 + MINUTE + RETENTION
        assert await coordinator.cleanup_expired() == 1
        assert await _fetch(c, ["b"]) == {"b": []}
        assert _tombstones(coordinator) == [
            recs.OffsetCommitKey("a", "t", 0),
            recs.OffsetCommitKey("b", "t", 0),
        ]

    async def after_restart(c: Client, coordinator: GroupCoordinator, clock: FakeClock) -> None:
        assert await _fetch(c, ["a", "b"]) == {"a": [], "b": []}
        assert coordinator.groups == {}

    run(tmp_path, scenario)
    run(tmp_path, after_restart)


def _subscription(*topics: str) -> bytes:
    """ConsumerProtocolSubscription v0: version, topics, user data (null)."""
    data = (0).to_bytes(2, "big") + len(topics).to_bytes(4, "big")
    for topic in topics:
        data += len(topic).to_bytes(2, "big") + topic.encode()
    return data + (-1).to_bytes(4, "big", signed=True)


def test_stable_group_keeps_subscribed_offsets(tmp_path: Path) -> None:
    async def scenario(c: Client, coordinator: GroupCoordinator, clock: FakeClock) -> None:
        from test_group_protocol import _protocol

        r = await _join(c, instance="i1", protocols=[_protocol("range", _subscription("t"))])
        assert r.error_code == ErrorCode.NONE
        s = await _sync(c, r.generation_id, r.member_id, {r.member_id: b""})
        assert s.error_code == ErrorCode.NONE
        assert await _commit(c, "g", 5, gen=r.generation_id, member=r.member_id) == 0
        # an offset of a topic the group no longer subscribes to
        coordinator.replicas.create_topic("old", 2, {})
        await coordinator.commit("g", r.generation_id, r.member_id, "i1", [("old", 1, 9, -1, "")])
        assert coordinator.groups["g"].state == "Stable"
        assert await coordinator.cleanup_expired(T0 + 100 * RETENTION) == 1
        assert await _fetch(c, ["g"]) == {"g": [("t", 0, 5, 3, "meta")]}
        assert _tombstones(coordinator) == [recs.OffsetCommitKey("g", "old", 1)]
        assert "g" in coordinator.groups

    async def after_restart(c: Client, coordinator: GroupCoordinator, clock: FakeClock) -> None:
        assert await _fetch(c, ["g"]) == {"g": [("t", 0, 5, 3, "meta")]}

    run(tmp_path, scenario)
    run(tmp_path, after_restart)


def test_consumer_group_expires_after_it_became_empty(tmp_path: Path) -> None:
    async def scenario(c: Client, coordinator: GroupCoordinator, clock: FakeClock) -> None:
        from test_group_protocol import _protocol

        r = await _join(c, instance="i1", protocols=[_protocol("range", _subscription("t"))])
        await _sync(c, r.generation_id, r.member_id, {r.member_id: b""})
        assert await _commit(c, "g", 5, gen=r.generation_id, member=r.member_id) == 0
        clock.now += 5 * MINUTE
        left = await c.call("LeaveGroup", 3, group_id="g", members=[_member(r.member_id, "i1")])
        assert left.error_code == ErrorCode.NONE
        for _ in range(100):  # the rebalance completes with no members: Empty
            if coordinator.groups["g"].state == "Empty":
                break
            await asyncio.sleep(0.05)
        group = coordinator.groups["g"]
        assert group.state == "Empty" and group.state_timestamp == T0 + 5 * MINUTE
        # measured from when the group became empty, not from the commit
        assert await coordinator.cleanup_expired(T0 + RETENTION) == 0
        assert await coordinator.cleanup_expired(T0 + 5 * MINUTE + RETENTION) == 1
        assert "g" not in coordinator.groups
        assert _tombstones(coordinator) == [
            recs.OffsetCommitKey("g", "t", 0),
            recs.GroupMetadataKey("g"),
        ]

    async def after_restart(c: Client, coordinator: GroupCoordinator, clock: FakeClock) -> None:
        assert await _fetch(c, ["g"]) == {"g": []}
        assert "g" not in coordinator.groups

    run(tmp_path, scenario)
    run(tmp_path, after_restart)


def _member(member_id: str, instance: str) -> object:
    from kafkacore.protocol import APIS_BY_NAME

    cls = APIS_BY_NAME["LeaveGroup"].request.cls
    return cls.MemberIdentity(member_id=member_id, group_instance_id=instance)
