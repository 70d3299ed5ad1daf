"""The partition log over both backends: appends and the four roll conditions, reads as
file regions across segments and under an upper bound, offsets by timestamp, log start
offset, truncation, leader epochs, flush, reopening and recovery.

Retention lives in ``test_log_retention.py``. Time is a ``MockTime``; delayed work runs on
a ``MockScheduler`` when the mock time moves.
"""

from __future__ import annotations

import os
import random
import struct
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kafkacore.config import LogConfig
from kafkacore.errors import (
    CorruptRecordError,
    InconsistentTopicIdError,
    InvalidOffsetError,
    InvalidRecordError,
    OffsetOutOfRangeError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
    RecordValidationError,
    StorageIOError,
    UnexpectedAppendOffsetError,
)
from kafkacore.log import (
    AppendOrigin,
    EpochEntry,
    FetchDataInfo,
    Log,
    LogSegments,
    MockScheduler,
    MockTime,
    TimestampAndOffset,
    TopicPartition,
    read_region,
)

T0 = 1_700_000_000_000
DAY = 24 * 3600 * 1000


def log_config(**fields: Any) -> LogConfig:
    """A ``LogConfig`` from snake_case topic settings (``segment_ms=1000``). ``segment_bytes``
    goes to ``internal.segment.bytes``, which has no 1 MiB floor (Kafka's test hook)."""
    overrides = {
        ("internal.segment.bytes" if k == "segment_bytes" else k.replace("_", ".")): v
        for k, v in fields.items()
    }
    return LogConfig(overrides)


@pytest.fixture
def mock_time() -> MockTime:
    return MockTime(T0)


@pytest.fixture
def scheduler(mock_time: MockTime) -> MockScheduler:
    return MockScheduler(mock_time)


OpenLog = Callable[..., Log]


@pytest.fixture
def open_log(
    tmp_path: Path, backend: ModuleType, mock_time: MockTime, scheduler: MockScheduler
) -> OpenLog:
    """``open_log(name="topic-0", **log_kwargs_or_topic_settings)``."""

    def _open(name: str = "topic-0", **kwargs: Any) -> Log:
        log_kwargs = {
            k: kwargs.pop(k)
            for k in ("log_start_offset", "recover_from", "topic_id", "rng", "topic_partition")
            if k in kwargs
        }
        return Log(
            tmp_path / name,
            log_config(**kwargs),
            backend=backend,
            time=mock_time,
            scheduler=scheduler,
            **log_kwargs,
        )

    return _open


def make_batch(
    backend: ModuleType,
    n: int = 1,
    *,
    ts: int | list[int] = T0,
    base_offset: int = 0,
    epoch: int = -1,
    key: bytes | None = b"k",
    value: bytes = b"v" * 10,
    **kwargs: Any,
) -> bytes:
    stamps = ts if isinstance(ts, list) else [ts] * n
    records = [(base_offset + i, stamps[i], key, value, []) for i in range(len(stamps))]
    return bytes(backend.build_batch(records, partition_leader_epoch=epoch, **kwargs))


def headers(backend: ModuleType, data: bytes) -> list[tuple[int, ...]]:
    """The batch headers of ``data``, in order."""
    out, pos = [], 0
    while pos < len(data):
        h = tuple(backend.batch_header(data, pos))
        out.append(h)
        pos += 12 + h[1]
    return out


def batch_ranges(backend: ModuleType, info: FetchDataInfo) -> list[tuple[int, int]]:
    """``(base offset, last offset)`` of each batch of a read."""
    return [(h[0], h[0] + h[6]) for h in headers(backend, info.read_bytes())]


def all_offsets(backend: ModuleType, log: Log) -> list[int]:
    """Every offset the log holds, read segment after segment."""
    offsets: list[int] = []
    offset = log.log_start_offset
    while offset < log.log_end_offset:
        info = log.read(offset, 1 << 30)
        if info.length == 0:
            break
        for base, last in batch_ranges(backend, info):
            offsets.extend(range(max(base, offset), last + 1))
        offset = offsets[-1] + 1
    return offsets


def bases(log: Log) -> list[int]:
    return [s.base_offset for s in log.segments]


# -- append ---------------------------------------------------------------------------------


def test_append_assigns_offsets_epochs_and_reports(open_log: OpenLog, backend: ModuleType) -> None:
    log = open_log()
    assert (log.log_start_offset, log.log_end_offset, bases(log)) == (0, 0, [0])
    b1 = make_batch(backend, 3, ts=[T0 + 5, T0 + 9, T0 + 1])
    info = log.append_as_leader(b1, leader_epoch=7)
    assert (info.first_offset, info.last_offset, info.num_records) == (0, 2, 3)
    assert (info.max_timestamp, info.offset_of_max_timestamp) == (T0 + 9, 2)
    assert info.log_append_time == -1 and info.log_start_offset == 0
    assert info.valid_bytes == len(b1) and info.last_leader_epoch == 7 and info.num_batches == 1
    info2 = log.append_as_leader(make_batch(backend, 2, compression=1), leader_epoch=7)
    assert (info2.first_offset, info2.last_offset, info2.source_compression) == (3, 4, 1)
    assert log.log_end_offset == 5

    read = log.read(0, 1 << 20)
    hs = headers(backend, read.read_bytes())
    assert [(h[0], h[2]) for h in hs] == [(0, 7), (3, 7)]  # base offsets and leader epochs
    assert read.length == len(b1) + info2.valid_bytes and read.segment_base_offset == 0
    assert log.leader_epoch_cache.entries() == [EpochEntry(7, 0)]


def test_empty_append_does_nothing(open_log: OpenLog) -> None:
    log = open_log()
    info = log.append_as_leader(b"", leader_epoch=0)
    assert (info.first_offset, info.last_offset, info.valid_bytes, info.num_records) == (
        -1,
        -1,
        0,
        0,
    )
    assert log.log_end_offset == 0


