"""The classic group coordinator through the raw protocol against an in-process broker:
KIP-394 member ids, join/sync, generation and member checks, rebalances, static
membership (KIP-345), session expiry, offsets (simple consumer, multi-group fetch,
restored after a restart) and DeleteGroups."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from kafkacore.coordinator.txn_records import TRANSACTION_STATE_TOPIC
from kafkacore.protocol import (
    APIS_BY_NAME,
    ErrorCode,
)
from kafkacore.server import KafkaServer
from kafkacore.server.group.offsets import OFFSETS_TOPIC
from support.raw_client import OneShotClient, make_request, run_broker

pytestmark = pytest.mark.timeout(30)

PROPS = {
    "group.initial.rebalance.delay.ms": 0,
    "group.min.session.timeout.ms": 100,
    "offsets.topic.num.partitions": 3,
}


_req = make_request
Client = OneShotClient


def run(tmp_path: Path, scenario: Callable[[Client], Awaitable[None]]) -> None:
    async def with_server(server: KafkaServer) -> None:
        assert server.replicas is not None
        server.replicas.ensure_topic("t", 1)  # Kafka refuses commits to unknown topics
        await scenario(Client(server.bound_port))

    run_broker(tmp_path, with_server, **PROPS)


async def _until(
    call: Callable[[], Awaitable[Any]], done: Callable[[Any], bool], timeout_s: float = 10
) -> Any:
    """``await call()`` again every 20 ms until ``done`` holds for its answer; that answer
    (AssertionError after ``timeout_s``)."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not done(answer := await call()):
        assert asyncio.get_running_loop().time() < deadline, f"still {answer!r}"
        await asyncio.sleep(0.02)
    return answer


def _protocol(name: str = "range", data: bytes = b"sub") -> Any:
    return APIS_BY_NAME["JoinGroup"].request.cls.JoinGroupRequestProtocol(name=name, metadata=data)


async def _join(c: Client, member: str = "", instance: str | None = None, **kw: Any) -> Any:
    fields: dict[str, Any] = {
        "group_id": "g",
        "session_timeout_ms": 10000,
        "rebalance_timeout_ms": 2000,
        "member_id": member,
        "group_instance_id": instance,
        "protocol_type": "consumer",
        "protocols": [_protocol()],
    }
    fields.update(kw)
    return await c.call("JoinGroup", 7, **fields)


async def _sync(c: Client, gen: int, member: str, assignments: dict[str, bytes]) -> Any:
    cls = APIS_BY_NAME["SyncGroup"].request.cls
    return await c.call(
        "SyncGroup",
        5,
        group_id="g",
        generation_id=gen,
        member_id=member,
        protocol_type="consumer",
        protocol_name="range",
        assignments=[
            cls.SyncGroupRequestAssignment(member_id=m, assignment=a)
            for m, a in assignments.items()
        ],
    )


async def _heartbeat(c: Client, gen: int, member: str, instance: str | None = None) -> int:
    r = await c.call(
        "Heartbeat",
        4,
        group_id="g",
        generation_id=gen,
        member_id=member,
        group_instance_id=instance,
    )
    return int(r.error_code)


async def _first_member(c: Client) -> tuple[str, int]:
    r = await _join(c)
    assert r.error_code == ErrorCode.MEMBER_ID_REQUIRED
    assert r.member_id.startswith("c-")
    r = await _join(c, r.member_id)
    assert r.error_code == ErrorCode.NONE and r.leader == r.member_id
    assert [m.member_id for m in r.members] == [r.member_id]
    s = await _sync(c, r.generation_id, r.member_id, {r.member_id: b"a1"})
    assert s.error_code == 0 and s.assignment == b"a1"
    return r.member_id, r.generation_id


