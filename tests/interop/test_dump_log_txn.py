"""Transactions in ``kafkacore dump-log`` and in Apache Kafka 4.3.1's ``DumpLogSegments``,
both ways, line for line:

* kafkacore's files: a partition written through ``Log`` with a producer state -
  transactional batches of three producers, COMMIT and ABORT markers
  (``Log.append_txn_marker``, one ABORT bumping the epoch), segment rolls, so the
  ``.txnindex`` files, ``.snapshot`` files and indexes are the log's own - then compacted
  once (aborted batches gone or kept empty, markers stamped with their delete horizon);
  and a ``__transaction_state`` segment of records from ``kafkacore.coordinator.txn_records``
  (v0 and v1 values, ``Empty`` with null partitions, every tagged field, a tombstone, a
  record of an unknown type and a truncated value), dumped with
  ``--transaction-log-decoder``;
* Kafka's files (java/TxnData.java): transactional batches, ``withEndTransactionMarker``
  markers, a ``.txnindex`` written by Kafka's ``TransactionIndex`` and
  ``TransactionLogKey/Value`` records - dumped by both tools, decoded by kafkacore's codecs
  to the values Kafka wrote, and re-encoded by kafkacore byte for byte.
"""

from __future__ import annotations

import io
import re
import struct
from pathlib import Path
from typing import Any

import pytest

from kafkacore.config import LogConfig
from kafkacore.coordinator.txn_records import (
    TransactionLogValue,
    TransactionState,
    decode_txn_key,
    decode_txn_value,
    encode_txn_key,
    encode_txn_value,
)
from kafkacore.log import Log, MockScheduler, MockTime
from kafkacore.log.cleaner import CleanerConfig, LogCleaner
from kafkacore.log.producer_state import ProducerStateManager
from kafkacore.log.txn_index import AbortedTxn, TransactionIndex
from kafkacore.native import backend
from kafkacore.record import ControlType, build_control_batch
from kafkacore.tools.dump_log import DumpOptions, dump_files

pytestmark = pytest.mark.interop

T0 = 1_700_000_000_000
DUMP = "org.apache.kafka.tools.DumpLogSegments"
_JVM_NOISE = re.compile(
    r"^(SLF4J[(:]|OpenJDK 64-Bit Server VM warning|\[[^\]]*\] (WARN|ERROR|INFO) )"
)
OPTION_SETS: list[tuple[str, ...]] = [
    ("--print-data-log",),
    ("--deep-iteration", "--skip-record-metadata"),
    (),
]


def kafka_lines(text: bytes) -> list[str]:
    return [line for line in text.decode().splitlines() if not _JVM_NOISE.match(line)]


def ours(files: list[Path], flags: tuple[str, ...]) -> tuple[list[str], list[str]]:
    out, err = io.StringIO(), io.StringIO()
    options = DumpOptions(
        print_data_log="--print-data-log" in flags,
        deep_iteration="--deep-iteration" in flags,
        skip_record_metadata="--skip-record-metadata" in flags,
        transaction_log_decoder="--transaction-log-decoder" in flags,
        progress=False,
    )
    dump_files([str(f) for f in files], options, out=out, err=err)
    return out.getvalue().splitlines(), err.getvalue().splitlines()


# ----------------------------------------------------------------------- kafkacore's files


