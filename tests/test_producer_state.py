"""Idempotent-producer state (``kafkacore.log.producer_state``): Kafka's
``ProducerStateManager`` validation rules, duplicate detection, the ``.snapshot`` format,
loading, truncation and expiry. The batches are real ones from ``build_batch``."""

from __future__ import annotations

import io
import os
import struct
from pathlib import Path

import pytest

from kafkacore.config import LogConfig
from kafkacore.log import Log, MockScheduler, MockTime
from kafkacore.log.producer_state import (
    DEFAULT_PRODUCER_ID_EXPIRATION_MS,
    NUM_BATCHES_TO_RETAIN,
    CorruptSnapshotError,
    DuplicateSequenceError,
    InvalidProducerEpochError,
    OutOfOrderSequenceError,
    ProducerStateEntry,
    ProducerStateManager,
    decrement_sequence,
    increment_sequence,
    read_snapshot,
    serialize_snapshot,
)
from kafkacore.native import backend
from kafkacore.record import BatchHeader, batch_header
from kafkacore.tools.dump_log import dump_files

INT_MAX = 2**31 - 1
PID = 1000


def header(
    pid: int = PID,
    epoch: int = 0,
    seq: int = 0,
    count: int = 1,
    ts: int = 1_000,
    *,
    transactional: bool = False,
    control: bool = False,
) -> BatchHeader:
    records = [(i, ts + i, b"k", b"v", []) for i in range(count)]
    data = backend.build_batch(
        records,
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
        transactional=transactional,
        control=control,
    )
    return batch_header(data, 0)


def append(psm: ProducerStateManager, h: BatchHeader, *, client: bool = True) -> tuple[int, int]:
    """Append as the leader at the state's end offset; (first, last) offsets."""
    first = psm.map_end_offset
    pending = psm.prepare_append([h], first, client=client)
    psm.complete_append(pending)
    return first, psm.map_end_offset - 1


@pytest.fixture
def psm(tmp_path: Path) -> ProducerStateManager:
    return ProducerStateManager(tmp_path, topic_partition="t-0")


