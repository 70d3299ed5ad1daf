"""kafkacore.pure.Segment: Kafka's LogSegment over a .log, .index and .timeindex.

Expected index contents are computed here from the contract's rule (one entry for the
batch that finds more than ``index_interval_bytes`` since the last entry), not by the
code under test.
"""

from __future__ import annotations

import bisect
import os
import random
import struct
from pathlib import Path
from typing import Any

import pytest

from kafkacore.errors import (
    CorruptIndexError,
    CorruptRecordError,
    IndexFullError,
    InvalidOffsetError,
    InvalidRecordError,
)
from kafkacore.pure import Segment, batch_header, batch_records, build_batch, build_legacy
from kafkacore.pure import validate_batch as validate

MiB = 1024 * 1024


def recs(first: int, n: int, ts: int = 1000, size: int = 10) -> list[Any]:
    return [(first + i, ts + i, b"k%d" % i, b"v" * size, []) for i in range(n)]


def files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def expected_indexes(
    base: int, batches: list[tuple[int, int, int]], interval: int
) -> tuple[list[tuple[int, int]], list[tuple[int, int]], list[tuple[int, int]]]:
    """The contract's rule over ``(last_offset, size, max_timestamp)`` batches: offset
    entries, time entries while open, and time entries once sealed (plus the final
    ``(max timestamp, its offset)`` when it is greater than the last)."""
    offset_entries: list[tuple[int, int]] = []
    time_entries: list[tuple[int, int]] = []
    since, position = 0, 0
    max_ts, max_off = -1, -1
    for last, size, ts in batches:
        if ts > max_ts:
            max_ts, max_off = ts, last
        if since > interval:
            offset_entries.append((last, position))
            if max_ts > (time_entries[-1][0] if time_entries else -1):
                time_entries.append((max_ts, max_off))
            since = 0
        since += size
        position += size
    sealed = list(time_entries)
    if max_ts > (sealed[-1][0] if sealed else -1):
        sealed.append((max_ts, max_off))
    return offset_entries, time_entries, sealed


# ---------------------------------------------------------------- files


def test_new_segment_files(tmp_path: Path) -> None:
    seg = Segment(str(tmp_path), 42, max_index_size=1000)
    assert seg.log_path == str(tmp_path / "00000000000000000042.log")
    assert seg.index_path == str(tmp_path / "00000000000000000042.index")
    assert seg.time_index_path == str(tmp_path / "00000000000000000042.timeindex")
    sizes = {p.name: p.stat().st_size for p in tmp_path.iterdir()}
    assert sizes == {
        "00000000000000000042.log": 0,
        "00000000000000000042.index": 1000,  # preallocated, 125 entries
        "00000000000000000042.timeindex": 996,  # rounded down to 83 entries
    }
    state = (seg.size, seg.next_offset, seg.max_timestamp, seg.offset_of_max_timestamp)
    assert state == (0, 42, -1, -1)
    assert (seg.rolling_based_timestamp, seg.index_is_full, seg.closed) == (-1, False, False)
    assert seg.offset_index() == [] and seg.time_index() == []
    assert seg.lookup_index(50) == (42, 0) and seg.lookup_time_index(5) == (-1, 42)
    assert seg.read(42, 100) is None and seg.find_offset_by_timestamp(0) is None
    seg.close()
    assert {p.stat().st_size for p in tmp_path.iterdir()} == {0}
    assert seg.closed


@pytest.mark.parametrize(
    "kwargs",
    [
        {"base_offset": -1},
        {"index_interval_bytes": -1},
        {"max_index_size": 11},
    ],
)
def test_bad_arguments(tmp_path: Path, kwargs: dict[str, int]) -> None:
    args = {"base_offset": 0, **kwargs}
    with pytest.raises(ValueError):
        Segment(str(tmp_path), **args)


def test_missing_directory_is_a_storage_error(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="missing"):
        Segment(str(tmp_path / "missing"), 0)


# ---------------------------------------------------------------- append