def write_transactional_partition(root: Path, rounds: int) -> list[Path]:
    """Three producers' transactions over rolled segments, then ``rounds`` cleaning
    rounds."""
    clock = MockTime(T0)
    directory = root / f"txn-{rounds}"
    directory.mkdir(parents=True)
    config = LogConfig(
        {
            "cleanup.policy": "compact",
            "internal.segment.bytes": 700,
            "file.delete.delay.ms": 0,
            "index.interval.bytes": 200,
            "delete.retention.ms": 3_600_000,
        }
    )
    log = Log(
        directory,
        config,
        backend=backend,
        time=clock,
        scheduler=MockScheduler(clock),
        producer_state=ProducerStateManager(directory, producer_id_expiration_ms=60_000),
    )
    seqs: dict[int, int] = {}

    def txn(pid: int, epoch: int, *rows: tuple[bytes, bytes | None]) -> None:
        seq = seqs.get(pid, 0)
        batch = backend.build_batch(
            [(i, clock.milliseconds() + i, k, v, [("h", b"x")]) for i, (k, v) in enumerate(rows)],
            producer_id=pid,
            producer_epoch=epoch,
            base_sequence=seq,
            transactional=True,
            compression=pid % 3,
        )
        seqs[pid] = seq + len(rows)
        log.append_as_leader(batch, leader_epoch=4)
        clock.sleep(5)

    def end(pid: int, epoch: int, commit: bool) -> None:
        log.append_txn_marker(pid, epoch, 3 + pid % 2, commit, leader_epoch=4)
        log.update_high_watermark(log.log_end_offset)
        clock.sleep(5)

    epoch12 = 1
    for round_ in range(4):
        txn(11, 0, (b"k%d" % round_, b"c%d" % round_), (b"shared", b"c-%d" % round_))
        txn(12, epoch12, (b"shared", b"aborted-%d" % round_), (b"a%d" % round_, None))
        txn(13, 0, (b"k%d" % round_, b"late-%d" % round_))
        end(11, 0, commit=True)
        if round_ == 2:  # a timed-out transaction: the coordinator bumps the epoch
            epoch12 += 1
            seqs[12] = 0
        end(12, epoch12, commit=False)
        end(13, 0, commit=round_ % 2 == 0)
        plain = backend.build_batch([(0, clock.milliseconds(), b"plain", b"p%d" % round_, [])])
        log.append_as_leader(plain, leader_epoch=4)
    log.roll()
    log.append_as_leader(backend.build_batch([(0, T0, b"tail", b"t", [])]), leader_epoch=4)
    cleaner = LogCleaner(lambda: [log], CleanerConfig(), clock)
    # the producers' last batches stay (empty) while they are active; once they expired,
    # the next round removes them, the one after stamps the markers left to go
    for _ in range(rounds):
        assert cleaner.clean(log, force=True) is not None
        clock.sleep(60_000)
        log.remove_expired_producers(clock.milliseconds())
    log.close()
    files = sorted(directory.glob("*.log")) + sorted(directory.glob("*.txnindex"))
    files += sorted(directory.glob("*.snapshot")) + sorted(directory.glob("*.index"))
    return files


def write_transaction_state(root: Path) -> Path:
    """A ``__transaction_state`` segment of kafkacore-encoded records."""
    clock = MockTime(T0)
    directory = root / "__transaction_state-10"
    log = Log(directory, LogConfig({"cleanup.policy": "compact"}), backend=backend, time=clock)
    values: list[tuple[bytes, bytes | None]] = [
        (
            encode_txn_key("txn-1"),
            encode_txn_value(
                TransactionLogValue(
                    7, 0, 60_000, TransactionState.ONGOING, {"t": [0, 2], "u": [1]}, T0 + 5, T0
                )
            ),
        ),
        (
            encode_txn_key("ëmpty"),
            encode_txn_value(
                TransactionLogValue(8, 3, 60_000, TransactionState.EMPTY, None, T0 + 6, -1)
            ),
        ),
        (
            encode_txn_key("tv2"),
            encode_txn_value(
                TransactionLogValue(
                    9,
                    32767,
                    10_000,
                    TransactionState.PREPARE_ABORT,
                    {"out": [4]},
                    T0 + 7,
                    T0 + 1,
                    previous_producer_id=5,
                    next_producer_id=10,
                    client_transaction_version=2,
                    next_producer_epoch=0,
                ),
                version=1,
            ),
        ),
        (
            encode_txn_key("tv2-defaults"),
            encode_txn_value(
                TransactionLogValue(
                    11, 1, 10_000, TransactionState.COMPLETE_COMMIT, {}, T0 + 8, T0 + 2
                ),
                version=1,
            ),
        ),
        (encode_txn_key("txn-1"), None),
        (b"\x00\x01" + encode_txn_key("other")[2:], b"\x00\x00"),  # unknown record type
        (encode_txn_key("truncated"), encode_txn_value(
            TransactionLogValue(1, 1, 1, TransactionState.ONGOING, {"t": [0]}, 1, 1)
        )[:-4]),
    ]  # fmt: skip
    for i, (key, value) in enumerate(values):
        batch = backend.build_batch([(0, T0 + i, key, value, [])])
        log.append_as_leader(batch, leader_epoch=0)
    log.close()
    return directory / "00000000000000000000.log"


# ------------------------------------------------------------------------------- the test


