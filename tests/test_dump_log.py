"""The dump tool (``kafkacore dump-log``) on segments written through the backend API.

What it prints is checked against what the backend itself reports about the same bytes
(headers, CRCs, positions, index entries); the byte-exact comparison with Kafka's own
``DumpLogSegments`` is in ``tests/interop/test_dump_log_vs_kafka.py``.
"""

from __future__ import annotations

import io
import os
import re
import struct
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

from kafkacore._java import decode_utf8, java_hash_map_order, java_string_hash
from kafkacore.cli import main
from kafkacore.tools import dump_log
from kafkacore.tools.dump_log import (
    DumpFailure,
    DumpOptions,
    DumpUsageError,
    dump_files,
)

T0 = 1_700_000_000_000
APPEND_TIME = T0 + 500  # of the first LogAppendTime batch; 1000 ms more for each codec
PRODUCER_ID = 42
COMMIT = struct.pack(">hh", 0, 1)
ABORT = struct.pack(">hh", 0, 0)
BATCH_LINE = re.compile(
    r"baseOffset: (?P<base>-?\d+) lastOffset: (?P<last>-?\d+) count: (?P<count>\d+)"
    r" baseSequence: (?P<bseq>-?\d+) lastSequence: (?P<lseq>-?\d+)"
    r" producerId: (?P<pid>-?\d+) producerEpoch: (?P<epoch>-?\d+)"
    r" partitionLeaderEpoch: (?P<ple>-?\d+) isTransactional: (?P<txn>true|false)"
    r" isControl: (?P<control>true|false) deleteHorizonMs: (?P<horizon>\S+)"
    r" position: (?P<position>\d+) (?P<tstype>CreateTime|LogAppendTime): (?P<maxts>-?\d+)"
    r" size: (?P<size>\d+) magic: 2 compresscodec: (?P<codec>\w+) crc: (?P<crc>\d+)"
    r" isvalid: (?P<valid>true|false)$"
)
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


@dataclass
class Dump:
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()

    @property
    def err_lines(self) -> list[str]:
        return self.err.splitlines()


def dump(backend: ModuleType, files: list[Path], **options: bool | int) -> Dump:
    out, err = io.StringIO(), io.StringIO()
    dump_files([str(f) for f in files], DumpOptions(**options), out=out, err=err, backend=backend)  # type: ignore[arg-type]
    return Dump(out.getvalue(), err.getvalue())


def records(
    first: int, n: int, *, ts: int = T0
) -> list[tuple[int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]]:
    return [
        (
            first + i,
            ts + i,
            None if i == 1 else f"key-{first + i}".encode(),
            None if i == 2 else f"value-{first + i}".encode(),
            [("trace", b"t"), ("empty", None)] if i == 0 else [],
        )
        for i in range(n)
    ]


@pytest.fixture
def segment_files(backend: ModuleType, tmp_path: Path) -> tuple[Path, Path, Path]:
    """One partition segment (base offset 0) with every codec, both timestamp types, an
    idempotent batch, a transaction with its COMMIT and an aborted one, through
    ``Segment.append`` (offsets assigned, leader epoch stamped)."""
    segment = backend.Segment(str(tmp_path), 0, index_interval_bytes=200)
    for codec in range(5):
        segment.append(
            backend.build_batch(records(0, 4, ts=T0 + codec * 1000), compression=codec),
            partition_leader_epoch=7,
        )
        segment.append(
            backend.build_batch(records(0, 3, ts=T0 + 100), compression=codec),
            partition_leader_epoch=7,
            log_append_time_ms=APPEND_TIME + codec * 1000,
        )
    segment.append(
        backend.build_batch(
            records(0, 3, ts=T0 + 6000), producer_id=PRODUCER_ID, producer_epoch=1, base_sequence=5
        ),
        partition_leader_epoch=7,
    )
    for marker in (COMMIT, ABORT):
        segment.append(
            backend.build_batch(
                records(0, 2, ts=T0 + 7000),
                producer_id=PRODUCER_ID,
                producer_epoch=1,
                base_sequence=8,
                transactional=True,
            ),
            partition_leader_epoch=7,
        )
        segment.append(
            backend.build_batch(
                [(0, T0 + 8000, marker, struct.pack(">hi", 0, 3), [])],
                producer_id=PRODUCER_ID,
                producer_epoch=1,
                transactional=True,
                control=True,
            ),
            partition_leader_epoch=7,
        )
    segment.close()
    return Path(segment.log_path), Path(segment.index_path), Path(segment.time_index_path)


