"""Differential fuzzing of the record parsers: the native backend and its pure-Python
twin on the same mutated real batches must give the same answer - the same result, or
an exception of the same class.

The mutations (:mod:`fuzz.frames`: byte flips, cuts, inserts, duplicated slices, huge
int32 lengths, huge varints) are followed, most of the time, by recomputing the CRC of
the first batch, so that they reach the record decoder behind the checksum (a plain
flip only ever tests the CRC check). Readers: batch and legacy headers, validation and
records, the Arrow column decoder, the cleaner's key map and filter, decompression, and
segment recovery on the mutated bytes as a ``.log``.

Long runs of the native parsers alone are the cargo-fuzz targets of ``make fuzz``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzz.frames import apply, mutation_ops
from fuzz.seeds import batches, legacy_sets
from kafkacore import errors
from kafkacore import pure as pure_backend
from kafkacore.pure import crc32, crc32c
from support.budget import examples

_rnd = random.Random(14)
SEEDS = batches(_rnd) + legacy_sets(_rnd)


def outcome(fn: Callable[[], Any]) -> Any:
    try:
        return ("ok", fn())
    except (errors.KafkaCoreError, ValueError) as exc:
        return ("raised", type(exc).__name__)


def fix_crc(buf: bytearray) -> None:
    """Recompute the CRC of the batch or message at position 0 over what is there."""
    if len(buf) < 21:
        return
    end = min(len(buf), 12 + int.from_bytes(buf[8:12], "big", signed=True))
    magic = buf[16]
    if magic == 2 and end > 21:
        buf[17:21] = crc32c(bytes(buf[21:end])).to_bytes(4, "big")
    elif magic in (0, 1) and end > 16:
        buf[12:16] = crc32(bytes(buf[16:end])).to_bytes(4, "big")


@st.composite
def mutated_batches(draw: st.DrawFn) -> bytes:
    first = draw(st.sampled_from(SEEDS))
    tail = draw(st.sampled_from([b"", *SEEDS[:4]]))
    buf = bytearray(apply(first, draw(mutation_ops()), keep_prefix=draw(st.sampled_from([0, 17]))))
    if draw(st.integers(0, 3)) > 0:
        fix_crc(buf)
    return bytes(buf) + tail


@settings(max_examples=examples(250), deadline=None)
@given(mutated_batches())
def test_readers_agree(native: ModuleType, pure: ModuleType, buf: bytes) -> None:
    for name in (
        "batch_header",
        "validate_batch",
        "batch_records",
        "legacy_header",
        "legacy_records",
    ):
        got = outcome(lambda n=name: getattr(native, n)(buf))
        assert got == outcome(lambda n=name: getattr(pure, n)(buf)), name
    for args in ((buf, 0, 2**62, True), (buf, 3, 104, False)):
        assert outcome(lambda a=args: native.decode_columns(*a)) == outcome(
            lambda a=args: pure.decode_columns(*a)
        )


def retained(data: bytes) -> list[Any]:
    """The filter's output as headers (without length and CRC) and records: a rebuilt
    compressed batch is the same records, its codec's bytes may differ by backend."""
    out, pos = [], 0
    while pos < len(data):
        header = pure_backend.batch_header(data, pos)
        out.append((header[:1] + header[2:4] + header[5:], pure_backend.batch_records(data, pos)))
        pos += 12 + header[1]
    return out


@settings(max_examples=examples(120), deadline=None)
@given(mutated_batches(), st.integers(1, 6), st.sampled_from([-1, 0, 102]))
def test_cleaner_agrees(
    native: ModuleType, pure: ModuleType, buf: bytes, capacity: int, round_end: int
) -> None:
    def run(backend: ModuleType) -> Any:
        key_map = backend.KeyMap(capacity)
        added = outcome(lambda: key_map.add_batches(buf, 0, 2**62))
        kept = outcome(
            lambda: list(
                backend.filter_batches(
                    buf,
                    key_map,
                    now_ms=1_700_000_000_000,
                    delete_retention_ms=0,
                    round_end_offset=round_end,
                    producer_last_offsets={4242: 103},
                )
            )
        )
        if kept[0] == "ok":
            kept[1][0] = retained(kept[1][0])
        return added, kept

    assert run(native) == run(pure)


@settings(max_examples=examples(150), deadline=None)
@given(st.integers(0, 4), st.binary(max_size=300), mutation_ops())
def test_decompress_agrees(
    native: ModuleType, pure: ModuleType, codec: int, data: bytes, ops: Any
) -> None:
    bad = apply(pure.compress(codec, data), ops)
    assert outcome(lambda: native.decompress(codec, bad)) == outcome(
        lambda: pure.decompress(codec, bad)
    )


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(mutated_batches(), min_size=1, max_size=3))
def test_recovery_agrees(
    native: ModuleType,
    pure: ModuleType,
    tmp_path_factory: pytest.TempPathFactory,
    logs: list[bytes],
) -> None:
    log = b"".join(logs)
    results = []
    for backend in (native, pure):
        d: Path = tmp_path_factory.mktemp(backend.__name__.rsplit(".", 1)[-1])
        (d / f"{0:020d}.log").write_bytes(log)
        seg = backend.Segment(str(d), 0, index_interval_bytes=40)
        got = [
            outcome(seg.recover),
            outcome(seg.sanity_check),
            outcome(lambda s=seg: s.translate_offset(3)),
        ]
        seg.close()
        got.append(sorted((p.name, p.read_bytes()) for p in d.iterdir()))
        results.append(got)
    assert results[0] == results[1]
