"""kafkacore.pure on hostile bytes: every failure is a kafkacore error (or ValueError for
a bad argument), never an IndexError or struct.error from deep inside; recovery always
leaves a log that recovers to itself."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from kafkacore.errors import CorruptRecordError, KafkaCoreError
from kafkacore.pure import (
    Segment,
    batch_header,
    batch_records,
    build_batch,
    build_legacy,
    decompress,
    legacy_header,
    legacy_records,
    validate_batch,
)

READERS = [batch_header, validate_batch, batch_records, legacy_header, legacy_records]


def _seed_batches() -> list[bytes]:
    recs: list[Any] = [(3, 10, b"k", b"v" * 30, [("h", b"x")]), (5, 12, None, b"w", [])]
    out = [build_batch(recs, compression=c) for c in range(5)]
    out += [build_legacy([(*r[:4], []) for r in recs], m, c) for m in (0, 1) for c in range(4)]
    return out


SEEDS = _seed_batches()


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 4))):
        action = draw(st.sampled_from(["flip", "cut", "insert"]))
        if action == "flip" and data:
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
        elif action == "cut" and data:
            del data[draw(st.integers(0, len(data) - 1)) :]
        else:
            at = draw(st.integers(0, len(data)))
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
    return bytes(data)


@given(st.one_of(st.binary(max_size=300), mutated()), st.integers(0, 20))
def test_readers_only_raise_kafkacore_errors(data: bytes, pos: int) -> None:
    for reader in READERS:
        with contextlib.suppress(KafkaCoreError):
            reader(data, pos)


@given(st.integers(0, 4), st.binary(max_size=200))
def test_decompress_garbage(codec: int, data: bytes) -> None:
    with contextlib.suppress(CorruptRecordError):
        decompress(codec, data)


# a batch whose base offset (outside its CRC) was flipped to 2^24: it survives recovery
_FAR_OFFSET = (1 << 24).to_bytes(8, "big") + SEEDS[0][8:]


@given(st.lists(st.one_of(st.sampled_from(SEEDS), mutated(), st.binary(max_size=40)), max_size=6))
@example(pieces=[_FAR_OFFSET])
def test_any_log_recovers_to_a_fixed_point(
    tmp_path_factory: pytest.TempPathFactory, pieces: list[bytes]
) -> None:
    d: Path = tmp_path_factory.mktemp("fuzz")
    (d / f"{0:020d}.log").write_bytes(b"".join(pieces))
    seg = Segment(str(d), 0, index_interval_bytes=40)
    for probe in (lambda: seg.translate_offset(4), lambda: seg.find_offset_by_timestamp(11)):
        with contextlib.suppress(KafkaCoreError):
            probe()
    seg.recover()
    seg.sanity_check()
    # the base offset is outside every CRC (v2 and legacy alike): a mutated one survives
    # recovery, so the next offset can be ~2^60 - the offsets from the start and around
    # the end, not all of them
    ends = range(max(0, seg.next_offset - 64), seg.next_offset + 2)
    for offset in sorted({*range(min(seg.next_offset, 64)), *ends}):
        seg.translate_offset(offset)
        seg.read(offset, 100)
    state = (seg.size, seg.next_offset, seg.offset_index(), seg.time_index())
    seg.close()
    seg = Segment(str(d), 0, index_interval_bytes=40)
    assert seg.recover() == 0
    assert (seg.size, seg.next_offset, seg.offset_index(), seg.time_index()) == state
    seg.close()