def test_corrupt_or_partial_batches_are_refused_whole(
    open_log: OpenLog, backend: ModuleType
) -> None:
    log = open_log()
    log.append_as_leader(make_batch(backend), 0)
    good = make_batch(backend, 2)
    bad = bytearray(good)
    bad[-1] ^= 0xFF  # inside the CRC-covered records
    for data in (bytes(bad), good[:-5], good + good[:30]):
        with pytest.raises(CorruptRecordError):
            log.append(data, 0, origin=AppendOrigin.COORDINATOR)
    assert log.log_end_offset == 1 and log.active_segment.size == len(make_batch(backend))


def test_record_too_large(open_log: OpenLog, backend: ModuleType) -> None:
    b = make_batch(backend)
    log = open_log(max_message_bytes=len(b) - 1)
    with pytest.raises(RecordTooLargeError) as err:
        log.append_as_leader(b, 0)
    assert str(err.value) == (
        f"The record batch size in the append to topic-0 is {len(b)} bytes which exceeds the "
        f"maximum configured value of {len(b) - 1}."
    )
    log.append_as_follower(b)  # replicas do not check max.message.bytes
    assert log.log_end_offset == 1


def test_append_larger_than_a_segment(open_log: OpenLog, backend: ModuleType) -> None:
    b = make_batch(backend)
    log = open_log(segment_bytes=len(b) - 1)
    with pytest.raises(
        RecordBatchTooLargeError, match="exceeds the maximum configured segment size"
    ):
        log.append_as_leader(b, 0)


def test_client_batch_rules(open_log: OpenLog, backend: ModuleType) -> None:
    log = open_log()
    b = make_batch(backend)
    with pytest.raises(InvalidRecordError, match="Compressed outer record has more than one batch"):
        log.append_as_leader(b + b, 0)
    with pytest.raises(InvalidRecordError, match="should be 0, but it is 5"):
        log.append_as_leader(make_batch(backend, base_offset=5), 0)
    control = bytes(
        backend.build_batch([(0, T0, b"\x00\x00\x00\x01", b"\x00" * 6, [])], control=True)
    )
    with pytest.raises(
        InvalidRecordError, match="Clients are not allowed to write control records"
    ):
        log.append_as_leader(control, 0)
    with pytest.raises(InvalidRecordError, match="Invalid sequence number -1 in record batch"):
        log.append_as_leader(make_batch(backend, producer_id=9, producer_epoch=0), 0)
    gappy = bytes(backend.build_batch([(0, T0, b"k", b"v", []), (3, T0, b"k", b"v", [])]))
    with pytest.raises(InvalidRecordError, match=r"Inconsistent batch offset range \[0, 3\]"):
        log.append_as_leader(gappy, 0)
    assert log.log_end_offset == 0
    # the coordinator writes several batches at once and control batches
    info = log.append(b + control, 0, origin=AppendOrigin.COORDINATOR)
    assert (info.first_offset, info.last_offset, info.num_batches) == (0, 1, 2)


def test_compacted_topic_needs_keys(open_log: OpenLog, backend: ModuleType) -> None:
    log = open_log(cleanup_policy=["compact"])
    records = [(0, T0, b"a", b"1", []), (1, T0, None, b"2", []), (2, T0, None, b"3", [])]
    with pytest.raises(RecordValidationError) as err:
        log.append_as_leader(bytes(backend.build_batch(records)), 0)
    message = "Compacted topic cannot accept message without key in topic partition topic-0"
    assert err.value.record_errors == [(1, message), (2, message)]
    assert str(err.value) == (
        "One or more records have been rejected due to 2 record errors in total, and only "
        f"showing the first three errors at most: [RecordError(batchIndex=1, message='{message}'), "
        f"RecordError(batchIndex=2, message='{message}')]"
    )
    assert isinstance(err.value, InvalidRecordError) and log.log_end_offset == 0
    log.append_as_leader(make_batch(backend, 2), 0)
    assert log.log_end_offset == 2
    open_log("other-0").append_as_leader(make_batch(backend, key=None), 0)  # not compacted: fine


def test_log_append_time(open_log: OpenLog, backend: ModuleType, mock_time: MockTime) -> None:
    log = open_log(message_timestamp_type="LogAppendTime")
    mock_time.sleep(1234)
    now = mock_time.milliseconds()
    info = log.append_as_leader(make_batch(backend, 2, ts=T0 - DAY), 0)
    assert (info.log_append_time, info.max_timestamp, info.offset_of_max_timestamp) == (now, now, 1)
    (h,) = headers(backend, log.read(0, 1 << 20).read_bytes())
    assert h[5] & 0x08 and h[8] == now  # LogAppendTime bit, max timestamp
    assert log.offset_for_timestamp(-3) == TimestampAndOffset(now, 0, 0)


# -- the four roll conditions ---------------------------------------------------------------


def test_roll_on_segment_bytes(open_log: OpenLog, backend: ModuleType) -> None:
    b = make_batch(backend)
    log = open_log(segment_bytes=2 * len(b))
    for _ in range(5):
        log.append_as_leader(b, 0)
    # a segment rolls when size > segment.bytes - incoming size: two batches fit exactly
    assert bases(log) == [0, 2, 4]
    assert [s.size for s in log.segments] == [2 * len(b), 2 * len(b), len(b)]


