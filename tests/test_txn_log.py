"""The log side of transactions (``kafkacore.log``): transaction markers, the producer
state's open transactions, the last stable offset, the ``.txnindex`` written on ABORT
and rebuilt on recovery, and the leader checks of Kafka's ``ProducerAppendInfo``
(INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED, INVALID_TXN_STATE). The batches
are real ones from the backend's builder; the logs are real directories."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from kafkacore.config import LogConfig
from kafkacore.errors import (
    InvalidProducerEpochError,
    InvalidTxnStateError,
    TransactionCoordinatorFencedError,
    error_code_for,
)
from kafkacore.log import Log, MockScheduler, MockTime
from kafkacore.log.producer_state import ProducerStateManager, read_snapshot
from kafkacore.log.txn_index import AbortedTxn
from kafkacore.native import backend
from kafkacore.record import ControlType, batch_header, parse_control_record, records

P1, P2 = 1000, 2000


def txn_batch(pid: int, seq: int, count: int = 1, *, epoch: int = 0) -> bytes:
    recs = [(i, 1_000 + i, b"k%d" % i, b"v", []) for i in range(count)]
    return backend.build_batch(
        recs, producer_id=pid, producer_epoch=epoch, base_sequence=seq, transactional=True
    )


def plain_batch(pid: int, seq: int, *, epoch: int = 0) -> bytes:
    return backend.build_batch(
        [(0, 1_000, b"k", b"v", [])], producer_id=pid, producer_epoch=epoch, base_sequence=seq
    )


def open_log(directory: Path, *, segment_bytes: int = 1 << 20, **options: object) -> Log:
    clock = MockTime(10_000)
    return Log(
        directory,
        LogConfig({"segment.bytes": segment_bytes}),
        time=clock,
        scheduler=MockScheduler(clock),
        producer_state=ProducerStateManager(directory),
        **options,  # type: ignore[arg-type]
    )


def marker(log: Log, pid: int, *, commit: bool, epoch: int = 0, coordinator_epoch: int = 0) -> int:
    return log.append_txn_marker(pid, epoch, coordinator_epoch, commit, 0).first_offset


def all_aborted(log: Log) -> list[AbortedTxn]:
    return [entry for segment in log.segments for entry in segment.txn_index.all_aborted()]


def interleaved(log: Log) -> None:
    """Kafka's testDelayedFetchIncludesAbortedTransaction shape: P1 writes 0, P2 writes
    1, P1 aborts (2), P2 commits (3)."""
    assert log.append_as_leader(txn_batch(P1, 0), 0).first_offset == 0
    assert log.append_as_leader(txn_batch(P2, 0), 0).first_offset == 1
    assert marker(log, P1, commit=False) == 2
    assert marker(log, P2, commit=True) == 3


def test_marker_is_kafkas_78_byte_control_batch(tmp_path: Path) -> None:
    with open_log(tmp_path / "t-0") as log:
        log.append_as_leader(txn_batch(P1, 0, 2, epoch=3), 5)
        info = log.append_txn_marker(P1, 3, 7, True, 5, timestamp_ms=4_242)
        assert (info.first_offset, info.last_offset, info.num_records) == (2, 2, 1)
        read = log.read(2, 10_000)
        data = read.read_bytes()
    assert len(data) == 78
    h = batch_header(data)
    assert (h.base_offset, h.magic, h.attributes, h.base_sequence) == (2, 2, 0x30, -1)
    assert (h.producer_id, h.producer_epoch, h.partition_leader_epoch) == (P1, 3, 5)
    assert h.max_timestamp == 4_242
    [record] = records(data)
    assert record.key is not None and record.value is not None
    assert struct.unpack(">hh", record.key) == (0, 1)
    assert struct.unpack(">hi", record.value) == (0, 7)
    assert parse_control_record(record.key, record.value) == (ControlType.COMMIT, 7)


def test_interleaved_producers_lso_and_txnindex(tmp_path: Path) -> None:
    with open_log(tmp_path / "t-0") as log:
        assert log.first_unstable_offset is None and log.last_stable_offset() == 0
        log.append_as_leader(txn_batch(P1, 0), 0)
        assert log.first_unstable_offset == 0 and log.last_stable_offset() == 0
        log.append_as_leader(txn_batch(P2, 0), 0)
        assert marker(log, P1, commit=False) == 2
        # P2's transaction (first offset 1) is the next one still open
        assert all_aborted(log) == [AbortedTxn(P1, 0, 2, 1)]
        # the marker is unreplicated while the HW is below it: 0 still holds the LSO
        assert log.first_unstable_offset == 0
        assert log.last_stable_offset(2) == 0
        assert log.last_stable_offset(3) == 1  # HW past the marker
        assert log.first_unstable_offset == 1
        assert marker(log, P2, commit=True) == 3
        assert all_aborted(log) == [AbortedTxn(P1, 0, 2, 1)]  # commits are not indexed
        assert log.last_stable_offset() == 4 and log.first_unstable_offset is None
        assert log.collect_aborted_transactions(0, 4) == [AbortedTxn(P1, 0, 2, 1)]
        assert log.collect_aborted_transactions(3, 4) == []  # marker before the range
        read = log.read(0, 1 << 20, upper_bound=4)
        assert log.aborted_transactions_for(read) == [AbortedTxn(P1, 0, 2, 1)]
        # a read of offset 1 only (the bound stops the region at P2's batch)
        one = log.read(1, 1 << 20, upper_bound=2)
        assert log.aborted_transactions_for(one) == [AbortedTxn(P1, 0, 2, 1)]


def test_abort_entry_when_no_other_transaction_is_open(tmp_path: Path) -> None:
    with open_log(tmp_path / "t-0") as log:
        log.append_as_leader(txn_batch(P1, 0, 3), 0)
        log.append_as_leader(txn_batch(P1, 3), 0)
        assert marker(log, P1, commit=False) == 4
        assert all_aborted(log) == [AbortedTxn(P1, 0, 4, 5)]
        # the same producer's next transaction starts after the marker
        log.append_as_leader(txn_batch(P1, 4), 0)
        assert log.last_stable_offset() == 5
        assert marker(log, P1, commit=False) == 6
        assert all_aborted(log) == [AbortedTxn(P1, 0, 4, 5), AbortedTxn(P1, 5, 6, 7)]
        with open(log.active_segment.txn_index.path, "rb") as f:
            raw = f.read()
    assert len(raw) == 68  # two 34-byte entries
    assert struct.unpack_from(">hqqqq", raw, 34) == (0, P1, 5, 6, 7)


def test_marker_without_open_transaction_changes_nothing(tmp_path: Path) -> None:
    with open_log(tmp_path / "t-0") as log:
        log.append_as_leader(txn_batch(P2, 0), 0)
        assert marker(log, P1, commit=False) == 1  # P1 never wrote: still appended
        assert log.first_unstable_offset == 0
        assert all_aborted(log) == []
        assert log.log_end_offset == 2


def test_leader_checks_and_their_error_codes(tmp_path: Path) -> None:
    with open_log(tmp_path / "t-0") as log:
        log.append_as_leader(txn_batch(P1, 0, epoch=2), 0)
        with pytest.raises(InvalidTxnStateError) as txn_state:
            log.append_as_leader(plain_batch(P1, 1, epoch=2), 0)
        with pytest.raises(InvalidProducerEpochError) as data_epoch:
            log.append_as_leader(txn_batch(P1, 1, epoch=1), 0)
        with pytest.raises(InvalidProducerEpochError) as marker_epoch:
            log.append_txn_marker(P1, 1, 0, True, 0)
        assert log.log_end_offset == 1  # nothing written by the refused appends
        marker(log, P1, commit=True, epoch=2, coordinator_epoch=5)
        log.append_as_leader(txn_batch(P1, 1, epoch=2), 0)
        with pytest.raises(TransactionCoordinatorFencedError) as fenced:
            log.append_txn_marker(P1, 2, 4, False, 0)
        assert log.last_stable_offset() == 2  # still open
        # a bumped epoch may end it (the coordinator's abort after a timeout)
        marker(log, P1, commit=False, epoch=3, coordinator_epoch=5)
        assert log.last_stable_offset() == 4
        entry = log.producer_state.last_entry(P1) if log.producer_state else None
        assert entry is not None and (entry.producer_epoch, entry.coordinator_epoch) == (3, 5)
    codes = [int(error_code_for(e.value)) for e in (data_epoch, marker_epoch, fenced, txn_state)]
    assert codes == [47, 47, 52, 48]


def test_follower_builds_the_same_txnindex_and_state(tmp_path: Path) -> None:
    with open_log(tmp_path / "leader" / "t-0") as leader:
        interleaved(leader)
        leader.append_as_leader(txn_batch(P1, 0, epoch=1), 0)  # open at 4
        data = leader.read(0, 1 << 20).read_bytes()
        expected = all_aborted(leader)
    with open_log(tmp_path / "follower" / "t-0") as follower:
        follower.append_as_follower(data)
        assert all_aborted(follower) == expected == [AbortedTxn(P1, 0, 2, 1)]
        assert follower.last_stable_offset() == 4


def test_truncation_cuts_the_txnindex_and_reopens_transactions(tmp_path: Path) -> None:
    with open_log(tmp_path / "t-0") as log:
        interleaved(log)
        log.truncate_to(2)  # the ABORT at 2 and the COMMIT at 3 go
        assert all_aborted(log) == []
        assert log.first_unstable_offset == 0
        assert log.last_stable_offset() == 0
        # the transactions can still end
        assert marker(log, P1, commit=False) == 2
        assert all_aborted(log) == [AbortedTxn(P1, 0, 2, 1)]


def test_restart_keeps_open_transactions_in_the_snapshot(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    with open_log(directory) as log:
        log.append_as_leader(txn_batch(P1, 0), 0)
        log.append_as_leader(txn_batch(P2, 0), 0)
        marker(log, P2, commit=False)
    [snapshot] = [n for n in os.listdir(directory) if n.endswith(".snapshot")]
    rows = {
        e.producer_id: e.current_txn_first_offset for e in read_snapshot(str(directory / snapshot))
    }
    assert rows == {P1: 0, P2: None}
    with open_log(directory) as log:
        assert log.first_unstable_offset == 0 and log.last_stable_offset() == 0
        assert all_aborted(log) == [AbortedTxn(P2, 1, 2, 0)]
        assert marker(log, P1, commit=True) == 3
        assert log.last_stable_offset() == 4


@pytest.mark.parametrize("recover_from", [0, 6])
def test_recovery_rebuilds_txnindex_and_lso(tmp_path: Path, recover_from: int) -> None:
    """A crash; the segments from ``recover_from`` on are recovered: from no snapshot at
    all (0: every snapshot and ``.txnindex`` is gone) or from the roll's snapshot at 6."""
    directory = tmp_path / "t-0"
    log = open_log(directory)
    interleaved(log)  # segment 0
    log.roll()
    log.append_as_leader(txn_batch(P2, 1, 2), 0)  # 4-5, segment 4
    log.roll()
    log.append_as_leader(txn_batch(P1, 1), 0)  # 6, segment 6
    assert marker(log, P2, commit=False) == 7  # P2's transaction began in segment 4
    log.append_as_leader(txn_batch(P2, 3), 0)  # 8, open
    expected = all_aborted(log)
    assert expected == [AbortedTxn(P1, 0, 2, 1), AbortedTxn(P2, 4, 7, 6)]
    assert [s.base_offset for s in log.segments] == [0, 4, 6]
    assert log.last_stable_offset() == 6
    log.close_handlers()  # a crash: no snapshot at the end
    for name in os.listdir(directory):
        offset = int(name.split(".")[0]) if name[0].isdigit() else -1
        if offset >= recover_from and name.endswith((".txnindex", ".snapshot")):
            os.remove(directory / name)
    with open_log(directory, recover_from=recover_from) as recovered:
        assert all_aborted(recovered) == expected
        assert recovered.last_stable_offset() == 6
        assert recovered.collect_aborted_transactions(0, 9) == expected
        assert recovered.collect_aborted_transactions(5, 9) == expected[1:]
        assert marker(recovered, P1, commit=True) == 9
        assert marker(recovered, P2, commit=True) == 10
        assert recovered.last_stable_offset() == 11