def test_append_assigns_offsets_and_leader_epoch(tmp_path: Path) -> None:
    seg = Segment(str(tmp_path), 100)
    data = build_batch(recs(0, 3, ts=5000))
    result = seg.append(data, partition_leader_epoch=7)
    assert result == (100, 102, 5002, 102, len(data))
    assert (seg.next_offset, seg.size, seg.max_timestamp, seg.offset_of_max_timestamp) == (
        103,
        len(data),
        5002,
        102,
    )
    assert seg.rolling_based_timestamp == 5002
    written = seg.read_bytes(0, len(data))
    assert written[8:12] == data[8:12] and written[16:] == data[16:]  # CRC untouched
    header = validate(written)
    assert (header[0], header[2]) == (100, 7)
    assert [r[0] for r in batch_records(written)] == [100, 101, 102]
    seg.close()


def test_append_log_append_time(tmp_path: Path) -> None:
    seg = Segment(str(tmp_path), 0)
    data = build_batch(recs(0, 2, ts=10), compression=1)
    assert seg.append(data, log_append_time_ms=99_000) == (0, 1, 99_000, 1, len(data))
    written = seg.read_bytes(0, seg.size)
    header = validate(written)  # CRC recomputed
    assert header[5] == 1 | 0x08 and header[8] == 99_000 and header[7] == 10
    assert [r[1] for r in batch_records(written)] == [99_000, 99_000]
    # a batch already stamped with that time is written as is (no CRC rewrite)
    stamped = build_batch(recs(0, 1, ts=99_000), timestamp_type=1)
    seg.append(stamped, log_append_time_ms=99_000)
    assert seg.read_bytes(len(data), len(stamped))[16:] == stamped[16:]
    seg.close()


def test_log_append_time_rewrites_attributes_like_kafka(tmp_path: Path) -> None:
    """setMaxTimestamp() recomputes the attributes from the bits it knows: 7-15 drop."""
    import google_crc32c

    data = bytearray(build_batch(recs(0, 1), transactional=True, producer_id=1))
    struct.pack_into(">h", data, 21, 0x0110)  # unused bit 8 + transactional
    struct.pack_into(">I", data, 17, google_crc32c.value(bytes(data[21:])))
    seg = Segment(str(tmp_path), 0)
    seg.append(bytes(data), log_append_time_ms=5)
    assert batch_header(seg.read_bytes(0, seg.size))[5] == 0x18
    seg.close()


def test_replica_append_keeps_bytes_and_checks_offsets(tmp_path: Path) -> None:
    seg = Segment(str(tmp_path), 10)
    a = build_batch(recs(10, 3), partition_leader_epoch=4)
    b = build_batch(recs(20, 2), partition_leader_epoch=5)  # a gap is fine
    assert seg.append(a + b, assign_offsets=False, log_append_time_ms=7) == (
        10,
        21,
        1002,
        12,
        len(a) + len(b),
    )
    assert seg.read_bytes(0, seg.size) == a + b
    assert seg.next_offset == 22
    for stale in (build_batch(recs(21, 1)), build_batch(recs(5, 1))):
        with pytest.raises(InvalidOffsetError):
            seg.append(stale, assign_offsets=False)
    empty = build_batch(recs(22, 1))
    assert seg.append(empty, assign_offsets=False)[:2] == (22, 22)
    assert seg.size == len(a) + len(b) + len(empty)
    seg.close()


def test_refused_appends_write_nothing(tmp_path: Path) -> None:
    seg = Segment(str(tmp_path), 0)
    good = build_batch(recs(0, 2))
    seg.append(good)
    before = files(tmp_path)
    bad = bytearray(good)
    bad[-1] ^= 1
    with pytest.raises(CorruptRecordError, match=rf"buffer, position {len(good)}\b"):
        seg.append(good + bytes(bad))
    with pytest.raises(CorruptRecordError):
        seg.append(good + good[:30])  # a partial second batch
    legacy = build_legacy(recs(0, 1), 1)
    with pytest.raises(CorruptRecordError):
        seg.append(legacy)
    import google_crc32c

    empty = bytearray(good[:61])
    struct.pack_into(">i", empty, 8, 49)
    struct.pack_into(">i", empty, 57, 0)
    struct.pack_into(">I", empty, 17, google_crc32c.value(bytes(empty[21:])))
    with pytest.raises(InvalidRecordError):
        seg.append(good + bytes(empty))
    too_far = build_batch(recs(0, 1), last_offset_delta=2**31 - 1)
    with pytest.raises(InvalidOffsetError):
        seg.append(too_far)  # last offset 2 + 2**31 - 1 does not fit the index
    with pytest.raises(ValueError):
        seg.append(good, partition_leader_epoch=2**31)
    assert seg.append(b"") == (-1, -1, -1, -1, 0)
    assert files(tmp_path) == before
    assert (seg.size, seg.next_offset) == (len(good), 2)
    seg.close()
    with pytest.raises(ValueError, match="closed"):
        seg.append(good)


