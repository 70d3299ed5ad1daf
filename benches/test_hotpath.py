"""Hot-path benchmarks (figures, not pass/fail): `make bench`.

The pure backend runs smaller inputs where the native size would take minutes; every
figure is a throughput (bytes or calls per second from the median), so the ratio is fair.
Reference limits in the same run: google-crc32c on the same buffers, and a plain
sequential write of the same bytes to the same disk.
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

KiB, MiB = 1024, 1024 * 1024


def info(benchmark: Any, op: str, impl: str, amount: int, unit: str = "bytes") -> None:
    benchmark.extra_info.update({"op": op, "impl": impl, "amount": amount, "unit": unit})


def payload(n: int, seed: int = 7) -> bytes:
    rnd = random.Random(seed)
    # Log-like, compressible text: what a broker mostly stores.
    words = [b"GET", b"/api/v1/orders", b"200", b"user=%d", b"latency_ms=", b"INFO", b"ERROR"]
    out = bytearray()
    while len(out) < n:
        out += rnd.choice(words) + b" " + str(rnd.randint(0, 99999)).encode() + b" "
    return bytes(out[:n])


# ------------------------------------------------------------------ CRC32C


@pytest.mark.parametrize("size", [1 * KiB, 64 * KiB, 1 * MiB], ids=["1KiB", "64KiB", "1MiB"])
def test_crc32c(benchmark: Any, backend: ModuleType, backend_name: str, size: int) -> None:
    if backend_name == "pure":
        size = min(size, 64 * KiB)  # table-driven Python: ~MB/s
    data = payload(size)
    info(
        benchmark,
        f"crc32c {size // KiB if size < MiB else size // MiB}{'KiB' if size < MiB else 'MiB'}",
        backend_name,
        size,
    )
    benchmark(backend.crc32c, data)


@pytest.mark.parametrize("size", [1 * KiB, 64 * KiB, 1 * MiB], ids=["1KiB", "64KiB", "1MiB"])
def test_crc32c_google(benchmark: Any, size: int) -> None:
    import google_crc32c

    data = payload(size)
    info(
        benchmark,
        f"crc32c {size // KiB if size < MiB else size // MiB}{'KiB' if size < MiB else 'MiB'}",
        "google-crc32c",
        size,
    )
    benchmark(google_crc32c.value, data)


# ------------------------------------------------------------------ batches

BATCH_CASES = [
    (100, 100, 0),
    (100, 1024, 0),
    (100, 100, 3),
    (100, 1024, 3),
    (100, 100, 4),
    (100, 1024, 4),
]
CODEC_NAME = {0: "none", 3: "lz4", 4: "zstd"}


def _records(n: int, size: int) -> list[tuple[int, int, bytes, bytes, list[tuple[str, bytes]]]]:
    body = payload(n * size)
    return [
        (i, 1_700_000_000_000 + i, b"key-%d" % i, body[i * size : (i + 1) * size], [])
        for i in range(n)
    ]


@pytest.mark.parametrize("n,size,codec", BATCH_CASES)
def test_batch_build(
    benchmark: Any, backend: ModuleType, backend_name: str, n: int, size: int, codec: int
) -> None:
    recs = _records(n, size)
    info(benchmark, f"build {n}x{size}B {CODEC_NAME[codec]}", backend_name, n * size)
    benchmark(backend.build_batch, recs, compression=codec)


@pytest.mark.parametrize("n,size,codec", BATCH_CASES)
def test_batch_validate(
    benchmark: Any, backend: ModuleType, backend_name: str, n: int, size: int, codec: int
) -> None:
    data = backend.build_batch(_records(n, size), compression=codec)
    info(benchmark, f"validate {n}x{size}B {CODEC_NAME[codec]}", backend_name, n * size)
    benchmark(backend.validate_batch, data)


# ------------------------------------------------------------------ segment append


def _batch_16k(backend: ModuleType) -> bytes:
    return backend.build_batch(_records(16, 1000))  # ~16 KiB, uncompressed


def test_segment_append(
    benchmark: Any, backend: ModuleType, backend_name: str, tmp_path: Path
) -> None:
    batch = _batch_16k(backend)
    total = 256 * MiB if backend_name == "native" else 4 * MiB
    count = total // len(batch)
    counter = iter(range(10**6))
    done: list[Any] = []

    def setup() -> tuple[tuple[Any, ...], dict[str, Any]]:
        # Close (fsync) and remove the previous round's segment outside the timed run:
        # the appends are measured, as the plain write() reference is (no fsync either).
        for old in done:
            old.delete()
        done.clear()
        d = tmp_path / f"s{next(counter)}"
        d.mkdir()
        seg = backend.Segment(str(d), 0)
        done.append(seg)
        return (seg,), {}

    def run(seg: Any) -> None:
        for _ in range(count):
            seg.append(batch)

    info(benchmark, "segment append 16KiB batches", backend_name, count * len(batch))
    benchmark.pedantic(run, setup=setup, rounds=3 if backend_name == "native" else 2)


def test_sequential_write_reference(benchmark: Any, tmp_path: Path) -> None:
    batch = _batch_16k(__import__("kafkacore.native", fromlist=["x"]).load_backend("native"))
    count = 256 * MiB // len(batch)
    counter = iter(range(10**6))

    def run() -> None:
        path = tmp_path / f"w{next(counter)}"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        for _ in range(count):
            os.write(fd, batch)
        os.close(fd)
        os.unlink(path)

    info(benchmark, "segment append 16KiB batches", "plain write()", count * len(batch))
    benchmark.pedantic(run, rounds=3)


# ------------------------------------------------------------------ index lookups

_FULL: dict[str, tuple[str, int, int]] = {}


def _full_index_segment(tmp_root: Path, kind: str) -> tuple[str, int, int]:
    """A segment whose 10 MiB offset index (kind="offset") or time index (kind="time") is
    full, written once by the native backend; both backends open the same files."""
    if kind in _FULL:
        return _FULL[kind]
    from kafkacore.native import load_backend

    native = load_backend("native")
    d = tmp_root / f"full-{kind}"
    d.mkdir()
    seg = native.Segment(str(d), 0, index_interval_bytes=0)
    chunk = []
    i = 0
    while not seg.index_is_full:
        ts = 1_700_000_000_000 + (i if kind == "time" else 0)
        chunk.append(native.build_batch([(0, ts, None, b"x", [])]))
        i += 1
        if len(chunk) == 4096:
            try:
                seg.append(b"".join(chunk))
            except Exception:
                for b in chunk:
                    if seg.index_is_full:
                        break
                    seg.append(b)
            chunk = []
    last_ts = seg.max_timestamp
    n = seg.next_offset
    seg.close()
    _FULL[kind] = (str(d), n, last_ts)
    return _FULL[kind]


def test_offset_lookup(
    benchmark: Any, backend: ModuleType, backend_name: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    d, n, _ = _full_index_segment(tmp_path_factory.getbasetemp(), "offset")
    seg = backend.Segment(d, 0, index_interval_bytes=0)
    assert len(seg.offset_index()) * 8 >= 10 * MiB - 8
    targets = [random.Random(1).randrange(n) for _ in range(1)]
    info(benchmark, "offset lookup, full 10 MiB index", backend_name, 1, "calls")
    benchmark(seg.lookup_index, targets[0])


def test_timestamp_lookup(
    benchmark: Any, backend: ModuleType, backend_name: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    d, _, last_ts = _full_index_segment(tmp_path_factory.getbasetemp(), "time")
    seg = backend.Segment(d, 0, index_interval_bytes=0)
    assert (len(seg.time_index()) + 1) * 12 >= 10 * MiB - 12
    target = 1_700_000_000_000 + (last_ts - 1_700_000_000_000) // 3
    info(benchmark, "timestamp lookup, full 10 MiB time index", backend_name, 1, "calls")
    benchmark(seg.lookup_time_index, target)


# ------------------------------------------------------------------ recovery


def test_recover(benchmark: Any, backend: ModuleType, backend_name: str, tmp_path: Path) -> None:
    from kafkacore.native import load_backend

    native = load_backend("native")
    total = 256 * MiB if backend_name == "native" else 8 * MiB
    batch = _batch_16k(native)
    seg = native.Segment(str(tmp_path), 0)
    for _ in range(total // len(batch)):
        seg.append(batch)
    size = seg.size
    seg.close()

    def run() -> None:
        s = backend.Segment(str(tmp_path), 0)
        assert s.recover() == 0
        s.close()

    info(benchmark, "recover() segment", backend_name, size)
    benchmark.pedantic(run, rounds=3 if backend_name == "native" else 1)