def test_roll_on_segment_ms_by_record_time(open_log: OpenLog, backend: ModuleType) -> None:
    log = open_log(segment_ms=1000)
    log.append_as_leader(make_batch(backend, ts=T0), 0)
    log.append_as_leader(make_batch(backend, ts=T0 + 1000), 0)  # waited 1000: not > 1000
    assert bases(log) == [0]
    log.append_as_leader(make_batch(backend, ts=T0 + 1001), 0)
    assert bases(log) == [0, 2]
    log.append_as_leader(make_batch(backend, ts=T0 + 500), 0)  # older records: no roll
    assert bases(log) == [0, 2]


def test_roll_on_segment_ms_by_wall_clock(
    open_log: OpenLog, backend: ModuleType, mock_time: MockTime
) -> None:
    log = open_log(segment_ms=1000)
    untimed = make_batch(backend, ts=-1)  # no timestamps: the segment's age counts
    mock_time.sleep(5000)
    log.append_as_leader(untimed, 0)  # an empty segment never rolls on time
    assert bases(log) == [0]
    log.roll()
    mock_time.sleep(1000)
    log.append_as_leader(untimed, 0)
    log.append_as_leader(untimed, 0)
    assert bases(log) == [0, 1]
    mock_time.sleep(1)
    log.append_as_leader(untimed, 0)
    assert bases(log) == [0, 1, 3]


def test_roll_on_segment_ms_with_jitter(open_log: OpenLog, backend: ModuleType) -> None:
    rng = random.Random(11)
    expected_jitter = random.Random(11).getrandbits(31) % 600
    assert expected_jitter > 0
    log = open_log(segment_ms=1000, segment_jitter_ms=600, rng=rng)
    assert log.active_segment.roll_jitter_ms == expected_jitter
    log.append_as_leader(make_batch(backend, ts=T0), 0)
    log.append_as_leader(make_batch(backend, ts=T0 + 1000 - expected_jitter), 0)
    assert bases(log) == [0]
    log.append_as_leader(make_batch(backend, ts=T0 + 1001 - expected_jitter), 0)
    assert bases(log) == [0, 2]
    assert 0 <= log.active_segment.roll_jitter_ms < 600


def test_compacted_topic_rolls_by_max_compaction_lag(
    open_log: OpenLog, backend: ModuleType
) -> None:
    log = open_log(cleanup_policy=["compact"], segment_ms=DAY, max_compaction_lag_ms=100)
    log.append_as_leader(make_batch(backend, ts=T0), 0)
    log.append_as_leader(make_batch(backend, ts=T0 + 101), 0)
    assert bases(log) == [0, 1]


def test_roll_when_an_index_is_full(open_log: OpenLog, backend: ModuleType, tmp_path: Path) -> None:
    # 24-byte indexes: 3 offset entries, 2 time entries (the last slot is kept for sealing,
    # so one entry fills it); an entry is due before every batch but the first.
    log = open_log(segment_index_bytes=24, index_interval_bytes=1)
    for i in range(5):
        log.append_as_leader(make_batch(backend, ts=T0 + i), 0)
    assert bases(log) == [0, 2, 4]
    old = log.segments[0].files
    assert old.offset_index() == [(1, len(make_batch(backend)))]
    # indexes of a rolled segment are trimmed to their entries; the active one is preallocated
    d = tmp_path / "topic-0"
    assert os.path.getsize(d / "00000000000000000000.index") == 8 * len(old.offset_index())
    assert os.path.getsize(d / "00000000000000000000.timeindex") == 12 * len(old.time_index())
    assert os.path.getsize(d / "00000000000000000004.index") == 24
    assert os.path.getsize(d / "00000000000000000004.timeindex") == 24


def test_roll_when_offset_would_not_fit_relative_offset(
    open_log: OpenLog, backend: ModuleType
) -> None:
    log = open_log()
    log.append_as_follower(make_batch(backend, base_offset=0, epoch=0))
    log.append_as_follower(make_batch(backend, base_offset=2**31 - 1, epoch=0))  # fits exactly
    assert bases(log) == [0]
    log.append_as_follower(make_batch(backend, base_offset=2**31 + 10, epoch=0))
    assert bases(log) == [0, 2**31 + 10]
    assert log.log_end_offset == 2**31 + 11
    assert all_offsets(backend, log) == [0, 2**31 - 1, 2**31 + 10]


def test_roll_recreates_an_empty_active_segment(open_log: OpenLog, backend: ModuleType) -> None:
    log = open_log()
    log.append_as_leader(make_batch(backend), 0)
    first = log.roll()
    assert bases(log) == [0, 1] and first.base_offset == 1
    again = log.roll()  # empty and already at the log end offset (KAFKA-6388)
    assert again is not first and bases(log) == [0, 1]
    log.roll(5)
    assert bases(log) == [0, 1, 5]
    with pytest.raises(InvalidOffsetError):
        log.roll(3)
    assert log.log_end_offset == 1  # a roll does not move the log end offset...
    assert log.append_as_leader(make_batch(backend), 0).first_offset == 5  # ...the segment does
    assert log.log_end_offset == 6


def test_roll_schedules_a_flush_of_the_old_segment(
    open_log: OpenLog, backend: ModuleType, mock_time: MockTime, scheduler: MockScheduler
) -> None:
    b = make_batch(backend)
    log = open_log(segment_bytes=len(b))
    log.append_as_leader(b, 0)
    log.append_as_leader(b, 0)
    assert bases(log) == [0, 1] and log.recovery_point == 0
    assert scheduler.pending == ["flush-log"]
    mock_time.sleep(0)
    assert log.recovery_point == 1 and scheduler.pending == []


# -- read -----------------------------------------------------------------------------------


@pytest.fixture
def three_segments(open_log: OpenLog, backend: ModuleType) -> Log:
    """Offsets 0-1 | 2-3 | 4-5, one 2-record batch per segment, epochs 0, 1, 2."""
    b = make_batch(backend, 2)
    log = open_log(segment_bytes=len(b))
    for epoch in range(3):
        log.append_as_leader(b, epoch)
    assert bases(log) == [0, 2, 4]
    return log