def crc32c_reference(data: bytes) -> int:
    """Bitwise CRC-32C (Castagnoli, reflected 0x82F63B78): independent of the backends."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


# -- sequences ---------------------------------------------------------------------------


def test_sequence_arithmetic_wraps_at_int_max() -> None:
    assert increment_sequence(5, 3) == 8
    assert increment_sequence(INT_MAX, 1) == 0
    assert increment_sequence(INT_MAX - 1, 3) == 1
    assert decrement_sequence(1, 3) == INT_MAX - 1
    assert decrement_sequence(8, 3) == 5


# -- validation --------------------------------------------------------------------------


def test_first_batch_and_in_sequence_appends(psm: ProducerStateManager) -> None:
    assert append(psm, header(seq=0, count=3)) == (0, 2)
    assert append(psm, header(seq=3, count=2)) == (3, 4)
    entry = psm.last_entry(PID)
    assert entry is not None
    assert (entry.producer_epoch, entry.first_seq, entry.last_seq) == (0, 0, 4)
    assert (entry.last_data_offset, entry.last_offset_delta) == (4, 1)
    assert entry.last_timestamp == 1_001  # the batch's max timestamp
    assert psm.map_end_offset == 5


def test_sequence_gap_is_out_of_order_and_changes_nothing(psm: ProducerStateManager) -> None:
    append(psm, header(seq=0, count=2))
    with pytest.raises(OutOfOrderSequenceError, match=r"3 \(incoming seq. number\), 1"):
        psm.prepare_append([header(seq=3)], 2, client=True)
    with pytest.raises(OutOfOrderSequenceError):
        psm.prepare_append([header(seq=1)], 2, client=True)  # overlaps, not a duplicate
    entry = psm.last_entry(PID)
    assert entry is not None and entry.last_seq == 1 and psm.map_end_offset == 2
    assert append(psm, header(seq=2)) == (2, 2)


def test_lower_epoch_is_fenced(psm: ProducerStateManager) -> None:
    append(psm, header(epoch=3, seq=0))
    with pytest.raises(InvalidProducerEpochError, match="smaller than the last seen epoch 3"):
        psm.prepare_append([header(epoch=2, seq=1)], 1, client=True)


def test_lower_epoch_from_a_replica_is_only_warned(
    psm: ProducerStateManager, caplog: pytest.LogCaptureFixture
) -> None:
    append(psm, header(epoch=3, seq=0))
    append(psm, header(epoch=2, seq=9), client=False)
    assert "smaller than the last seen epoch" in caplog.text
    entry = psm.last_entry(PID)
    assert entry is not None and entry.producer_epoch == 2


def test_new_epoch_must_start_at_sequence_zero(psm: ProducerStateManager) -> None:
    append(psm, header(epoch=0, seq=0, count=5))
    with pytest.raises(OutOfOrderSequenceError, match="new epoch"):
        psm.prepare_append([header(epoch=1, seq=5)], 5, client=True)
    assert append(psm, header(epoch=1, seq=0)) == (5, 5)
    entry = psm.last_entry(PID)
    assert entry is not None
    # the old epoch's batches are forgotten
    assert (entry.producer_epoch, len(entry.batches), entry.first_seq) == (1, 1, 0)


def test_unknown_producer_is_accepted_at_any_sequence(psm: ProducerStateManager) -> None:
    # Kafka 4: state evicted by retention/expiry is not UNKNOWN_PRODUCER_ID any more
    assert append(psm, header(pid=7, epoch=4, seq=42)) == (0, 0)
    entry = psm.last_entry(7)
    assert entry is not None and (entry.producer_epoch, entry.last_seq) == (4, 42)
    with pytest.raises(OutOfOrderSequenceError):
        psm.prepare_append([header(pid=7, epoch=4, seq=44)], 1, client=True)


def test_sequence_wraps_after_int_max(psm: ProducerStateManager) -> None:
    append(psm, header(seq=INT_MAX - 1, count=2))  # ends at INT_MAX
    assert append(psm, header(seq=0, count=3)) == (2, 4)
    entry = psm.last_entry(PID)
    assert entry is not None and entry.last_seq == 2
    # a batch straddling the wrap: INT_MAX-1, INT_MAX, 0
    wrap = ProducerStateManager(psm.directory + "-wrap")
    append(wrap, header(seq=INT_MAX - 1, count=3))
    wrapped = wrap.last_entry(PID)
    assert wrapped is not None
    assert (wrapped.first_seq, wrapped.last_seq) == (INT_MAX - 1, 0)
    assert append(wrap, header(seq=1)) == (3, 3)


def test_duplicates_of_each_of_the_last_five_batches(psm: ProducerStateManager) -> None:
    offsets = [append(psm, header(seq=2 * n, count=2, ts=100 * n)) for n in range(6)]
    assert NUM_BATCHES_TO_RETAIN == 5
    for n in range(1, 6):
        with pytest.raises(DuplicateSequenceError) as info:
            psm.prepare_append([header(seq=2 * n, count=2, ts=999)], 12, client=True)
        assert (info.value.first_offset, info.value.last_offset) == offsets[n]
        assert info.value.timestamp == 100 * n + 1  # the original batch's max timestamp
    # the 6th-oldest is no longer cached: its retry is out of order
    with pytest.raises(OutOfOrderSequenceError):
        psm.prepare_append([header(seq=0, count=2)], 12, client=True)
    assert psm.map_end_offset == 12


def test_duplicate_needs_the_exact_range_and_epoch(psm: ProducerStateManager) -> None:
    append(psm, header(epoch=1, seq=0, count=3))
    with pytest.raises(OutOfOrderSequenceError):
        psm.prepare_append([header(epoch=1, seq=0, count=2)], 3, client=True)
    # the same range under a new epoch is no duplicate: a new epoch's first batch
    pending = psm.prepare_append([header(epoch=2, seq=0, count=3)], 3, client=True)
    assert pending.end_offset == 6
    # a replica append is never treated as a duplicate
    pending = psm.prepare_append([header(epoch=1, seq=0, count=3)], 3, client=False)
    assert pending.end_offset == 6


def test_multi_batch_append_validates_transitively(psm: ProducerStateManager) -> None:
    pending = psm.prepare_append(
        [header(seq=0, count=2), header(seq=2, count=1), header(pid=9, seq=0)], 10, client=True
    )
    assert psm.last_entry(PID) is None  # nothing applied before complete_append
    psm.complete_append(pending)
    entry = psm.last_entry(PID)
    assert entry is not None
    assert [(b.first_offset, b.last_offset) for b in entry.batches] == [(10, 11), (12, 12)]
    assert psm.map_end_offset == 14
    with pytest.raises(OutOfOrderSequenceError):
        psm.prepare_append([header(seq=3), header(seq=5)], 14, client=True)


def test_non_idempotent_batches_are_ignored(psm: ProducerStateManager) -> None:
    append(psm, header(pid=-1, epoch=-1, seq=-1, count=4))
    assert psm.is_empty() and psm.map_end_offset == 4


def test_transactions_tracked_by_headers(psm: ProducerStateManager) -> None:
    append(psm, header(seq=0, count=2, transactional=True))
    append(psm, header(seq=2, transactional=True))
    entry = psm.last_entry(PID)
    assert entry is not None and entry.current_txn_first_offset == 0
    append(psm, header(seq=-1, transactional=True, control=True), client=False)
    assert entry.current_txn_first_offset is None


# -- snapshot format ---------------------------------------------------------------------


def test_crc32c_reference_vector() -> None:
    assert crc32c_reference(b"123456789") == 0xE3069283


def test_snapshot_bytes_hand_checked(psm: ProducerStateManager) -> None:
    append(psm, header(pid=5, epoch=2, seq=10, count=3, ts=7_000))  # offsets 0..2
    append(psm, header(pid=6, epoch=0, seq=0, ts=8_000, transactional=True))  # offset 3
    path = psm.take_snapshot()
    assert path is not None and os.path.basename(path) == "00000000000000000004.snapshot"
    data = Path(path).read_bytes()
    assert len(data) == 2 + 4 + 4 + 2 * 46
    entries = (
        struct.pack(">i", 2)
        + struct.pack(">qhiqiqiq", 5, 2, 12, 2, 2, 7_002, -1, -1)
        + struct.pack(">qhiqiqiq", 6, 0, 0, 3, 0, 8_000, -1, 3)
    )
    assert data == struct.pack(">hI", 1, crc32c_reference(entries)) + entries
    assert serialize_snapshot(psm.active_producers.values()) == data


def test_empty_snapshot_bytes() -> None:
    body = struct.pack(">i", 0)
    assert serialize_snapshot([]) == struct.pack(">hI", 1, crc32c_reference(body)) + body


def test_snapshot_matches_kafka_dump_format(psm: ProducerStateManager) -> None:
    append(psm, header(pid=5, epoch=2, seq=10, count=3, ts=7_000))
    path = psm.take_snapshot()
    assert path is not None
    out, err = io.StringIO(), io.StringIO()
    dump_files([path], out=out, err=err)
    assert err.getvalue() == ""
    assert out.getvalue().splitlines()[-1] == (
        "producerId: 5 producerEpoch: 2 coordinatorEpoch: -1 currentTxnFirstOffset: "
        "OptionalLong.empty lastTimestamp: 7002 firstSequence: 10 lastSequence: 12 "
        "lastOffset: 2 offsetDelta: 2 timestamp: 7002"
    )


def test_snapshot_round_trip(tmp_path: Path, psm: ProducerStateManager) -> None:
    for n in range(3):
        append(psm, header(seq=3 * n, count=3, ts=5_000 + n))
    append(psm, header(pid=77, epoch=9, seq=INT_MAX, ts=6_000))
    path = psm.take_snapshot()
    assert path is not None
    entries = {e.producer_id: e for e in read_snapshot(path)}
    assert set(entries) == {PID, 77}
    e = entries[PID]
    assert (e.producer_epoch, e.first_seq, e.last_seq, e.last_data_offset) == (0, 6, 8, 8)
    assert (e.last_timestamp, e.current_txn_first_offset, len(e.batches)) == (5_004, None, 1)
    assert entries[77].last_seq == INT_MAX


def test_snapshot_is_not_rewritten_without_new_offsets(psm: ProducerStateManager) -> None:
    append(psm, header())
    assert psm.take_snapshot() is not None
    assert psm.take_snapshot() is None
    assert psm.snapshot_offsets == [1]
    assert not [n for n in os.listdir(psm.directory) if n.endswith(".tmp")]


def test_corrupt_snapshot_names_the_file(psm: ProducerStateManager) -> None:
    append(psm, header())
    path = psm.take_snapshot()
    assert path is not None
    raw = bytearray(Path(path).read_bytes())
    raw[-1] ^= 0xFF
    Path(path).write_bytes(bytes(raw))
    with pytest.raises(CorruptSnapshotError, match="CRC is no longer valid") as info:
        read_snapshot(path)
    assert info.value.filename == path and path in str(info.value)
    Path(path).write_bytes(struct.pack(">h", 2) + bytes(raw[2:]))
    with pytest.raises(CorruptSnapshotError, match="unknown file version 2"):
        read_snapshot(path)
    Path(path).write_bytes(bytes(raw[:20]))
    with pytest.raises(CorruptSnapshotError, match="schema validation"):
        read_snapshot(path)


# -- loading -----------------------------------------------------------------------------


def test_load_latest_snapshot_then_replay(tmp_path: Path, psm: ProducerStateManager) -> None:
    batches = [header(seq=n) for n in range(8)]
    for h in batches[:5]:
        append(psm, h)
    psm.take_snapshot()
    for h in batches[5:]:
        append(psm, h)
    loaded = ProducerStateManager.load(tmp_path, log_end_offset=8)
    assert loaded.map_end_offset == 5
    for offset, h in enumerate(batches[5:], start=5):
        loaded.update_from_batch(h._replace(base_offset=offset))
    assert loaded.map_end_offset == 8
    entry = loaded.last_entry(PID)
    assert entry is not None and (entry.last_seq, entry.last_data_offset) == (7, 7)
    # replayed batches are duplicate-detectable, the one from the snapshot too
    with pytest.raises(DuplicateSequenceError) as info:
        loaded.prepare_append([header(seq=4)], 8, client=True)
    assert info.value.first_offset == 4
    with pytest.raises(DuplicateSequenceError):
        loaded.prepare_append([header(seq=6)], 8, client=True)


def test_load_without_snapshot_starts_at_log_start(tmp_path: Path) -> None:
    loaded = ProducerStateManager.load(tmp_path, log_end_offset=50, log_start_offset=20)
    assert loaded.map_end_offset == 20 and loaded.is_empty()


def test_load_skips_and_deletes_a_corrupt_latest_snapshot(
    tmp_path: Path, psm: ProducerStateManager
) -> None:
    append(psm, header(seq=0))
    psm.take_snapshot()
    append(psm, header(seq=1))
    latest = psm.take_snapshot()
    assert latest is not None
    Path(latest).write_bytes(Path(latest).read_bytes()[:-1] + b"\x00")
    loaded = ProducerStateManager.load(tmp_path, log_end_offset=2)
    assert loaded.map_end_offset == 1 and loaded.snapshot_offsets == [1]
    assert not os.path.exists(latest)


def test_load_deletes_snapshots_past_the_log_end(tmp_path: Path, psm: ProducerStateManager) -> None:
    for n in range(3):
        append(psm, header(seq=n))
        psm.take_snapshot()
    loaded = ProducerStateManager.load(tmp_path, log_end_offset=2)
    assert loaded.snapshot_offsets == [1, 2] and loaded.map_end_offset == 2
    assert sorted(os.listdir(tmp_path)) == [
        "00000000000000000001.snapshot",
        "00000000000000000002.snapshot",
    ]


# -- truncation, retention, expiry -------------------------------------------------------


def test_truncate_removes_later_snapshots_and_reloads(psm: ProducerStateManager) -> None:
    for n in range(4):
        append(psm, header(seq=n))
        psm.take_snapshot()
    assert psm.snapshot_offsets == [1, 2, 3, 4]
    psm.truncate_and_reload(0, 2)
    assert psm.snapshot_offsets == [1, 2] and psm.map_end_offset == 2
    entry = psm.last_entry(PID)
    assert entry is not None and entry.last_seq == 1
    assert append(psm, header(seq=2)) == (2, 2)
    psm.truncate_fully_and_start_at(10)
    assert psm.snapshot_offsets == [] and psm.is_empty() and psm.map_end_offset == 10
    assert not [n for n in os.listdir(psm.directory) if n.endswith(".snapshot")]


def test_delete_snapshots_before_and_strays(psm: ProducerStateManager) -> None:
    for n in range(5):
        append(psm, header(seq=n))
        psm.take_snapshot()
    psm.delete_snapshots_before(2)
    assert psm.snapshot_offsets == [2, 3, 4, 5]
    psm.remove_stray_snapshots([0, 3])  # 5 is above every segment: a clean-shutdown one
    assert psm.snapshot_offsets == [3, 5]
    psm.remove_stray_snapshots([0, 3, 8])
    assert psm.snapshot_offsets == [3]


def test_remove_expired_producers(psm: ProducerStateManager) -> None:
    append(psm, header(pid=1, ts=1_000))
    append(psm, header(pid=2, ts=50_000))
    append(psm, header(pid=3, ts=1_000, transactional=True))  # open transaction: kept
    expiry = DEFAULT_PRODUCER_ID_EXPIRATION_MS
    assert psm.remove_expired(1_000 + expiry - 1) == []
    assert psm.remove_expired(1_000 + expiry) == [1]
    assert sorted(psm.active_producers) == [2, 3]


def test_load_drops_expired_producers(tmp_path: Path) -> None:
    psm = ProducerStateManager(tmp_path, producer_id_expiration_ms=10_000)
    append(psm, header(pid=1, ts=1_000))
    append(psm, header(pid=2, ts=20_000))
    psm.take_snapshot()
    loaded = ProducerStateManager.load(tmp_path, 2, now_ms=21_000, producer_id_expiration_ms=10_000)
    assert sorted(loaded.active_producers) == [2]


def test_entry_defaults() -> None:
    entry = ProducerStateEntry(3)
    assert (entry.producer_epoch, entry.last_seq, entry.last_data_offset) == (-1, -1, -1)
    assert entry.is_empty


# -- integration with Log ----------------------------------------------------------------


def raw_batch(seq: int, count: int = 1, *, epoch: int = 0, pid: int = PID) -> bytes:
    records = [(i, 1_000 + i, b"k", b"v", []) for i in range(count)]
    return backend.build_batch(records, producer_id=pid, producer_epoch=epoch, base_sequence=seq)


def open_producer_log(directory: Path) -> Log:
    clock = MockTime(10_000)
    return Log(
        directory,
        LogConfig({"segment.bytes": 1 << 20}),
        time=clock,
        scheduler=MockScheduler(clock),
        producer_state=ProducerStateManager(directory),
    )


def test_log_validates_and_detects_duplicates(tmp_path: Path) -> None:
    with open_producer_log(tmp_path / "t-0") as log:
        assert log.append_as_leader(raw_batch(0, 3), 0).first_offset == 0
        assert log.append_as_leader(raw_batch(3, 2), 0).first_offset == 3
        with pytest.raises(DuplicateSequenceError) as info:
            log.append_as_leader(raw_batch(0, 3), 0)
        assert (info.value.first_offset, info.value.last_offset) == (0, 2)
        with pytest.raises(OutOfOrderSequenceError):
            log.append_as_leader(raw_batch(9), 0)
        assert log.append_as_leader(raw_batch(0, epoch=2), 0).first_offset == 5
        with pytest.raises(InvalidProducerEpochError):
            log.append_as_leader(raw_batch(1, epoch=1), 0)
        assert log.log_end_offset == 6  # nothing written by the refused appends
        # a replica append is not checked for sequences
        info2 = log.append_as_follower(
            backend.build_batch(
                [(6, 1, b"k", b"v", [])], producer_id=PID, producer_epoch=2, base_sequence=7
            )
        )
        assert info2.first_offset == 6


def test_log_snapshots_on_roll_and_close_and_reloads(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    with open_producer_log(directory) as log:
        log.append_as_leader(raw_batch(0, 2), 0)
        log.roll()
        log.append_as_leader(raw_batch(2, 2), 0)
        assert log.producer_state is not None
        assert log.producer_state.snapshot_offsets == [2]
    assert sorted(n for n in os.listdir(directory) if n.endswith(".snapshot")) == [
        "00000000000000000002.snapshot",
        "00000000000000000004.snapshot",
    ]
    # losing the shutdown snapshot: the state is rebuilt from offset 2 by replay
    os.remove(directory / "00000000000000000004.snapshot")
    with open_producer_log(directory) as log:
        state = log.producer_state
        assert state is not None and state.map_end_offset == 4
        entry = state.last_entry(PID)
        assert entry is not None and (entry.last_seq, entry.last_data_offset) == (3, 3)
        with pytest.raises(DuplicateSequenceError):
            log.append_as_leader(raw_batch(2, 2), 0)
        assert log.append_as_leader(raw_batch(4), 0).first_offset == 4


def test_log_truncation_rewinds_producer_state(tmp_path: Path) -> None:
    with open_producer_log(tmp_path / "t-0") as log:
        for seq in range(0, 6, 2):
            log.append_as_leader(raw_batch(seq, 2), 0)
            log.roll()
        state = log.producer_state
        assert state is not None and state.snapshot_offsets == [2, 4, 6]
        log.truncate_to(3)
        assert state.snapshot_offsets == [2]
        entry = state.last_entry(PID)
        assert entry is not None and entry.last_seq == 1  # the batch at 2..3 is gone
        assert log.append_as_leader(raw_batch(2, 2), 0).first_offset == 2
        log.truncate_fully_and_start_at(100)
        assert state.is_empty() and state.snapshot_offsets == []
