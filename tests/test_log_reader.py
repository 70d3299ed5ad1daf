"""The read-only segment reader (``kafkacore.log.reader.SegmentReader``) against the
broker's own offset index and a plain walk of the ``.log``: its index lookup is the
library's largest-lower-bound search, on an open log (preallocated, zero-padded indexes)
and on a closed one (trimmed indexes)."""

from __future__ import annotations

import os
import struct
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from kafkacore.config import LogConfig
from kafkacore.log import Log
from kafkacore.log.reader import SegmentReader, written_entries
from kafkacore.pure.index import OffsetIndex
from kafkacore.record import build_batch

T0 = 1_700_000_000_000


def _batches(path: str) -> list[tuple[int, int, int]]:
    """``(position, base offset, last offset)`` of every batch of a ``.log``, by walking."""
    data = Path(path).read_bytes()
    out = []
    position = 0
    while position + 61 <= len(data):
        base, length = struct.unpack_from(">qi", data, position)
        delta = struct.unpack_from(">i", data, position + 23)[0]
        out.append((position, base, base + delta))
        position += 12 + length
    return out


def _entries(path: str, base: int) -> list[tuple[int, int]]:
    data = Path(path).read_bytes()
    out = []
    for at in range(0, len(data) - len(data) % 8, 8):
        relative, position = struct.unpack_from(">II", data, at)
        if (relative, position) == (0, 0):
            break
        out.append((base + relative, position))
    return out


def _check_segment(directory: str, base: int, trimmed: bool) -> None:
    prefix = os.path.join(directory, f"{base:020d}")
    batches = _batches(prefix + ".log")
    entries = _entries(prefix + ".index", base)
    assert batches, "a segment without batches"
    last = batches[-1][2]
    with SegmentReader(directory, base) as reader:
        assert reader.index_entries == len(entries)
        broker_index = (
            OffsetIndex(prefix + ".index", base, os.path.getsize(prefix + ".index"))
            if trimmed
            else None
        )
        try:
            for target in range(base - 1, last + 3):
                lower = [p for o, p in entries if o <= target]
                assert reader.index_position(target) == (lower[-1] if lower else 0), target
                if broker_index is not None:
                    assert reader.index_position(target) == broker_index.lookup(target)[1]
                holding = [p for p, _b, end in batches if end >= target]
                assert reader.locate(target) == (holding[0] if holding else None), target
        finally:
            if broker_index is not None:
                broker_index.close()


@given(
    sizes=st.lists(st.integers(1, 6), min_size=1, max_size=80),
    value_bytes=st.integers(0, 300),
    interval=st.sampled_from([1, 64, 200, 4096]),
)
def test_segment_reader_index_lookup_matches_the_broker_index(
    tmp_path_factory: object, sizes: list[int], value_bytes: int, interval: int
) -> None:
    root = tmp_path_factory.mktemp("reader")  # type: ignore[attr-defined]
    directory = str(root / "t-0")
    config = LogConfig({"internal.segment.bytes": "4000", "index.interval.bytes": str(interval)})
    log = Log(directory, config)
    offset = 0
    for n in sizes:
        records = [(offset + k, T0 + offset + k, b"k", b"v" * value_bytes, []) for k in range(n)]
        log.append_as_follower(build_batch(records))
        offset += n
    bases = [s.base_offset for s in log.segments]
    for base in bases:  # open: the active segment's index is preallocated
        _check_segment(directory, base, trimmed=False)
    log.close()
    for base in bases:  # closed: every index trimmed to its entries
        _check_segment(directory, base, trimmed=True)


def test_written_entries_stops_at_the_first_zero_entry(tmp_path: Path) -> None:
    path = tmp_path / "x.index"
    entries = b"".join(struct.pack(">II", i + 1, 100 * (i + 1)) for i in range(5))
    for padding in (0, 8, 8 * 1000):
        path.write_bytes(entries + bytes(padding))
        fd = os.open(path, os.O_RDONLY)
        try:
            assert written_entries(fd, 8) == 5
        finally:
            os.close(fd)
    path.write_bytes(b"")
    fd = os.open(path, os.O_RDONLY)
    try:
        assert written_entries(fd, 8) == 0
    finally:
        os.close(fd)