def batch_headers(backend: ModuleType, log: Path) -> list[tuple[int, tuple[int, ...]]]:
    """(position, header) of every batch, read with the backend."""
    data = log.read_bytes()
    out = []
    position = 0
    while position < len(data):
        header = backend.batch_header(data, position)
        out.append((position, header))
        position += header[1] + 12
    return out


def test_batch_lines_are_what_the_backend_reads(
    backend: ModuleType, segment_files: tuple[Path, Path, Path]
) -> None:
    log = segment_files[0]
    result = dump(backend, [log])
    assert result.lines[:2] == [f"Dumping {log}", "Log starting offset: 0"]
    matches = [BATCH_LINE.match(line) for line in result.lines[2:]]
    assert all(matches), [line for line, m in zip(result.lines[2:], matches, strict=True) if not m]
    headers = batch_headers(backend, log)
    assert len(matches) == len(headers) == 15
    for m, (position, h) in zip(matches, headers, strict=True):
        assert m is not None
        base, length, ple, _, crc, attributes, lod, _, max_ts, pid, epoch, bseq, count = h
        assert int(m["base"]) == base
        assert int(m["last"]) == base + lod
        assert int(m["count"]) == count
        assert int(m["position"]) == position
        assert int(m["size"]) == length + 12
        assert int(m["crc"]) == crc
        assert m["valid"] == "true"
        assert int(m["ple"]) == ple == 7
        assert int(m["maxts"]) == max_ts
        assert m["codec"] == CODECS[attributes & 7]
        assert m["tstype"] == ("LogAppendTime" if attributes & 8 else "CreateTime")
        assert (int(m["pid"]), int(m["epoch"]), int(m["bseq"])) == (pid, epoch, bseq)
        assert int(m["lseq"]) == (-1 if bseq == -1 else bseq + lod)
        assert m["horizon"] == "OptionalLong.empty"
    assert result.err == ""


def test_records_with_print_data_log(
    backend: ModuleType, segment_files: tuple[Path, Path, Path]
) -> None:
    result = dump(backend, [segment_files[0]], print_data_log=True)
    record_lines = [line for line in result.lines if line.startswith("| ")]
    offsets = [int(line.split()[2]) for line in record_lines]
    assert offsets == list(range(len(offsets)))  # every offset, in order
    assert record_lines[0] == (
        f"| offset: 0 CreateTime: {T0} keySize: 5 valueSize: 7 sequence: -1"
        " headerKeys: [trace,empty] key: key-0 payload: value-0"
    )
    assert record_lines[1].endswith(
        "keySize: -1 valueSize: 7 sequence: -1 headerKeys: [] payload: value-1"
    )
    assert record_lines[2].endswith(
        "keySize: 5 valueSize: -1 sequence: -1 headerKeys: [] key: key-2"
    )
    # LogAppendTime batches give every record the append time.
    assert record_lines[4].startswith(f"| offset: 4 LogAppendTime: {APPEND_TIME} ")
    # The idempotent batch numbers its records from its base sequence.
    assert [line.split(" sequence: ")[1].split()[0] for line in record_lines[35:38]] == [
        "5",
        "6",
        "7",
    ]
    control = [line for line in record_lines if "endTxnMarker" in line]
    assert [line.split(" endTxnMarker: ")[1] for line in control] == [
        "COMMIT coordinatorEpoch: 3",
        "ABORT coordinatorEpoch: 3",
    ]
    assert all("payload" not in line for line in control)
    assert result.err == ""