def test_append_result_max_timestamp(tmp_path: Path) -> None:
    seg = Segment(str(tmp_path), 0)
    a = build_batch(recs(0, 2, ts=500))
    b = build_batch(recs(0, 2, ts=100))
    c = build_batch(recs(0, 1, ts=501))  # max of a is 501 too: the earlier batch wins
    assert seg.append(a + b + c) == (0, 4, 501, 1, len(a) + len(b) + len(c))
    assert (seg.max_timestamp, seg.offset_of_max_timestamp) == (501, 1)
    no_ts = build_batch([(0, -1, None, b"x", [])])
    assert seg.append(no_ts)[2:4] == (-1, -1)
    seg.close()


# ---------------------------------------------------------------- index rule


def _batches_for_index(n: int, seed: int) -> list[bytes]:
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        count = rnd.randint(1, 4)
        ts = rnd.choice([rnd.randint(0, 10_000), -1])
        out.append(build_batch(recs(0, count, ts=ts, size=rnd.randint(0, 300))))
    return out


@pytest.mark.parametrize("interval", [0, 1, 100, 500, 4096])
def test_index_entries_follow_the_rule(tmp_path: Path, interval: int) -> None:
    batches = _batches_for_index(60, interval)
    seg = Segment(str(tmp_path), 1000, index_interval_bytes=interval)
    facts = []
    for data in batches:
        _first, last, max_ts, _, size = seg.append(data)
        facts.append((last, size, max_ts))
    offsets, open_times, times = expected_indexes(1000, facts, interval)
    assert seg.offset_index() == offsets
    assert seg.time_index() == open_times
    seg.close()
    index = b"".join(struct.pack(">II", o - 1000, p) for o, p in offsets)
    time_index = b"".join(struct.pack(">qI", t, o - 1000) for t, o in times)
    got = files(tmp_path)
    assert got["00000000000000001000.index"] == index
    assert got["00000000000000001000.timeindex"] == time_index


def test_one_call_or_many_build_identical_files(tmp_path: Path) -> None:
    batches = _batches_for_index(40, 7)
    one, many = tmp_path / "one", tmp_path / "many"
    one.mkdir()
    many.mkdir()
    a = Segment(str(one), 0, index_interval_bytes=300)
    b = Segment(str(many), 0, index_interval_bytes=300)
    a.append(b"".join(batches), partition_leader_epoch=2, log_append_time_ms=77)
    for data in batches:
        b.append(data, partition_leader_epoch=2, log_append_time_ms=77)
    assert a.offset_index() == b.offset_index() and a.time_index() == b.time_index()
    a.close()
    b.close()
    assert files(one) == files(many)


# ---------------------------------------------------------------- reopen, recover


def _fill(d: Path, interval: int = 200, n: int = 50, base: int = 0) -> list[tuple[int, int, int]]:
    """(position, size, last offset) of each batch."""
    seg = Segment(str(d), base, index_interval_bytes=interval)
    layout = []
    for data in _batches_for_index(n, 3):
        pos = seg.size
        _, last, _, _, size = seg.append(data, partition_leader_epoch=1)
        layout.append((pos, size, last))
    seg.close()
    return layout


