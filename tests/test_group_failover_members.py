"""A group coordinator failover keeps the group's members (Kafka's ``GroupMetadata.loadGroup``
and ``onGroupLoaded``): the new coordinator loads the stored generation Stable with its
members, each with a fresh session, so their commits and heartbeats go on without a
rebalance; members that then stay silent expire as usual. Found by the chaos campaign
(tests/chaos): every coordinator kill made the whole group rejoin (UNKNOWN_MEMBER_ID)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from kafkacore.protocol import ErrorCode
from test_group_cluster import Node, join, loaded, run

pytestmark = pytest.mark.timeout(60)


async def stable_member(node: Node, coordinator_epoch: int) -> tuple[str, int]:
    c = node.coordinator(cluster_mode=True)
    c.on_elected(c.topic.partition_for("g"), coordinator_epoch)
    await loaded(c)
    joined = await join(c, "g")
    assert joined.error_code == ErrorCode.NONE
    code, *_ = await c.sync(
        "g",
        joined.generation,
        joined.member_id,
        None,
        "consumer",
        "range",
        {joined.member_id: b"a"},
    )
    assert code == ErrorCode.NONE
    await c.stop()
    return joined.member_id, joined.generation


def test_a_new_coordinator_keeps_the_members(tmp_path: Path) -> None:
    async def scenario(node: Node) -> None:
        member, generation = await stable_member(node, 1)
        c = node.coordinator(cluster_mode=True)  # the next coordinator, on the same log
        c.on_elected(c.topic.partition_for("g"), 2)
        await loaded(c)
        group = c.groups["g"]
        assert group.state == "Stable" and list(group.members) == [member]
        assert group.members[member].assignment == b"a"
        assert await c.heartbeat("g", generation, member, None) == ErrorCode.NONE
        answer = await c.commit("g", generation, member, None, [("t", 0, 7, -1, "")])
        assert [code for _, parts in answer for _, code in parts] == [ErrorCode.NONE]
        await c.stop()

    run(tmp_path, scenario)


def test_loaded_members_that_stay_silent_expire(tmp_path: Path) -> None:
    async def scenario(node: Node) -> None:
        member, generation = await stable_member(node, 1)
        c = node.coordinator(cluster_mode=True)
        c.start()  # the session sweeper
        c.on_elected(c.topic.partition_for("g"), 2)
        await loaded(c)
        c.groups["g"].members[member].session_timeout = 200  # expire fast
        c.groups["g"].members[member].deadline = time.monotonic() + 0.2
        deadline = time.monotonic() + 10
        while c.groups["g"].members:
            assert time.monotonic() < deadline, "the loaded member never expired"
            await asyncio.sleep(0.05)
        assert await c.heartbeat("g", generation, member, None) == ErrorCode.UNKNOWN_MEMBER_ID
        await c.stop()

    run(tmp_path, scenario)
