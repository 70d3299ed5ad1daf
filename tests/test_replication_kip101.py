"""KIP-101 scenarios 1 and 2 and the KIP-279 fast-failover case (KAFKA-6361), step by
step between real in-process brokers, the test acting as the controller (UpdateMetadata
and LeaderAndIsr over the wire, as in ``test_replication_cluster``).

A "crash" stops the broker's fetchers first (nothing more is replicated), shuts the
broker down and removes its clean-shutdown marker, so the restart goes through log
recovery; losing an unflushed tail chops the segment file as Kafka's
``EpochDrivenReplicationProtocolAcceptanceTest`` does. Every scenario ends with the
replicas' logs identical - same batches (decoded headers and raw bytes) at the same
offsets with the same partition leader epochs - and equal leader epoch caches. Each runs
with both truncation paths: DivergingEpoch on Fetch v12 (``truncate_on_fetch``, Kafka
3.9) and OffsetForLeaderEpoch before fetching (older IBPs)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from kafkacore.config import BrokerConfig
from kafkacore.log.files import (
    CLEAN_SHUTDOWN_FILE,
    REPLICATION_OFFSET_CHECKPOINT_FILE,
)
from kafkacore.record import BatchHeader, batch_header, iter_batches, records
from kafkacore.server.broker import KafkaServer
from kafkacore.server.partition import Partition
from kafkacore.server.replica_fetcher import ReplicaFetcher
from kafkacore.server.replica_manager import ReplicaManager
from test_replication_cluster import TOPIC, TP, Cluster, batch, eventually

MODES = pytest.mark.parametrize(
    "truncate_on_fetch", [True, False], ids=["diverging-epoch", "epoch-request"]
)


class Brokers(Cluster):
    """A :class:`Cluster` whose brokers can crash and come back on the same log dirs."""

    def __init__(self, tmp_path: Path, truncate_on_fetch: bool) -> None:
        super().__init__([])
        self.tmp_path = tmp_path
        self.truncate_on_fetch = truncate_on_fetch
        self.nodes: tuple[int, ...] = ()

    def log_dir(self, node: int) -> Path:
        return self.tmp_path / f"b{node}"

    async def start(self, node: int) -> KafkaServer:
        config = BrokerConfig(
            {
                "listeners": "PLAINTEXT://localhost:0",
                "log.dirs": str(self.log_dir(node)),
                "node.id": node,
                "replica.fetch.wait.max.ms": 100,
                "replica.fetch.backoff.ms": 50,
            }
        )
        server = KafkaServer(config)
        await server.startup()
        services = server.services
        assert services is not None
        replicas = services.replica_manager
        replicas.start_replication(run_io=services.run_io)
        replicas.fetcher_manager.truncate_on_fetch = self.truncate_on_fetch  # type: ignore[union-attr]
        self.servers[node] = server
        return server

    async def crash(self, node: int) -> None:
        """Fetchers first (no more replication), then the broker; the next start recovers
        the log as after an unclean shutdown."""
        server = self.servers.pop(node)
        await server.replicas.shutdown_replication()  # type: ignore[union-attr]
        await server.shutdown()
        (self.log_dir(node) / CLEAN_SHUTDOWN_FILE).unlink(missing_ok=True)

    async def shutdown(self) -> None:
        for server in self.servers.values():
            await server.replicas.shutdown_replication()  # type: ignore[union-attr]
        for server in self.servers.values():
            await server.shutdown()
        self.servers.clear()

    async def elect(
        self, leader: int, epoch: int, isr: tuple[int, ...], told: tuple[int, ...]
    ) -> None:
        """UpdateMetadata to every live broker, LeaderAndIsr to ``told``."""
        await self.update_metadata(leader, epoch, isr)
        for node in told:
            assert await self.leader_and_isr(node, leader, epoch, isr) == 0

    def assigned(self) -> list[int]:
        return list(self.nodes)  # the assignment names every replica, live or not

    def is_new(self, epoch: int) -> bool:
        return False

    def log(self, node: int) -> Any:
        """``node``'s log, also before a LeaderAndIsr made it a partition again."""
        logs = self.servers[node].logs
        assert logs is not None
        log = logs.get_log(TP)
        assert log is not None
        return log

    def log_bytes(self, node: int) -> bytes:
        return bytes(self.log(node).read(0, 1 << 24).read_bytes())

    def truncating(self, node: int) -> bool | None:
        """Whether ``node``'s fetcher is still in its truncation step (``None``: not
        fetching)."""
        fetchers = self.servers[node].replicas.fetcher_manager  # type: ignore[union-attr]
        state = fetchers.fetch_state(TP)  # type: ignore[union-attr]
        return None if state is None else bool(state[2])

    def leo(self, node: int) -> int:
        return int(self.log(node).log_end_offset)

    def epochs(self, node: int) -> list[tuple[int, int]]:
        return list(self.log(node).leader_epoch_cache.entries())

    def batches(self, node: int) -> list[tuple[BatchHeader, list[bytes], bytes]]:
        """Every batch of ``node``'s log: decoded header, record values, raw bytes."""
        data = self.log_bytes(node)
        out = []
        for pos, magic, size in iter_batches(data):
            assert magic == 2
            out.append(
                (
                    batch_header(data, pos),
                    [bytes(r.value or b"") for r in records(data, pos)],
                    data[pos : pos + size],
                )
            )
        return out

    def values(self, node: int) -> list[bytes]:
        return [v for _, values, _ in self.batches(node) for v in values]

    def assert_identical(self, a: int, b: int) -> None:
        left, right = self.batches(a), self.batches(b)
        assert [h for h, _, _ in left] == [h for h, _, _ in right]
        assert [(h.base_offset, h.partition_leader_epoch) for h, _, _ in left] == [
            (h.base_offset, h.partition_leader_epoch) for h, _, _ in right
        ]
        assert [raw for _, _, raw in left] == [raw for _, _, raw in right]
        assert self.leo(a) == self.leo(b)
        assert self.epochs(a) == self.epochs(b)

    async def converged(self, a: int, b: int) -> None:
        await eventually(lambda: self.log_bytes(a) == self.log_bytes(b))
        self.assert_identical(a, b)