def test_reopen_restores_state_and_keeps_index_sizes(tmp_path: Path) -> None:
    layout = _fill(tmp_path)
    closed_files = files(tmp_path)
    seg = Segment(str(tmp_path), 0, index_interval_bytes=200, max_index_size=4096)
    assert seg.next_offset == layout[-1][2] + 1
    assert seg.size == layout[-1][0] + layout[-1][1]
    assert (seg.max_timestamp, seg.offset_of_max_timestamp) == seg.time_index()[-1]
    first = batch_header(seg.read_bytes(0, 61))
    assert seg.rolling_based_timestamp == first[8]
    # mapped as found: the trimmed files are not touched, and have no room left
    assert files(tmp_path) == closed_files
    assert seg.index_is_full
    seg.sanity_check()
    seg.resize_indexes()  # what the log does to the segment it makes active
    assert os.path.getsize(seg.index_path) == 4096
    assert os.path.getsize(seg.time_index_path) == 4092
    assert not seg.index_is_full
    seg.close()
    assert files(tmp_path) == closed_files


def test_resize_indexes_rounds_down_and_keeps_the_entries(tmp_path: Path) -> None:
    _fill(tmp_path)
    seg = Segment(str(tmp_path), 0, index_interval_bytes=200, max_index_size=4096)
    entries = (seg.offset_index(), seg.time_index())
    used = (8 * len(entries[0]), 12 * len(entries[1]))
    seg.resize_indexes(1001)
    assert os.path.getsize(seg.index_path) == 1000
    assert os.path.getsize(seg.time_index_path) == 996
    seg.resize_indexes(0)  # never below the entries
    assert (os.path.getsize(seg.index_path), os.path.getsize(seg.time_index_path)) == used
    assert (seg.offset_index(), seg.time_index()) == entries
    for bad in (-1, 2**31):
        with pytest.raises(ValueError):
            seg.resize_indexes(bad)
    with pytest.raises(OverflowError):
        seg.resize_indexes(2**63)
    seg.close()
    with pytest.raises(ValueError):
        seg.resize_indexes()


def test_reopen_finds_next_offset_after_last_index_entry(tmp_path: Path) -> None:
    seg = Segment(str(tmp_path), 0, index_interval_bytes=10**6)
    for _ in range(5):
        seg.append(build_batch(recs(0, 3)))
    seg.close()
    seg = Segment(str(tmp_path), 0)
    assert seg.offset_index() == [] and seg.next_offset == 15
    seg.close()


@pytest.mark.parametrize("lose", ["nothing", "index", "timeindex", "both"])
def test_recover_rebuilds_identical_indexes(tmp_path: Path, lose: str) -> None:
    _fill(tmp_path)
    good = files(tmp_path)
    for suffix in {"nothing": [], "index": [".index"], "timeindex": [".timeindex"]}.get(
        lose, [".index", ".timeindex"]
    ):
        (tmp_path / f"{0:020d}{suffix}").unlink()
    seg = Segment(str(tmp_path), 0, index_interval_bytes=200)
    assert seg.recover() == 0
    assert files(tmp_path) == good  # trimmed at the end (Kafka's trimToValidSize)
    assert seg.index_is_full
    seg.sanity_check()
    seg.close()
    assert files(tmp_path) == good


def test_recover_truncates_garbage_tail(tmp_path: Path) -> None:
    layout = _fill(tmp_path)
    log = tmp_path / f"{0:020d}.log"
    size = log.stat().st_size
    for tail in [b"\x00" * 5, b"\x00" * 17, b"\x00" * 40, os.urandom(300), b"\xff" * 100]:
        with open(log, "ab") as f:
            f.write(tail)
        seg = Segment(str(tmp_path), 0, index_interval_bytes=200)
        assert seg.recover() == len(tail)
        assert (seg.size, seg.next_offset) == (size, layout[-1][2] + 1)
        seg.close()
        assert log.stat().st_size == size


def test_recover_cuts_at_first_bad_batch(tmp_path: Path) -> None:
    layout = _fill(tmp_path)
    log = tmp_path / f"{0:020d}.log"
    raw = log.read_bytes()
    pos, size, _ = layout[20]
    bad = bytearray(raw)
    bad[pos + size - 1] ^= 0xFF  # the last record byte: CRC mismatch
    log.write_bytes(bytes(bad))
    seg = Segment(str(tmp_path), 0, index_interval_bytes=200)
    assert seg.recover() == len(raw) - pos
    assert (seg.size, seg.next_offset) == (pos, layout[19][2] + 1)
    assert all(p < pos for _, p in seg.offset_index())
    assert all(o <= layout[19][2] for _, o in seg.time_index())
    offsets, _, times = expected_indexes(
        0, [(last, size, batch_header(raw, p)[8]) for p, size, last in layout[:20]], 200
    )
    assert seg.offset_index() == offsets and seg.time_index() == times
    seg.close()


