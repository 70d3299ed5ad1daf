"""The group coordinator's ``__consumer_offsets`` writes run on the I/O executor
(``num.io.threads``), not on the event loop, and are awaited: the loop keeps serving
other connections while an append is under way, an offset becomes visible to
OffsetFetch only once written, concurrent writes to one partition land in the log and
in memory in the same order (a restart serves what was served), and a failed append
answers what Kafka's coordinator answers."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from kafkacore.coordinator import records as recs
from kafkacore.errors import StorageIOError
from kafkacore.protocol import APIS_BY_NAME, ErrorCode
from kafkacore.server import KafkaServer
from kafkacore.server.group.offsets import OFFSETS_TOPIC
from kafkacore.server.partition import NotEnoughReplicasError, Partition
from support.offsets_log import offsets_records
from support.raw_client import OneShotClient as Client
from support.raw_client import run_broker
from test_group_protocol import PROPS, _commit, _fetch, _join, _sync

pytestmark = pytest.mark.timeout(60)

IO_PROPS = {**PROPS, "num.io.threads": 4}
HOLD_S = 15.0
"""How long a held append waits for its release before giving up (a test on a loop
blocked by the append sees the release come too late)."""


class OffsetsAppends:
    """Wraps the replica manager's ``append_to_leader`` for ``__consumer_offsets``:
    records the thread of each append, can hold appends until released, or fail them."""

    def __init__(self, server: KafkaServer) -> None:
        assert server.replicas is not None
        self.replicas = server.replicas
        self.original = server.replicas.append_to_leader
        self.threads: list[threading.Thread] = []
        self.entered = threading.Semaphore(0)
        self.release: threading.Event | None = None
        self.released_in_time: list[bool] = []
        self.fail: BaseException | None = None
        self.replicas.append_to_leader = self._append  # type: ignore[method-assign]

    def _append(self, partition: Partition, records: bytes, **kwargs: Any) -> Any:
        if partition.topic_partition.topic == OFFSETS_TOPIC:
            self.threads.append(threading.current_thread())
            self.entered.release()
            if self.release is not None:
                self.released_in_time.append(self.release.wait(HOLD_S))
            if self.fail is not None:
                raise self.fail
        return self.original(partition, records, **kwargs)

    def hold(self) -> threading.Event:
        self.release = threading.Event()
        return self.release

    async def wait_entered(self, timeout_s: float = 5.0) -> bool:
        return await asyncio.to_thread(self.entered.acquire, True, timeout_s)


def run(tmp_path: Path, scenario: Callable[[KafkaServer, Client], Awaitable[None]]) -> None:
    async def with_server(server: KafkaServer) -> None:
        assert server.replicas is not None
        if server.replicas.partition("t", 0) is None:
            await asyncio.to_thread(server.replicas.ensure_topic, "t", 1)
        await scenario(server, Client(server.bound_port))

    run_broker(tmp_path, with_server, **IO_PROPS)


def test_offset_commit_appends_on_an_io_thread(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer, c: Client) -> None:
        appends = OffsetsAppends(server)
        assert await _commit(c, "g", 5) == ErrorCode.NONE
        assert len(appends.threads) == 1
        thread = appends.threads[0]
        assert thread is not threading.current_thread()  # not the event loop's thread
        assert thread.name.startswith("kafkacore-io")
        assert await _fetch(c, ["g"]) == {"g": [("t", 0, 5, 3, "meta")]}

    run(tmp_path, scenario)


def test_loop_serves_other_requests_while_a_commit_is_written(tmp_path: Path) -> None:
    async def scenario(server: KafkaServer, c: Client) -> None:
        assert await _commit(c, "g", 1) == ErrorCode.NONE
        appends = OffsetsAppends(server)
        release = appends.hold()
        commit = asyncio.create_task(_commit(c, "g", 2))
        try:
            assert await appends.wait_entered()
            # another connection is answered while the append is held
            versions = await asyncio.wait_for(c.call("ApiVersions", 3), 5)
            assert versions.error_code == ErrorCode.NONE
            metadata = await asyncio.wait_for(c.call("Metadata", 12, topics=None), 5)
            assert [t.name for t in metadata.topics if t.name == "t"] == ["t"]
            # the offset being written is not visible yet
            assert await _fetch(c, ["g"]) == {"g": [("t", 0, 1, 3, "meta")]}
            assert not commit.done()
        finally:
            release.set()
        assert await commit == ErrorCode.NONE
        assert appends.released_in_time == [True]
        assert await _fetch(c, ["g"]) == {"g": [("t", 0, 2, 3, "meta")]}

    run(tmp_path, scenario)


def _last_offsets(server: KafkaServer, group: str) -> dict[tuple[str, int], int]:
    """The last committed offset of each partition of ``group`` as the log has it."""
    assert server.groups is not None
    out: dict[tuple[str, int], int] = {}
    for key, value in offsets_records(server.groups):
        if isinstance(key, recs.OffsetCommitKey) and key.group == group:
            if value is None:
                out.pop((key.topic, key.partition), None)
            else:
                out[(key.topic, key.partition)] = recs.decode_offset_commit_value(value).offset
    return out


def test_concurrent_commits_apply_in_log_order(tmp_path: Path) -> None:
    served: dict[str, Any] = {}

    async def scenario(server: KafkaServer, c: Client) -> None:
        appends = OffsetsAppends(server)
        release = appends.hold()
        first = asyncio.create_task(_commit(c, "g", 10))
        try:
            assert await appends.wait_entered()
            second = asyncio.create_task(_commit(c, "g", 20))
            # the second commit waits for the first's write: it does not append
            # alongside it on another I/O thread
            assert not await appends.wait_entered(0.5)
            assert not second.done()
        finally:
            release.set()
        assert await first == ErrorCode.NONE
        assert await second == ErrorCode.NONE
        assert appends.released_in_time == [True, True]
        served["fetch"] = await _fetch(c, ["g"])
        assert served["fetch"] == {"g": [("t", 0, 20, 3, "meta")]}
        assert _last_offsets(server, "g") == {("t", 0): 20}

    async def after_restart(server: KafkaServer, c: Client) -> None:
        assert await _fetch(c, ["g"]) == served["fetch"]

    run(tmp_path, scenario)
    run(tmp_path, after_restart)


@pytest.mark.parametrize(
    ("failure", "expected"),
    [
        (StorageIOError("disk gone"), ErrorCode.NOT_COORDINATOR),
        (NotEnoughReplicasError("short"), ErrorCode.COORDINATOR_NOT_AVAILABLE),
    ],
)
def test_failed_commit_append_answers_the_coordinator_error(
    tmp_path: Path, failure: BaseException, expected: ErrorCode
) -> None:
    async def scenario(server: KafkaServer, c: Client) -> None:
        assert await _commit(c, "g", 1) == ErrorCode.NONE
        appends = OffsetsAppends(server)
        appends.fail = failure
        assert await _commit(c, "g", 2) == expected
        assert await _commit(c, "new-group", 2) == expected
        # nothing written, nothing served
        assert await _fetch(c, ["g", "new-group"]) == {
            "g": [("t", 0, 1, 3, "meta")],
            "new-group": [],
        }
        assert server.groups is not None and "new-group" not in server.groups.groups
        appends.fail = None
        assert await _commit(c, "g", 3) == ErrorCode.NONE
        assert await _fetch(c, ["g"]) == {"g": [("t", 0, 3, 3, "meta")]}

    run(tmp_path, scenario)


def test_failed_sync_group_write_answers_the_error_and_rebalances(tmp_path: Path) -> None:
    """Kafka's classic SyncGroup: the group turns Stable only once the assignment is
    written; a failed write resets the assignment, answers the mapped error and
    rebalances; the member then rejoins and syncs."""

    async def scenario(server: KafkaServer, c: Client) -> None:
        assert server.groups is not None
        appends = OffsetsAppends(server)
        joined = await _join(c, instance="i1")
        assert joined.error_code == ErrorCode.NONE
        appends.fail = StorageIOError("disk gone")
        synced = await _sync(c, joined.generation_id, joined.member_id, {joined.member_id: b"a"})
        assert synced.error_code == ErrorCode.NOT_COORDINATOR
        assert synced.assignment == b""
        group = server.groups.groups["g"]
        assert group.state == "PreparingRebalance"
        assert group.members[joined.member_id].assignment == b""
        appends.fail = None
        rejoined = await _join(c, member=joined.member_id, instance="i1")
        assert rejoined.error_code == ErrorCode.NONE
        assert rejoined.generation_id == joined.generation_id + 1
        synced = await _sync(c, rejoined.generation_id, joined.member_id, {joined.member_id: b"b"})
        assert (synced.error_code, synced.assignment) == (ErrorCode.NONE, b"b")
        assert group.state == "Stable"

    run(tmp_path, scenario)


def test_every_coordinator_write_runs_off_the_loop(tmp_path: Path) -> None:
    """Group metadata (join completion, SyncGroup), OffsetCommit, OffsetDelete,
    DeleteGroups, expiry and a deleted topic's tombstones: all on I/O threads."""

    async def scenario(server: KafkaServer, c: Client) -> None:
        assert server.groups is not None and server.replicas is not None
        appends = OffsetsAppends(server)
        loop_thread = threading.current_thread()
        # a member joins and syncs: the group's metadata is written twice
        joined = await _join(c, instance="i1")
        assert joined.error_code == ErrorCode.NONE
        synced = await _sync(c, joined.generation_id, joined.member_id, {joined.member_id: b"a"})
        assert synced.error_code == ErrorCode.NONE
        assert server.groups.groups["g"].state == "Stable"
        assert await _commit(c, "g", 4, joined.generation_id, joined.member_id) == 0
        # simple groups: OffsetDelete, DeleteGroups
        assert await _commit(c, "s1", 1) == ErrorCode.NONE
        od = APIS_BY_NAME["OffsetDelete"].request.cls
        deleted_offsets = await c.call(
            "OffsetDelete",
            0,
            group_id="s1",
            topics=[
                od.OffsetDeleteRequestTopic(
                    name="t", partitions=[od.OffsetDeleteRequestPartition(partition_index=0)]
                )
            ],
        )
        assert deleted_offsets.error_code == ErrorCode.NONE
        assert deleted_offsets.topics[0].partitions[0].error_code == ErrorCode.NONE
        assert await _commit(c, "s2", 1) == ErrorCode.NONE
        deleted = await c.call("DeleteGroups", 2, groups_names=["s2"])
        assert deleted.results[0].error_code == ErrorCode.NONE
        # expiry of a simple group's offset committed with a retention time
        assert await server.groups.commit(
            "s3", -1, "", None, [("t", 0, 9, -1, "")], retention_time_ms=1, api_version=2
        ) == [("t", [(0, ErrorCode.NONE)])]
        assert await server.groups.cleanup_expired(server.groups.clock() + 10) == 1
        # a deleted topic's offsets
        await asyncio.to_thread(server.replicas.ensure_topic, "gone", 1)
        assert await _commit_to(c, "s4", "gone") == ErrorCode.NONE
        result = await c.call("DeleteTopics", 5, topic_names=["gone"], timeout_ms=1000)
        assert result.responses[0].error_code == ErrorCode.NONE
        assert await _fetch(c, ["s1", "s2", "s3", "s4"]) == {"s1": [], "s2": [], "s3": [], "s4": []}
        # join + sync metadata, 5 commits, OffsetDelete, DeleteGroups, expiry, topic deletion
        assert len(appends.threads) >= 11
        assert all(t is not loop_thread for t in appends.threads)
        assert all(t.name.startswith("kafkacore-io") for t in appends.threads)

    run(tmp_path, scenario)


async def _commit_to(c: Client, group: str, topic: str) -> int:
    cls = APIS_BY_NAME["OffsetCommit"].request.cls
    r = await c.call(
        "OffsetCommit",
        8,
        group_id=group,
        generation_id_or_member_epoch=-1,
        member_id="",
        topics=[
            cls.OffsetCommitRequestTopic(
                name=topic,
                partitions=[
                    cls.OffsetCommitRequestPartition(
                        partition_index=0,
                        committed_offset=1,
                        committed_leader_epoch=-1,
                        committed_metadata="",
                    )
                ],
            )
        ],
    )
    return int(r.topics[0].partitions[0].error_code)
