"""Seed corpora for the cargo-fuzz targets in ``rust/fuzz``, generated from real batches.

Every seed is built by the pure-Python encoder (:mod:`kafkacore.pure`): RecordBatch v2
in each codec (plain, transactional, control, with headers and deletion horizons),
legacy message sets v0/v1, compressed streams of each codec, and the ``.log``,
``.index`` and ``.timeindex`` files a segment writes. Each target reads some parameters
from the front of its input (see ``rust/fuzz/src/lib.rs``, ``Params``); the seeds carry
them in the same layout. Nothing binary is committed: ``make fuzz`` runs
``python -m tests.fuzz.seeds <dir>`` (or this file as a script) before fuzzing.

Usage: ``python tests/fuzz/seeds.py rust/fuzz/corpus`` writes ``<dir>/<target>/seed-N``.
"""

from __future__ import annotations

import hashlib
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

from kafkacore import pure

__all__ = ["batches", "legacy_sets", "seeds", "segment_files", "write"]

TARGETS = ("batch_v2", "legacy", "decompress", "columns", "index", "segment", "cleaner")


def _records(rnd: random.Random, n: int, first: int = 0) -> list[Any]:
    out = []
    offset = first
    for i in range(n):
        key = None if rnd.random() < 0.2 else f"k{rnd.randint(0, 5)}".encode()
        value = None if rnd.random() < 0.1 else rnd.randbytes(rnd.randint(0, 60))
        headers = [("h", b"x"), ("n", None)][: rnd.randint(0, 2)]
        out.append((offset, 1_700_000_000_000 + i * 7, key, value, headers))
        offset += rnd.choice((1, 1, 2))
    return out


def batches(rnd: random.Random) -> list[bytes]:
    """v2 batches: every codec, plain, idempotent, transactional, control, tombstones."""
    out = []
    for codec in range(5):
        out.append(pure.build_batch(_records(rnd, 3), compression=codec))
        out.append(
            pure.build_batch(
                _records(rnd, 5, 100),
                compression=codec,
                producer_id=4242,
                producer_epoch=1,
                base_sequence=0,
                transactional=codec % 2 == 0,
                timestamp_type=codec % 2,
            )
        )
    out.append(
        pure.build_batch(
            [(0, 5, b"\x00\x00\x00\x00", b"\x00\x00\x00\x00\x00\x00", [])],
            control=True,
            transactional=True,
            producer_id=7,
        )
    )
    out.append(pure.build_batch([(9, 5, b"k", None, [])], delete_horizon_ms=1000))
    return out


def legacy_sets(rnd: random.Random) -> list[bytes]:
    out = []
    for magic in (0, 1):
        for codec in range(4):
            recs = [(*r[:4], []) for r in _records(rnd, 3)]
            out.append(pure.build_legacy(recs, magic, codec, timestamp_type=0))
    return out


def segment_files(rnd: random.Random) -> tuple[bytes, bytes, bytes]:
    """``(.log, .index, .timeindex)`` of a segment holding a few batches."""
    with tempfile.TemporaryDirectory() as d:
        seg = pure.Segment(d, 0, index_interval_bytes=40, max_index_size=1024)
        for _ in range(6):
            seg.append(pure.build_batch(_records(rnd, 2), compression=rnd.randint(0, 4)))
        seg.seal()
        files = (Path(seg.log_path), Path(seg.index_path), Path(seg.time_index_path))
        data = tuple(p.read_bytes() for p in files)
        seg.close()
    return data[0], data[1], data[2]


def seeds(seed: int = 0) -> dict[str, list[bytes]]:
    """The seeds of every target, by target name (deterministic for one ``seed``)."""
    rnd = random.Random(seed)
    v2 = batches(rnd)
    legacy = legacy_sets(rnd)
    log, index, timeindex = segment_files(rnd)
    small_zero = b"\x08"  # Params.small_i64: selector 8 -> 0
    out: dict[str, list[bytes]] = {t: [] for t in TARGETS}
    out["batch_v2"] = [*v2, b"".join(v2[:3])]
    out["legacy"] = legacy
    for codec in range(5):
        data = rnd.randbytes(50) + b"abc" * 200
        out["decompress"].append(bytes([codec]) + pure.compress(codec, data))
        out["decompress"].append(bytes([codec | 0x40]) + pure.compress(codec, data))
    for blob in legacy[4:]:  # magic 1 compressed wrappers (null key): the value from byte 34
        codec = blob[17] & 7
        out["decompress"].append(bytes([0x80 | 0x08 | codec]) + blob[34:])
    # columns: flags (headers, end = max), start offset, then batches.
    out["columns"] = [bytes([3]) + small_zero + b"".join(v2[i : i + 3]) for i in range(0, 9, 3)]
    out["columns"].append(bytes([3]) + small_zero + b"".join(legacy))
    # index: base, three targets (small, i64, small), log size, max size, file bytes.
    params = small_zero + b"\x09\x03" + (50).to_bytes(8, "big") + b"\x0c" + b"\x01\x40" + b"\x20"
    out["index"] = [params + index, params + timeindex, params + index[:-3]]
    # segment: base, index length, time index length, interval, targets, then the files.
    head = bytes([0, len(index), len(timeindex), 2]) + b"\x09\x0d" + (3).to_bytes(8, "big")
    out["segment"] = [head + index + timeindex + log, head + index + timeindex + log[:-10]]
    # cleaner: capacity, start, end, now, retention, round end, producer id, its offset.
    cparams = b"\x08" + small_zero + b"\x01\x20" + b"\x01\x20" + b"\x08" * 4 + b"\x01\x03"
    out["cleaner"] = [cparams + b"".join(v2[i : i + 4]) for i in range(0, 12, 4)]
    return out


def write(root: Path, seed: int = 0) -> dict[str, int]:
    """Write the seeds under ``root/<target>/`` (named by content hash); counts by target."""
    counts = {}
    for target, blobs in seeds(seed).items():
        d = root / target
        d.mkdir(parents=True, exist_ok=True)
        for blob in blobs:
            (d / f"seed-{hashlib.sha1(blob).hexdigest()[:16]}").write_bytes(blob)
        counts[target] = len(blobs)
    return counts


if __name__ == "__main__":
    for name, n in write(Path(sys.argv[1] if len(sys.argv) > 1 else "rust/fuzz/corpus")).items():
        print(f"{name}: {n} seeds")