def test_recover_stops_at_offsets_going_backwards(tmp_path: Path) -> None:
    a = build_batch(recs(50, 3))  # offsets 50-52
    b = build_batch(recs(53, 1))
    log = tmp_path / f"{50:020d}.log"
    for content, kept in [
        (a + build_batch(recs(52, 1)), a),  # overlaps the previous batch
        (a + build_batch(recs(10, 1)), a),  # below the segment's base offset
        (a + b + a, a + b),  # goes back to 50
        (a + build_batch(recs(53, 1), last_offset_delta=2**31 - 1), a),  # beyond the index
    ]:
        log.write_bytes(content)
        seg = Segment(str(tmp_path), 50)
        assert seg.recover() == len(content) - len(kept)
        seg.close()
        assert log.read_bytes() == kept


@pytest.mark.parametrize(
    ("patch", "value"),
    [
        ("size", 13),  # below the smallest message
        ("size", 40),  # a v2 batch smaller than its header
        ("magic", 3),
        ("magic", -1),
    ],
)
def test_recover_invalid_entry_header(tmp_path: Path, patch: str, value: int) -> None:
    seg = Segment(str(tmp_path), 0)
    a, b = build_batch(recs(0, 2)), build_batch(recs(2, 2))
    seg.append(a + b, assign_offsets=False)
    seg.close()
    raw = bytearray(a + b)
    if patch == "size":
        struct.pack_into(">i", raw, len(a) + 8, value)
    else:
        struct.pack_into(">b", raw, len(a) + 16, value)
    (tmp_path / f"{0:020d}.log").write_bytes(bytes(raw))
    seg = Segment(str(tmp_path), 0)
    assert seg.next_offset == 2  # the open scan stops silently too
    with pytest.raises(
        CorruptRecordError, match=rf"00000000000000000000\.log, position {len(a)}\b"
    ):
        seg.translate_offset(3)
    assert seg.recover() == len(b)
    assert seg.translate_offset(3) is None
    seg.close()


# ---------------------------------------------------------------- reads


def _three(tmp_path: Path) -> tuple[Segment, list[tuple[int, int]]]:
    seg = Segment(str(tmp_path), 0, index_interval_bytes=0)
    spans = []
    for first, n in [(0, 3), (3, 2), (10, 4)]:  # offsets 0-2, 3-4, 10-13
        data = build_batch(recs(first, n, size=40))
        spans.append((seg.size, len(data)))
        seg.append(data, assign_offsets=False)
    return seg, spans


def test_read_whole_batches(tmp_path: Path) -> None:
    seg, spans = _three(tmp_path)
    (_, s0), (p1, s1), (p2, s2) = spans
    assert seg.read(0, 10**6) == (0, s0 + s1 + s2)
    assert seg.read(1, s0 + s1) == (0, s0 + s1)
    assert seg.read(1, s0 + s1 - 1) == (0, s0)
    assert seg.read(4, 10**6) == (p1, s1 + s2)
    assert seg.read(5, 10**6) == (p2, s2)  # offset in a gap: the next batch
    assert seg.read(14, 10**6) is None
    assert seg.read(3, 5) == (p1, s1)  # min_one_batch
    assert seg.read(3, 5, -1, False) == (p1, 0)
    assert seg.read(0, 10**6, p2) == (0, s0 + s1)
    assert seg.read(0, 10**6, p2 - 1) == (0, s0)
    assert seg.read(0, 10**6, 10) == (0, 0)
    assert seg.read(10, 10**6, p2) == (p2, 0)
    with pytest.raises(ValueError):
        seg.read(0, -1)
    assert seg.read_bytes(p1, s1) == build_batch(recs(3, 2, size=40))
    assert seg.read_bytes(p2, 10**6) == seg.read_bytes(p2, s2)
    assert seg.read_bytes(10**6, 5) == b""
    seg.close()