def test_read_whole_batches_per_segment(three_segments: Log, backend: ModuleType) -> None:
    log = three_segments
    for offset, expected in [(0, (0, 1)), (1, (0, 1)), (2, (2, 3)), (5, (4, 5))]:
        info = log.read(offset, 1 << 20)
        assert batch_ranges(backend, info) == [expected]
        assert info.offset == offset and info.segment_base_offset == expected[0]
        assert info.file.endswith(f"{expected[0]:020d}.log") and info.position == 0
    at_end = log.read(6, 1 << 20)
    assert at_end.length == 0 and at_end.read_bytes() == b""


def test_read_max_bytes_and_min_one_batch(open_log: OpenLog, backend: ModuleType) -> None:
    log = open_log()
    b = make_batch(backend, 2)
    for _ in range(3):
        log.append_as_leader(b, 0)
    assert batch_ranges(backend, log.read(0, 2 * len(b))) == [(0, 1), (2, 3)]
    assert batch_ranges(backend, log.read(0, 2 * len(b) - 1)) == [(0, 1)]
    assert batch_ranges(backend, log.read(2, 1)) == [(2, 3)]  # the first batch comes whole
    assert log.read(2, 1, min_one_batch=False).length == 0
    assert log.read(1, 0, min_one_batch=False).length == 0
    with pytest.raises(ValueError):
        log.read(0, -1)


def test_read_skips_to_the_next_segment(open_log: OpenLog, backend: ModuleType) -> None:
    # offsets 0-4, then a gap (as after compaction) to a segment starting at 10
    log = open_log()
    log.append_as_follower(make_batch(backend, 5, base_offset=0, epoch=0))
    log.roll(10)
    log.append_as_follower(make_batch(backend, 2, base_offset=10, epoch=0))
    assert bases(log) == [0, 10] and log.log_end_offset == 12
    info = log.read(7, 1 << 20)  # segment 0 has nothing >= 7: read from segment 10
    assert batch_ranges(backend, info) == [(10, 11)] and info.segment_base_offset == 10


def test_read_upper_bound_within_a_segment(open_log: OpenLog, backend: ModuleType) -> None:
    log = open_log()
    for _ in range(3):
        log.append_as_leader(make_batch(backend, 2), 0)
    assert batch_ranges(backend, log.read(0, 1 << 20, upper_bound=4)) == [(0, 1), (2, 3)]
    # a bound inside a batch excludes that batch (a batch is never split)
    assert batch_ranges(backend, log.read(0, 1 << 20, upper_bound=3)) == [(0, 1)]
    assert log.read(2, 1 << 20, upper_bound=3).length == 0
    assert log.read(4, 1 << 20, upper_bound=4).length == 0  # at the bound: nothing
    assert log.read(5, 1 << 20, upper_bound=4).length == 0  # past the bound: nothing
    everything = [(0, 1), (2, 3), (4, 5)]
    assert batch_ranges(backend, log.read(0, 1 << 20, upper_bound=99)) == everything  # capped


def test_read_upper_bound_across_segments(three_segments: Log, backend: ModuleType) -> None:
    log = three_segments
    assert batch_ranges(backend, log.read(0, 1 << 20, upper_bound=4)) == [(0, 1)]
    assert batch_ranges(backend, log.read(2, 1 << 20, upper_bound=4)) == [(2, 3)]
    assert log.read(4, 1 << 20, upper_bound=4).length == 0
    assert log.read(4, 1 << 20, upper_bound=5).length == 0
    assert batch_ranges(backend, log.read(4, 1 << 20, upper_bound=6)) == [(4, 5)]
    assert log.read(0, 1 << 20, upper_bound=0).length == 0


def test_read_out_of_range(three_segments: Log) -> None:
    log = three_segments
    with pytest.raises(OffsetOutOfRangeError, match="but we only have log segments upto 6"):
        log.read(7, 100)
    log.delete_records_before(3)
    with pytest.raises(OffsetOutOfRangeError, match="starting from offset: 3"):
        log.read(2, 100)
    info = log.read(3, 100)  # the batch holding 3 starts at 2: whole batches only
    assert info.offset == 3 and info.segment_base_offset == 2


def test_a_read_region_survives_segment_deletion(
    three_segments: Log, backend: ModuleType, mock_time: MockTime, tmp_path: Path
) -> None:
    log = three_segments
    info = log.read(0, 1 << 20)
    data = info.read_bytes()
    log.delete_records_before(2)
    assert log.delete_old_segments() == 1
    d = tmp_path / "topic-0"
    assert not (d / "00000000000000000000.log").exists()
    assert (d / "00000000000000000000.log.deleted").exists()
    assert info.read_bytes() == data  # follows the rename until the delayed delete
    assert read_region(info.file, info.position, info.length) == data  # what the network calls
    mock_time.sleep(60_000)
    assert not (d / "00000000000000000000.log.deleted").exists()
    assert not any(name.endswith(".deleted") for name in os.listdir(d))
    with pytest.raises(StorageIOError, match="segment file is gone"):
        info.read_bytes()


def test_read_region_reads_short_after_a_truncation(open_log: OpenLog, backend: ModuleType) -> None:
    log = open_log()
    for _ in range(3):
        log.append_as_leader(make_batch(backend), 0)
    info = log.read(0, 1 << 20)
    whole = read_region(info.file, info.position, info.length)
    assert len(whole) == info.length
    log.truncate_to(1)
    assert read_region(info.file, info.position, info.length) == whole[: log.size]
    assert read_region(info.file, info.position, 0) == b""


# -- offsets by timestamp ---------------------------------------------------------------------


