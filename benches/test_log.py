"""Log-level benchmarks (figures, not pass/fail): `make bench`.

* Log.append (the Python ``Log`` API, one 16 KiB batch per call as a producer sends it)
  against the bare native ``Segment.append`` of the same batches: the Python overhead.
* Sequential reads through ``Log.read`` + ``FetchDataInfo.read_bytes`` (1 MiB fetches).
* Recovery of a whole log after an unclean shutdown (``Log.load(recover_from=0)``).

Pure-backend runs use smaller logs; every figure is a throughput from a median.
"""

from __future__ import annotations

import itertools
import os
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kafkacore.config import LogConfig
from kafkacore.log import Log
from kafkacore.native import load_backend

MiB = 1024 * 1024
CONFIG = LogConfig({"segment.bytes": 256 * MiB})


def info(benchmark: Any, op: str, impl: str, amount: int) -> None:
    benchmark.extra_info.update({"op": op, "impl": impl, "amount": amount, "unit": "bytes"})


def producer_batch(backend: ModuleType) -> bytes:
    body = os.urandom(8000).hex().encode()  # 16,000 bytes of text
    recs = [
        (i, 1_700_000_000_000 + i, b"k%d" % i, body[i * 1000 : (i + 1) * 1000], [])
        for i in range(16)
    ]
    return bytes(backend.build_batch(recs))


def _total(backend_name: str) -> int:
    return 128 * MiB if backend_name == "native" else 4 * MiB


def test_log_append(benchmark: Any, backend: ModuleType, backend_name: str, tmp_path: Path) -> None:
    batch = producer_batch(backend)
    count = _total(backend_name) // len(batch)
    n = itertools.count()
    done: list[Log] = []

    def setup() -> tuple[tuple[Any, ...], dict[str, Any]]:
        for old in done:  # closing (fsync) is not part of the timed appends
            old.close()
            shutil.rmtree(old.dir)
        done.clear()
        log = Log(tmp_path / f"t-{next(n)}", CONFIG, backend=backend)
        done.append(log)
        return (log,), {}

    def run(log: Log) -> None:
        for _ in range(count):
            log.append(batch, 0)

    info(
        benchmark,
        "log append 16KiB batches (Log vs bare Segment)",
        backend_name,
        count * len(batch),
    )
    benchmark.pedantic(run, setup=setup, rounds=3)


def test_bare_segment_append(benchmark: Any, tmp_path: Path) -> None:
    native = load_backend("native")
    batch = producer_batch(native)
    count = _total("native") // len(batch)
    n = itertools.count()
    done: list[Any] = []

    def setup() -> tuple[tuple[Any, ...], dict[str, Any]]:
        for old in done:  # closing (fsync) is not part of the timed appends
            old.delete()
        done.clear()
        d = tmp_path / f"s-{next(n)}"
        d.mkdir()
        seg = native.Segment(str(d), 0)
        done.append(seg)
        return (seg,), {}

    def run(seg: Any) -> None:
        for _ in range(count):
            seg.append(batch, partition_leader_epoch=0)

    info(
        benchmark,
        "log append 16KiB batches (Log vs bare Segment)",
        "bare native Segment",
        count * len(batch),
    )
    benchmark.pedantic(run, setup=setup, rounds=3)


def _write_log(directory: Path, total: int) -> tuple[Path, int]:
    native = load_backend("native")
    batch = producer_batch(native)
    log = Log(directory, LogConfig({"internal.segment.bytes": 32 * MiB}), backend=native)
    for _ in range(total // len(batch)):
        log.append(batch, 0)
    size = log.size
    log.close()
    return directory, size


@pytest.fixture
def written_log(backend_name: str, tmp_path: Path) -> tuple[Path, int]:
    return _write_log(tmp_path / "r-0", _total(backend_name))


@pytest.fixture
def same_size_log(tmp_path: Path) -> tuple[Path, int]:
    """Reads are compared on the same 64 MiB log for both backends."""
    return _write_log(tmp_path / "r-0", 64 * MiB)


def test_log_read(
    benchmark: Any, backend: ModuleType, backend_name: str, same_size_log: tuple[Path, int]
) -> None:
    directory, size = same_size_log
    log = Log.load(directory, LogConfig({"internal.segment.bytes": 32 * MiB}), backend=backend)

    def run() -> None:
        offset, end = 0, log.log_end_offset
        while offset < end:
            region = log.read(offset, MiB)
            data = region.read_bytes()
            # Next offset: after the last batch returned (its header says where it ends).
            last = backend.batch_header(data, region.length - _last_batch_size(data))
            offset = last[0] + last[6] + 1

    info(benchmark, "log read 1MiB fetches", backend_name, size)
    benchmark.pedantic(run, rounds=3)
    log.close()


def _last_batch_size(data: bytes) -> int:
    pos = 0
    while True:
        size = int.from_bytes(data[pos + 8 : pos + 12], "big") + 12
        if pos + size >= len(data):
            return size
        pos += size


def test_log_recovery(
    benchmark: Any, backend: ModuleType, backend_name: str, written_log: tuple[Path, int]
) -> None:
    directory, size = written_log
    config = LogConfig({"internal.segment.bytes": 32 * MiB})

    def run() -> None:
        log = Log.load(directory, config, backend=backend, recover_from=0)
        assert log.log_end_offset > 0
        log.close()

    info(benchmark, "log recovery (unclean shutdown)", backend_name, size)
    benchmark.pedantic(run, rounds=3 if backend_name == "native" else 1)


def _compacted_log(directory: Path, backend: ModuleType, total: int) -> tuple[Log, int]:
    """A compacted log of ``total`` bytes: 100-record batches over 50k keys (so most
    records are superseded), in 8 segments; the active (last) one stays uncleaned."""
    native = load_backend("native")
    config = LogConfig(
        {
            "cleanup.policy": "compact",
            "internal.segment.bytes": total // 8,
            "delete.retention.ms": 0,
        }
    )
    log = Log(directory, config, backend=backend)
    value = b"v" * 100
    key = 0
    while log.size < total:
        recs = [
            (i, 1_700_000_000_000, b"key-%d" % ((key + i) % 50_000), value, []) for i in range(100)
        ]
        key += 100
        log.append(native.build_batch(recs), 0)
    return log, log.size


def test_compaction(benchmark: Any, backend: ModuleType, backend_name: str, tmp_path: Path) -> None:
    from kafkacore.log.cleaner import LogCleaner

    total = 64 * MiB if backend_name == "native" else 4 * MiB
    n = itertools.count()

    def setup() -> tuple[tuple[Any, ...], dict[str, Any]]:
        log, _ = _compacted_log(tmp_path / f"compact-{next(n)}", backend, total)
        return (log,), {}

    def run(log: Log) -> None:
        stats = LogCleaner(lambda: [log]).clean(log, force=True)
        assert stats is not None

    sample, size = _compacted_log(tmp_path / "compact-99", backend, total)
    sample.close()
    info(benchmark, "log compaction (cleaner round)", backend_name, size)
    benchmark.pedantic(run, setup=setup, rounds=3 if backend_name == "native" else 1)