def test_dump_log_agrees_with_kafka_on_transactions(java: Any, tmp_path: Path) -> None:
    kafka_dir = tmp_path / "kafka"
    once = write_transactional_partition(tmp_path / "ours", 1)
    thrice = write_transactional_partition(tmp_path / "ours", 3)
    assert [f for f in once if f.suffix == ".txnindex"]
    partition = once + thrice
    state_log = write_transaction_state(tmp_path / "ours")
    java.run("TxnData", str(kafka_dir)).check()
    kafka_txn = kafka_dir / "txn-0"
    kafka_files = [
        kafka_txn / "00000000000000000000.log",
        kafka_txn / "00000000000000000000.txnindex",
    ]
    kafka_state = kafka_dir / "__transaction_state-10" / "00000000000000000000.log"

    jobs: list[tuple[list[Path], tuple[str, ...]]] = [
        (partition + kafka_files, flags) for flags in OPTION_SETS
    ]
    jobs.append(([state_log, kafka_state], ("--transaction-log-decoder",)))
    results = java.run_all(
        [(DUMP, *flags, "--files", ",".join(map(str, files))) for files, flags in jobs]
    )
    for (files, flags), result in zip(jobs, results, strict=True):
        result.check()
        out, err = ours(files, flags)
        assert out == kafka_lines(result.stdout), flags
        assert err == kafka_lines(result.stderr), flags

    # What the dumps show: the markers (one stamped by the cleaner), the aborted
    # transactions, the decoded __transaction_state records.
    printed = "\n".join(ours(once, ("--print-data-log",))[0])
    assert "endTxnMarker: COMMIT coordinatorEpoch: 4" in printed
    assert "endTxnMarker: ABORT coordinatorEpoch: 3" in printed
    assert "aborted-" not in printed
    assert re.search(r"count: 0 baseSequence: \d+ lastSequence: \d+ producerId: 12 ", printed)
    assert re.search(r"version: 0 producerId: 12 firstOffset: \d+ lastOffset: \d+", printed)
    printed = "\n".join(ours(thrice, ("--print-data-log",))[0])
    assert re.search(r"isControl: true deleteHorizonMs: OptionalLong\[\d+\]", printed)
    assert "version: 0 producerId:" not in printed
    state = "\n".join(ours([state_log], ("--transaction-log-decoder",))[0])
    assert '"nextProducerEpoch":0' in state and '"transactionPartitions":null' in state
    assert "payload: <DELETE>" in state
    assert "Unknown record type 1 at offset 5, skipping." in state
    assert "Error at offset 6, skipping. Could not read record with version 0" in state


def test_kafka_written_transactions_decode_with_ours(java: Any, tmp_path: Path) -> None:
    """Kafka's markers, ``.txnindex`` and ``__transaction_state`` records read by
    kafkacore's codecs, and kafkacore's encoders writing the same bytes."""
    java.run("TxnData", str(tmp_path)).check()
    data = (tmp_path / "txn-0" / "00000000000000000000.log").read_bytes()
    batches = []
    pos = 0
    while pos < len(data):
        header = backend.batch_header(data, pos)
        batches.append((header, data[pos : pos + header[1] + 12]))
        pos += header[1] + 12
    commit, abort = batches[2][1], batches[3][1]
    assert commit == build_control_batch(
        ControlType.COMMIT,
        producer_id=1000,
        producer_epoch=2,
        timestamp=T0 + 3,
        coordinator_epoch=7,
        offset=3,
        partition_leader_epoch=5,
    )
    assert abort == build_control_batch(
        ControlType.ABORT,
        producer_id=2000,
        producer_epoch=0,
        timestamp=T0 + 4,
        coordinator_epoch=7,
        offset=4,
        partition_leader_epoch=5,
    )
    assert len(commit) == len(abort) == 78
    index = TransactionIndex(0, str(tmp_path / "txn-0" / "00000000000000000000.txnindex"))
    assert index.all_aborted() == [AbortedTxn(2000, 2, 4, 5)]

    state = (tmp_path / "__transaction_state-10" / "00000000000000000000.log").read_bytes()
    records = []
    pos = 0
    while pos < len(state):
        header = backend.batch_header(state, pos)
        records += backend.batch_records(state, pos)
        pos += header[1] + 12
    decoded = [(decode_txn_key(r[2]), decode_txn_value(r[3])) for r in records]
    expected = [
        (
            "txn-1",
            TransactionLogValue(
                1000,
                2,
                60000,
                TransactionState.ONGOING,
                {"txn": [0, 3], "__consumer_offsets": [17]},
                T0 + 10,
                T0,
            ),
        ),
        (
            "my-transactional-id",
            TransactionLogValue(2000, 0, 900000, TransactionState.EMPTY, None, T0 + 20, -1),
        ),
        (
            "tagged-ü",
            TransactionLogValue(
                3000,
                32767,
                10000,
                TransactionState.PREPARE_COMMIT,
                {"out": [1]},
                T0 + 30,
                T0 + 25,
                previous_producer_id=2999,
                next_producer_id=3001,
                client_transaction_version=2,
                next_producer_epoch=0,
            ),
        ),
        (
            "complete",
            TransactionLogValue(
                4000, 1, 60000, TransactionState.COMPLETE_COMMIT, {}, T0 + 40, T0 + 35
            ),
        ),
        ("txn-1", None),
    ]
    assert decoded == expected
    versions = [0, 0, 1, 1]
    for record, (transactional_id, value), version in zip(
        records, expected, versions, strict=False
    ):
        assert encode_txn_key(transactional_id) == record[2]
        assert value is not None
        assert encode_txn_value(value, version) == record[3]
    assert struct.unpack(">h", records[2][3][:2])[0] == 1