def test_translate_offset(tmp_path: Path) -> None:
    seg, spans = _three(tmp_path)
    (p0, s0), (p1, s1), (p2, s2) = spans
    assert seg.translate_offset(0) == (2, p0, s0)
    assert seg.translate_offset(4) == (4, p1, s1)
    assert seg.translate_offset(7) == (13, p2, s2)
    assert seg.translate_offset(0, p1) == (4, p1, s1)
    assert seg.translate_offset(14) is None
    assert seg.offset_index() == [(4, p1), (13, p2)]
    assert seg.lookup_index(3) == (0, 0) and seg.lookup_index(12) == (4, p1)
    seg.close()


def test_lookups_warm_and_cold_sections(tmp_path: Path) -> None:
    """More entries than the warm section (1024 offset / 682 time entries)."""
    seg = Segment(str(tmp_path), 5, index_interval_bytes=0)
    rnd = random.Random(11)
    ts = 0
    blob = []
    for i in range(1400):
        ts += rnd.choice([0, 1, 5])
        blob.append(build_batch([(5 + i * 2, ts, None, b"x", [])], last_offset_delta=1))
    for i in range(0, len(blob), 100):
        seg.append(b"".join(blob[i : i + 100]))
    offsets = seg.offset_index()
    times = seg.time_index()
    assert len(offsets) == 1399 and len(times) > 700
    keys = [o for o, _ in offsets]
    stamps = [t for t, _ in times]
    for target in [0, 5, 6, 7, 8] + [rnd.randint(0, 2900) for _ in range(400)] + [2806, 10**6]:
        slot = bisect.bisect_right(keys, target) - 1
        assert seg.lookup_index(target) == (offsets[slot] if slot >= 0 else (5, 0))
    for target in [-5, 0, 1] + [rnd.randint(0, ts + 5) for _ in range(400)]:
        slot = bisect.bisect_right(stamps, target) - 1
        assert seg.lookup_time_index(target) == (times[slot] if slot >= 0 else (-1, 5))
    seg.close()


