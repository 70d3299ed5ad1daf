"""Offline log directories (Kafka's ``LogDirFailureChannel`` and ``handleLogDirFailure``):
an I/O error in one log directory takes it offline - its partitions answer
KAFKA_STORAGE_ERROR, the broker keeps serving the other directory, nothing half-written is
counted, and a restart after the space is freed recovers every acknowledged record.

The full disk is real: a small tmpfs that the test mounts and fills (we run as root);
fsync and checkpoint errors are injected by monkeypatching."""

from __future__ import annotations

import asyncio
import errno
import os
import struct
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kafkacore.config import BrokerConfig, LogConfig
from kafkacore.errors import StorageIOError
from kafkacore.log import CleanShutdownFile, LogDirError, LogManager, TopicPartition
from kafkacore.log import log as log_module
from kafkacore.log import segments as segments_module
from kafkacore.log.checkpoints import OffsetCheckpointFile
from kafkacore.native import load_backend
from kafkacore.protocol import APIS_BY_NAME, ErrorCode
from kafkacore.server import KafkaServer
from support.brokers import Broker
from support.raw_client import RawClient, fetch_request, produce_request
from support.tmpfs import fill, tmpfs

T0 = 1_700_000_000_000
BROKER = {"node.id": 1, "log.initial.task.delay.ms": 3_600_000}
TP0 = TopicPartition("t", 0)
TP1 = TopicPartition("t", 1)


def batch(backend: ModuleType, n: int = 4, size: int = 200) -> bytes:
    records = [(i, T0, b"k%d" % i, os.urandom(size), []) for i in range(n)]
    return bytes(backend.build_batch(records))


def record_offsets(log: Any, backend: ModuleType) -> list[int]:
    """The offsets of every record of ``log``, each batch CRC-checked."""
    offsets: list[int] = []
    while True:
        start = offsets[-1] + 1 if offsets else 0
        if start >= log.log_end_offset:
            return offsets
        data = log.read(start, 1 << 30).read_bytes()
        assert data, f"nothing at offset {start}"
        pos = 0
        while pos < len(data):
            backend.validate_batch(data, pos)
            offsets += [r[0] for r in backend.batch_records(data, pos)]
            pos += 12 + struct.unpack_from(">i", data, pos + 8)[0]


def manager(dirs: list[Path], backend: ModuleType) -> LogManager:
    broker = BrokerConfig(BROKER)
    m = LogManager(
        dirs,
        broker,
        backend=backend,
        default_config=LogConfig({}, broker),
        progress=None,
        producer_state=True,
    )
    m.startup()
    return m


def two_dirs_with_a_batch_each(
    tmp_path: Path, backend: ModuleType
) -> tuple[list[Path], LogManager]:
    """A manager of two log dirs, ``a`` and ``b``, with t-0 and t-1 created in turn (the
    manager puts them in a and b) and a batch appended to each."""
    dirs = [tmp_path / "a", tmp_path / "b"]
    logs = manager(dirs, backend)
    logs.get_or_create_log("t", 0).append_as_leader(batch(backend), 0)
    logs.get_or_create_log("t", 1).append_as_leader(batch(backend), 0)
    return dirs, logs


# -- the log manager ---------------------------------------------------------------------


def test_a_full_disk_takes_its_log_dir_offline_and_nothing_half_written_counts(
    tmp_path: Path, backend: ModuleType
) -> None:
    normal = tmp_path / "normal"
    with tmpfs(tmp_path / "small") as small:
        logs = manager([normal, small], backend)
        a = logs.get_or_create_log("t", 0)
        b = logs.get_or_create_log("t", 1)
        assert (Path(a.dir).parent, Path(b.dir).parent) == (normal, small)
        for _ in range(20):  # 20 kB: the indexes have their first entries
            a.append_as_leader(batch(backend), 0)
            b.append_as_leader(batch(backend), 0)
        b.flush()
        acked = b.log_end_offset
        fill(small)
        with pytest.raises(StorageIOError):
            for _ in range(100):  # the last page of the segment may take a little more
                b.append_as_leader(batch(backend), 0)
                acked = b.log_end_offset
        assert b.log_end_offset == acked
        assert logs.offline_log_dirs == [str(small)]
        assert logs.failure_channel.has_offline_log_dir(small)
        # the log refuses every write from now on, even one that would fit
        with pytest.raises(StorageIOError):
            b.append_as_leader(batch(backend, 1, 1), 0)
        a.append_as_leader(batch(backend), 0)  # the other directory is fine
        assert logs.handle_log_dir_failure(str(small)) == [TP1]
        assert logs.get_log(TP1) is None
        assert [log.topic_partition for log in logs.all_logs()] == [TP0]
        # a missing log is refused while a directory is offline, unless it is new
        with pytest.raises(StorageIOError, match="offline"):
            logs.get_or_create_log("u", 0)
        assert Path(logs.get_or_create_log("u", 0, is_new=True).dir).parent == normal
        logs.checkpoint_recovery_offsets()  # skips the offline directory
        a_end = a.log_end_offset
        logs.shutdown()
        assert CleanShutdownFile(str(normal)).exists()
        assert not CleanShutdownFile(str(small)).exists()  # recovered at the next start

        (small / "filler").unlink()
        again = manager([normal, small], backend)
        try:
            assert again.offline_log_dirs == []
            assert not again.had_clean_shutdown(small)
            b2 = again.get_log(TP1)
            a2 = again.get_log(TP0)
            assert b2 is not None and a2 is not None
            assert (b2.log_end_offset, a2.log_end_offset) == (acked, a_end)
            offsets = record_offsets(b2, backend)
            assert offsets == list(range(acked))
            b2.append_as_leader(batch(backend), 0)  # writable again
        finally:
            again.shutdown()


