"""The leader's checks before a write (``kafkacore.log.validator``, Kafka's
``LogValidator`` and ``ProduceRequest.validateRecords``): the produce shape, CreateTime
timestamps, and that :meth:`Log.append` applies them to a client's batch only. The wire
answers of the same checks are in ``test_produce_validation.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkacore.config import LogConfig
from kafkacore.errors import (
    CorruptRecordError,
    InvalidRecordError,
    InvalidTimestampError,
    RecordTooLargeError,
    RecordValidationError,
)
from kafkacore.log import AppendOrigin, Log, MockScheduler, MockTime, TopicPartition
from kafkacore.log.validator import (
    validate_as_leader,
    validate_produce_records,
    validate_timestamp,
)
from kafkacore.native import backend
from kafkacore.record import BatchHeader

NOW = 1_800_000_000_000
HOUR = 3_600_000
TP = TopicPartition("t", 0)


def batch(*timestamps: int, key: bytes | None = b"k", **options: int) -> bytes:
    base = options.get("base_offset", 0)
    return backend.build_batch(
        [(base + i, ts, key, b"v", []) for i, ts in enumerate(timestamps)],
        **options,  # type: ignore[arg-type]
    )


def header(data: bytes) -> BatchHeader:
    return BatchHeader._make(backend.batch_header(data, 0))


def test_produce_records_must_be_one_whole_magic_2_batch() -> None:
    one = batch(NOW)
    assert validate_produce_records(memoryview(one)) == one
    cases: list[tuple[bytes | None, type[Exception], str]] = [
        (None, InvalidRecordError, "must have at least one record batch"),
        (b"", InvalidRecordError, "must have at least one record batch"),
        (one[:60], CorruptRecordError, "Record batch is shorter than its header"),
        (one[:16] + b"\x01" + one[17:], InvalidRecordError, "must use record batch magic v2"),
        (one + one, InvalidRecordError, "must have exactly one record batch"),
        (one[:-1], CorruptRecordError, "Record batch is truncated"),
    ]
    for records, error, message in cases:
        with pytest.raises(error, match=message):
            validate_produce_records(records)


@given(
    offset_ms=st.integers(-3 * HOUR, 3 * HOUR),
    before_ms=st.integers(0, 2 * HOUR),
    after_ms=st.integers(0, 2 * HOUR),
    log_append_time=st.booleans(),
)
def test_a_create_time_batch_is_refused_exactly_outside_the_window(
    offset_ms: int, before_ms: int, after_ms: int, log_append_time: bool
) -> None:
    config = LogConfig(
        {
            "message.timestamp.before.max.ms": str(before_ms),
            "message.timestamp.after.max.ms": str(after_ms),
        }
    )
    h = header(batch(NOW + offset_ms, timestamp_type=int(log_append_time)))
    outside = offset_ms < -before_ms or offset_ms > after_ms
    if outside and not log_append_time:
        with pytest.raises(InvalidTimestampError) as refused:
            validate_timestamp(h, config, NOW)
        assert str(refused.value) == (
            f"Timestamp {NOW + offset_ms} of message with offset 0 is out of range. The "
            f"timestamp should be within [{NOW - before_ms}, {NOW + after_ms}]"
        )
    else:
        validate_timestamp(h, config, NOW)


def test_the_max_timestamp_is_checked_too_and_log_append_time_topics_are_not() -> None:
    late = header(batch(NOW, NOW + 2 * HOUR))  # base fine, max an hour past the bound
    with pytest.raises(InvalidTimestampError, match=f"Timestamp {NOW + 2 * HOUR} "):
        validate_timestamp(late, LogConfig({}), NOW)
    validate_timestamp(late, LogConfig({"message.timestamp.type": "LogAppendTime"}), NOW)


def test_timestamps_come_before_the_batch_checks_and_size_after_base_offset() -> None:
    """The order the old Produce path had: timestamp, base offset, size, batch rules."""
    small = LogConfig({"max.message.bytes": "80"})
    far = batch(NOW + 2 * HOUR, NOW + 2 * HOUR, NOW + 2 * HOUR, base_offset=5)
    with pytest.raises(InvalidTimestampError):
        validate_as_leader(backend, far, [header(far)], small, TP, client=True, now_ms=NOW)
    moved = batch(NOW, NOW, NOW, base_offset=5)
    with pytest.raises(InvalidRecordError, match="should be 0, but it is 5"):
        validate_as_leader(backend, moved, [header(moved)], small, TP, client=True, now_ms=NOW)
    big = batch(NOW, NOW, NOW)
    with pytest.raises(RecordTooLargeError):
        validate_as_leader(backend, big, [header(big)], small, TP, client=True, now_ms=NOW)
    control = batch(NOW, control=True)
    with pytest.raises(InvalidRecordError, match="not allowed to write control records"):
        validate_as_leader(
            backend, control, [header(control)], LogConfig({}), TP, client=True, now_ms=NOW
        )
    keyless = batch(NOW, NOW, key=None)
    with pytest.raises(RecordValidationError) as refused:
        validate_as_leader(
            backend,
            keyless,
            [header(keyless)],
            LogConfig({"cleanup.policy": "compact"}),
            TP,
            client=True,
            now_ms=NOW,
        )
    assert [index for index, _message in refused.value.record_errors] == [0, 1]


def open_log(directory: Path) -> Log:
    clock = MockTime(NOW)
    return Log(directory, LogConfig({}), time=clock, scheduler=MockScheduler(clock))


def test_the_log_checks_a_clients_timestamps_with_its_own_clock(tmp_path: Path) -> None:
    """Log.append calls the validator for a client's batch; the log's time is ``now``. A
    coordinator's or a follower's batch is not the producer's and is taken as it is."""
    future = batch(NOW + 2 * HOUR)
    with open_log(tmp_path / "t-0") as log:
        with pytest.raises(InvalidTimestampError):
            log.append_as_leader(future, 0)
        assert log.log_end_offset == 0
        log.append_as_leader(batch(NOW + HOUR), 0)
        log.append_as_leader(future, 0, origin=AppendOrigin.COORDINATOR)
        log.append_as_follower(batch(NOW + 2 * HOUR, base_offset=2, partition_leader_epoch=0))
        assert log.log_end_offset == 3