def test_find_offset_by_timestamp_against_a_full_scan(tmp_path: Path) -> None:
    seg = Segment(str(tmp_path), 0, index_interval_bytes=150)
    rnd = random.Random(5)
    for i in range(60):
        n = rnd.randint(1, 5)
        batch_ts = [rnd.randint(0, 3000) for _ in range(n)]
        data = build_batch(
            [(j, t, None, b"v" * 30, []) for j, t in enumerate(batch_ts)], compression=i % 5
        )
        seg.append(data, partition_leader_epoch=i // 10)
    seg.append(build_batch(recs(0, 2, ts=10)), log_append_time_ms=3500, partition_leader_epoch=9)
    everything = []
    position = 0
    while position < seg.size:
        header = batch_header(seg.read_bytes(position, 61))
        data = seg.read_bytes(position, header[1] + 12)
        everything += [(r[1], r[0], header[2]) for r in batch_records(data)]
        position += header[1] + 12
    for target in [-1, 0, 3000, 3001, 3500, 3501] + [rnd.randint(0, 3000) for _ in range(150)]:
        for start in [-1, 0, 37, rnd.randint(0, seg.next_offset)]:
            expected = next((r for r in everything if r[0] >= target and r[1] >= start), None)
            assert seg.find_offset_by_timestamp(target, start) == expected, (target, start)
    seg.close()


# ---------------------------------------------------------------- truncate, seal


def test_truncate_to(tmp_path: Path) -> None:
    layout = _fill(tmp_path, interval=150)
    seg = Segment(str(tmp_path), 0, index_interval_bytes=150)
    raw = seg.read_bytes(0, seg.size)
    facts = [(last, size, batch_header(raw, pos)[8]) for pos, size, last in layout]
    cut_batch = 30
    pos, _, last = layout[cut_batch]
    offset = last - 0  # an offset inside batch 30
    assert seg.truncate_to(offset) == len(raw) - pos
    assert (seg.size, seg.next_offset) == (pos, layout[cut_batch - 1][2] + 1)
    assert all(o < offset for o, _ in seg.offset_index())
    assert all(o < offset for _, o in seg.time_index())
    kept = [f for f in facts[:cut_batch]]
    best = max((f for f in kept if f[2] >= 0), key=lambda f: (f[2], -f[0]))
    assert (seg.max_timestamp, seg.offset_of_max_timestamp) == (best[2], best[0])
    assert seg.rolling_based_timestamp == facts[0][2]
    assert os.path.getsize(seg.index_path) == 10 * MiB  # preallocated again
    assert seg.truncate_to(10**9) == 0
    # appends go on from the new end (the bytes-since-last-entry count restarts at 0,
    # so this batch gets no index entry: a recovery, counting from 0, may add one)
    seg.append(build_batch(recs(0, 2)))
    assert seg.next_offset == layout[cut_batch - 1][2] + 3
    seg.sanity_check()
    seg.close()
    seg = Segment(str(tmp_path), 0, index_interval_bytes=150)
    assert seg.recover() == 0
    assert seg.next_offset == layout[cut_batch - 1][2] + 3
    seg.close()


def test_truncate_to_everything(tmp_path: Path) -> None:
    _fill(tmp_path, n=10)
    seg = Segment(str(tmp_path), 0, index_interval_bytes=200)
    assert seg.truncate_to(0) > 0
    assert (seg.size, seg.next_offset, seg.max_timestamp, seg.offset_of_max_timestamp) == (
        0,
        0,
        -1,
        -1,
    )
    assert seg.rolling_based_timestamp == -1
    assert seg.offset_index() == [] and seg.time_index() == []
    seg.close()


def test_seal_trims_and_adds_the_final_time_entry(tmp_path: Path) -> None:
    seg = Segment(str(tmp_path), 0, index_interval_bytes=10**6)
    seg.append(build_batch(recs(0, 2, ts=100)))
    seg.append(build_batch(recs(0, 2, ts=300)))
    assert seg.time_index() == []
    seg.seal()
    assert seg.time_index() == [(301, 3)]
    assert os.path.getsize(seg.index_path) == 0
    assert os.path.getsize(seg.time_index_path) == 12
    assert seg.index_is_full
    seg.seal()
    assert os.path.getsize(seg.time_index_path) == 12
    assert seg.read(0, 100) == (0, seg.translate_offset(0)[2])  # type: ignore[index]
    # an append needing no index entry still works; one needing an entry does not
    seg.append(build_batch(recs(0, 1, ts=50)))
    assert seg.next_offset == 5
    seg.close()


def test_sealed_segment_refuses_an_index_entry(tmp_path: Path) -> None:
    seg = Segment(str(tmp_path), 0, index_interval_bytes=0)
    seg.append(build_batch(recs(0, 1)))
    seg.append(build_batch(recs(0, 1)))  # first entry
    seg.seal()
    before = files(tmp_path)
    with pytest.raises(IndexFullError):
        seg.append(build_batch(recs(0, 1)))
    assert files(tmp_path) == before
    assert seg.truncate_to(1) > 0  # truncation makes room again
    assert not seg.index_is_full
    seg.close()


def test_index_full(tmp_path: Path) -> None:
    # 3 offset entries; 2 time entries, full at 1 (the last slot is kept for the roll)
    seg = Segment(str(tmp_path), 0, index_interval_bytes=0, max_index_size=24)
    seg.append(build_batch(recs(0, 1, ts=1)))
    seg.append(build_batch(recs(0, 1, ts=2)))
    assert seg.index_is_full
    before = (seg.size, seg.next_offset)
    with pytest.raises(IndexFullError, match="time index"):
        seg.append(build_batch(recs(0, 1, ts=1)))  # refused even without a new timestamp
    assert (seg.size, seg.next_offset) == before
    seg.close()
    # trimmed to its one entry (2, 1): the max timestamp did not grow since
    assert (tmp_path / f"{0:020d}.timeindex").read_bytes() == struct.pack(">qI", 2, 1)


def test_sanity_check(tmp_path: Path) -> None:
    _fill(tmp_path)
    index = tmp_path / f"{0:020d}.index"
    time_index = tmp_path / f"{0:020d}.timeindex"
    good_index, good_time = index.read_bytes(), time_index.read_bytes()
    cases = [
        (index, good_index + b"\x00" * 3, "multiple of 8"),
        (index, good_index[8:16] + good_index[:8], "does not increase"),
        (index, good_index + struct.pack(">II", 0xFFFFFF, 0xFFFFFF), "beyond the log size"),
        (index, b"\xff" * len(good_index), "entry 0: position 4294967295 is beyond"),
        (time_index, good_time[12:24] + good_time[:12], "does not increase"),
        (time_index, good_time + b"\x00", "multiple of 12"),
    ]
    for path, content, match in cases:
        path.write_bytes(content)
        seg = Segment(str(tmp_path), 0, index_interval_bytes=200)
        with pytest.raises(CorruptIndexError, match=match) as info:
            seg.sanity_check()
        assert str(path) in str(info.value)
        assert seg.recover() == 0
        seg.sanity_check()
        seg.close()
        assert (index.read_bytes(), time_index.read_bytes()) == (good_index, good_time)


# ---------------------------------------------------------------- legacy data


def test_legacy_messages_in_a_log(tmp_path: Path) -> None:
    v0 = build_legacy(recs(0, 3), 0)  # offsets 0, 1, 2
    v1 = build_legacy([(3 + i, 2000 + i, None, b"w", []) for i in range(4)], 1, 2)  # wrapper 6
    v2 = build_batch(recs(7, 2, ts=3000))
    (tmp_path / f"{0:020d}.log").write_bytes(v0 + v1 + v2)
    seg = Segment(str(tmp_path), 0, index_interval_bytes=0)
    assert seg.next_offset == 9
    assert seg.rolling_based_timestamp == -1  # a v0 message has no timestamp
    assert seg.recover() == 0
    wrapper_at = len(v0)
    assert seg.translate_offset(4) == (6, wrapper_at, len(v1))
    assert seg.find_offset_by_timestamp(2001) == (2001, 4, -1)
    assert seg.find_offset_by_timestamp(2500) == (3000, 7, -1)
    assert seg.offset_index()[0][0] == 1
    assert (seg.max_timestamp, seg.offset_of_max_timestamp) == (3001, 8)
    assert seg.read(0, 10**6) == (0, len(v0 + v1 + v2))
    seg.append(build_batch(recs(0, 1)))
    assert seg.next_offset == 10
    seg.close()


# ---------------------------------------------------------------- lifecycle


def test_closed_segment_and_delete(tmp_path: Path) -> None:
    seg = Segment(str(tmp_path), 0)
    seg.append(build_batch(recs(0, 1)))
    seg.close()
    seg.close()  # idempotent
    assert seg.closed and seg.size > 0 and seg.next_offset == 1
    for call in (
        lambda: seg.read(0, 10),
        lambda: seg.read_bytes(0, 1),
        lambda: seg.translate_offset(0),
        lambda: seg.lookup_index(0),
        lambda: seg.lookup_time_index(0),
        lambda: seg.find_offset_by_timestamp(0),
        seg.offset_index,
        seg.time_index,
        seg.recover,
        seg.sanity_check,
        lambda: seg.truncate_to(0),
        seg.seal,
        seg.flush,
    ):
        with pytest.raises(ValueError, match="closed"):
            call()
    seg.delete()
    assert list(tmp_path.iterdir()) == []
    live = Segment(str(tmp_path), 7)
    live.flush()
    live.delete()
    assert list(tmp_path.iterdir()) == []


def test_dropped_without_close_is_a_crash_that_recover_repairs(tmp_path: Path) -> None:
    seg = Segment(str(tmp_path), 0, index_interval_bytes=100, max_index_size=800)
    for _ in range(6):
        seg.append(build_batch(recs(0, 2, size=80)))
    entries = seg.offset_index()
    del seg  # no seal, no trim: the indexes stay preallocated, zero-filled after the entries
    assert os.path.getsize(tmp_path / f"{0:020d}.index") == 800
    seg = Segment(str(tmp_path), 0, index_interval_bytes=100, max_index_size=800)
    assert seg.next_offset == 12
    assert len(seg.offset_index()) == 100  # the zeros read as entries
    with pytest.raises(CorruptIndexError):
        seg.sanity_check()
    assert seg.recover() == 0
    assert seg.offset_index() == entries
    seg.close()