def test_join_sync_two_members_and_errors(tmp_path: Path) -> None:
    async def scenario(c: Client) -> None:
        m1, gen1 = await _first_member(c)
        assert await _heartbeat(c, gen1, m1) == ErrorCode.NONE
        assert await _heartbeat(c, gen1 + 5, m1) == ErrorCode.ILLEGAL_GENERATION
        assert await _heartbeat(c, gen1, "nobody") == ErrorCode.UNKNOWN_MEMBER_ID
        m2 = (await _join(c)).member_id
        second = asyncio.create_task(_join(c, m2))
        # the new member's join starts a rebalance: the old one is told to rejoin
        code = await _until(lambda: _heartbeat(c, gen1, m1), lambda code: code != ErrorCode.NONE)
        assert code == ErrorCode.REBALANCE_IN_PROGRESS
        r1 = await _join(c, m1)
        r2 = await second
        assert r1.generation_id == r2.generation_id == gen1 + 1
        assert r1.leader == m1 and {m.member_id for m in r1.members} == {m1, m2}
        assert r2.members == []
        follower = asyncio.create_task(_sync(c, r2.generation_id, m2, {}))
        s1 = await _sync(c, r1.generation_id, m1, {m1: b"p0", m2: b"p1"})
        assert (s1.error_code, s1.assignment) == (0, b"p0")
        assert ((await follower).error_code, (await follower).assignment) == (0, b"p1")
        d = await c.call("DescribeGroups", 5, groups=["g"], include_authorized_operations=False)
        group = d.groups[0]
        assert group.group_state == "Stable" and group.protocol_data == "range"
        assert {m.member_id: m.member_assignment for m in group.members} == {m1: b"p0", m2: b"p1"}
        deleted = await c.call("DeleteGroups", 2, groups_names=["g", "nope"])
        assert [r.error_code for r in deleted.results] == [
            ErrorCode.NON_EMPTY_GROUP,
            ErrorCode.GROUP_ID_NOT_FOUND,
        ]
        listed = await c.call("ListGroups", 4, states_filter=["Stable"])
        assert [g.group_id for g in listed.groups] == ["g"]

    run(tmp_path, scenario)


def test_static_member_rejoin_fences_old_id(tmp_path: Path) -> None:
    async def scenario(c: Client) -> None:
        r = await _join(c, instance="i1")
        assert r.error_code == 0 and r.member_id.startswith("i1-")
        s = await _sync(c, r.generation_id, r.member_id, {r.member_id: b"x"})
        assert s.error_code == 0
        again = await _join(c, instance="i1")
        assert again.error_code == 0 and again.member_id != r.member_id
        assert again.generation_id == r.generation_id  # no rebalance
        assert await _heartbeat(c, r.generation_id, r.member_id, "i1") == (
            ErrorCode.FENCED_INSTANCE_ID
        )
        assert await _heartbeat(c, r.generation_id, again.member_id, "i1") == ErrorCode.NONE
        s = await _sync(c, again.generation_id, again.member_id, {})
        assert (s.error_code, s.assignment) == (0, b"x")

    run(tmp_path, scenario)


def test_session_expiry_removes_member(tmp_path: Path) -> None:
    async def scenario(c: Client) -> None:
        r = await _join(c, instance="i1", session_timeout_ms=200)
        await _sync(c, r.generation_id, r.member_id, {})
        # no heartbeat while waiting (one would keep the session alive): describe instead
        d = await _until(
            lambda: c.call("DescribeGroups", 5, groups=["g"], include_authorized_operations=False),
            lambda d: d.groups[0].members == [],
        )
        assert d.groups[0].group_state == "Empty"
        assert await _heartbeat(c, r.generation_id, r.member_id) == ErrorCode.UNKNOWN_MEMBER_ID

    run(tmp_path, scenario)


def test_invalid_session_timeout(tmp_path: Path) -> None:
    async def scenario(c: Client) -> None:
        r = await _join(c, session_timeout_ms=10)
        assert r.error_code == ErrorCode.INVALID_SESSION_TIMEOUT

    run(tmp_path, scenario)