def test_skip_record_metadata(backend: ModuleType, segment_files: tuple[Path, Path, Path]) -> None:
    result = dump(backend, [segment_files[0]], print_data_log=True, skip_record_metadata=True)
    record_lines = [line for line in result.lines if line.startswith("| ")]
    assert record_lines[:3] == [
        "| key: key-0 payload: value-0",
        "| payload: value-1",
        "| key: key-2",
    ]
    assert "" in result.lines  # control records: an empty line each, as Kafka prints them


def test_index_and_time_index_entries(
    backend: ModuleType, segment_files: tuple[Path, Path, Path]
) -> None:
    log, index, time_index = segment_files
    segment = backend.Segment(str(log.parent), 0)
    try:
        offsets, times = segment.offset_index(), segment.time_index()
    finally:
        segment.close()
    assert len(offsets) > 3 and times
    result = dump(backend, [index, time_index])
    assert result.lines == [
        f"Dumping {index}",
        *(f"offset: {o} position: {p}" for o, p in offsets),
        f"Dumping {time_index}",
        *(f"timestamp: {t} offset: {o}" for t, o in times),
    ]
    assert result.err == ""
    verified = dump(backend, [index, time_index], verify_index_only=True)
    assert verified.lines == [f"Dumping {index}", f"Dumping {time_index}"]
    assert verified.err == ""
    sane = dump(backend, [index, time_index], index_sanity_check=True)
    assert sane.lines == [
        f"Dumping {index}",
        f"{index} passed sanity check.",
        f"Dumping {time_index}",
        f"{time_index} passed sanity check.",
    ]


def test_verify_index_reports_a_corrupted_entry(
    backend: ModuleType, segment_files: tuple[Path, Path, Path]
) -> None:
    log, index, _ = segment_files
    data = bytearray(index.read_bytes())
    relative, _ = struct.unpack_from(">ii", data, 8)
    _, first_position = struct.unpack_from(">ii", data, 0)
    struct.pack_into(">i", data, 12, first_position)  # entry 1 now points at entry 0's batch
    index.write_bytes(bytes(data))
    batch_at = dict(batch_headers(backend, log))
    h = batch_at[first_position]
    result = dump(backend, [index], verify_index_only=True)
    assert result.lines == [f"Dumping {index}"]
    assert result.err_lines == [
        f"Mismatches in :{index}",
        f"  Index offset: {relative}, log offset: {h[0] + h[6]}",
    ]


def test_index_sanity_check_failure(
    backend: ModuleType, segment_files: tuple[Path, Path, Path]
) -> None:
    _, index, _ = segment_files
    with index.open("ab") as f:
        f.write(b"\x00\x01\x02")
    with pytest.raises(DumpFailure) as failure:
        dump(backend, [index], index_sanity_check=True)
    assert failure.value.kind == "CorruptIndexException"
    assert failure.value.message == (
        f"Index file {index} is corrupt, found {index.stat().st_size} bytes which is neither "
        "positive nor a multiple of 8"
    )