def test_an_index_entry_on_a_full_disk_is_an_error_not_a_crash(
    tmp_path: Path, backend: ModuleType
) -> None:
    """The indexes are preallocated sparse and memory-mapped: storing an entry into an
    unbacked page of a full tmpfs would raise SIGBUS. The segment allocates the page with
    a write first, so the append fails with ENOSPC and is undone."""
    with tmpfs(tmp_path / "small") as small:
        logs = manager([small], backend)
        try:
            log = logs.get_or_create_log("t", 0, LogConfig({"index.interval.bytes": 1}))
            log.append_as_leader(batch(backend, 1, 10), 0)  # no index entry yet
            segment = Path(log.segments[0].files.log_path)
            size = segment.stat().st_size
            fill(small)
            # fits in the last page of the .log, but needs the first page of the .index
            with pytest.raises(StorageIOError):
                log.append_as_leader(batch(backend, 1, 10), 0)
            assert log.log_end_offset == 1
            assert segment.stat().st_size == size
            assert logs.offline_log_dirs == [str(small)]
        finally:
            logs.shutdown()


def test_an_fsync_error_takes_the_dir_offline(
    tmp_path: Path, backend: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs = manager([tmp_path / "a", tmp_path / "b"], backend)
    try:
        offline: list[str] = []
        logs.failure_channel.add_listener(offline.append)
        a = logs.get_or_create_log("t", 0)
        b = logs.get_or_create_log("t", 1)
        b.append_as_leader(batch(backend), 0)

        def eio(fd: int) -> None:
            raise OSError(errno.EIO, "Input/output error")

        monkeypatch.setattr(segments_module.os, "fsync", eio)
        with pytest.raises(StorageIOError, match="Input/output error"):
            b.flush()
        monkeypatch.undo()
        assert offline == [str(tmp_path / "b")]
        end = b.log_end_offset
        with pytest.raises(StorageIOError):
            b.append_as_leader(batch(backend), 0)
        assert b.log_end_offset == end
        a.append_as_leader(batch(backend), 0)
        a.flush()
    finally:
        logs.shutdown()


def test_a_checkpoint_error_takes_the_dir_offline_without_raising(
    tmp_path: Path, backend: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    dirs, logs = two_dirs_with_a_batch_each(tmp_path, backend)
    real = OffsetCheckpointFile.write

    def failing(self: OffsetCheckpointFile, entries: Any) -> None:
        if str(dirs[1]) in str(self.path):
            raise StorageIOError(errno.ENOSPC, "No space left on device", str(self.path))
        real(self, entries)

    monkeypatch.setattr(OffsetCheckpointFile, "write", failing)
    logs.checkpoint_recovery_offsets()
    logs.checkpoint_high_watermarks({TP0: 1, TP1: 1})
    assert logs.offline_log_dirs == [str(dirs[1])]
    logs.handle_log_dir_failure(str(dirs[1]))
    logs.shutdown()
    monkeypatch.undo()
    assert CleanShutdownFile(str(dirs[0])).exists()
    assert not CleanShutdownFile(str(dirs[1])).exists()


def test_a_log_dir_failing_to_load_is_offline_and_all_failing_is_fatal(
    tmp_path: Path, backend: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    dirs, logs = two_dirs_with_a_batch_each(tmp_path, backend)
    logs.shutdown()
    real_init = log_module.Log.__init__
    broken = {str(dirs[1])}

    def init(self: Any, directory: Any, *args: Any, **kwargs: Any) -> None:
        if os.path.dirname(os.fspath(directory)) in broken:
            raise OSError(errno.EIO, "Input/output error", os.fspath(directory))
        real_init(self, directory, *args, **kwargs)

    monkeypatch.setattr(log_module.Log, "__init__", init)
    logs = manager(dirs, backend)
    try:
        assert logs.offline_log_dirs == [str(dirs[1])]
        assert [log.topic_partition for log in logs.all_logs()] == [TP0]
    finally:
        logs.shutdown()
    broken.add(str(dirs[0]))
    with pytest.raises(LogDirError, match="all log dirs"):
        manager(dirs, backend)


# -- the broker ----------------------------------------------------------------------------

_DESCRIBE: Any = APIS_BY_NAME["DescribeLogDirs"].request.cls


async def _produce(client: RawClient, partition: int, records: bytes) -> Any:
    response = await client.call("Produce", 9, produce_request("t", partition, records))
    return response.responses[0].partition_responses[0]


async def _fetch_error(client: RawClient, partition: int) -> int:
    response = await client.call("Fetch", 11, fetch_request("t", partition))
    return int(response.responses[0].partitions[0].error_code)


def test_the_broker_answers_storage_error_and_recovers_after_a_restart(tmp_path: Path) -> None:
    backend = load_backend("native")
    normal = tmp_path / "normal"

    def config(small: Path) -> BrokerConfig:
        return BrokerConfig(
            {
                "listeners": "PLAINTEXT://localhost:0",
                "log.dirs": f"{normal},{small}",
                "node.id": 1,
            }
        )

    async def first_run(small: Path) -> tuple[int, int]:
        server = KafkaServer(config(small))
        await server.startup()
        try:
            replicas = server.replicas
            assert replicas is not None
            await asyncio.to_thread(replicas.create_topic, "t", 2)
            p0, p1 = replicas.partition("t", 0), replicas.partition("t", 1)
            assert p0 is not None and p1 is not None
            assert Path(p1.log.dir).parent == small and Path(p0.log.dir).parent == normal
            client = await RawClient.connect(server.bound_port)
            acked = {0: 0, 1: 0}
            for _ in range(20):
                for p in (0, 1):
                    answer = await _produce(client, p, batch(backend))
                    assert answer.error_code == 0
                    acked[p] += 4
            fill(small)
            codes = []
            for _ in range(100):
                answer = await _produce(client, 1, batch(backend))
                codes.append(answer.error_code)
                if answer.error_code != 0:
                    break
                acked[1] += 4
            assert codes[-1] == ErrorCode.KAFKA_STORAGE_ERROR
            await asyncio.wait_for(_until(lambda: replicas.is_offline(TP1)), 10)
            # offline: every produce and fetch of the partition answers KAFKA_STORAGE_ERROR
            answer = await _produce(client, 1, batch(backend, 1, 1))
            assert answer.error_code == ErrorCode.KAFKA_STORAGE_ERROR
            assert await _fetch_error(client, 1) == ErrorCode.KAFKA_STORAGE_ERROR
            # the other directory is served
            assert (await _produce(client, 0, batch(backend))).error_code == 0
            acked[0] += 4
            assert await _fetch_error(client, 0) == 0
            described = await client.call("DescribeLogDirs", 4, _DESCRIBE(topics=None))
            by_dir = {r.log_dir: r for r in described.results}
            assert by_dir[str(small)].error_code == ErrorCode.KAFKA_STORAGE_ERROR
            assert by_dir[str(normal)].error_code == 0
            assert [t.name for t in by_dir[str(normal)].topics] == ["t"]
            client.close()
            assert not server.fatal.is_set()
            return acked[0], acked[1]
        finally:
            await server.shutdown()

    async def second_run(small: Path) -> tuple[int, int, list[int]]:
        server = KafkaServer(config(small))
        await server.startup()
        try:
            replicas = server.replicas
            assert replicas is not None
            p0, p1 = replicas.partition("t", 0), replicas.partition("t", 1)
            assert p0 is not None and p1 is not None
            offsets = record_offsets(p1.log, backend)
            ends = p0.log.log_end_offset, p1.log.log_end_offset
            client = await RawClient.connect(server.bound_port)
            assert (await _produce(client, 1, batch(backend))).error_code == 0  # writable
            client.close()
            return ends[0], ends[1], offsets
        finally:
            await server.shutdown()

    with tmpfs(tmp_path / "small") as small:
        acked0, acked1 = asyncio.run(first_run(small))
        (small / "filler").unlink()
        end0, end1, offsets = asyncio.run(second_run(small))
    assert (end0, end1) == (acked0, acked1)
    assert offsets == list(range(acked1))


async def _until(check: Any) -> None:
    while not check():
        await asyncio.sleep(0.02)


def test_a_broker_whose_every_log_dir_failed_stops_with_status_1(tmp_path: Path) -> None:
    backend = load_backend("native")
    with tmpfs(tmp_path / "small") as small:
        broker = Broker(small, ["num.partitions=1"]).start()
        try:

            async def produce_until_refused() -> list[int]:
                client = await RawClient.connect(broker.port)
                codes = []
                try:
                    for _ in range(200):
                        answer = await _produce(client, 0, batch(backend))
                        codes.append(answer.error_code)
                        if answer.error_code == ErrorCode.KAFKA_STORAGE_ERROR:
                            break
                        if codes.count(0) == 5 and answer.error_code == 0:
                            fill(small)
                        await asyncio.sleep(0.01 if answer.error_code == 0 else 0.2)
                finally:
                    client.close()
                return codes

            codes = asyncio.run(produce_until_refused())
            assert codes[-1] == ErrorCode.KAFKA_STORAGE_ERROR, codes
            proc = broker.proc
            assert proc is not None
            assert proc.wait(20) == 1
            broker.proc, broker.returncode = None, 1
            assert "all log dirs" in broker.log_text()
        finally:
            if broker.running:
                broker.kill()