async def _commit(c: Client, group: str, offset: int, gen: int = -1, member: str = "") -> int:
    cls = APIS_BY_NAME["OffsetCommit"].request.cls
    r = await c.call(
        "OffsetCommit",
        8,
        group_id=group,
        generation_id_or_member_epoch=gen,
        member_id=member,
        topics=[
            cls.OffsetCommitRequestTopic(
                name="t",
                partitions=[
                    cls.OffsetCommitRequestPartition(
                        partition_index=0,
                        committed_offset=offset,
                        committed_leader_epoch=3,
                        committed_metadata="meta",
                    )
                ],
            )
        ],
    )
    return int(r.topics[0].partitions[0].error_code)


async def _fetch(c: Client, groups: list[str]) -> dict[str, list[tuple[str, int, int, int, str]]]:
    cls = APIS_BY_NAME["OffsetFetch"].request.cls
    r = await c.call(
        "OffsetFetch",
        8,
        groups=[cls.OffsetFetchRequestGroup(group_id=g, topics=None) for g in groups],
        require_stable=False,
    )
    return {
        g.group_id: [
            (t.name, p.partition_index, p.committed_offset, p.committed_leader_epoch, p.metadata)
            for t in g.topics
            for p in t.partitions
        ]
        for g in r.groups
    }


def test_simple_consumer_offsets_survive_restart(tmp_path: Path) -> None:
    async def commit(c: Client) -> None:
        assert await _commit(c, "a", 42) == ErrorCode.NONE
        assert await _commit(c, "b", 7) == ErrorCode.NONE
        assert await _commit(c, "b", 8) == ErrorCode.NONE
        assert await _commit(c, "zz", 1, gen=3, member="m") == ErrorCode.ILLEGAL_GENERATION
        got = await _fetch(c, ["a", "b", "none"])
        assert got == {"a": [("t", 0, 42, 3, "meta")], "b": [("t", 0, 8, 3, "meta")], "none": []}
        deleted = await c.call("DeleteGroups", 2, groups_names=["a"])
        assert deleted.results[0].error_code == ErrorCode.NONE

    async def after_restart(c: Client) -> None:
        got = await _fetch(c, ["a", "b"])
        assert got == {"a": [], "b": [("t", 0, 8, 3, "meta")]}
        meta = await c.call(
            "Metadata",
            12,
            topics=[_req("Metadata").MetadataRequestTopic(name="__consumer_offsets")],
            allow_auto_topic_creation=False,
            include_topic_authorized_operations=False,
        )
        assert meta.topics[0].is_internal is True

    run(tmp_path, commit)
    run(tmp_path, after_restart)


@pytest.mark.parametrize(
    ("key", "key_type"),
    [("offsets.topic.segment.bytes", 0), ("transaction.state.log.segment.bytes", 1)],
)
def test_internal_topic_refused_config_answers_coordinator_not_available(
    tmp_path: Path, key: str, key_type: int
) -> None:
    """A broker config that makes the internal topic's own config invalid (segment.bytes
    below the topic config's 1 MiB minimum; the broker key itself only needs >= 1): Kafka
    4.3.1 logs "Auto topic creation failed for __consumer_offsets with error
    'INVALID_CONFIG'" and answers every FindCoordinator COORDINATOR_NOT_AVAILABLE; the
    topic is not created, and the broker keeps serving."""

    async def scenario(server: KafkaServer) -> None:
        c = Client(server.bound_port)
        for _ in range(2):
            r = await c.call("FindCoordinator", 3, key="g", key_type=key_type)
            assert r.error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE
            assert (r.node_id, r.port) == (-1, -1)
        assert server.replicas is not None
        assert not server.replicas.cache.contains_topic(OFFSETS_TOPIC)
        assert not server.replicas.cache.contains_topic(TRANSACTION_STATE_TOPIC)
        meta = await c.call("Metadata", 12, topics=None, allow_auto_topic_creation=False)
        assert [t.name for t in meta.topics] == []

    run_broker(tmp_path, scenario, **{**PROPS, key: 1000})