def test_corrupt_txnindex_is_rebuilt_on_load(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = open_log(directory)
    interleaved(log)
    log.append_as_leader(txn_batch(P2, 1, 3), 0)
    log.roll()
    log.append_as_leader(txn_batch(P1, 1), 0)
    log.close()
    first, second = log.segments
    expected = first.txn_index.all_aborted()
    assert expected == [AbortedTxn(P1, 0, 2, 1)]
    with open(first.txn_index.path, "r+b") as f:  # a last offset below the segment's base
        f.write(AbortedTxn(P1, 0, -5, 1).encode())
    with open(second.txn_index.path, "wb") as f:
        f.write(AbortedTxn(P1, 0, second.base_offset - 1, 1).encode())
    with open_log(directory) as reopened:
        assert [s.txn_index.all_aborted() for s in reopened.segments] == [expected, []]
        assert reopened.last_stable_offset() == 4  # P2 opened another at 4


# -- the .txnindex file (Kafka's TransactionIndex rules) ------------------------------------


def test_transaction_index_file_rules(tmp_path: Path) -> None:
    from kafkacore.errors import CorruptIndexError
    from kafkacore.log.txn_index import TransactionIndex

    path = str(tmp_path / "00000000000000000010.txnindex")
    index = TransactionIndex(10, path)
    assert index.collect(0, 100) == ([], False) and not os.path.exists(path)
    entries = [AbortedTxn(1, 5, 12, 13), AbortedTxn(2, 11, 15, 16), AbortedTxn(3, 14, 20, 30)]
    for entry in entries:
        index.append(entry)  # visible although the file was seen missing before
    with pytest.raises(ValueError, match="must increase sequentially"):
        index.append(AbortedTxn(4, 16, 20, 21))
    assert os.path.getsize(path) == 3 * 34
    # lastOffset >= fetch offset and firstOffset < upper; complete at lastStableOffset >= upper
    assert index.collect(13, 16) == ([entries[1]], True)
    assert index.collect(16, 40) == ([entries[2]], False)
    assert index.collect(0, 12) == ([entries[0]], True)
    with open(path, "ab") as f:
        f.write(b"\x00\x00\x00")  # a torn entry: ignored, cut by truncation
    assert index.all_aborted() == entries
    index.truncate_to(15)
    assert index.all_aborted() == entries[:1] and os.path.getsize(path) == 34
    index.append(AbortedTxn(5, 14, 16, 17))
    index.sanity_check()
    TransactionIndex(12, path).sanity_check()  # the first entry ends at 12
    with pytest.raises(CorruptIndexError, match="less than start offset 13"):
        TransactionIndex(13, path).sanity_check()
    with open(path, "r+b") as f:
        f.write(b"\x00\x01")
    with pytest.raises(CorruptIndexError, match="Unexpected aborted transaction version 1"):
        index.all_aborted()
    index.reset()
    assert index.all_aborted() == [] and os.path.getsize(path) == 0
    assert index.delete() and not os.path.exists(path)


def test_partition_lso_markers_and_the_verification_guard(tmp_path: Path) -> None:
    """The leader's Partition: the LSO is min(first unstable offset, HW); a transactional
    write verified before a marker of its producer landed is refused (KIP-890's guard)."""
    from kafkacore.metadata import PartitionState
    from kafkacore.server.partition import Partition

    log = open_log(tmp_path / "t-0")
    partition = Partition(log.topic_partition, log, 1)
    partition.make_leader(PartitionState((1,), 1, 4, (1,), 0))
    partition.append_records_to_leader(txn_batch(P1, 0))
    assert (partition.high_watermark, partition.last_stable_offset) == (1, 0)
    guard = (P1, log.verification_guard(P1))
    info = partition.append_txn_marker(P1, 0, 2, False)
    assert info.last_leader_epoch == 4
    assert (partition.high_watermark, partition.last_stable_offset) == (2, 2)
    assert log.first_unstable_offset is None  # the HW passed the marker
    with pytest.raises(InvalidTxnStateError, match="ended while the write was verified"):
        partition.append_records_to_leader(txn_batch(P1, 1), verification_guard=guard)
    assert log.log_end_offset == 2
    fresh = (P1, log.verification_guard(P1))
    partition.append_records_to_leader(txn_batch(P1, 1), verification_guard=fresh)
    assert (partition.high_watermark, partition.last_stable_offset) == (3, 2)
    log.close()