@pytest.fixture
def timed_log(open_log: OpenLog, backend: ModuleType) -> Log:
    """Offsets and timestamps (T0 +): 0:100 1:300 | 2:200 3:250 | 4:400 5:350, epochs 0, 0, 1,
    one batch per segment."""
    plan = [([100, 300], 0), ([200, 250], 0), ([400, 350], 1)]
    batches = [(make_batch(backend, 2, ts=[T0 + s for s in stamps]), e) for stamps, e in plan]
    log = open_log(segment_bytes=max(len(b) for b, _ in batches))
    for b, epoch in batches:
        log.append_as_leader(b, epoch)
    assert bases(log) == [0, 2, 4]
    return log


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        (T0 + 50, (T0 + 100, 0, 0)),
        (T0 + 150, (T0 + 300, 1, 0)),  # the first offset with a timestamp >= target
        (T0 + 260, (T0 + 300, 1, 0)),
        (T0 + 300, (T0 + 300, 1, 0)),
        (T0 + 301, (T0 + 400, 4, 1)),  # segments 0 and 2 end below it
        (T0 + 400, (T0 + 400, 4, 1)),
        (T0 + 401, None),
        (-1, (-1, 6, 1)),  # latest: the log end offset and the latest epoch
        (-2, (-1, 0, 0)),  # earliest
        (-3, (T0 + 400, 4, 1)),  # max timestamp
        (-4, (-1, 0, 0)),  # earliest local: no tiered storage
        (-5, (-1, -1, -1)),  # latest tiered
    ],
)
def test_offset_for_timestamp(
    timed_log: Log, target: int, expected: tuple[int, int, int] | None
) -> None:
    found = timed_log.offset_for_timestamp(target)
    assert found == (None if expected is None else TimestampAndOffset(*expected))


def test_offset_for_timestamp_respects_log_start_offset(timed_log: Log) -> None:
    timed_log.delete_records_before(1)
    assert timed_log.offset_for_timestamp(-2) == TimestampAndOffset(-1, 1, 0)
    assert timed_log.offset_for_timestamp(T0 + 50) == TimestampAndOffset(T0 + 300, 1, 0)
    timed_log.delete_records_before(3)
    # As Kafka: the search stays in the first segment whose largest timestamp is >= the
    # target, here segment 0, wholly below the log start offset until retention drops it.
    assert timed_log.offset_for_timestamp(T0 + 50) is None
    timed_log.delete_old_segments()
    assert timed_log.offset_for_timestamp(T0 + 50) == TimestampAndOffset(T0 + 250, 3, 0)


def test_offset_for_timestamp_max_timestamp_ties(open_log: OpenLog, backend: ModuleType) -> None:
    log = open_log()
    log.append_as_leader(make_batch(backend, 3, ts=[T0 + 1, T0 + 9, T0 + 9]), 0)
    log.append_as_leader(make_batch(backend, 1, ts=T0 + 9), 0)
    assert log.offset_for_timestamp(-3) == TimestampAndOffset(T0 + 9, 1, 0)  # the first one


def test_offset_for_timestamp_on_empty_log(open_log: OpenLog) -> None:
    log = open_log()
    assert log.offset_for_timestamp(-1) == TimestampAndOffset(-1, 0, None)
    assert log.offset_for_timestamp(-2) == TimestampAndOffset(-1, 0, None)
    assert log.offset_for_timestamp(-3) is None
    assert log.offset_for_timestamp(T0) is None


# -- log start offset, truncation ---------------------------------------------------------------


def test_delete_records_before(three_segments: Log, tmp_path: Path) -> None:
    log = three_segments
    assert log.delete_records_before(3) is True
    assert log.log_start_offset == 3 and log.recovery_point == 3
    assert log.delete_records_before(1) is False and log.log_start_offset == 3
    assert log.leader_epoch_cache.entries() == [EpochEntry(1, 3), EpochEntry(2, 4)]
    with pytest.raises(OffsetOutOfRangeError, match="larger than the log end offset 6"):
        log.delete_records_before(7)
    # segments wholly below the log start offset go at the next retention pass
    assert bases(log) == [0, 2, 4]
    assert log.delete_old_segments() == 1
    assert bases(log) == [2, 4] and log.log_start_offset == 3
    assert log.delete_records_before(6) is True  # up to the log end offset
    assert log.delete_old_segments() == 1  # the last segment has no next one to compare
    assert bases(log) == [4] and log.log_start_offset == 6 and log.log_end_offset == 6
    assert log.read(6, 100).length == 0


def test_truncate_to(three_segments: Log, backend: ModuleType, tmp_path: Path) -> None:
    log = three_segments
    d = tmp_path / "topic-0"
    assert log.truncate_to(4) is True
    assert bases(log) == [0, 2, 4] and log.log_end_offset == 4 and log.active_segment.size == 0
    assert log.leader_epoch_cache.entries() == [EpochEntry(0, 0), EpochEntry(1, 2)]
    assert log.truncate_to(2) is True
    assert bases(log) == [0, 2] and log.log_end_offset == 2
    assert (d / "00000000000000000004.log.deleted").exists()
    assert log.leader_epoch_cache.entries() == [EpochEntry(0, 0)]
    info = log.append_as_leader(make_batch(backend), 3)  # appends continue at the target
    assert info.first_offset == 2 and log.active_segment.base_offset == 2
    assert all_offsets(backend, log) == [0, 1, 2]


def test_truncate_to_at_or_past_the_end_only_trims_epochs(three_segments: Log) -> None:
    log = three_segments
    log.maybe_assign_epoch_start_offset(5, 6)  # a leader that never wrote in epoch 5
    assert log.truncate_to(6) is False
    assert log.leader_epoch_cache.latest_entry() == EpochEntry(2, 4)
    assert log.truncate_to(100) is False and log.log_end_offset == 6
    with pytest.raises(ValueError, match="negative offset"):
        log.truncate_to(-1)