def test_time_index_out_of_order_and_mismatch(
    backend: ModuleType, segment_files: tuple[Path, Path, Path]
) -> None:
    _, _, time_index = segment_files
    entries = [
        struct.unpack_from(">qi", time_index.read_bytes(), n * 12)
        for n in range(time_index.stat().st_size // 12)
    ]
    assert len(entries) >= 2
    (ts0, rel0), (ts1, rel1) = entries[0], entries[1]
    swapped = [(ts1, rel0), (ts0, rel1), *entries[2:]]
    time_index.write_bytes(b"".join(struct.pack(">qi", t, r) for t, r in swapped))
    result = dump(backend, [time_index], verify_index_only=True)
    assert result.lines == [f"Dumping {time_index}"]
    assert result.err_lines == [
        f"Found timestamp mismatch in :{time_index}",
        f"  Index timestamp: {ts1}, log timestamp: {ts0}",
        f"  Index timestamp: {ts0}, log timestamp: {ts1}",
        f"Found out of order timestamp in :{time_index}",
        f"  Index timestamp: {ts0}, Previously indexed timestamp: {ts1}",
    ]


def test_time_index_entry_not_at_a_batch_end(
    backend: ModuleType, segment_files: tuple[Path, Path, Path]
) -> None:
    log, _, time_index = segment_files
    last_of_first_batch = batch_headers(backend, log)[0][1][6]
    time_index.write_bytes(struct.pack(">qi", T0, last_of_first_batch - 1))
    result = dump(backend, [time_index])
    assert result.lines == [
        f"Dumping {time_index}",
        f"timestamp: {T0} offset: {last_of_first_batch - 1}",
    ]
    assert result.err_lines == [
        f"The following indexed offsets are not found in :{time_index}",
        f"Indexed offset: {last_of_first_batch - 1}, found log offset: {last_of_first_batch}",
    ]


def test_corrupt_batch_is_invalid_but_its_records_still_print(
    backend: ModuleType, segment_files: tuple[Path, Path, Path]
) -> None:
    log = segment_files[0]
    data = bytearray(log.read_bytes())
    data[61 + 20] ^= 0x01  # inside the first (uncompressed) batch's records
    log.write_bytes(bytes(data))
    result = dump(backend, [log], deep_iteration=True)
    first = BATCH_LINE.match(result.lines[2])
    assert first is not None and first["valid"] == "false"
    others = [BATCH_LINE.match(line) for line in result.lines[4:] if line.startswith("baseOffset")]
    assert others and all(m is not None and m["valid"] == "true" for m in others)
    assert result.lines[3].startswith("| offset: 0 ")


def test_trailing_partial_batch(
    backend: ModuleType, segment_files: tuple[Path, Path, Path]
) -> None:
    log = segment_files[0]
    data = log.read_bytes()
    with log.open("ab") as f:
        f.write(data[:40])
    result = dump(backend, [log])
    assert result.lines[-1] == f"Found 40 invalid bytes at the end of {log.name}"
    limited = dump(backend, [log], max_bytes=500)
    assert not limited.lines[-1].startswith("Found")
    assert all(
        int(m["position"]) + int(m["size"]) <= 500
        for m in map(BATCH_LINE.match, limited.lines[2:])
        if m
    )


def test_corrupt_batch_size_stops_the_dump(
    backend: ModuleType, segment_files: tuple[Path, Path, Path]
) -> None:
    log = segment_files[0]
    headers = batch_headers(backend, log)
    data = bytearray(log.read_bytes())
    struct.pack_into(">i", data, headers[2][0] + 8, 3)
    log.write_bytes(bytes(data))
    out = io.StringIO()
    with pytest.raises(DumpFailure) as failure:
        dump_files([str(log)], out=out, err=io.StringIO(), backend=backend)  # type: ignore[arg-type]
    assert failure.value.kind == "CorruptRecordException"
    assert failure.value.message == (
        f"Found record size 3 smaller than minimum record overhead (14) in file {log}."
    )
    assert len(out.getvalue().splitlines()) == 4  # the two batches before it were printed


def test_non_consecutive_offsets(backend: ModuleType, tmp_path: Path) -> None:
    segment = backend.Segment(str(tmp_path), 100)
    segment.append(backend.build_batch(records(100, 2)), assign_offsets=False)
    segment.append(backend.build_batch(records(105, 1)), assign_offsets=False)
    segment.close()
    result = dump(backend, [Path(segment.log_path)], deep_iteration=True)
    assert result.err_lines == [
        f"Non-consecutive offsets in {segment.log_path}",
        "  -1 is followed by 100",  # Kafka 4.x starts counting from -1, whatever the base
        "  101 is followed by 105",
    ]


def test_legacy_message_sets(backend: ModuleType, tmp_path: Path) -> None:
    plain = backend.build_legacy([(0, -1, b"k0", b"v0", [])], 0)
    wrapped = backend.build_legacy([(1, T0, b"k1", b"v1", []), (2, T0 + 1, None, b"v2", [])], 1, 1)
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(plain + wrapped)
    result = dump(backend, [log], print_data_log=True)
    plain_crc = backend.legacy_header(plain, 0)[2]
    wrapper_crc = backend.legacy_header(wrapped, 0)[2]
    assert result.lines[:4] == [
        f"Dumping {log}",
        "Log starting offset: 0",
        f"offset: 0 position: 0 NoTimestampType: -1 size: {len(plain)} magic: 0"
        f" compresscodec: none crc: {plain_crc} isvalid: true",
        f"| offset: 0 NoTimestampType: -1 keySize: 2 valueSize: 2 isValid: true crc: {plain_crc}"
        " key: k0 payload: v0",
    ]
    assert result.lines[4] == (
        f"offset: 2 position: {len(plain)} CreateTime: {T0 + 1} size: {len(wrapped)} magic: 1"
        f" compresscodec: gzip crc: {wrapper_crc} isvalid: true"
    )
    assert re.fullmatch(
        rf"\| offset: 1 CreateTime: {T0} keySize: 2 valueSize: 2 isValid: true crc: \d+"
        " key: k1 payload: v1",
        result.lines[5],
    )
    assert re.fullmatch(
        rf"\| offset: 2 CreateTime: {T0 + 1} keySize: -1 valueSize: 2 isValid: true crc: \d+"
        " payload: v2",
        result.lines[6],
    )


def test_files_are_read_in_windows(
    backend: ModuleType, segment_files: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A window smaller than a batch, and windows ending mid-batch, change nothing."""
    log, index, time_index = segment_files
    whole = dump(backend, [log, index, time_index], print_data_log=True)
    monkeypatch.setattr(dump_log._LogFile, "WINDOW", 97)
    assert dump(backend, [log, index, time_index], print_data_log=True) == whole


def test_progress_only_for_large_files_on_request(
    backend: ModuleType, segment_files: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    log = segment_files[0]
    assert dump(backend, [log], progress=True).err == ""  # small file: no progress
    monkeypatch.setattr(dump_log, "PROGRESS_MIN_BYTES", 100)
    monkeypatch.setattr(dump_log._Progress, "update", _always_update(dump_log._Progress.update))
    shown = dump(backend, [log], progress=True)
    assert f"{log.name}: " in shown.err and "%" in shown.err
    assert shown.err.endswith("\r\x1b[K")
    assert dump(backend, [log], progress=False).err == ""


def _always_update(update):  # type: ignore[no-untyped-def]
    def patched(self, done):  # type: ignore[no-untyped-def]
        self._next = 0.0
        update(self, done)
        self._next = max(self._next, 1e-9)

    return patched


def test_unknown_and_dotless_files_are_ignored(
    backend: ModuleType, segment_files: tuple[Path, Path, Path]
) -> None:
    other = segment_files[0].parent / "replication-offset-checkpoint.tmp"
    other.write_text("0\n0\n")
    result = dump(backend, [other])
    assert result.lines == [f"Dumping {other}"]
    assert result.err_lines == [f"Ignoring unknown file {other}"]


def test_paths_print_as_java_file_names_them(
    backend: ModuleType, segment_files: tuple[Path, Path, Path]
) -> None:
    index = segment_files[1]
    messy = f"{index.parent}//{index.name}"
    result = dump(backend, [Path(messy)], verify_index_only=True)
    assert result.lines == [f"Dumping {index}"]


def test_missing_file_is_a_usage_error(backend: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(DumpUsageError):
        dump(backend, [tmp_path / "00000000000000000000.log"])


def _compute_if_absent_order(keys: list[str]) -> list[str]:
    return java_hash_map_order(keys, java_string_hash, compute_if_absent=True)


def test_java_hash_map_order() -> None:
    # "Aa" and "BB" share String.hashCode 2112: computeIfAbsent puts the newer first.
    assert _compute_if_absent_order(["Aa", "BB"]) == ["BB", "Aa"]
    assert _compute_if_absent_order(["BB", "Aa"]) == ["Aa", "BB"]
    # Otherwise by bucket: "b" (98) sits in bucket 2, "a" (97) in bucket 1.
    assert _compute_if_absent_order(["b", "a"]) == ["a", "b"]
    # Eight keys in bucket 1 of the 16-slot table: the eighth makes treeifyBin resize the
    # small table to 32 (it does not become a tree below 64), which splits the bucket into
    # 1 and 17, each keeping its newest-first order.
    crowded = [chr(1 + 16 * k) for k in range(8)]  # codes 1, 17, ..., 113
    assert _compute_if_absent_order(crowded) == ["a", "A", "!", "\x01", "q", "Q", "1", "\x11"]


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        (b"plain \xc3\xa9", "plain é"),
        (b"\xed\xa0\x80x", "\ufffdx"),  # an encoded surrogate: one U+FFFD for 3 bytes
        (b"\xed\xa0x", "\ufffdx"),
        (b"\xe2\x82", "\ufffd"),  # truncated at the end
        (b"\xe2\x82 ", "\ufffd "),
        (b"\xf0\x9f\x98", "\ufffd"),
        (b"\xff\xfe", "\ufffd\ufffd"),
        (b"\xc0\x80", "\ufffd\ufffd"),
        (b"\xf4\x90\x80\x80", "\ufffd\ufffd\ufffd\ufffd"),
    ],
)
def test_payloads_decode_as_java_decodes_them(raw: bytes, text: str) -> None:
    assert decode_utf8(raw) == text


# --- the command line -----------------------------------------------------------------


def test_cli_dumps(
    segment_files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    log, index, _ = segment_files
    assert main(["dump-log", "--files", f"{log},{index}", "--deep-iteration"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith(f"Dumping {log}\nLog starting offset: 0\nbaseOffset: 0 ")
    assert f"Dumping {index}\noffset: " in captured.out
    assert captured.err == ""


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["dump-log"], "the following arguments are required: --files"),
        (["dump-log", "--files", "{missing}"], "{missing}: no such file"),
        (
            ["dump-log", "--files", "{log}", "--max-message-size", "big"],
            "argument --max-message-size: not a 32-bit integer: 'big'",
        ),
        (
            ["dump-log", "--files", "{log}", "--max-message-size", "-1"],
            "--max-message-size must not be negative: -1",
        ),
        (
            ["dump-log", "--files", "{log}", "--cluster-metadata-decoder"],
            "unrecognized arguments: --cluster-metadata-decoder",
        ),
    ],
)
def test_cli_bad_arguments_exit_1(
    args: list[str],
    reason: str,
    segment_files: tuple[Path, Path, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    names = {
        "log": str(segment_files[0]),
        "missing": str(segment_files[0].parent / "00000000000000000099.log"),
    }
    assert main([a.format(**names) for a in args]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"kafkacore dump-log: error: {reason.format(**names)}\n"


def test_cli_transaction_log_decoder(
    backend: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--transaction-log-decoder``: ``__transaction_state`` records as Kafka 4.3.1's
    ``DumpLogSegments`` prints them (its lines for these records, taken from its run)."""
    from kafkacore.config import LogConfig
    from kafkacore.coordinator.txn_records import (
        TransactionLogValue,
        TransactionState,
        encode_txn_key,
        encode_txn_value,
    )
    from kafkacore.log import Log

    t0 = 1_700_000_000_000
    ongoing = TransactionLogValue(
        1000, 2, 60000, TransactionState.ONGOING, {"txn": [0, 3], "__consumer_offsets": [17]},
        t0 + 10, t0,
    )  # fmt: skip
    tagged = TransactionLogValue(
        3000, 32767, 10000, TransactionState.PREPARE_COMMIT, {"out": [1]}, t0 + 30, t0 + 25,
        previous_producer_id=2999, next_producer_id=3001, client_transaction_version=2,
        next_producer_epoch=0,
    )  # fmt: skip
    records = [
        (0, t0, encode_txn_key("txn-1"), encode_txn_value(ongoing), []),
        (1, t0 + 2, encode_txn_key("tagged-ü"), encode_txn_value(tagged, 1), []),
        (2, t0 + 4, encode_txn_key("txn-1"), None, []),
    ]
    log = Log(tmp_path / "__transaction_state-10", LogConfig({}), backend=backend)
    log.append_as_leader(backend.build_batch(records), leader_epoch=0)
    log.close()
    path = tmp_path / "__transaction_state-10" / "00000000000000000000.log"
    assert main(["dump-log", "--transaction-log-decoder", "--files", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" headerKeys: [] ", 1)[1] for line in lines[3:]] == [
        'key: {"type":"0","data":{"transactionalId":"txn-1"}} payload: {"version":"0","data":'
        '{"producerId":1000,"producerEpoch":2,"transactionTimeoutMs":60000,"transactionStatus"'
        ':1,"transactionPartitions":[{"topic":"txn","partitionIds":[0,3]},{"topic":'
        '"__consumer_offsets","partitionIds":[17]}],"transactionLastUpdateTimestampMs":'
        '1700000000010,"transactionStartTimestampMs":1700000000000}}',
        'key: {"type":"0","data":{"transactionalId":"tagged-ü"}} payload: {"version":"1","data"'
        ':{"producerId":3000,"previousProducerId":2999,"nextProducerId":3001,"producerEpoch":'
        '32767,"nextProducerEpoch":0,"transactionTimeoutMs":10000,"transactionStatus":2,'
        '"transactionPartitions":[{"topic":"out","partitionIds":[1]}],'
        '"transactionLastUpdateTimestampMs":1700000000030,"transactionStartTimestampMs":'
        '1700000000025,"clientTransactionVersion":2}}',
        'key: {"type":"0","data":{"transactionalId":"txn-1"}} payload: <DELETE>',
    ]


def test_cli_corrupt_file_exit_1(
    segment_files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    log = segment_files[0]
    with log.open("r+b") as f:
        f.seek(8)
        f.write(struct.pack(">i", 2))
    assert main(["dump-log", "--files", str(log)]) == 1
    captured = capsys.readouterr()
    assert captured.out == f"Dumping {log}\nLog starting offset: 0\n"
    assert captured.err == (
        "kafkacore dump-log: CorruptRecordException: Found record size 2 smaller than minimum "
        f"record overhead (14) in file {log}.\n"
    )


def test_cli_without_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 1
    assert "dump-log" in capsys.readouterr().err


def test_relative_paths_are_reported_absolute(
    backend: ModuleType, segment_files: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, index, _ = segment_files
    data = bytearray(index.read_bytes())
    struct.pack_into(">i", data, 12, struct.unpack_from(">i", data, 4)[0])
    index.write_bytes(bytes(data))
    monkeypatch.chdir(index.parent.parent)
    relative = os.path.join(index.parent.name, index.name)
    result = dump(backend, [Path(relative)], verify_index_only=True)
    assert result.lines == [f"Dumping {relative}"]
    assert result.err_lines[0] == f"Mismatches in :{os.getcwd()}/{relative}"