def run(
    tmp_path: Path,
    truncate_on_fetch: bool,
    nodes: tuple[int, ...],
    scenario: Callable[[Brokers], Awaitable[None]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # as in cluster mode, a restarted broker's partitions arrive with the controller's
    # LeaderAndIsr: the single-node path would adopt the logs found on disk and lead them
    # (its high watermark jumping to the log end)
    monkeypatch.setattr(ReplicaManager, "load", lambda self: None)

    async def main() -> None:
        brokers = Brokers(tmp_path, truncate_on_fetch)
        brokers.nodes = nodes
        try:
            for node in nodes:
                await brokers.start(node)
            await scenario(brokers)
        finally:
            await brokers.shutdown()

    asyncio.run(main())


def record_truncations(
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
    """``(follower, leader epoch, end offset)`` of every leader answer a fetcher applied
    (OffsetForLeaderEpoch or DivergingEpoch), and ``(node, log end before, offset)`` of
    every truncation that removed something."""
    seen: list[tuple[int, int, int]] = []
    cuts: list[tuple[int, int, int]] = []
    original = ReplicaFetcher._apply_truncation
    truncate_to = Partition.truncate_to

    def cut(self: Partition, offset: int) -> None:
        leo = self.log.log_end_offset
        if offset < leo:
            cuts.append((self.local_broker_id, leo, offset))
        truncate_to(self, offset)

    monkeypatch.setattr(Partition, "truncate_to", cut)

    async def spy(
        self: ReplicaFetcher, tp: Any, state: Any, partition: Any, epoch: int, end: int
    ) -> None:
        seen.append((self.manager.node_id, epoch, end))
        await original(self, tp, state, partition, epoch, end)

    monkeypatch.setattr(ReplicaFetcher, "_apply_truncation", spy)
    return seen, cuts


def hw_checkpoint(log_dir: Path) -> int:
    lines = (log_dir / REPLICATION_OFFSET_CHECKPOINT_FILE).read_text().split("\n")
    for line in lines[2:]:
        parts = line.split()
        if parts[:2] == [TOPIC, "0"]:
            return int(parts[2])
    raise AssertionError("no high watermark checkpointed")


A, B = 1, 2


@MODES
def test_kip101_scenario1_stale_high_watermark_does_not_truncate(
    tmp_path: Path, truncate_on_fetch: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """B leads, A follows. A has m2 but its HW is still 1 (HWs reach followers one
    fetch late); A restarts; B dies; A is elected: m2, acknowledged and already read
    through B, must still be there."""
    seen, cuts = record_truncations(monkeypatch)
    first_round_hw: list[int] = []

    async def scenario(c: Brokers) -> None:
        for name in ("_truncate", "_fetch"):
            original_round = getattr(ReplicaFetcher, name)

            async def round_spy(
                self: ReplicaFetcher, states: Any, original_round: Any = original_round
            ) -> None:
                if self.manager.node_id == A and restarted and not first_round_hw:
                    first_round_hw.append(c.partition(A).high_watermark)
                await original_round(self, states)

            monkeypatch.setattr(ReplicaFetcher, name, round_spy)
        restarted = False
        await c.elect(B, 1, (A, B), told=(A, B))
        assert (await c.produce(B, batch(1, b"m1"), acks=-1)).error_code == 0
        await eventually(lambda: c.partition(A).high_watermark == 1)
        # A's HW lags from here on: the fetch answer that would carry HW 2 never lands
        follower = c.partition(A)
        original = follower.update_follower_high_watermark
        monkeypatch.setattr(
            follower,
            "update_follower_high_watermark",
            lambda hw, start: original(min(hw, 1), start),
        )
        answer = await c.produce(B, batch(1, b"m2"), acks=-1)
        assert (answer.error_code, answer.base_offset) == (0, 1)
        # acknowledged: B's HW covers m2 (a consumer can read it there), A's does not
        assert c.partition(B).high_watermark == 2
        assert c.leo(A) == 2 and c.partition(A).high_watermark == 1
        # A restarts with the stale HW checkpointed
        await c.crash(A)
        assert hw_checkpoint(c.log_dir(A)) == 1
        await c.start(A)
        restarted = True
        await c.elect(B, 1, (A, B), told=(A,))
        # A's first round (truncation or the first fetch) ran with the stale HW 1
        await eventually(lambda: bool(first_round_hw))
        assert first_round_hw[0] == 1
        # A's truncation step is over (it has fetched since): nothing was truncated
        await eventually(lambda: c.truncating(A) is False)
        await eventually(lambda: c.partition(A).high_watermark == 2)
        # never cut below m2 (a cut re-fetched before B died would hide the loss)
        assert [cut for cut in cuts if cut[0] == A] == []
        assert c.leo(A) == 2
        # B dies; A is elected (epoch 2) with m2
        await c.crash(B)
        await c.elect(A, 2, (A,), told=(A,))
        assert c.values(A) == [b"m1", b"m2"]
        assert (await c.produce(A, batch(1, b"m3"), acks=1)).base_offset == 2
        # B returns as a follower and ends identical to A
        await c.start(B)
        await c.elect(A, 2, (A,), told=(B,))
        await c.converged(A, B)
        assert c.values(B) == [b"m1", b"m2", b"m3"]
        assert c.epochs(A) == [(1, 0), (2, 2)]
        # epoch request path: A asked for epoch 1 and kept everything (end 2 = its LEO)
        if not truncate_on_fetch:
            assert (A, 1, 2) in seen
        assert all(end >= 2 for node, _, end in seen if node == A)

    run(tmp_path, truncate_on_fetch, (A, B), scenario, monkeypatch)


def chop_unflushed_tail(log_dir: Path, keep_bytes: int) -> None:
    """The page cache lost at a power failure: the segment keeps ``keep_bytes``."""
    segment = log_dir / f"{TOPIC}-0" / f"{0:020d}.log"
    assert segment.stat().st_size > keep_bytes
    with segment.open("r+b") as f:
        f.truncate(keep_bytes)


@MODES
def test_kip101_scenario2_replicas_do_not_diverge_after_a_double_failure(
    tmp_path: Path, truncate_on_fetch: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A leads, B follows; B received m2 but never flushed it. A power loss takes both
    down; B returns first with only m1, leads epoch 2 and writes m3 at offset 1; A
    returns with m2 at offset 1 (its HW covers it): A must truncate m2 and end
    identical to B."""
    seen, cuts = record_truncations(monkeypatch)

    async def scenario(c: Brokers) -> None:
        await c.elect(A, 1, (A, B), told=(A, B))
        assert (await c.produce(A, batch(1, b"m1"), acks=-1)).error_code == 0
        await eventually(lambda: c.leo(B) == 1)
        m1_size = len(c.log_bytes(B))
        answer = await c.produce(A, batch(1, b"m2"), acks=-1)
        assert (answer.error_code, answer.base_offset) == (0, 1)
        assert c.partition(A).high_watermark == 2
        await eventually(lambda: c.leo(B) == 2)
        # power loss: B's m2 was never flushed
        await c.crash(B)
        chop_unflushed_tail(c.log_dir(B), m1_size)
        await c.crash(A)
        assert hw_checkpoint(c.log_dir(A)) == 2
        # B returns first with m1 only, leads epoch 2 and writes m3 at offset 1
        await c.start(B)
        await c.elect(B, 2, (B,), told=(B,))
        assert c.leo(B) == 1 and c.values(B) == [b"m1"]
        answer = await c.produce(B, batch(1, b"m3"), acks=1)
        assert (answer.error_code, answer.base_offset) == (0, 1)
        assert c.epochs(B) == [(1, 0), (2, 1)]
        # A returns with m2 at offset 1, below its checkpointed HW
        await c.start(A)
        assert c.values(A) == [b"m1", b"m2"] and c.epochs(A) == [(1, 0)]
        await c.elect(B, 2, (B,), told=(A,))
        await c.converged(A, B)
        assert c.values(A) == [b"m1", b"m3"]
        assert c.epochs(A) == [(1, 0), (2, 1)]
        # epoch 1 ends at 1 on the leader: m2 went (OffsetForLeaderEpoch or DivergingEpoch)
        assert (A, 1, 1) in seen
        assert cuts == [(A, 2, 1)]
        # and replication goes on in step
        assert (await c.produce(B, batch(2, b"m4"), acks=1)).base_offset == 2
        await c.converged(A, B)
        assert c.partition(A).high_watermark <= c.partition(B).high_watermark

    run(tmp_path, truncate_on_fetch, (A, B), scenario, monkeypatch)


@MODES
def test_kip279_fast_leader_failover_truncates_iteratively(
    tmp_path: Path, truncate_on_fetch: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """KAFKA-6361: X leads epoch 1 with one unreplicated batch; Y leads epoch 2 and
    writes a different, longer suffix; X leads epoch 3 before it ever truncated. Y asks
    for the end of epoch 2, which X never had: X answers (1, 2) - the epoch the offset
    belongs to - and Y, which has no epoch 1, truncates to the end of its own epoch 0 and
    asks again (a bare offset 2 would have kept Y's epoch-2 batch at offset 1 for good)."""
    seen, cuts = record_truncations(monkeypatch)
    X, Y = A, B

    async def scenario(c: Brokers) -> None:
        await c.elect(X, 0, (X, Y), told=(X, Y))
        assert (await c.produce(X, batch(1, b"common"), acks=-1)).error_code == 0
        await eventually(lambda: c.leo(Y) == 1)
        # epoch 1: X alone (Y is not told: its epoch-0 fetches are fenced)
        await c.elect(X, 1, (X,), told=(X,))
        answer = await c.produce(X, batch(1, b"x1"), acks=1)
        assert (answer.error_code, answer.base_offset) == (0, 1)
        # epoch 2: Y leads before X hears of it, and writes another suffix
        await c.elect(Y, 2, (Y,), told=(Y,))
        assert (await c.produce(Y, batch(1, b"y1"), acks=1)).base_offset == 1
        assert (await c.produce(Y, batch(1, b"y2"), acks=1)).base_offset == 2
        assert c.values(X) == [b"common", b"x1"]
        # epoch 3: X leads again, never having truncated (its cache: the epoch-3 start)
        await c.elect(X, 3, (X,), told=(X,))
        assert c.epochs(X) == [(0, 0), (1, 1), (3, 2)]
        assert c.epochs(Y) == [(0, 0), (2, 1)]
        assert (await c.produce(X, batch(2, b"x3"), acks=1)).base_offset == 2
        # Y follows epoch 3
        await c.elect(X, 3, (X,), told=(Y,))
        await c.converged(X, Y)
        assert c.values(Y) == [b"common", b"x1", b"x3", b"x3"]
        assert c.epochs(Y) == [(0, 0), (1, 1), (3, 2)]
        answers = [(epoch, end) for node, epoch, end in seen if node == Y]
        if truncate_on_fetch:
            # DivergingEpoch (1, 2), then a fetch at 1 with last epoch 0 matches
            assert answers == [(1, 2)]
        else:
            # OffsetForLeaderEpoch(2) -> (1, 2), then OffsetForLeaderEpoch(0) -> (0, 1)
            assert answers == [(1, 2), (0, 1)]
        assert b"y1" not in c.log_bytes(Y) and b"y2" not in c.log_bytes(Y)
        assert cuts == [(Y, 3, 1)]
        # a later crash and restart of Y changes nothing
        await c.crash(Y)
        await c.start(Y)
        assert c.epochs(Y) == [(0, 0), (1, 1), (3, 2)]
        await c.elect(X, 3, (X,), told=(Y,))
        assert (await c.produce(X, batch(1, b"x4"), acks=1)).base_offset == 4
        await c.converged(X, Y)

    run(tmp_path, truncate_on_fetch, (X, Y), scenario, monkeypatch)