def test_truncate_to_inside_a_batch(three_segments: Log) -> None:
    log = three_segments
    assert log.truncate_to(3) is True
    # the batch 2-3 holding the target goes whole: the log ends at its base offset
    assert bases(log) == [0, 2] and log.log_end_offset == 2


def test_truncate_below_the_first_segment(three_segments: Log, backend: ModuleType) -> None:
    log = three_segments
    log.delete_records_before(2)
    log.delete_old_segments()
    assert bases(log) == [2, 4]
    assert log.truncate_to(1) is True
    assert bases(log) == [1] and (log.log_start_offset, log.log_end_offset) == (1, 1)


def test_truncate_fully_and_start_at(
    three_segments: Log, backend: ModuleType, tmp_path: Path
) -> None:
    log = three_segments
    log.truncate_fully_and_start_at(100)
    assert bases(log) == [100]
    assert (log.log_start_offset, log.log_end_offset) == (100, 100)
    assert log.leader_epoch_cache.entries() == []
    assert (tmp_path / "topic-0" / "leader-epoch-checkpoint").read_bytes() == b"0\n0\n"
    assert log.append_as_leader(make_batch(backend), 9).first_offset == 100
    log.truncate_fully_and_start_at(100, log_start_offset=50)  # same base: recreated empty
    assert bases(log) == [100] and log.active_segment.size == 0 and log.log_start_offset == 50
    assert log.read(100, 100).length == 0


# -- follower appends and epochs -----------------------------------------------------------------


def test_follower_append_keeps_the_leaders_batches(open_log: OpenLog, backend: ModuleType) -> None:
    log = open_log()
    b1 = make_batch(backend, 3, base_offset=0, epoch=3)
    b2 = make_batch(backend, 2, base_offset=3, epoch=5)
    info = log.append_as_follower(b1 + b2)
    assert (info.first_offset, info.last_offset, info.last_leader_epoch) == (0, 4, 5)
    assert log.read(0, 1 << 20).read_bytes() == b1 + b2  # byte for byte
    assert log.leader_epoch_cache.entries() == [EpochEntry(3, 0), EpochEntry(5, 3)]
    with pytest.raises(UnexpectedAppendOffsetError) as err:
        log.append_as_follower(make_batch(backend, base_offset=4, epoch=5))
    assert (err.value.first_offset, err.value.last_offset) == (4, 4)
    with pytest.raises(InvalidOffsetError, match="Out of order offsets"):
        log.append_as_follower(
            make_batch(backend, 2, base_offset=10, epoch=5) + make_batch(backend, base_offset=11)
        )
    log.append_as_follower(make_batch(backend, base_offset=20, epoch=5))  # a gap is fine
    assert log.log_end_offset == 21


def test_end_offset_for_epoch(open_log: OpenLog, backend: ModuleType, tmp_path: Path) -> None:
    log = open_log()
    log.append_as_leader(make_batch(backend, 2), 0)
    log.append_as_leader(make_batch(backend, 2), 2)
    assert (tmp_path / "topic-0" / "leader-epoch-checkpoint").read_bytes() == b"0\n2\n0 0\n2 2\n"
    assert log.latest_epoch == 2
    assert log.end_offset_for_epoch(0) == (0, 2)
    assert log.end_offset_for_epoch(1) == (0, 2)  # KIP-279: the largest epoch <= 1
    assert log.end_offset_for_epoch(2) == (2, 4)  # latest: the log end offset
    assert log.end_offset_for_epoch(3) is None
    assert log.end_offset_for_epoch(-1) is None
    log.maybe_assign_epoch_start_offset(4, log.log_end_offset)  # a new leader (KAFKA-7415)
    assert log.end_offset_for_epoch(2) == (2, 4) and log.end_offset_for_epoch(4) == (4, 4)


# -- flush -------------------------------------------------------------------------------------


def test_flush_moves_the_recovery_point(open_log: OpenLog, backend: ModuleType) -> None:
    log = open_log()
    for _ in range(3):
        log.append_as_leader(make_batch(backend), 0)
    assert log.recovery_point == 0 and log.unflushed_messages == 3
    log.flush(1)
    assert log.recovery_point == 1
    log.flush(0)  # never backwards
    assert log.recovery_point == 1
    log.flush()
    assert log.recovery_point == 3 and log.unflushed_messages == 0
    log.flush(99)  # capped at the log end offset
    assert log.recovery_point == 3


def test_flush_messages(open_log: OpenLog, backend: ModuleType) -> None:
    log = open_log(flush_messages=2)
    log.append_as_leader(make_batch(backend), 0)
    assert log.recovery_point == 0
    log.append_as_leader(make_batch(backend), 0)
    assert log.recovery_point == 2


def test_a_multi_batch_append_rolls_when_its_index_entries_do_not_fit(
    open_log: OpenLog, backend: ModuleType
) -> None:
    """shouldRoll says no (the indexes are not full), but the three batches need three
    more index entries than the time index has left: the log rolls and appends them to
    the new segment, whole."""
    log = open_log(segment_index_bytes=48, index_interval_bytes=1)  # 4 time-index slots
    for offset in range(3):
        log.append_as_follower(make_batch(backend, base_offset=offset, ts=T0 + offset))
    assert log.number_of_segments == 1 and not log.active_segment.files.index_is_full
    three = b"".join(make_batch(backend, base_offset=o, ts=T0 + o) for o in (3, 4, 5))
    info = log.append_as_follower(three)
    assert (info.first_offset, info.last_offset, info.num_batches) == (3, 5, 3)
    assert [s.base_offset for s in log.segments] == [0, 3]
    assert log.log_end_offset == 6
    assert [log.read(o, 1 << 20).offset for o in range(6)] == list(range(6))


class StalledFlush:
    """``log.flush()`` on a thread of its own whose first fsync waits until
    :meth:`finish` (a slow disk); ``os.fsync`` is patched for that thread only."""

    def __init__(self, log: Log, monkeypatch: pytest.MonkeyPatch) -> None:
        self.in_fsync, self.release = threading.Event(), threading.Event()
        self.thread = threading.Thread(target=log.flush, name="flusher")
        real_fsync = os.fsync

        def slow_fsync(fd: int) -> None:
            if threading.current_thread() is self.thread and not self.in_fsync.is_set():
                self.in_fsync.set()
                self.release.wait(30)
            real_fsync(fd)

        monkeypatch.setattr(os, "fsync", slow_fsync)
        self.thread.start()
        assert self.in_fsync.wait(10), "the flush never fsynced a file"

    def finish(self) -> None:
        self.release.set()
        self.thread.join(10)


def test_append_goes_on_while_a_flush_fsyncs(
    open_log: OpenLog, backend: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kafka's UnifiedLog.flush: the fsync runs outside the log's lock, so a flush stuck in
    fsync (a slow disk) does not hold up appends; the recovery point moves when it ends,
    to the log end offset the flush started from."""
    log = open_log()
    log.append_as_leader(make_batch(backend), 0)
    appended: list[int] = []
    appender = threading.Thread(
        target=lambda: appended.append(log.append_as_leader(make_batch(backend), 0).first_offset)
    )
    flush = StalledFlush(log, monkeypatch)
    try:
        appender.start()
        appender.join(10)
        assert appended == [1], "the append waited for the flush's fsync"
        assert log.recovery_point == 0  # the flush has not finished
    finally:
        flush.finish()
        appender.join(10)
    assert log.recovery_point == 1 and log.log_end_offset == 2


def test_flush_does_not_move_the_recovery_point_over_a_truncation(
    open_log: OpenLog, backend: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A truncation (and new appends over the truncated offsets) while a flush is in its
    fsync: the new bytes were not fsynced, so the recovery point stays where it was."""
    log = open_log()
    for _ in range(4):
        log.append_as_leader(make_batch(backend), 0)
    flush = StalledFlush(log, monkeypatch)
    try:
        log.truncate_to(1)
        for _ in range(5):
            log.append_as_leader(make_batch(backend), 1)
    finally:
        flush.finish()
    assert log.log_end_offset == 6 and log.recovery_point == 0
    log.flush()
    assert log.recovery_point == 6


# -- reopening ---------------------------------------------------------------------------------


def test_reopen_brings_the_log_back(open_log: OpenLog, backend: ModuleType, tmp_path: Path) -> None:
    b = make_batch(backend, 2)
    log = open_log(segment_bytes=len(b), index_interval_bytes=1)
    topic_id = uuid.uuid4()
    log.assign_topic_id(topic_id)
    for epoch in (0, 0, 1, 1):
        log.append_as_leader(b, epoch)
    before = [log.read(o, 1 << 20).read_bytes() for o in range(8)]
    indexes = [s.files.offset_index() for s in log.segments]
    log.close()
    assert log.closed and log.recovery_point == 8

    again = open_log(segment_bytes=len(b), index_interval_bytes=1)
    assert bases(again) == [0, 2, 4, 6]
    assert (again.log_start_offset, again.log_end_offset, again.recovery_point) == (0, 8, 8)
    assert [again.read(o, 1 << 20).read_bytes() for o in range(8)] == before
    assert [s.files.offset_index() for s in again.segments] == indexes
    assert again.leader_epoch_cache.entries() == [EpochEntry(0, 0), EpochEntry(1, 4)]
    assert again.topic_id == topic_id
    assert again.offset_for_timestamp(-3) == TimestampAndOffset(T0, 0, 0)  # first of the ties
    assert again.append_as_leader(make_batch(backend), 2).first_offset == 8
    with pytest.raises(InconsistentTopicIdError):
        again.assign_topic_id(uuid.uuid4())
    again.close()

    with_checkpoints = open_log(log_start_offset=3, recover_from=8)
    assert with_checkpoints.log_start_offset == 3
    assert with_checkpoints.leader_epoch_cache.entries() == [
        EpochEntry(0, 3),
        EpochEntry(1, 4),
        EpochEntry(2, 8),
    ]


def test_reopen_recovers_a_torn_tail(
    open_log: OpenLog, backend: ModuleType, tmp_path: Path
) -> None:
    b = make_batch(backend, 2)
    log = open_log(segment_bytes=2 * len(b))
    for _ in range(4):
        log.append_as_leader(b, 0)
    log.close()
    last = tmp_path / "topic-0" / "00000000000000000004.log"
    with open(last, "ab") as f:
        f.write(b[: len(b) // 2])  # half a batch written before the crash
    again = open_log(segment_bytes=2 * len(b), recover_from=4)
    assert again.log_end_offset == 8 and again.recovery_point == 4
    assert os.path.getsize(last) == 2 * len(b)  # the torn bytes are gone
    assert again.append_as_leader(b, 0).first_offset == 8


def test_reopen_recovery_drops_everything_after_corruption(
    open_log: OpenLog, backend: ModuleType, tmp_path: Path
) -> None:
    b = make_batch(backend, 2)
    log = open_log(segment_bytes=len(b))
    for _ in range(4):
        log.append_as_leader(b, 0)
    log.close()
    d = tmp_path / "topic-0"
    middle = d / "00000000000000000002.log"
    raw = bytearray(middle.read_bytes())
    raw[-1] ^= 0x01
    middle.write_bytes(bytes(raw))
    again = open_log(segment_bytes=len(b), recover_from=0)
    assert bases(again) == [0, 2] and again.log_end_offset == 2
    assert (d / "00000000000000000004.log.deleted").exists()
    assert again.leader_epoch_cache.entries() == [EpochEntry(0, 0)]


def test_reopen_rebuilds_missing_or_corrupt_indexes(
    open_log: OpenLog, backend: ModuleType, tmp_path: Path
) -> None:
    b = make_batch(backend)
    log = open_log(segment_bytes=4 * len(b), index_interval_bytes=1)
    for i in range(8):
        log.append_as_leader(make_batch(backend, ts=T0 + i), 0)
    expected = [(s.files.offset_index(), s.files.time_index()) for s in log.segments]
    log.close()
    d = tmp_path / "topic-0"
    os.remove(d / "00000000000000000000.index")
    (d / "00000000000000000004.timeindex").write_bytes(b"\x00" * 11)  # not a multiple of 12
    (d / "00000000000000000099.index").write_bytes(b"")  # orphan: no .log
    (d / "00000000000000000003.log.deleted").write_bytes(b"left by a crash")
    again = open_log(segment_bytes=4 * len(b), index_interval_bytes=1)
    assert [(s.files.offset_index(), s.files.time_index()) for s in again.segments] == expected
    assert not (d / "00000000000000000099.index").exists()
    assert not (d / "00000000000000000003.log.deleted").exists()


def test_reopen_with_log_start_past_the_end_empties_the_log(
    open_log: OpenLog, backend: ModuleType
) -> None:
    log = open_log()
    log.append_as_leader(make_batch(backend, 3), 0)
    log.close()
    again = open_log(log_start_offset=10)
    assert bases(again) == [10] and (again.log_start_offset, again.log_end_offset) == (10, 10)


def test_directory_name_gives_the_partition(open_log: OpenLog, tmp_path: Path) -> None:
    log = open_log("my-dashed-topic-12")
    assert log.topic_partition == TopicPartition("my-dashed-topic", 12)
    with pytest.raises(ValueError, match="not in the form of topic-partition"):
        open_log("nodash")
    named = open_log("anything", topic_partition=TopicPartition("x", 1))
    assert str(named.topic_partition) == "x-1"


def test_delete_removes_the_directory(
    open_log: OpenLog, backend: ModuleType, tmp_path: Path
) -> None:
    log = open_log()
    log.append_as_leader(make_batch(backend), 0)
    log.delete()
    assert not (tmp_path / "topic-0").exists() and log.closed
    with pytest.raises(ValueError, match="closed"):
        log.append_as_leader(make_batch(backend), 0)


def test_default_config_is_kafkas(tmp_path: Path, backend: ModuleType) -> None:
    log = Log(tmp_path / "t-0", backend=backend, time=MockTime(T0))
    assert log.config.segment_bytes == 1 << 30 and log.config.retention_ms == 7 * DAY
    log.close()


# -- segments map ------------------------------------------------------------------------------


class _FakeSegment:
    def __init__(self, base: int) -> None:
        self.base_offset = base
        self.size = 1


def test_log_segments_lookups() -> None:
    segs = LogSegments()
    for base in (10, 0, 30, 20):
        segs.add(_FakeSegment(base))  # type: ignore[arg-type]
    assert segs.base_offsets() == [0, 10, 20, 30] and len(segs) == 4
    floor = segs.floor_segment
    assert [floor(o).base_offset for o in (0, 9, 10, 35)] == [0, 0, 10, 30]  # type: ignore[union-attr]
    assert segs.floor_segment(-1) is None
    assert segs.higher_segment(10).base_offset == 20  # type: ignore[union-attr]
    assert segs.higher_segment(30) is None
    assert segs.lower_segment(10).base_offset == 0  # type: ignore[union-attr]
    assert [s.base_offset for s in segs.values(15, 30)] == [10, 20]
    assert [s.base_offset for s in segs.values(0, 10)] == [0]
    assert segs.values(12, 12) == []
    with pytest.raises(ValueError):
        segs.values(12, 11)
    assert [s.base_offset for s in segs.higher_segments(10)] == [20, 30]
    assert segs.active_segment.base_offset == 30 and segs.size_in_bytes() == 4
    segs.remove(20)
    assert segs.base_offsets() == [0, 10, 30] and 20 not in segs


# -- concurrency -------------------------------------------------------------------------------


def test_concurrent_appends_and_reads(open_log: OpenLog, backend: ModuleType) -> None:
    b = make_batch(backend, 2)
    log = open_log(segment_bytes=8 * len(b))
    errors: list[BaseException] = []
    stop = threading.Event()

    def writer() -> None:
        try:
            for _ in range(40):
                log.append_as_leader(b, 0)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def reader() -> None:
        rng = random.Random(1)
        try:
            while not stop.is_set():
                end = log.log_end_offset
                info = log.read(rng.randint(0, end), 1 << 16)
                data = info.read_bytes()
                for h in headers(backend, data):
                    assert h[0] % 2 == 0 and h[6] == 1
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer) for _ in range(4)]
    readers = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads + readers:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    for t in readers:
        t.join()
    assert errors == []
    assert log.log_end_offset == 320
    assert all_offsets(backend, log) == list(range(320))
    assert bases(log) == list(range(0, 320, 16))


def test_header_layout_used_by_the_tests(backend: ModuleType) -> None:
    # guards the tuple indices the helpers above rely on
    b = make_batch(backend, 3, base_offset=0, epoch=4)
    h = backend.batch_header(b, 0)
    assert (h[0], h[1], h[2], h[6], h[12]) == (0, len(b) - 12, 4, 2, 3)
    assert struct.unpack_from(">q", b, 0)[0] == 0
